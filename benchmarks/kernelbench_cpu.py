"""Scale public KernelBench problems down to CPU sizes: a second corpus nobody here tuned for.

KernelBench's level-1/2 problems are sized for a data-centre GPU (a 1024x8192x8192 GEMM, 4 GB
activations). This script reads a KernelBench checkout and writes scaled copies of a
deterministic sample of its problems into an output directory (outside this repository: the
problems are not ours to ship), ready for ``benchmarks/corpus_coverage.py --tasks DIR``.

The rule is the same for every file, never tuned per problem:
- the size constants are the file's module-level integer assignments of 8 or more (``batch_size``,
  ``in_features``, ``M``...), and with ``--elements`` also the integer literals of 8 or more in
  its module-level tuples and lists (level 3's ``input_shape = (batch_size, 3, 224, 224)``, an
  MLP's ``layer_sizes``; off by default, so the level-1/2 samples of the README stay as they
  were measured); small ones (kernel sizes, strides, groups, ``dim``) are kept;
- while the problem's footprint (inputs, parameters and buffers, measured on the meta device, or
  on the CPU where a model reads values while it is built) is
  above ``--max-mb``, the largest size value is halved, every constant holding that value at once
  (so tied sizes such as ``in_features == out_features`` stay tied); no constant goes below 8;
- likewise while its GEMM/convolution work (torch's FLOP counter, on the meta device) is above
  ``--max-gflop``; both measures are exact, so the same checkout always gives the same files;
- the scaled file must still run one eager forward on the CPU; a file that cannot get there is
  skipped and named.

The sample is every ``--every``-th problem of each level by problem number, starting at the
``--offset``-th (0: problems 1, 1+k, ...; 4: problems 5, 5+k, ...), so the choice depends only
on the numbering, and another offset gives a sample disjoint from the first.

    python benchmarks/kernelbench_cpu.py --source KernelBench/KernelBench --out /tmp/kb-cpu \\
        [--levels 1 2] [--every 4] [--offset 0] [--max-mb 16] [--max-gflop 0.5] [--elements]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

MIN_SIZE = 8


def size_constants(tree: ast.Module, values: dict, elements: bool = False) -> dict[str, int]:
    """Module-level names (``a = b = 64`` and ``a = 1; b = 2`` included) whose evaluated value is
    an int of at least 8, and with ``elements`` integer literals of at least 8 inside a
    module-level tuple or list (``input_shape = (batch_size, 3, 224, 224)``: ``input_shape[2]``,
    ``input_shape[3]``), in file order."""
    out: dict[str, int] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for t in node.targets:
            if not isinstance(t, ast.Name):
                continue
            value = values.get(t.id)
            if type(value) is int and value >= MIN_SIZE:
                out.setdefault(t.id, value)
            elif elements and isinstance(node.value, ast.Tuple | ast.List):
                for i, e in enumerate(node.value.elts):
                    if isinstance(e, ast.Constant) and type(e.value) is int \
                            and e.value >= MIN_SIZE:
                        out.setdefault(f"{t.id}[{i}]", e.value)
    return out


def rewrite(source: str, sizes: dict[str, int]) -> str:
    """``source`` with each size constant assigned its new literal value where it was assigned
    (a chained ``a = b = 64`` becomes one assignment per name; a tuple or list element is
    replaced in place)."""
    tree = ast.parse(source)
    body: list[ast.stmt] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if targets and all(isinstance(t, ast.Name) for t in targets) and any(
                t.id in sizes for t in targets):
            body += [ast.Assign(targets=[ast.Name(t.id, ast.Store())],
                                value=ast.Constant(sizes[t.id]) if t.id in sizes else node.value)
                     for t in targets]
            continue
        if len(targets) == 1 and isinstance(targets[0], ast.Name) \
                and isinstance(node.value, ast.Tuple | ast.List):
            name = targets[0].id
            node.value.elts = [ast.Constant(sizes[f"{name}[{i}]"]) if f"{name}[{i}]" in sizes
                               else e for i, e in enumerate(node.value.elts)]
        body.append(node)
    tree.body = body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def load(source: str) -> dict:
    namespace: dict = {"__name__": "kernelbench_problem"}
    exec(compile(source, "<kernelbench problem>", "exec"), namespace)  # noqa: S102 - a benchmark input
    return namespace


def on_meta(measure):
    """``measure()`` with tensors built on the meta device (nothing allocated, no arithmetic),
    or on the CPU where the model needs real values while it is built (``.item()`` in
    ``__init__``, as Swin's drop-path rates)."""
    try:
        with torch.device("meta"):
            return measure()
    except (NotImplementedError, RuntimeError):
        return measure()


def footprint_mb(namespace: dict) -> float:
    """Bytes of inputs, parameters and buffers (built on the meta device where it can be)."""
    def measure():
        model = namespace["Model"](*namespace["get_init_inputs"]())
        inputs = namespace["get_inputs"]()
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        tensors += list(model.parameters()) + list(model.buffers())
        return sum(t.numel() * t.element_size() for t in tensors) / 2**20

    return on_meta(measure)


def gflop(namespace: dict) -> float:
    """GEMM/convolution work of one forward (torch's FLOP counter, on the meta device where the
    model builds there)."""
    def measure():
        model = namespace["Model"](*namespace["get_init_inputs"]())
        inputs = namespace["get_inputs"]()
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*inputs)
        return counter.get_total_flops() / 1e9

    return on_meta(measure)


def runs_on_cpu(namespace: dict) -> None:
    """One eager forward on real CPU tensors (raises what the model raises)."""
    torch.manual_seed(0)
    model = namespace["Model"](*namespace["get_init_inputs"]()).eval()
    with torch.no_grad():
        model(*namespace["get_inputs"]())


def smaller_options(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Ways to shrink, in order: the first constant holding the largest value that can still
    shrink, halved alone; then every constant holding that value halved together (for sizes the
    model needs equal)."""
    shrinkable = [v for v in sizes.values() if v // 2 >= MIN_SIZE]
    if not shrinkable:
        return []
    top = max(shrinkable)
    first = next(n for n, v in sizes.items() if v == top)
    alone = {**sizes, first: top // 2}
    together = {n: (v // 2 if v == top else v) for n, v in sizes.items()}
    return [alone] if alone == together else [alone, together]


def scale(source: str, max_mb: float, max_gflop: float, max_steps: int = 60,
          elements: bool = False) -> tuple[str, str]:
    """The scaled source and a one-line account of what changed (or ValueError with why not)."""
    original = load(source)
    sizes = size_constants(ast.parse(source), original, elements)
    published = dict(sizes)
    scaled, namespace = source, original
    footprint_mb(namespace)  # the problem as published must build
    for _ in range(max_steps):
        if footprint_mb(namespace) <= max_mb and gflop(namespace) <= max_gflop:
            runs_on_cpu(namespace)
            changed = {n: f"{published[n]}->{v}" for n, v in sizes.items() if v != published[n]}
            return scaled, ", ".join(f"{n} {c}" for n, c in changed.items()) or "unchanged"
        for option in smaller_options(sizes):
            try:
                candidate = rewrite(source, option)
                loaded = load(candidate)
                footprint_mb(loaded)
                gflop(loaded)
            except Exception:  # noqa: BLE001 - this shrink breaks the model; try the next
                continue
            sizes, scaled, namespace = option, candidate, loaded
            break
        else:
            raise ValueError("still too large, and no size constant can shrink further")
    raise ValueError(f"still too large after {max_steps} halvings")


def problem_number(path: Path) -> int:
    match = re.match(r"(\d+)_", path.name)
    return int(match.group(1)) if match else 10**6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="KernelBench's problem directory (the one holding level1, level2)")
    parser.add_argument("--out", type=Path, required=True, help="where the scaled files go")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--every", type=int, default=4, help="take every k-th problem")
    parser.add_argument("--offset", type=int, default=0,
                        help="start at this position of the numbering (0 is problem 1)")
    parser.add_argument("--max-mb", type=float, default=16.0)
    parser.add_argument("--max-gflop", type=float, default=0.5)
    parser.add_argument("--elements", action="store_true",
                        help="also scale int literals in module-level tuples and lists")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    for level in args.levels:
        folder = args.source / f"level{level}"
        if not folder.is_dir():
            sys.exit(f"--source {args.source}: no level{level} directory in it; give the "
                     "directory that holds KernelBench's level1, level2, ... folders")
        problems = sorted(folder.glob("*.py"), key=problem_number)[args.offset:: args.every]
        for path in problems:
            name = f"level{level}_{path.stem}"
            try:
                scaled, account = scale(path.read_text(), args.max_mb, args.max_gflop,
                                        elements=args.elements)
            except Exception as exc:  # noqa: BLE001 - one problem's failure is a line, not the end
                print(f"skip {name}: {exc}")
                skipped += 1
                continue
            (args.out / f"{name}.py").write_text(
                f"# {path.name} of KernelBench level {level}, scaled for a CPU by "
                f"benchmarks/kernelbench_cpu.py: {account}\n" + scaled)
            print(f"wrote {name}: {account}")
            written += 1
    print(f"{written} problems written to {args.out}, {skipped} skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
