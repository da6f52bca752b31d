"""The `execute_command` runner: bash -c in its own process group, never interactive.

Output is kept head and tail (`MAX_OUTPUT_BYTES`, the cut is noted); on timeout the whole
process group is killed; background processes that hold the output open are not waited for.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import time

from ..exceptions import ToolError
from ..keys import SECRET_ENV

MAX_OUTPUT_BYTES = 30_000  # head + tail of command output kept for the model
DEFAULT_TIMEOUT = 60.0


def run_command(
    command: str,
    cwd: str,
    limit: float,
    *,
    max_output: int = MAX_OUTPUT_BYTES,
    idempotency_key: str | None = None,
) -> str:
    """Run `bash -c command` in `cwd`: exit code and output (head and tail kept)."""
    bash = shutil.which("bash")
    if bash is None:
        raise ToolError("execute_command: bash is not installed")
    env = dict(os.environ)
    for name in SECRET_ENV:  # signoff's own keys are never the agent's to read
        env.pop(name, None)
    # Never interactive: no pager, no credential prompt waits for a person who isn't there.
    env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
    if idempotency_key:
        env["SIGNOFF_IDEMPOTENCY_KEY"] = idempotency_key
    proc = subprocess.Popen(
        [bash, "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    capture = _Capture(max_output)
    timed_out, lingering = _pump(proc, capture, limit)
    code = proc.wait()
    if timed_out:
        head = f"timed out after {limit:g} s: the command and its children were killed"
    elif code < 0:
        head = f"killed by signal {-code}"
    else:
        head = f"exit code: {code}"
    if lingering:
        head += (
            "\n(background processes still hold the output open; stopped reading "
            "after the command exited)"
        )
    return f"{head}\n{capture.text()}" if capture.total else f"{head}\n(no output)"


class _Capture:
    """Keeps the first and last `limit/2` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head, self.tail = bytearray(), bytearray()
        self.total = self.lines = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.half:
            del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if omitted <= 0:
            return head + tail
        lines = self.lines - self.head.count(b"\n") - self.tail.count(b"\n")
        return f"{head}\n[... {omitted} bytes ({lines} lines) omitted ...]\n{tail}"


def _pump(proc: subprocess.Popen[bytes], capture: _Capture, limit: float) -> tuple[bool, bool]:
    """Read output until EOF or the deadline; kill the whole process group on timeout.

    Returns (timed out, stopped reading while background processes held the pipe).
    """
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + limit
    exited_at: float | None = None
    timed_out = lingering = False
    try:
        while True:
            now = time.monotonic()
            if not timed_out and now >= deadline and proc.poll() is None:
                timed_out = True
                _kill_group(proc.pid)
                deadline = now + 2.0  # drain what the killed group wrote, briefly
            elif timed_out and now >= deadline:
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and not timed_out and now - exited_at > 0.5:
                lingering = True  # e.g. `server &`: don't wait for it
                break
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                capture.add(chunk)
    finally:
        proc.stdout.close()
    return timed_out, lingering


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
