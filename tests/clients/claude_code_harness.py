"""The real Claude Code client, installed from npm into an ignored cache, run against the
FAKE Anthropic API (`signoff.llm.fake_anthropic`) in a scratch project with a scratch HOME.

The install happens once per machine (a file lock keeps parallel pytest workers from racing)
into `.cache/clients/claude-code` at the top of the checkout. When npm or its registry cannot
be reached the tests skip with the reason, unless `SIGNOFF_REQUIRE_CLIENTS` is set (CI sets
it): then they fail, so a green run always means the real client ran.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from signoff.llm.fake_anthropic import FakeAnthropicServer

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.332"  # pinned: hook behaviour changes between releases
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "clients" / "claude-code"
VENV_BIN = Path(sys.executable).parent  # where `signoff` is installed beside this python


def _unavailable(reason: str) -> None:
    if os.environ.get("SIGNOFF_REQUIRE_CLIENTS"):
        pytest.fail(f"SIGNOFF_REQUIRE_CLIENTS is set but {PACKAGE} is unavailable: {reason}")
    pytest.skip(f"{PACKAGE} unavailable (set SIGNOFF_REQUIRE_CLIENTS to fail instead): {reason}")


def _version_of(binary: Path) -> str | None:
    try:
        done = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except OSError:
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


def _binaries() -> list[Path]:
    # The wrapper's bin/claude.exe is a stub until its postinstall copies the native binary
    # over it; without install scripts the platform package holds the binary.
    modules = CACHE / "node_modules" / "@anthropic-ai"
    found = [modules / "claude-code" / "bin" / "claude.exe"]
    found += sorted(modules.glob("claude-code-*/claude"))
    return found


def _installed() -> Path | None:
    for binary in _binaries():
        if binary.is_file() and _version_of(binary) == VERSION:
            return binary
    return None


def _npm_install(npm: str) -> None:
    # --ignore-scripts: the package's postinstall only copies the native binary (which
    # _binaries finds where it is), and needs a newer node than Debian ships; nothing of
    # the package runs at install time, as root
    command = [
        npm,
        "install",
        "--prefix",
        str(CACHE),
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
    ]
    try:
        done = subprocess.run(
            [*command, f"{PACKAGE}@{VERSION}"],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _unavailable("npm install took longer than 15 minutes")
        return
    if done.returncode == 0:
        return
    ping = subprocess.run(
        [npm, "ping", "--fetch-retries=0", "--fetch-timeout=30000"],  # one try, not a minute
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if ping.returncode != 0:
        _unavailable(f"the npm registry is unreachable (npm ping exit {ping.returncode})")
    # The registry answers, so this is a real install failure: never a skip.
    pytest.fail(f"npm install {PACKAGE}@{VERSION} failed:\n{done.stderr[-3000:]}")


def claude_code_binary() -> Path:
    """The path of the pinned Claude Code binary, installing it first if need be."""
    npm = shutil.which("npm")
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE.parent / "claude-code.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time; the others then find it
        binary = _installed()
        if binary is None:
            if npm is None:
                _unavailable("npm is not installed")
            assert npm is not None
            _npm_install(npm)
            binary = _installed()
        if binary is None:
            pytest.fail(f"{PACKAGE}@{VERSION} installed into {CACHE} but no binary answers")
        assert binary is not None
        return binary


@dataclass(frozen=True)
class ClaudeRun:
    """One `claude -p` run: its exit code, output, parsed JSON result and wall time."""

    returncode: int
    stdout: str
    stderr: str
    elapsed: float

    @property
    def result(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.stdout)
        except ValueError as exc:
            raise AssertionError(
                f"claude printed no JSON result (exit {self.returncode}):\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
            ) from exc
        assert isinstance(doc, dict), doc
        return doc


@dataclass(frozen=True)
class Started:
    """A `claude -p` run in the background."""

    process: subprocess.Popen[str]
    started: float

    def finish(self, timeout: float = 120) -> ClaudeRun:
        try:
            stdout, stderr = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            stdout, stderr = self.process.communicate()
            raise AssertionError(f"claude still running after {timeout} s:\n{stderr}") from None
        elapsed = time.monotonic() - self.started
        return ClaudeRun(self.process.returncode, stdout, stderr, elapsed)


@dataclass(frozen=True)
class Claude:
    """The installed client, bound to a scratch HOME and project and to the fake API."""

    binary: Path
    home: Path
    project: Path

    def env(self, api: FakeAnthropicServer, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            # the venv first, so a hook that runs `signoff` runs this checkout's
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-tests",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        for name in ("PYTHONPATH", "SIGNOFF_CONFIG_DIR"):
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(extra or {})
        return {k: v for k, v in env.items() if v}  # an empty value unsets a variable

    def command(self, prompt: str, *args: str) -> list[str]:
        return [str(self.binary), "-p", prompt, "--output-format", "json", *args]

    def start(
        self,
        api: FakeAnthropicServer,
        prompt: str,
        *args: str,
        env: dict[str, str] | None = None,
    ) -> Started:
        """The same run in the background, for a test that acts while the client waits."""
        process = subprocess.Popen(
            self.command(prompt, *args),
            cwd=self.project,
            env=self.env(api, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return Started(process, time.monotonic())

    def run(
        self,
        api: FakeAnthropicServer,
        prompt: str,
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> ClaudeRun:
        """`claude -p PROMPT --output-format json ARGS...` in the project, stdin closed."""
        started = time.monotonic()
        done = subprocess.run(
            self.command(prompt, *args),
            cwd=self.project,
            env=self.env(api, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return ClaudeRun(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
