"""The framed protocol between the orchestrator and its runners, over a Unix socket pair.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (never a
pickle: the orchestrator never unpickles what candidate code could have written). The
orchestrator may attach file descriptors (shared-memory arenas) to a frame with
``SCM_RIGHTS``; a runner never can (the orchestrator reads without an ancillary buffer, so the
kernel drops any descriptor a runner tries to pass).

A runner may send only the message types in :data:`RUNNER_MESSAGES`, and only in answer to a
request; anything else is a protocol violation (the orchestrator kills the runner).
Every read has an absolute deadline: a runner that keeps sending never extends it.
"""

from __future__ import annotations

import json
import math
import select
import socket
import struct
import time
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME = 1 << 20  # 1 MiB of JSON: tensors never travel here, only headers and text
MAX_FDS = 8
RUNNER_MESSAGES = frozenset({"ready", "done", "status", "error"})


class ChannelClosed(EOFError):
    """The other end closed the socket (the runner exited or crashed)."""


class ChannelTimeout(TimeoutError):
    """No complete frame arrived before the deadline."""


class ProtocolViolation(ValueError):
    """A frame that is not allowed: too large, not a JSON object, or an unknown type."""


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] = ()) -> None:
    """Write one frame (and attach ``fds``, orchestrator side only)."""
    body = json.dumps(message, allow_nan=False).encode()
    data = HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [data[:HEADER.size]], list(fds))
        data = data[sent:]
    sock.sendall(data)


def receive(sock: socket.socket, deadline: float | None = None) -> dict[str, Any]:
    """Read one frame; ``deadline`` is a ``time.monotonic()`` value (``None``: wait forever).

    Raises:
        ChannelClosed: The peer closed the socket before a whole frame arrived.
        ChannelTimeout: The deadline passed first.
        ProtocolViolation: The frame is oversized or not a JSON object.
    """
    (size,) = HEADER.unpack(_read(sock, HEADER.size, deadline))
    if size > MAX_FRAME:
        raise ProtocolViolation(f"a frame of {size} bytes (the limit is {MAX_FRAME})")
    try:
        message = json.loads(_read(sock, size, deadline))
    except ValueError as exc:
        raise ProtocolViolation(f"a frame that is not JSON ({exc})") from exc
    if not isinstance(message, dict):
        raise ProtocolViolation("a frame that is not a JSON object")
    return message


def receive_with_fds(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """Runner side: one frame and the descriptors attached to its first bytes."""
    head, fds, _, _ = socket.recv_fds(sock, HEADER.size, MAX_FDS)
    if not head:
        raise ChannelClosed("the orchestrator closed the channel")
    head += _read(sock, HEADER.size - len(head), None)
    (size,) = HEADER.unpack(head)
    return json.loads(_read(sock, size, None)), list(fds)


def check_runner_message(message: dict[str, Any], expected: frozenset[str]) -> str:
    """The message's type if it is one a runner may send now; else ``ProtocolViolation``."""
    kind = message.get("type")
    if kind not in RUNNER_MESSAGES:
        raise ProtocolViolation(f"a message of unknown type {str(kind)[:40]!r}")
    if kind not in expected and kind != "error":
        raise ProtocolViolation(f"an unrequested {kind!r} message (expected "
                                f"{' or '.join(sorted(expected))})")
    return kind


def readable(sock: socket.socket, timeout: float) -> bool:
    """Whether ``sock`` has data (or EOF) within ``timeout`` seconds. ``poll``, not ``select``:
    a long-lived process (a campaign, a test session) may hold descriptors past 1024, which
    ``select`` cannot watch."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(max(0, math.ceil(timeout * 1000))))


def _read(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not readable(sock, wait):
                raise ChannelTimeout(f"no complete message before the deadline ({size} bytes "
                                     "missing)")
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ChannelClosed("the channel was closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
