"""A tiny Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket needed).

Chromium reads NUL-terminated JSON commands on fd 3 and writes NUL-terminated JSON replies and
events on fd 4. We open a page, collect console messages, uncaught exceptions, log entries and
every network request, wait for the load event, and take a PNG screenshot.
"""

from __future__ import annotations

import base64
import io
import json
import os
import select
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


# What the page looks like once laid out: each chart's size and colour, the verdict banner's
# colour, whether anything overflows the window sideways, and how many pixels of each
# scrolled table are hidden.
LAYOUT = """JSON.stringify({
  svgs: [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect();
    return [Math.round(r.width), Math.round(r.height), Math.round(r.right)]; }),
  verdict: [...document.querySelectorAll('.verdict')].map(
    v => getComputedStyle(v).backgroundColor),
  scrollWidth: document.documentElement.scrollWidth,
  scrollHeight: document.documentElement.scrollHeight,
  innerWidth: window.innerWidth,
  hidden: [...document.querySelectorAll('.scroll')].map(d => d.scrollWidth - d.clientWidth),
  clientWidth: document.documentElement.clientWidth,
})"""


def find_chromium() -> str | None:
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name) or (name if os.path.isfile(name) else None)
        if path:
            return path
    return None


@dataclass
class PageLoad:
    """What the browser saw while loading one page."""

    console: list[dict] = field(default_factory=list)  # Runtime.consoleAPICalled params
    exceptions: list[dict] = field(default_factory=list)  # Runtime.exceptionThrown params
    log: list[dict] = field(default_factory=list)  # Log.entryAdded entries
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    text: str = ""  # document.body.innerText
    screenshot: bytes = b""  # the whole page (the viewport is grown to the page's height)
    layout: dict = field(default_factory=dict)  # see LAYOUT

    def blank_share(self) -> float:
        """The tallest band of plain white rows in the screenshot, as a share of its height."""
        from PIL import Image

        image = Image.open(io.BytesIO(self.screenshot)).convert("L")
        width, height = image.size
        pixels = image.load()
        longest = run = 0
        for y in range(height):
            blank = all(pixels[x, y] >= 250 for x in range(0, width, 4))
            run = run + 1 if blank else 0
            longest = max(longest, run)
        return longest / height

    @property
    def errors(self) -> list[str]:
        """Console errors/warnings, uncaught exceptions and error-level log entries, as text."""
        out = [
            f"console.{m['type']}: {[a.get('value') for a in m.get('args', [])]}"
            for m in self.console
            if m["type"] in ("error", "warning", "assert")
        ]
        out += [f"exception: {e['exceptionDetails'].get('text')}" for e in self.exceptions]
        out += [f"log {e['level']}: {e.get('text')} ({e.get('url')})" for e in self.log
                if e["level"] in ("error", "warning")]  # fmt: skip
        return out


class _Pipe:
    def __init__(self, proc: subprocess.Popen, write_fd: int, read_fd: int) -> None:
        self.proc, self.write_fd, self.read_fd = proc, write_fd, read_fd
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.write_fd, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read(timeout=30)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read(timeout=max(0.1, deadline - time.monotonic())))
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {timeout} s")

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.events.append(self._read(timeout=deadline - time.monotonic()))
            except TimeoutError:
                return

    def _read(self, timeout: float) -> dict:
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.read_fd], [], [], timeout)
            if not ready:
                raise TimeoutError("chromium sent nothing")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the debugging pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)


def load_page(url: str, *, width: int = 1280, height: int = 2000, timeout: float = 60) -> PageLoad:
    """Open ``url`` in headless Chromium and report what happened (see :class:`PageLoad`)."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("chromium is not installed: apt-get install -y chromium")
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    with tempfile.TemporaryDirectory(prefix="kw-chromium-") as profile:
        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
                "--disable-extensions", f"--window-size={width},{height}",
                "about:blank"]  # fmt: skip

        # The shell moves our pipe ends to the fds chromium expects (3: commands, 4: replies).
        command = " ".join(shlex.quote(a) for a in args)
        redirect = f"exec {command} 3<&{to_browser_r} 4>&{from_browser_w}"
        proc = subprocess.Popen(["bash", "-c", redirect], pass_fds=(to_browser_r, from_browser_w),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        os.close(to_browser_r)
        os.close(from_browser_w)
        try:
            return _drive(_Pipe(proc, to_browser_w, from_browser_r), url, width, height, timeout)
        finally:
            os.close(to_browser_w)
            os.close(from_browser_r)
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _drive(pipe: _Pipe, url: str, width: int, height: int, timeout: float) -> PageLoad:
    target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
        "sessionId"
    ]
    for domain in ("Runtime", "Log", "Page", "Network"):
        pipe.send(f"{domain}.enable", session=session)
    pipe.send("Emulation.setDeviceMetricsOverride",
              {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
              session=session)  # fmt: skip
    pipe.events.clear()  # about:blank's own events
    pipe.send("Page.navigate", {"url": url}, session=session)
    pipe.wait_event("Page.loadEventFired", timeout)
    pipe.drain(1.0)  # late console messages
    load = PageLoad()
    for event in pipe.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            load.console.append(params)
        elif method == "Runtime.exceptionThrown":
            load.exceptions.append(params)
        elif method == "Log.entryAdded":
            load.log.append(params["entry"])
        elif method == "Network.requestWillBeSent":
            load.requests.append(params["request"]["url"])
    text = pipe.send("Runtime.evaluate", {"expression": "document.body.innerText",
                                          "returnByValue": True}, session=session)  # fmt: skip
    load.text = text["result"].get("value", "")
    layout = pipe.send("Runtime.evaluate", {"expression": LAYOUT, "returnByValue": True},
                       session=session)  # fmt: skip
    load.layout = json.loads(layout["result"]["value"])
    full = min(max(height, load.layout["scrollHeight"]), 16000)
    pipe.send("Emulation.setDeviceMetricsOverride",
              {"width": width, "height": full, "deviceScaleFactor": 1, "mobile": False},
              session=session)  # fmt: skip
    shot = pipe.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                     session=session)  # fmt: skip
    load.screenshot = base64.b64decode(shot["data"])
    return load
