"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`): a
page loaded at an exact viewport, JavaScript evaluated in it (layout measured with
getBoundingClientRect), a screenshot of what it shows. Standard library only: Chromium reads
commands on its file descriptor 3 and writes answers on 4, each a JSON text ended by a NUL."""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

COMMAND_TIMEOUT_SECONDS = 30
POLL_SECONDS = 0.2
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip


class Page:
    """One tab of a Chromium started for it; use as a context manager."""

    def __init__(self, executable: str, profile: Path, width: int, height: int) -> None:
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()

        def onto_3_and_4() -> None:  # in the child, before exec
            os.dup2(commands_read, 3)
            os.dup2(answers_write, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=onto_3_and_4,
        )  # fmt: skip
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)  # fmt: skip

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *_exc: object) -> None:
        try:
            self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        finally:
            os.close(self._commands)
            os.close(self._answers)
            try:
                self.process.wait(timeout=COMMAND_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events in between are skipped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + COMMAND_TIMEOUT_SECONDS
        while True:
            answer = self._read_message(method, deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def _read_message(self, method: str, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise TimeoutError(f"{method}: no answer within {COMMAND_TIMEOUT_SECONDS} s")
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(text)

    def open(self, url: str, ready: str, timeout: float = COMMAND_TIMEOUT_SECONDS) -> None:
        """Load `url` and wait until the JavaScript expression `ready` is true."""
        self.send("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"Boolean({ready})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url}: {ready} still false after {timeout} s")
            time.sleep(POLL_SECONDS)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable)."""
        result = self.send("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True)  # fmt: skip
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """What the viewport shows, as PNG."""
        data = self.send("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))
