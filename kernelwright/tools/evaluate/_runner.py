"""What both runners do with a model: map arenas, construct under a seed, run batches of calls.

A runner serves requests from the orchestrator one at a time (see :mod:`protocol`). Tensors
never travel in messages: inputs are views of an input arena, and each call's outputs are
copied into the output arena's slot before the runner answers ``done`` (so the orchestrator's
clock, which stops when ``done`` arrives, includes producing them). Every call of a batch is
made the same way; a runner cannot tell a call whose outputs will be checked from one that is
only timed.
"""

from __future__ import annotations

import socket
import traceback
from collections.abc import Callable
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from kernelwright.errors import RunnerError
from kernelwright.tools.evaluate import protocol
from kernelwright.tools.evaluate.shm import Arena, SlotLayout

MAX_ERROR_CHARS = 6000


def error_text(exc: BaseException, where: str) -> str:
    """``where``, the exception and the tail of its traceback, capped in length."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])
    text = f"{where}: {type(exc).__name__}: {exc}\n{tb.rstrip()}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 20] + "\n...[cut]"


class ModelServer:
    """Arenas and models of one runner; subclasses add their role's operations."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.arenas: dict[str, tuple[Arena, Arena, dict[int, Any]]] = {}
        self.models: dict[int, Any] = {}
        self.model_class: type | None = None
        self.record_ops = False
        self.ops: set[str] = set()

    # -- the loop ------------------------------------------------------------------------

    def serve(self) -> int:
        while True:
            try:
                request, fds = protocol.receive_with_fds(self.sock)
            except (protocol.ChannelClosed, ConnectionError):
                return 0
            op = request.get("op")
            if op == "exit":
                return 0
            try:
                reply = self.handle(op, request, fds)
            except RunnerError as exc:
                reply = {"type": "error", "level": exc.level, "error": exc.error}
            except (Exception, SystemExit) as exc:  # candidate code must not end the runner
                reply = {"type": "error", "level": "runtime", "error": error_text(exc, op)}
            protocol.send(self.sock, reply)

    def handle(self, op: str, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        if op == "map":
            return self.map(request, fds)
        if op == "construct":
            return self.construct(request, fds)
        if op == "run":
            return self.run(request)
        raise RunnerError("runtime", f"unknown request {op!r}")

    # -- operations ----------------------------------------------------------------------

    def map(self, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Map the input and output arenas of ``key`` (two descriptors)."""
        slots = int(request["slots"])
        ins = Arena(fds[0], SlotLayout.of(request["inputs"]), slots)
        outs = Arena(fds[1], SlotLayout.of(request["outputs"]), slots)
        old = self.arenas.pop(request["key"], None)
        if old is not None:
            old[0].close()
            old[1].close()
        scalars = {int(k): v for k, v in (request.get("scalars") or {}).items()}
        self.arenas[request["key"]] = (ins, outs, scalars)
        return {"type": "done"}

    def construct(self, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Build the model under ``seed`` with ``init`` arguments; load shared weights."""
        seed = int(request["seed"])
        torch.manual_seed(seed)
        cls = self.model_class
        if cls is None:
            raise RunnerError("runtime", "no model class loaded")
        try:
            model = cls(*request.get("init", []))
        except (Exception, SystemExit) as exc:
            raise RunnerError(self.construct_level(exc), error_text(exc, "constructing the "
                                                                        "model")) from exc
        if isinstance(model, torch.nn.Module):
            model.eval()
            if fds:
                weights = Arena(fds[0], SlotLayout.of(request["weights"]), 1, readonly=True)
                load_weights(model, weights, request["weight_names"])
        self.models[seed] = model
        return {"type": "done"}

    def construct_level(self, exc: BaseException) -> str:
        return "runtime"

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Call the model of ``seed`` once per slot, in order; copy outputs into the arena."""
        ins, outs, scalars = self.arenas[request["key"]]
        model = self.models[int(request["seed"])]
        call = self.caller(model)
        retained = 0
        for slot in request["slots"]:
            args = [scalars.get(i) if v is None else v for i, v in enumerate(ins.views(slot))]
            value = call(args)
            refs = store_outputs(value, outs.views(slot))
            del value
            retained += sum(not r.expired() for r in refs)
        return {"type": "done", "n": len(request["slots"]), "retained": retained,
                "ops": sorted(self.ops)[:200]}

    def caller(self, model: Any) -> Callable[[list[Any]], Any]:
        def call(args: list[Any]) -> Any:
            with torch.no_grad():
                return model(*args)

        return call


def store_outputs(value: Any, views: list[torch.Tensor | None]) -> list[StorageWeakRef]:
    """Check ``value`` against the slot's output specs and copy it in; return weak references
    to the output storages (alive after the caller drops ``value``: the model kept them)."""
    items = list(value) if isinstance(value, tuple | list) else [value]
    if len(items) != len(views):
        raise RunnerError("shape", f"{len(items)} outputs, the reference has {len(views)}")
    refs = []
    for i, (item, view) in enumerate(zip(items, views, strict=True)):
        problem = _type_problem(item)
        if problem:
            raise RunnerError("type", f"output {i} {problem}; return plain dense CPU "
                                      "torch.Tensor objects")
        if item.shape != view.shape or item.dtype != view.dtype:
            raise RunnerError("shape", f"output {i} is {item.dtype}{list(item.shape)}, the "
                                       f"reference gives {view.dtype}{list(view.shape)}")
        view.copy_(item)
        if item.numel():
            refs.append(StorageWeakRef(item.untyped_storage()))
    return refs


def _type_problem(item: Any) -> str | None:
    if type(item) is not torch.Tensor:
        return f"is a {type(item).__module__}.{type(item).__qualname__}, not torch.Tensor"
    if item.device.type != "cpu":
        return f"is on device {item.device}"
    if item.layout != torch.strided:
        return f"has layout {item.layout}"
    return None


def load_weights(model: torch.nn.Module, arena: Arena, names: list[str]) -> None:
    """Load the reference's weights when the state_dict keys match (else keep the model's)."""
    own = model.state_dict()
    if not names or set(own) != set(names):
        return
    state = dict(zip(names, arena.views(0), strict=True))
    try:
        model.load_state_dict(state)
    except RuntimeError:  # same names, other shapes: the candidate keeps its own
        pass


def weight_specs(model: Any) -> tuple[list[str], list[list[Any]]]:
    """Names and ``[shape, dtype]`` of a model's floating state (what a candidate shares)."""
    if not isinstance(model, torch.nn.Module):
        return [], []
    state = model.state_dict()
    names = list(state)
    specs = [[list(t.shape), str(t.dtype).removeprefix("torch.")] for t in state.values()]
    return names, specs
