"""The framework adapters' "decided elsewhere, resumed in a fresh process" step: a
`signoff approve` in one process, then the framework's driver script (tests/fw_*.py) in
another, both on the same store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def approve_then_resume(
    tmp_path: Path, request_id: str, driver: str, steps: Any, thread: str = "t1"
) -> dict[str, Any]:
    """Approve `request_id` with the CLI, then run `driver` (fw_*.py) on the thread in a
    fresh process; what the driver printed (JSON)."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}:{HERE}"}
    db = str(tmp_path / "s.db")

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done

    run(["-m", "signoff", "approve", request_id, "--db", db])
    again = run([str(HERE / driver), str(tmp_path), db, thread, json.dumps(steps)])
    result = json.loads(again.stdout)
    assert isinstance(result, dict)
    return result


def worker_env(tmp_path: Path, steps: Any) -> dict[str, str]:
    """The environment of a process that rebuilds a test agent from its factory
    (fw_*.py `factory()`: it takes no arguments, so it reads these)."""
    return {
        **os.environ,
        "PYTHONPATH": f"{SRC}:{HERE}",
        "FW_WORKSPACE": str(tmp_path),
        "FW_DB": str(tmp_path / "s.db"),
        "FW_STEPS": json.dumps(steps),
    }


def signoff(tmp_path: Path, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`signoff ARGV --db <tmp_path>/s.db` in another process; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-m", "signoff", *argv, "--db", str(tmp_path / "s.db")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done
