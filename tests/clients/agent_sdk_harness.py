"""The real Claude Agent SDK (`claude-agent-sdk`, which bundles the claude binary) for tests.

It is a 178 MB wheel, so it is not in the `test` extra (the `claude-agent-sdk` extra names
it). Where the environment lacks it, it is installed once per machine with pip into
`.cache/clients/claude-agent-sdk` (ignored by git, like the npm clients) and imported from
there. When pip cannot get it the tests skip with the reason, unless
`SIGNOFF_REQUIRE_CLIENTS` is set (CI): then they fail.
"""

from __future__ import annotations

import fcntl
import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = "claude-agent-sdk"
VERSION = "0.2.189"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "clients" / "claude-agent-sdk"


def _unavailable(reason: str) -> None:
    if os.environ.get("SIGNOFF_REQUIRE_CLIENTS"):
        pytest.fail(f"SIGNOFF_REQUIRE_CLIENTS is set but {PACKAGE} is unavailable: {reason}")
    pytest.skip(f"{PACKAGE} unavailable (set SIGNOFF_REQUIRE_CLIENTS to fail instead): {reason}")


def _import() -> ModuleType | None:
    try:
        return importlib.import_module("claude_agent_sdk")
    except ImportError:
        return None


def claude_agent_sdk() -> ModuleType:
    """The SDK module, installing it into the cache first if need be."""
    found = _import()
    if found is not None:
        return found
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE.parent / "claude-agent-sdk.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time
        if not (CACHE / "claude_agent_sdk").is_dir():
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--target",
                    str(CACHE),
                    f"{PACKAGE}=={VERSION}",
                ],
                capture_output=True,
                text=True,
                timeout=1800,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if done.returncode != 0:
                _unavailable(f"pip install failed: {done.stderr.strip()[-1500:]}")
    sys.path.append(str(CACHE))  # after the venv: its packages win where both have one
    found = _import()
    if found is None:
        _unavailable(f"installed into {CACHE} but it does not import")
    assert found is not None
    return found
