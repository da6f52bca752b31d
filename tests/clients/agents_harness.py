"""The real Codex CLI and Gemini CLI, installed from npm into the ignored cache
`.cache/clients/<name>` (once per machine, under a file lock), run against the FAKE model
APIs of `signoff.llm.fake_agents_api` in a scratch project with a scratch HOME. Where npm
or its registry cannot be reached the tests skip, unless `SIGNOFF_REQUIRE_CLIENTS` is set.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude_code_harness import VENV_BIN

REPO = Path(__file__).resolve().parents[2]
PINNED = {
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini-cli": ("@google/gemini-cli", "0.61.0", "gemini"),
}


def _unavailable(package: str, reason: str) -> None:
    if os.environ.get("SIGNOFF_REQUIRE_CLIENTS"):
        pytest.fail(f"SIGNOFF_REQUIRE_CLIENTS is set but {package} is unavailable: {reason}")
    pytest.skip(f"{package} unavailable (set SIGNOFF_REQUIRE_CLIENTS to fail instead): {reason}")


def _answers(binary: Path, version: str) -> bool:
    if not binary.is_file():
        return False
    try:
        done = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "CODEX_HOME": str(REPO / ".cache" / "clients" / "codex-home")},
            check=False,
        )
    except OSError:
        return False
    return done.returncode == 0 and version in done.stdout


def client_binary(name: str) -> Path:
    """The pinned client's program, installing it with npm first if need be."""
    package, version, program = PINNED[name]
    cache = REPO / ".cache" / "clients" / name
    binary = cache / "node_modules" / ".bin" / program
    cache.mkdir(parents=True, exist_ok=True)
    (REPO / ".cache" / "clients" / "codex-home").mkdir(exist_ok=True)
    with (cache.parent / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _answers(binary, version):
            return binary
        npm = shutil.which("npm")
        if npm is None:
            _unavailable(package, "npm is not installed")
        assert npm is not None
        done = subprocess.run(
            [npm, "install", "--prefix", str(cache), "--no-save", "--no-audit", "--no-fund",
             f"{package}@{version}"],
            capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            ping = subprocess.run(
                [npm, "ping"],
                capture_output=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if ping.returncode != 0:
                _unavailable(
                    package, f"the npm registry is unreachable (npm ping exit {ping.returncode})"
                )
            pytest.fail(f"npm install {package}@{version} failed:\n{done.stderr[-3000:]}")
        if not _answers(binary, version):
            pytest.fail(f"{package}@{version} installed into {cache} but does not answer")
        return binary


@dataclass(frozen=True)
class Agent:
    """A client bound to a scratch HOME and project."""

    name: str
    binary: Path
    home: Path
    project: Path

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "CODEX_HOME": str(self.home / ".codex"),
        }
        for name in ("PYTHONPATH", "SIGNOFF_CONFIG_DIR"):
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(extra or {})
        return env

    def signoff(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(VENV_BIN / "signoff"), *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if check:
            assert done.returncode == 0, f"signoff {' '.join(args)}: {done.stderr}"
        return done

    def run(
        self, argv: list[str], env: dict[str, str], timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.binary), *argv],
            cwd=self.project,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )


def start(agent: Agent, argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """The client in the background, for a test that decides while it waits."""
    return subprocess.Popen(
        [str(agent.binary), *argv],
        cwd=agent.project,
        env=agent.env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def pending(agent: Agent, process: subprocess.Popen[str], deadline: float = 90) -> dict[str, Any]:
    """The one request the hook waits on, read from another process (`signoff inbox`)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        assert process.poll() is None, process.communicate()
        done = agent.signoff("inbox", "--json", check=False)
        if done.returncode != 0:  # the hook has not made the store yet
            assert "no signoff store" in done.stderr, done.stderr
            time.sleep(0.3)
            continue
        listed = json.loads(done.stdout)
        if listed:
            assert len(listed) == 1, listed
            return dict(listed[0])
        time.sleep(0.3)
    raise AssertionError(f"no request in the inbox after {deadline} s")


CODEX_EXEC = ["exec", "--skip-git-repo-check", "--json", "-s", "danger-full-access"]


def gemini_env(base_url: str) -> dict[str, str]:
    return {
        "GEMINI_API_KEY": "fake-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def codex_config(agent: Agent, base_url: str) -> None:
    """Codex's config: the fake as its one model provider."""
    home = agent.home / ".codex"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{base_url}/v1"\nwire_api = "responses"\n'
        'env_key = "FAKE_API_KEY"\n'
    )


def run_codex(agent: Agent, prompt: str) -> subprocess.CompletedProcess[str]:
    return agent.run([*CODEX_EXEC, prompt], {"FAKE_API_KEY": "fake-key"})


def gemini_config(agent: Agent) -> None:
    settings = agent.home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))


def run_gemini(agent: Agent, base_url: str, prompt: str) -> subprocess.CompletedProcess[str]:
    return agent.run(["-p", prompt, "--output-format", "json", "--yolo"], gemini_env(base_url))
