"""The reference runner: ``python -m kernelwright.tools.evaluate.reference_runner --fd N``.

It imports the task and nothing a candidate wrote. It derives the task's contract (so a task
whose reference hangs is stopped by the orchestrator's deadline, not the orchestrator's own
process), draws input sets into the arenas, shares the model's weights through an arena, and
runs batches of reference calls (in float64 too, for the precision check).
"""

from __future__ import annotations

import argparse
import copy
import faulthandler
import socket
import sys
from pathlib import Path
from typing import Any

import torch

from kernelwright.errors import RunnerError
from kernelwright.tools.evaluate._runner import ModelServer, error_text, weight_specs
from kernelwright.tools.evaluate.sandbox import apply_hard_limits
from kernelwright.tools.evaluate.shm import Arena, SlotLayout


class ReferenceServer(ModelServer):
    """Serves ``contract``, ``inputs``, ``weights``, and the common model operations."""

    def __init__(self, sock: socket.socket, task_path: Path) -> None:
        super().__init__(sock)
        from kernelwright.spec.task import Task

        self.task_path = task_path
        self.task = Task.from_path(task_path)  # the one import of the task in this process
        self.module = self.task.module()
        self.model_class = self.module.Model
        self.fp64: dict[int, torch.nn.Module] = {}
        self.compiled: dict[tuple[int, str], Any] = {}

    def handle(self, op: str, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        if op == "contract":
            return self.contract()
        if op == "inputs":
            return self.inputs(request)
        if op == "weights":
            return self.weights(request, fds)
        if op == "run_fp64":
            return self.run_fp64(request)
        if op == "compile":
            return self.compile(request)
        if op == "run" and request.get("compiled"):
            return self.run_compiled(request)
        return super().handle(op, request, fds)

    def compile(self, request: dict[str, Any]) -> dict[str, Any]:
        """``torch.compile`` the model of ``seed`` (once per runner and mode) and warm it up
        on slot 0 of ``key``; answer the graphs compiled so far (recompiles are counted from
        the first warm-up call on)."""
        from kernelwright.tools.evaluate.compile_side import compile_model

        seed, mode = int(request["seed"]), str(request.get("mode") or "default")
        try:
            held = self.compiled.get((seed, mode))
            if held is None:
                held = compile_model(self.models[seed], mode)
                self.compiled[(seed, mode)] = held
            held.warm_up(self.batch_args(request["key"], 0), int(request.get("calls", 3)))
        except Exception as exc:  # a model torch.compile cannot take: no compile figure
            return {"type": "status", "ok": False,
                    "error": error_text(exc, "torch.compile")[:600]}
        return {"type": "status", "ok": True, "recompiles": held.recompiles()}

    def run_compiled(self, request: dict[str, Any]) -> dict[str, Any]:
        """A timed batch of the compiled model (same arenas, same calls as ``run``)."""
        held = self.compiled[(int(request["seed"]), str(request.get("mode") or "default"))]
        saved = self.models[int(request["seed"])]
        self.models[int(request["seed"])] = held.module
        try:
            reply = super().run(request)
        finally:
            self.models[int(request["seed"])] = saved
        return {**reply, "recompiles": held.recompiles()}

    def batch_args(self, key: str, slot: int) -> list[Any]:
        ins, _, scalars = self.arenas[key]
        return [scalars.get(i) if v is None else v for i, v in enumerate(ins.views(slot))]

    def contract(self) -> dict[str, Any]:
        from kernelwright.errors import TaskError
        from kernelwright.spec import derive_contract
        from kernelwright.spec.inputs import init_inputs_for

        try:
            contract = derive_contract(self.task)
            init = init_inputs_for(self.module)
        except TaskError as exc:
            raise RunnerError("task", str(exc)) from exc
        return {"type": "status", "contract": contract.model_dump(mode="json"),
                "init": _jsonable(init, "get_init_inputs()")}

    def inputs(self, request: dict[str, Any]) -> dict[str, Any]:
        """Draw ``(variant, seed)`` into input slot ``slot`` of ``key``; return the scalars."""
        from kernelwright.spec import ShapeVariant, variant_inputs

        variant = ShapeVariant.model_validate(request["variant"])
        drawn = variant_inputs(self.module, variant, int(request["seed"]))
        ins = self.arenas[request["key"]][0]
        scalars = {}
        for i, (value, view) in enumerate(zip(drawn, ins.views(int(request["slot"])),
                                              strict=True)):
            if view is None:
                scalars[str(i)] = _jsonable(value, f"input {i}")
            else:
                view.copy_(value)
        return {"type": "done", "scalars": scalars}

    def weights(self, request: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Without a descriptor: the names and specs of the seed's weights; with one: write
        them into that arena."""
        model = self.models[int(request["seed"])]
        names, specs = weight_specs(model)
        if fds:
            arena = Arena(fds[0], SlotLayout.of(specs), 1)
            for view, tensor in zip(arena.views(0), model.state_dict().values(), strict=True):
                view.copy_(tensor)
            arena.close()
        return {"type": "status", "names": names, "specs": specs}

    def run_fp64(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reference in float64 on slot ``slot``'s inputs, into slot 0 of ``out_key``'s
        arena (a one-slot arena of float64 outputs)."""
        seed, slot = int(request["seed"]), int(request["slot"])
        ins, _, scalars = self.arenas[request["key"]]
        outs = self.arenas[request["out_key"]][1]
        try:
            model = self.fp64.get(seed) or copy.deepcopy(self.models[seed]).double()
            self.fp64[seed] = model
            args = [scalars.get(i) if v is None else
                    (v.double() if v.is_floating_point() else v)
                    for i, v in enumerate(ins.views(slot))]
            with torch.no_grad():
                value = model(*args)
        except Exception as exc:  # e.g. integer-only models: no precision question to ask
            return {"type": "status", "ok": False, "error": error_text(exc, "fp64")[:300]}
        items = list(value) if isinstance(value, tuple | list) else [value]
        for item, view in zip(items, outs.views(0), strict=True):
            view.copy_(item.to(view.dtype) if item.shape == view.shape else view)
        return {"type": "status", "ok": True}


def _jsonable(value: Any, what: str) -> Any:
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v, what) for v in value]
    raise RunnerError("task", f"{what} holds a {type(value).__name__}; only tensors and plain "
                              "numbers/strings can be passed to a sandboxed candidate")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernelwright.tools.evaluate.reference_runner")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--task", type=Path, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--cpu-s", type=int, required=True)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    faulthandler.enable()
    apply_hard_limits(args.memory_mb, args.cpu_s)
    if args.threads:
        torch.set_num_threads(args.threads)
    sock = socket.socket(fileno=args.fd)
    try:
        server = ReferenceServer(sock, args.task)
    except Exception as exc:
        from kernelwright.tools.evaluate import protocol

        protocol.send(sock, {"type": "error", "level": "task",
                             "error": error_text(exc, "importing the task")})
        return 1
    from kernelwright.tools.evaluate import protocol

    protocol.send(sock, {"type": "ready"})
    return server.serve()


if __name__ == "__main__":
    sys.exit(main())
