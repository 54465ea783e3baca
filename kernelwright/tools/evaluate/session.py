"""One task's warm state in the orchestrator: its runners, its contract, and its recording.

The recording (fresh inputs for every verification (variant, seed), the reference's outputs
on them, the float64 reference for the precision check, the model weights per seed) is made
once per task by the reference runner and held here, in the orchestrator's memory only: it is
never written to disk and never mapped into a candidate's process. Each candidate gets copies
of the inputs in its own arenas.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelwright.config import Settings
from kernelwright.errors import TaskError
from kernelwright.spec import Contract, ShapeVariant, Task
from kernelwright.spec.contract import parse_spaces
from kernelwright.tools.evaluate import _compare as cmp
from kernelwright.tools.evaluate.orchestrator import ReferenceRunner, RunnerFailed
from kernelwright.tools.evaluate.shm import Arena, SlotLayout
from kernelwright.tools.evaluate.verify import lockdown_allowed

log = logging.getLogger(__name__)

MIN_SEEDS = 3  # "correct" always means at least three seeds per variant
RECHECK_SEED = 2_000_003  # the re-verification's inputs: never used by verification or timing


@dataclass
class Arenas:
    """One side's input and output arenas for one key."""

    key: str
    inputs: Arena
    outputs: Arena
    scalars: dict[str, Any] = field(default_factory=dict)

    def message(self) -> dict[str, Any]:
        return {"op": "map", "key": self.key, "slots": self.inputs.slots,
                "inputs": self.inputs.layout.to_json(), "outputs": self.outputs.layout.to_json(),
                "scalars": self.scalars}

    @property
    def fds(self) -> list[int]:
        return [self.inputs.fd, self.outputs.fd]

    def close(self) -> None:
        self.inputs.close()
        self.outputs.close()


@dataclass
class Recording:
    """The reference's side of one variant: pristine inputs and outputs per seed."""

    variant: ShapeVariant
    seeds: list[int]
    ref: Arenas
    inputs: list[list[torch.Tensor | None]] = field(default_factory=list)
    outputs: list[list[torch.Tensor]] = field(default_factory=list)
    fp64: list[torch.Tensor] | None = None


def make_arenas(key: str, variant: ShapeVariant, slots: int, out_dtype: str | None = None,
                scalars: dict[str, Any] | None = None) -> Arenas:
    outs = [s if out_dtype is None else (s.shape, out_dtype) for s in variant.outputs]
    return Arenas(key, Arena.create(SlotLayout.of(variant.inputs), slots),
                  Arena.create(SlotLayout.of(outs), slots), dict(scalars or {}))


class TaskSession:
    """The reference runner and recording of one task; see :mod:`evaluation` for one
    candidate's walk. Candidates are forked by a fork server the pool lends each evaluation
    (it holds nothing of a task, so tasks share them)."""

    def __init__(self, task: Task, settings: Settings, bwrap: str | None) -> None:
        self.task, self.settings, self.bwrap = task, settings, bwrap
        self.started = time.monotonic()
        self.reference = ReferenceRunner(task.path, settings)
        try:
            self.contract, self.init = self._derive_contract()
        except BaseException:
            self.reference.close()
            raise
        # the operators a candidate's fork server keeps (None: no lockdown); also the key by
        # which the pool lends servers, since a server keeps its lockdown for good
        self.lockdown = lockdown_allowed(self.contract)
        self.start_s = time.monotonic() - self.started
        self.keys = 0
        self.recordings: dict[tuple[str, int], Recording] = {}
        self.weights: dict[int, tuple[list[str], list[Any], Arena | None]] = {}
        self.constructed: set[int] = set()
        self.timing: dict[str, Any] = {}
        self.mine: dict[tuple, Arenas] = {}

    def _derive_contract(self) -> tuple[Contract, list[Any]]:
        return _contract(self.reference, self.task, self.settings)

    def new_key(self) -> str:
        self.keys += 1
        return f"a{self.keys}"

    @property
    def seeds(self) -> int:
        return max(self.settings.seeds, MIN_SEEDS)

    # -- the reference's side ------------------------------------------------------------

    def ref_request(self, message: dict[str, Any], expect=frozenset({"done"}),
                    fds: list[int] = ()) -> dict[str, Any]:
        reply = self.reference.request(message, self.settings.call_timeout_s, expect, fds)
        if reply["type"] == "error":
            raise TaskError(f"the reference of task {self.task.name} failed: "
                            f"{str(reply.get('error'))[:2000]}")
        return reply

    def ensure_model(self, seed: int) -> None:
        """The reference model of ``seed`` built, and its weights in an arena for candidates."""
        if seed in self.weights:
            return
        self.ref_request({"op": "construct", "seed": seed, "init": self.init})
        names_specs = self.ref_request({"op": "weights", "seed": seed}, frozenset({"status"}))
        names, specs = names_specs["names"], names_specs["specs"]
        arena = None
        if names:
            arena = Arena.create(SlotLayout.of(specs), 1, "kw-weights")
            self.ref_request({"op": "weights", "seed": seed}, frozenset({"status"}),
                             [arena.fd])
            writable, arena = arena, arena.sealed_copy("kw-weights")  # candidates: read-only
            writable.close()
        self.weights[seed] = (names, specs, arena)

    def recording(self, variant: ShapeVariant, seeds: list[int], fp64: bool) -> Recording:
        """The reference's inputs and outputs of ``variant`` on ``seeds`` (made once)."""
        cache_key = (variant.name, seeds[0])
        held = self.recordings.get(cache_key)
        if held is not None:
            return held
        arenas = make_arenas(self.new_key(), variant, len(seeds))
        self.ref_request(arenas.message(), fds=arenas.fds)
        rec = Recording(variant, seeds, arenas)
        for slot, seed in enumerate(seeds):
            self.ensure_model(seed)
            reply = self.ref_request({"op": "inputs", "key": arenas.key, "slot": slot,
                                      "variant": variant.model_dump(mode="json"), "seed": seed})
            arenas.scalars.update(reply.get("scalars") or {})
        self.ref_request(arenas.message(), fds=arenas.fds)  # again, now with the scalars
        for slot, seed in enumerate(seeds):
            self.ref_request({"op": "run", "key": arenas.key, "seed": seed, "slots": [slot]})
            rec.inputs.append(_clone(arenas.inputs.views(slot)))
            rec.outputs.append(_clone(arenas.outputs.views(slot)))
        if fp64:
            rec.fp64 = self._fp64(variant, arenas)
        self.recordings[cache_key] = rec
        return rec

    def _fp64(self, variant: ShapeVariant, arenas: Arenas, slot: int = 0,
              seed: int = 0) -> list[torch.Tensor] | None:
        """The reference's outputs in float64 on ``slot`` of ``arenas``, with the model of
        ``seed`` (float32 outputs only; None when the model cannot run in float64)."""
        if not all(o.dtype == "float32" for o in variant.outputs):
            return None
        out = make_arenas(self.new_key(), variant, 1, out_dtype="float64")
        try:
            self.ref_request(out.message(), fds=out.fds)
            reply = self.ref_request({"op": "run_fp64", "key": arenas.key, "out_key": out.key,
                                      "seed": seed, "slot": slot}, frozenset({"status"}))
            return _clone(out.outputs.views(0)) if reply.get("ok") else None
        finally:
            out.close()

    def as_accurate(self, arenas: Arenas, slot: int, calls: list[list[torch.Tensor]],
                    ref: list[torch.Tensor], variant: ShapeVariant | None = None,
                    seed: int = 0) -> bool:
        """The arbiter of a mismatch with the float32 reference ``ref``: whether every call's
        outputs are as close to the reference run in float64 on ``slot`` of ``arenas`` as
        ``ref`` is (:func:`_compare.as_close_as_reference`). False when the model cannot run
        in float64: the float32 comparison then stands."""
        try:
            ref64 = self._fp64(variant or self.contract.nominal, arenas, slot, seed)
        except Exception:  # noqa: BLE001 - no arbiter
            return False
        return ref64 is not None and all(
            cmp.as_close_as_reference(out, ref, ref64, self.contract) for out in calls)

    def candidate_arenas(self, key: tuple, variant: ShapeVariant, slots: int,
                         scalars: dict[str, Any]) -> Arenas:
        """The candidates' arenas for ``key``, made once per task and mapped into each new
        runner (a dead runner's processes are gone before the next one maps them; outputs
        are poisoned before every batch and inputs rewritten before use)."""
        held = self.mine.get(key)
        if held is None or held.inputs.slots < slots:
            if held is not None:
                held.close()
            held = make_arenas(self.new_key(), variant, slots, scalars=scalars)
            self.mine[key] = held
        return held

    def close(self) -> None:
        for arenas in self.mine.values():
            arenas.close()
        for rec in self.recordings.values():
            rec.ref.close()
        for _, _, arena in self.weights.values():
            if arena is not None:
                arena.close()
        for held in self.timing.values():  # timing.Sides keeps the reference's arenas in .ref
            arenas = getattr(held, "ref", held)
            if isinstance(arenas, Arenas):
                arenas.close()
        self.reference.close()

    @property
    def alive(self) -> bool:
        return self.reference.proc.poll() is None

    def __repr__(self) -> str:
        return f"TaskSession({self.task.name!r}, sandboxed={self.bwrap is not None})"


def _contract(reference: ReferenceRunner, task: Task,
              settings: Settings) -> tuple[Contract, list[Any]]:
    """Ask ``reference`` for the contract; a hang or failure is a one-line ``TaskError``."""
    timeout = settings.call_timeout_s
    try:
        reply = reference.request({"op": "contract"}, timeout, frozenset({"status"}))
    except RunnerFailed as exc:
        raise TaskError(f"deriving the contract of task {task.name} failed: {exc} (the "
                        f"reference must finish within call_timeout_s={timeout:g} s; make "
                        "get_inputs() smaller or raise KERNELWRIGHT_CALL_TIMEOUT_S)") from exc
    if reply["type"] == "error":
        raise TaskError(" ".join(str(reply.get("error")).split())[:2000])
    contract = Contract.model_validate(reply["contract"])
    if settings.spaces:
        try:
            contract = contract.narrowed(parse_spaces(settings.spaces))
        except ValueError as exc:
            raise TaskError(f"KERNELWRIGHT_SPACES / --spaces: {exc}") from exc
    return contract, list(reply.get("init") or [])


def contract_via_runner(task: Task, settings: Settings) -> Contract:
    """The contract of ``task`` from a reference runner started for this one question."""
    reference = ReferenceRunner(task.path, settings)
    try:
        return _contract(reference, task, settings)[0]
    finally:
        reference.close()


def _clone(views: list[torch.Tensor | None]) -> list[Any]:
    return [None if v is None else v.clone() for v in views]


def task_path(task: Task) -> Path:
    return Path(task.path)
