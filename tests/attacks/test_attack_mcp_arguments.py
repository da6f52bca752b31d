"""Issue 26, item 2: what the MCP proxy cannot classify, it does not pass as harmless.

An upstream tool declared from its input schema (the schema an ordinary MCP Python SDK
server sends: pydantic's) names its paths the ordinary ways: a name no list holds
(`file_name`), `Optional[str]` (`anyOf` with null), a model (`$ref` into `$defs`), a list
of models, a map, a union, JSON inside a string. Each call below is judged by the policy
exactly as the proxy judges it (`mcp.declare.declare` -> `Policy.evaluate`), with the
project denying `Read(secrets/**)` and `Edit(config/**)` and allowing every proxied tool
(`*` and each by name): signoff's own state and a denied path are denied, a secret or a
path outside the workspace asks, and plain text still runs without a question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, create_model

from signoff.mcp.declare import Hints, declare
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.tools import Registry

WRITE = Hints(read_only=False, destructive=False, open_world=False)  # notify by tier
READ = Hints(read_only=True)  # allow by tier
DESTRUCTIVE = Hints(read_only=False, destructive=True, open_world=False)
STATE = ".signoff/settings.local.toml"


class Target(BaseModel):
    path: str
    mode: str | None = None


class Where(BaseModel):  # a model whose string names no role at all
    where: str


class Batch(BaseModel):
    items: list[Where]
    labels: dict[str, str] = {}


def schema(**fields: Any) -> dict[str, Any]:
    """The input schema the MCP Python SDK sends for a function with these parameters."""
    return create_model("toolArguments", **fields).model_json_schema(by_alias=True)


TOOLS: dict[str, tuple[dict[str, Any], Hints]] = {
    "save": (schema(file_name=(str, ...), content=(str, ...)), WRITE),
    "save_to": (schema(content=(str, ""), path=(str | None, None)), WRITE),
    "save_model": (schema(target=(Target, ...), content=(str, "")), WRITE),
    "save_where": (schema(spot=(Where, ...)), WRITE),
    "save_batch": (schema(batch=(Batch, ...)), WRITE),
    "save_many": (schema(targets=(list[Target], ...)), WRITE),
    "save_map": (schema(files=(dict[str, str], ...)), WRITE),
    "save_union": (schema(to=(int | str | Where, ...)), WRITE),
    "save_path": (schema(where=(Path, ...), content=(str, "")), WRITE),
    "drop": (schema(file_name=(str, ...)), DESTRUCTIVE),
    "peek": (schema(file_name=(str, ...)), READ),
    "peek_model": (schema(spot=(Where, ...)), READ),
    "lookup": (schema(query=(str, ...), limit=(int, 10)), READ),
    "nested": (schema(data=(Any, ...)), WRITE),
}


def policy(ws: Path, mode: str = "default", *, allowing: bool = True) -> Policy:
    specs = {
        f"srv__{name}": declare(f"srv__{name}", "", sch, hints, None, trusted=False)
        for name, (sch, hints) in TOOLS.items()
    }
    allow = ["*", *specs, "Edit", "Read"] if allowing else []
    settings = Settings.from_rules(deny=["Read(secrets/**)", "Edit(config/**)"], allow=allow)
    return Policy(settings, workspace=ws, registry=Registry(specs), mode=mode)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    for folder in (".signoff", "secrets", "config", "notes", "keys"):
        (root / folder).mkdir(parents=True)
    (root / "secrets" / "k").write_text("the secret\n")
    (root / ".signoff" / "signoff.db").write_text("")
    (root / "notes" / "state").symlink_to(root / ".signoff")
    monkeypatch.setenv("PROJECT_DIR", str(root))
    monkeypatch.chdir(root)
    return root.resolve()


LOCKFILE = {"packages": {f"node_modules/p{i}": {"version": "1.0.0"} for i in range(3000)}}


def deep(levels: int, value: Any = STATE) -> Any:
    for _ in range(levels):
        value = [value]
    return value


# (tool, arguments; "{ws}" is the workspace): signoff's own state or a denied path
DENIED = [
    ("save", {"file_name": STATE, "content": "default_mode = 'auto'"}),
    ("save", {"file_name": "./.signoff/../.signoff/settings.toml", "content": "x"}),
    ("save", {"file_name": "{ws}/.signoff/settings.local.toml", "content": "x"}),
    ("save", {"file_name": ".SIGNOFF/settings.local.toml", "content": "x"}),
    ("save", {"file_name": "notes/state/settings.local.toml", "content": "x"}),  # a link
    ("save", {"file_name": f"  {STATE}\n", "content": "x"}),  # trimmed by the tool
    ("save", {"file_name": "file://{ws}/.signoff/settings.local.toml", "content": "x"}),
    ("save", {"file_name": "%2esignoff/settings.local.toml", "content": "x"}),
    ("save", {"file_name": ".signoff\\settings.local.toml", "content": "x"}),
    ("save", {"file_name": "$PROJECT_DIR/.signoff/settings.local.toml", "content": "x"}),
    ("save", {"file_name": "notes/a.txt", "content": STATE}),  # any string may be the path
    ("save", {"file_name": "config/prod.yml", "content": "x"}),
    ("save", {"file_name": "./config/../config/prod.yml", "content": "x"}),
    ("save_to", {"path": STATE, "content": "x"}),
    ("save_to", {"path": "config/prod.yml", "content": "x"}),
    ("save_model", {"target": {"path": STATE}}),
    ("save_model", {"target": {"path": "notes/x", "mode": STATE}}),
    ("save_model", {"target": json.dumps({"path": STATE})}),  # the SDK decodes it
    ("save_model", {"target": {"path": "config/prod.yml"}}),
    ("save_where", {"spot": {"where": STATE}}),
    ("save_where", {"spot": {"where": "config/prod.yml"}}),
    ("save_batch", {"batch": {"items": [{"where": "notes/a"}, {"where": STATE}]}}),
    ("save_batch", {"batch": {"items": [], "labels": {STATE: "x"}}}),  # a key
    ("save_many", {"targets": [{"path": "notes/a"}, {"path": STATE}]}),
    ("save_map", {"files": {STATE: "default_mode = 'auto'"}}),
    ("save_map", {"files": {"config/prod.yml": "x"}}),
    ("save_union", {"to": STATE}),
    ("save_union", {"to": {"where": STATE}}),
    ("save_union", {"to": json.dumps({"where": STATE})}),  # the SDK decodes it: not a str
    ("save_path", {"where": STATE}),
    ("drop", {"file_name": STATE}),
    ("peek", {"file_name": "secrets/k"}),
    ("peek", {"file_name": "{ws}/secrets/k"}),
    ("peek", {"file_name": "./secrets//k"}),
    ("peek", {"file_name": ".signoff/signoff.db"}),
    ("peek_model", {"spot": {"where": "secrets/k"}}),
    ("peek_model", {"spot": json.dumps({"where": ".signoff/signoff.db"})}),
    ("lookup", {"query": "secrets/k"}),
    ("lookup", {"query": "secrets"}),  # the folder itself, as `ls secrets` is denied
    ("nested", {"data": {"a": [{"b": [json.dumps({"c": STATE})]}]}}),
]


def _call(name: str, arguments: dict[str, Any], ws: Path) -> ToolCall:
    text = json.dumps(arguments).replace("{ws}", str(ws))
    return ToolCall(f"srv__{name}", json.loads(text))


@pytest.mark.parametrize(("name", "arguments"), DENIED)
@pytest.mark.parametrize("mode", ["default", "accept-edits", "auto"])
def test_state_and_denied_paths_are_denied_in_any_shape(
    ws: Path, mode: str, name: str, arguments: dict[str, Any]
) -> None:
    verdict = policy(ws, mode).evaluate(_call(name, arguments, ws))
    assert verdict.effect == "deny", (verdict.effect, verdict.reasons)


# A person decides: a secret, a path outside the workspace the tool may write or that
# exists to be read, a glob that may reach a denied path, arguments too deep to read.
ASKED = [
    ("peek", {"file_name": ".env"}),
    ("peek", {"file_name": "keys/id_rsa"}),
    ("peek_model", {"spot": {"where": "deploy.pem"}}),
    ("peek", {"file_name": "/etc/hostname"}),
    ("peek", {"file_name": "../"}),
    ("lookup", {"query": "secrets/*"}),
    ("save", {"file_name": "/tmp/elsewhere/x.txt", "content": "x"}),
    ("save", {"file_name": "~/.profile", "content": "x"}),
    ("save", {"file_name": "notes/../../outside.txt", "content": "x"}),
    ("save", {"file_name": ".git/hooks/pre-commit", "content": "x"}),
    ("save_where", {"spot": {"where": ".env"}}),
    ("nested", {"data": deep(40, json.dumps(deep(40)))}),  # 80 levels, JSON in a string
    ("nested", {"data": [f"notes/{i}" for i in range(5000)]}),  # too many to judge
    ("nested", {"data": [f"notes/*{i}" for i in range(100)]}),  # too many globs
]


@pytest.mark.parametrize(("name", "arguments"), ASKED)
@pytest.mark.parametrize("mode", ["default", "accept-edits"])
def test_secrets_and_paths_outside_ask(
    ws: Path, mode: str, name: str, arguments: dict[str, Any]
) -> None:
    verdict = policy(ws, mode).evaluate(_call(name, arguments, ws))
    assert verdict.effect == "ask", (verdict.effect, verdict.reasons)


def test_arguments_too_deep_to_read_stay_an_ask_with_approvals_off(ws: Path) -> None:
    arguments = {"data": deep(40, json.dumps(deep(40)))}
    verdict = policy(ws, "auto").evaluate(_call("nested", arguments, ws))
    assert verdict.effect == "ask" and verdict.rule == "protected", verdict


# Plain text is no path: these run at once (allow for a read tool, notify for a write).
PLAIN = [
    ("lookup", {"query": "how do I list the files?"}, "allow"),
    ("lookup", {"query": "/api/v1/users"}, "allow"),  # names nothing that exists
    ("lookup", {"query": "SELECT * FROM users WHERE id = 1"}, "allow"),
    ("lookup", {"query": "where are the secrets kept?", "limit": 3}, "allow"),
    ("lookup", {"query": '{"q": "notes", "n": [1, 2]}'}, "allow"),
    ("peek", {"file_name": "notes/today.md"}, "allow"),
    ("peek_model", {"spot": {"where": "notes"}}, "allow"),
    ("save", {"file_name": "notes/today.md", "content": "hello\n"}, "notify"),
    ("save", {"file_name": "notes/a.js", "content": "// header\n/* x */ let a = 1;\n"}, "notify"),
    ("save", {"file_name": "notes/a.py", "content": "#!/usr/bin/env python\nprint(1)\n"}, "notify"),
    ("save_where", {"spot": {"where": "notes/b.txt"}}, "notify"),
    ("save_map", {"files": {"notes/c.txt": "text /etc/passwd"}}, "notify"),
    # a file's content is text to the tool (a `str`): JSON in it is not read as arguments
    ("save", {"file_name": "notes/lock.json", "content": json.dumps(LOCKFILE)}, "notify"),
    ("save", {"file_name": "notes/x.json", "content": json.dumps({"f": ".env"})}, "notify"),
]


@pytest.mark.parametrize(("name", "arguments", "effect"), PLAIN)
def test_plain_text_runs_without_a_question(
    ws: Path, name: str, arguments: dict[str, Any], effect: str
) -> None:
    verdict = policy(ws, allowing=False).evaluate(_call(name, arguments, ws))
    assert verdict.effect == effect, (verdict.effect, verdict.reasons)


def test_the_values_judged_are_the_values_the_sdk_hands_the_tool(ws: Path) -> None:
    """What the SDK's argument handling passes to the function (JSON in a string decoded,
    a model built) holds the judged strings: none it receives was unseen."""
    sdk = pytest.importorskip("mcp.server.mcpserver.utilities.func_metadata")

    def save_model(target: Target, content: str = "") -> str:
        return ""

    meta = sdk.func_metadata(save_model)
    sent = {"target": json.dumps({"path": STATE})}
    received = meta.validate_arguments(sent)
    assert received["target"].path == STATE
    assert policy(ws).evaluate(_call("save_model", sent, ws)).effect == "deny"
