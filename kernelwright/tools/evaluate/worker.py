"""The evaluation worker process: ``python -m kernelwright.tools.evaluate.worker``.

It talks to the harness over two dedicated pipes (``--in``/``--out`` file descriptors passed
with ``pass_fds``), never over stdout, which candidate code may print to. Its address space is
capped before torch is imported. Messages are length-prefixed JSON (see :mod:`_protocol`).
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import traceback

from kernelwright.tools.evaluate import _protocol
from kernelwright.tools.evaluate.sandbox import limit_memory


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kernelwright.tools.evaluate.worker")
    parser.add_argument("--in", dest="fd_in", type=int, required=True)
    parser.add_argument("--out", dest="fd_out", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Serve ``init``, then ``eval`` requests until ``exit`` or end of input."""
    args = _parse(argv)
    faulthandler.enable()  # a segfault prints a Python traceback to the captured stderr
    if args.memory_mb:
        limit_memory(args.memory_mb)
    from kernelwright.tools.evaluate.session import WorkerSession, memory_status

    fd_in, fd_out = args.fd_in, args.fd_out
    session = None
    while True:
        try:
            request = _protocol.receive(fd_in)
        except _protocol.ChannelClosed:
            return 0
        op = request.get("op")
        if op == "exit":
            return 0
        try:
            if op == "init":
                session = WorkerSession(request["task_path"], request["contract"])
                reply = {"ready": True, "pid": os.getpid(), "memory_mb": memory_status()}
            elif op == "eval" and session is not None:
                result = session.evaluate(request, lambda m: _protocol.send(fd_out, m))
                reply = {"result": result, "memory_mb": memory_status()}
            else:
                reply = {"fatal": f"unexpected request {op!r}"}
        except Exception as exc:  # a harness bug or a broken task: report, keep serving
            reply = {"fatal": "".join(traceback.format_exception(exc))[-4000:]}
        _protocol.send(fd_out, reply)


if __name__ == "__main__":
    sys.exit(main())
