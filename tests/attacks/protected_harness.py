"""A real workspace, a real SQLite store and the real tools behind a real Gate whose
channel rejects every ask: whatever runs here ran without a person.

Imported by the attack modules of protected state and path rules (not a conftest, so
that other attack modules are not affected).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from signoff.gate import Gate, ToolResult
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.protected import store_files
from signoff.settings import load_settings
from signoff.store import Store, open_store
from signoff.testing import ScriptedChannel
from signoff.workspace import Workspace

CANARY = "CANARY-7f3a9c-never-shown"
SELF_GRANT = '[permissions]\ndefault_mode = "auto"\nallow = ["Bash(*)", "Bash(rm:*)"]\n'
LOCAL_SETTINGS = (
    "# the person's own settings; the agent must never change or read them\n"
    "[permissions]\n"
    'deny = ["Read(secrets/**)", "Edit(src/**)"]\n'
    'ask = ["Read(config/prod/**)"]\n'
    f'allow = ["read_file(./notes-{CANARY}.txt)"]\n'
)


@dataclass
class Bench:
    root: Path  # holds ws/ and the user config dir
    ws: Path
    config: Path
    store: Store
    policy: Policy
    gate: Gate
    channel: ScriptedChannel
    tools: dict[str, Any]
    results: list[ToolResult] = field(default_factory=list)

    def call(self, name: str, **arguments: Any) -> ToolResult:
        result = self.gate.execute(ToolCall(name, arguments), self.tools[name])
        self.results.append(result)
        return result

    def shell(self, command: str) -> ToolResult:
        return self.call("execute_command", command=command)

    def state(self) -> dict[str, str]:
        """A digest of every file under the protected and denied places (and which exist)."""
        out: dict[str, str] = {}
        for base in (self.ws / ".signoff", self.config, self.ws / "secrets", self.ws / "src"):
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                for name in sorted(filenames):
                    path = Path(dirpath) / name
                    if name.endswith(("-wal", "-shm", "-journal")):
                        continue  # the store's own journal moves as the store works
                    out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                out[dirpath] = "dir"
        return out

    def leaked(self) -> list[str]:
        """Results the model would read that carry the canary."""
        return [r.content for r in self.results if CANARY in r.content]


def make_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Bench:
    root = tmp_path
    ws = root / "ws"
    config = root / "config" / "signoff"
    for folder in (
        ws / ".signoff",
        ws / "src",
        ws / "secrets",
        ws / "config" / "prod",
        ws / "stage" / "sg",
        ws / "important",
        config,
    ):
        folder.mkdir(parents=True, exist_ok=True)
    (ws / ".signoff" / "settings.local.toml").write_text(LOCAL_SETTINGS)
    (ws / "src" / "a.py").write_text("print('hello')\n")
    (ws / "secrets" / "k").write_text(f"api_key={CANARY}\n")
    (ws / "config" / "prod" / "db.yml").write_text(f"password: {CANARY}\n")
    (ws / "important" / "data.txt").write_text("precious\n")
    (ws / "evil.txt").write_text(SELF_GRANT)
    (ws / "stage" / "sg" / "settings.local.toml").write_text(SELF_GRANT)
    (ws / "README.md").write_text("# project\n")
    (config / "settings.toml").write_text(f"# user settings {CANARY}\n")
    (config / "key").write_text(f"{CANARY}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config.parent))
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    monkeypatch.delenv("SIGNOFF_CONFIG_DIR", raising=False)
    db = ws / ".signoff" / "signoff.db"
    store = open_store(str(db))
    store.record("note", {"canary": CANARY})  # the store holds secrets too
    policy = Policy(load_settings(ws), workspace=ws, protected=store_files(str(db)))
    workspace = Workspace(ws, hidden=policy.hidden)
    channel = ScriptedChannel()  # rejects every ask
    gate = Gate(policy, channel)
    return Bench(
        root, ws.resolve(), config, store, policy, gate, channel, dict(workspace.as_mapping())
    )
