"""What the LLM coder edits of a lowered module: the nominal kernels, and the launch sizes.

A lowered module holds one copy of each kernel per shape variant of the contract (``k0_*`` for
the nominal shapes, ``k1_*``, ... for the others), the copies differing only in integer constants
(sizes, loop bounds). :func:`view_of` finds those constants by aligning every copy with the
nominal one and shows the coder a single block: the shared code, the launch configuration as
``#define KW_LOCAL_<kernel> <work-group size>`` (the launcher reads it:
``tools/lower/launch_config.py``), and the nominal kernels with each shape-dependent constant
named ``KW_S<i>``. :meth:`KernelView.module` writes every variant from the edited block (the
nominal value or each variant's own in place of each ``KW_S<i>``, the kernel names renumbered),
so an edit can never leave the variants disagreeing. A block whose copies do not align (a
whole-module rewrite) has no view: it is shown and edited as it is.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache

from kernelwright.errors import ReplyFormatError
from kernelwright.prompts import evolve_regions

_HEAD = re.compile(r'^extern "C"', re.M)
_NAME = re.compile(r"\b(k(\d+)_\w+)\s*\(")
_NUMBER = re.compile(r"\b(\d+)\b")
_CONST = re.compile(r"\bKW_S(\d+)\b")
_NOTE = "//: "  # lines of the view's own notes (dropped when the module is written)
_BOUNDS = re.compile(r"__launch_bounds__\((\d+)\)(\s*)(k0_\w+)\s*\(")
# a row shared by a work-group: its loop strides by the group's size (and CUDA's reduction
# scratch holds one value per thread)
_STRIDE = re.compile(r"(\w+ = [l0]; \w+ < [^;]+; \w+ \+= |kw_smem_raw\[)(\d+)([)\]])")
# ... and its trip count over a row is the row's whole work-groups: ``n / wg * wg``
_WHOLE = re.compile(r"\b(\w+ / )(\d+)( \* )(\d+)\b")


@dataclass(frozen=True)
class KernelView:
    """The editable text of a lowered module and how to write the module back from it."""

    module_source: str
    span: tuple[int, int]  # the evolve block in module_source
    text: str  # what the coder sees and edits
    values: dict[str, tuple[int, ...]]  # KW_S<i> -> (nominal, variant 1, ...)
    variants: int

    def module(self, edited: str) -> str:
        """The whole module with every variant's kernels written from ``edited``."""
        body = "\n".join(ln for ln in edited.splitlines() if not ln.startswith(_NOTE))
        unknown = sorted({f"KW_S{m.group(1)}" for m in _CONST.finditer(body)} - set(self.values))
        if unknown:
            names = ", ".join(self.values) or "none"
            raise ReplyFormatError(
                f"{unknown[0]} is not a shape constant of this kernel (they are: {names}); "
                "use one of them or a number")
        first = _HEAD.search(body)
        shared, kernels = (body[: first.start()], body[first.start():]) if first else (body, "")
        copies = [_fill(kernels.strip("\n"), i, self.values) for i in range(self.variants)]
        block = shared.rstrip("\n") + "\n" + "\n\n".join(c for c in copies if c) + "\n"
        a, b = self.span
        return self.module_source[:a] + block.lstrip("\n") + self.module_source[b:]


def _fill(kernels: str, variant: int, values: dict[str, tuple[int, ...]]) -> str:
    text = _CONST.sub(lambda m: str(values[f"KW_S{m.group(1)}"][variant]), kernels)
    return re.sub(r"\bk0_(\w)", rf"k{variant}_\1", text) if variant else text


def view_of(module_source: str) -> KernelView | None:
    """The view of a lowered module's kernel block, or ``None`` when it is not one (no evolve
    block, no kernels, or shape-variant copies that differ in more than integer constants)."""
    return _view(module_source)


@lru_cache(maxsize=64)
def _view(source: str) -> KernelView | None:
    try:
        spans = evolve_regions(source)
    except ReplyFormatError:
        return None
    if len(spans) != 1:
        return None
    a, b = spans[0]
    block = source[a:b]
    heads = [m.start() for m in _HEAD.finditer(block)]
    if not heads:
        return None
    chunks: dict[int, list[str]] = {}
    for i, start in enumerate(heads):
        chunk = block[start: heads[i + 1] if i + 1 < len(heads) else len(block)].strip("\n")
        name = _NAME.search(chunk)
        if name is None:
            return None
        chunks.setdefault(int(name.group(2)), []).append(chunk)
    if sorted(chunks) != list(range(len(chunks))):
        return None
    texts = ["\n\n".join(chunks[v]) for v in range(len(chunks))]
    template, values = _align(texts)
    if template is None:
        return None
    shared = block[: heads[0]].rstrip("\n")
    local = _launch_defines(source, shared)
    launch = bool(local) or "KW_LOCAL_" in shared
    if local:
        template = _BOUNDS.sub(r"__launch_bounds__(KW_LOCAL_\3)\2\3(", template)
        template = _named_strides(template, local)
    notes = _notes(values, len(texts), launch, _backend(source) == "cpp")
    text = "\n".join(part for part in (notes, local, shared, template) if part) + "\n"
    return KernelView(source, (a, b), text, values, len(texts))


def _align(texts: list[str]) -> tuple[str | None, dict[str, tuple[int, ...]]]:
    """The nominal text with shape-dependent integers named, and their values per variant."""
    split = [_NUMBER.split(re.sub(rf"\bk{v}_(\w)", r"k0_\1", t)) for v, t in enumerate(texts)]
    base = split[0]
    if any(len(s) != len(base) or s[0::2] != base[0::2] for s in split[1:]):
        return None, {}
    names: dict[tuple[int, ...], str] = {}
    out = list(base)
    for pos in range(1, len(base), 2):
        column = tuple(int(s[pos]) for s in split)
        if len(set(column)) > 1:
            out[pos] = names.setdefault(column, f"KW_S{len(names)}")
    return "".join(out), {name: column for column, name in names.items()}


def _launch_defines(source: str, shared: str) -> str:
    """``#define KW_LOCAL_<kernel> <size>`` for each nominal device kernel not defined yet."""
    plans = _plans(source)
    steps = [s for p in plans.values() for s in p.get("steps", [])
             if str(s.get("kernel", "")).startswith("k0_") and "local" in s]
    if not steps or not ("sycl" in _backend(source) or "cuda" in _backend(source)):
        return ""
    have = set(re.findall(r"KW_LOCAL_(\w+)", shared))
    local = {s["kernel"]: s["local"] for s in steps if s["kernel"] not in have}
    return "\n".join(f"#define KW_LOCAL_{name} {size}" for name, size in local.items())


def _named_strides(template: str, defines: str) -> str:
    """A cooperative kernel's row loop strides by its work-group size: name it ``KW_LOCAL``."""
    sizes = dict(re.findall(r"KW_LOCAL_(\w+) (\d+)", defines))
    heads = [(m.start(), m.group(1)) for m in _NAME.finditer(template)]

    def owner(at: int) -> str | None:
        names = [name for start, name in heads if start < at]
        return names[-1] if names else None

    def named(m: re.Match) -> str:
        k = owner(m.start())
        if k and sizes.get(k) == m.group(2):
            return f"{m.group(1)}KW_LOCAL_{k}{m.group(3)}"
        return m.group(0)

    def whole(m: re.Match) -> str:
        k = owner(m.start())
        if k and sizes.get(k) == m.group(2) == m.group(4):
            return f"{m.group(1)}KW_LOCAL_{k}{m.group(3)}KW_LOCAL_{k}"
        return m.group(0)

    return _STRIDE.sub(named, _WHOLE.sub(whole, template))


def _plans(source: str) -> dict:
    for node in ast.parse(source).body if "PLANS" in source else []:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "PLANS" for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return {}
    return {}


def _backend(source: str) -> str:
    m = re.search(r"^BACKEND = ['\"](\w+)['\"]", source, re.M)
    return m.group(1).lower() if m else ""


def _notes(values: dict[str, tuple[int, ...]], variants: int, launch: bool, cpp: bool) -> str:
    lines = []
    if cpp:
        lines += ["launch configuration: the kernels' OpenMP pragmas set the threads (add",
                  "num_threads(N) to fix a count, or drop the parallel pragma for one thread)."]
    if launch:
        lines += [
            "launch configuration: KW_LOCAL_<kernel> is the work-group size (SYCL local size,",
            "CUDA block size) the launcher uses for that kernel in every shape variant; a",
            "kernel whose work-group shares one row (u is the group id) strides by its size.",
        ]
    if variants > 1:
        lines += [
            f"shape variants: the system writes all {variants} variants' kernels from this",
            "block; each KW_S<i> is a size that differs per variant (keep it where the size",
            "matters). Shared helpers go above the first kernel. The values (nominal first):",
        ]
        lines += [f"  {name} = {', '.join(map(str, column))}" for name, column in values.items()]
    return "\n".join(_NOTE + ln for ln in lines)
