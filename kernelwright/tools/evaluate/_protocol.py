"""Length-prefixed JSON messages over a pipe between the harness and its worker.

JSON, not pickle: the parent never unpickles what candidate code could have written.
A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

_HEADER = struct.Struct(">I")
MAX_MESSAGE = 64 * 1024 * 1024


class ChannelClosed(EOFError):
    """The other end closed the pipe (the worker exited or crashed)."""


class ChannelTimeout(TimeoutError):
    """No complete message arrived before the deadline."""


def send(fd: int, message: dict[str, Any]) -> None:
    """Write one framed message to ``fd`` (blocking until all of it is written)."""
    body = json.dumps(message).encode()
    data = _HEADER.pack(len(body)) + body
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def receive(fd: int, deadline: float | None = None) -> dict[str, Any]:
    """Read one framed message from ``fd``; ``deadline`` is a ``time.monotonic()`` value.

    Raises:
        ChannelClosed: The writer closed the pipe before a whole message arrived.
        ChannelTimeout: The deadline passed first.
    """
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_MESSAGE:
        raise ChannelClosed(f"message of {size} bytes is larger than {MAX_MESSAGE}")
    return json.loads(_read_exact(fd, size, deadline))


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise ChannelTimeout(f"no message within the deadline ({remaining} bytes missing)")
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChannelClosed("the pipe was closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
