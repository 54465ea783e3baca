"""Record-replay (R^3): a task's reference inputs and outputs, recorded once and replayed.

A recording holds, for every (shape variant, seed) the verifier checks, a fresh input set
(exactly what :func:`~kernelwright.spec.variant_inputs` draws) and the reference's outputs on
it; for the smallest variant's seed 0 also the float64 reference (the precision check); and
the entry for the re-verification after a suspicious speedup (nominal variant,
:data:`RECHECK_SEED`). Candidates are then verified against it, in the warm worker, without
running the reference again. The reference is still timed live, interleaved with the candidate.

It is content-addressed: the file name is a hash of the format, the task's source hash, the
seed count, the contract's variants and the torch version, under
``settings.data_dir / "recordings"``; written with ``torch.save`` to a temporary file and
renamed into place, so concurrent writers are safe and readers never see half a file.

Never trusted blindly: a recording is used only if it loads with ``weights_only``, its header
matches, every entry has the contract's shapes and dtypes, the checksum over its contents
matches, and a live reference run on its smallest entry agrees with it (same inputs drawn,
same outputs within tolerance) and on one more entry picked at random. Anything else is
logged and re-recorded.

Example:
    >>> rec = Replay.obtain(task_module, contract, 3, Path("rec"))  # doctest: +SKIP
    >>> rec.get("nominal", 0).outputs  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from kernelwright.spec import Contract, ShapeVariant, variant_inputs
from kernelwright.spec.inputs import as_tensor_list
from kernelwright.tools.evaluate import _compare as cmp
from kernelwright.tools.evaluate._loader import build_model
from kernelwright.tools.evaluate.precision import reference_fp64

log = logging.getLogger(__name__)

FORMAT = 1
RECHECK_SEED = 2_000_003  # the re-verification's inputs: never used by verification or timing


@dataclass(frozen=True)
class Entry:
    """One (variant, seed): pristine inputs (callers clone them) and the reference's outputs."""

    inputs: list[Any]
    outputs: list[torch.Tensor]
    fp64: list[torch.Tensor] | None = None


@dataclass(frozen=True)
class Planned:
    variant: ShapeVariant
    seed: int
    fp64: bool


@dataclass
class Replay:
    """A task's recording, held in the worker for every candidate it verifies."""

    key: str
    path: Path
    entries: dict[tuple[str, int], Entry]
    source: str  # "recorded" (made now) or "loaded" (read from disk and checked)

    def get(self, variant: str, seed: int) -> Entry | None:
        return self.entries.get((variant, seed))

    @classmethod
    def obtain(cls, task: ModuleType, contract: Contract, seeds: int, root: Path) -> Replay:
        """Load the task's recording from ``root`` if it passes every check, else record it."""
        header = _header(contract, seeds)
        key = hashlib.sha256(json.dumps(header, sort_keys=True).encode()).hexdigest()[:24]
        path = root / f"{contract.task_name}-{key}.pt"
        entries = _load(path, header, task, contract, seeds)
        if entries is not None:
            return cls(key, path, entries, "loaded")
        entries = record(task, contract, seeds)
        _save(path, header, entries)
        return cls(key, path, entries, "recorded")


def smallest(contract: Contract) -> ShapeVariant:
    """The variant with the fewest input elements: where the fp64 precision check runs."""
    return min(contract.variants, key=_size)


def plan(contract: Contract, seeds: int) -> Iterator[Planned]:
    """Every (variant, seed) verification may ask for, in recording order."""
    small = smallest(contract)
    for variant in contract.variants:
        for seed in range(seeds):
            yield Planned(variant, seed, variant is small and seed == 0)
    yield Planned(contract.nominal, RECHECK_SEED, False)


def record(task: ModuleType, contract: Contract, seeds: int) -> dict[tuple[str, int], Entry]:
    """Run the reference once per planned (variant, seed) and keep inputs and outputs."""
    entries: dict[tuple[str, int], Entry] = {}
    models: dict[int, torch.nn.Module] = {}
    for item in plan(contract, seeds):
        if item.seed not in models:
            models[item.seed] = build_model(task.Model, task, item.seed, "the reference Model")
        entries[(item.variant.name, item.seed)] = _run(models[item.seed], task, item)
    return entries


def _run(model: torch.nn.Module, task: ModuleType, item: Planned) -> Entry:
    inputs = variant_inputs(task, item.variant, item.seed)
    with torch.no_grad():
        outputs = as_tensor_list(model(*cmp.clone_inputs(inputs)), "reference Model")
    fp64 = reference_fp64(model, inputs) if item.fp64 else None
    return Entry(inputs, outputs, fp64)


def _header(contract: Contract, seeds: int) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "task_hash": contract.task_hash,
        "seeds": seeds,
        "recheck_seed": RECHECK_SEED,
        "variants": [v.model_dump(mode="json") for v in contract.variants],
        "torch": str(torch.__version__),
    }


def _save(path: Path, header: dict, entries: dict[tuple[str, int], Entry]) -> None:
    """Write atomically (temporary file + rename); a failure only costs the reuse."""
    rows = [{"variant": v, "seed": s, "inputs": e.inputs, "outputs": e.outputs, "fp64": e.fp64}
            for (v, s), e in entries.items()]
    data = {"header": header, "checksum": checksum(entries), "entries": rows}
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp", delete=False) as f:
            tmp = f.name
            torch.save(data, f)
        os.replace(tmp, path)
        log.info("recorded the reference of %s to %s", header["task_hash"], path)
    except Exception as exc:  # unwritable directory, unpicklable input: replay from memory
        log.warning("could not write the recording %s (%s); it lives in this worker only. "
                    "Make settings.data_dir writable to share it.", path, exc)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _load(path: Path, header: dict, task: ModuleType, contract: Contract,
          seeds: int) -> dict[tuple[str, int], Entry] | None:
    """The checked entries of ``path``, or ``None`` (logged) when it must be re-recorded."""
    if not path.exists():
        return None
    try:
        data = torch.load(path, weights_only=True)
        entries = entries_of(data)
        problem = _problem(data, header, entries, contract, seeds) or _spot_check(
            task, contract, seeds, entries)
    except Exception as exc:  # truncated, not a torch file, wrong structure
        problem = f"it does not load ({type(exc).__name__}: {str(exc)[:200]})"
    if problem is None:
        return entries
    log.warning("recording %s is not trusted: %s; recording the reference again", path, problem)
    return None


def entries_of(data: dict[str, Any]) -> dict[tuple[str, int], Entry]:
    """The entries of a loaded recording file (unchecked)."""
    return {(r["variant"], r["seed"]): Entry(r["inputs"], r["outputs"], r["fp64"])
            for r in data["entries"]}


def _problem(data: dict, header: dict, entries: dict[tuple[str, int], Entry],
             contract: Contract, seeds: int) -> str | None:
    if data["header"] != header:
        changed = sorted(k for k in header if data["header"].get(k) != header[k])
        return f"its header differs in {', '.join(changed) or 'extra keys'}"
    for item in plan(contract, seeds):
        entry = entries.get((item.variant.name, item.seed))
        if entry is None:
            return f"entry ({item.variant.name}, seed {item.seed}) is missing"
        problem = _shape_problem(entry, item)
        if problem:
            return f"entry ({item.variant.name}, seed {item.seed}): {problem}"
    if data["checksum"] != checksum(entries):
        return "its checksum does not match its contents"
    return None


def _shape_problem(entry: Entry, item: Planned) -> str | None:
    specs = item.variant.inputs
    if len(entry.inputs) != len(specs) or len(entry.outputs) != len(item.variant.outputs):
        return "wrong number of inputs or outputs"
    tensors = [(x, s) for x, s in zip(entry.inputs, specs, strict=True) if s is not None]
    tensors += list(zip(entry.outputs, item.variant.outputs, strict=True))
    for value, spec in tensors:
        if not isinstance(value, torch.Tensor) or (
            tuple(value.shape) != tuple(spec.shape) or str(value.dtype) != f"torch.{spec.dtype}"
        ):
            return f"holds {_describe(value)} where the contract has {spec}"
    if item.fp64 and entry.fp64 is not None and [t.shape for t in entry.fp64] != [
        t.shape for t in entry.outputs
    ]:
        return "its float64 reference has other shapes than its outputs"
    return None  # fp64 may be None: the reference cannot run in float64


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
    return type(value).__name__


def _spot_check(task: ModuleType, contract: Contract, seeds: int,
                entries: dict[tuple[str, int], Entry]) -> str | None:
    """Redraw and rerun two entries live (the smallest variant's seed 0 and one picked at
    random); each must agree with the recording."""
    items = list(plan(contract, seeds))
    fixed = next(item for item in items if item.fp64)
    for item in (fixed, random.SystemRandom().choice(items)):
        problem = _agrees(task, contract, item, entries[(item.variant.name, item.seed)])
        if problem:
            return f"its entry ({item.variant.name}, seed {item.seed}) {problem}"
    return None


def _agrees(task: ModuleType, contract: Contract, item: Planned, entry: Entry) -> str | None:
    model = build_model(task.Model, task, item.seed, "the reference Model")
    live = _run(model, task, Planned(item.variant, item.seed, False))
    if not cmp.identical([x for x in live.inputs if isinstance(x, torch.Tensor)],
                         [x for x in entry.inputs if isinstance(x, torch.Tensor)]):
        return "holds other inputs than the task draws"
    ok, max_abs, _, _ = cmp.errors(entry.outputs, live.outputs, contract)
    if not ok:
        return f"differs from a live reference run (max abs error {max_abs:.3g})"
    return None


def checksum(entries: dict[tuple[str, int], Entry]) -> str:
    """SHA-256 over every entry's keys, tensor bytes, shapes and dtypes, in a fixed order."""
    digest = hashlib.sha256()
    for (variant, seed), entry in sorted(entries.items()):
        digest.update(f"{variant}/{seed}".encode())
        for part in (entry.inputs, entry.outputs, entry.fp64 or []):
            for value in part:
                _update(digest, value)
            digest.update(b"|")
    return digest.hexdigest()


def _update(digest: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        t = value.detach().contiguous().reshape(-1)
        digest.update(f"{t.dtype}{list(value.shape)}".encode())
        if t.numel():
            digest.update(t.view(torch.uint8).numpy().data)
    else:
        digest.update(repr(value).encode())


def _size(variant: ShapeVariant) -> int:
    total = 0
    for spec in variant.inputs:
        if spec is not None:
            n = 1
            for d in spec.shape:
                n *= d
            total += n
    return total
