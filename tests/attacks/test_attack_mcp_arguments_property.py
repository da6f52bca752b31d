"""Issue 26, item 2, as a property: whatever shape an ordinary Python MCP server gives its
tool's arguments, a call that hands the tool signoff's own state, a path a rule denies or
a secret never comes out allowed or notify.

Hypothesis writes tool signatures the way people do (str, Path, int, bool; Optional,
lists, dicts, tuples, unions, pydantic models nested in each other), the MCP Python SDK
makes the tool and its input schema from them (`Tool.from_function`, as `@app.tool()` does), and
signoff declares it from that schema (`mcp.declare`), under random annotations, allow
rules and modes. Each call's arguments are drawn for the signature from a pool of plain
strings and attack targets, sometimes with a model or a list sent as JSON in a string;
the SDK's own argument handling says what the tool function would receive. An oracle that
knows nothing of signoff opens each received string as the tool would (relative to its
working directory, the workspace): if one lands in `.signoff/`, in `secrets/` (denied
for reading), in `config/` for a tool that writes (denied for editing), or on a secret
file, the verdict must be ask or deny; with approvals off (`auto`), state and denied paths
must still be denied. And a call made of plain strings only is never denied.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import tempfile
import types
from pathlib import Path
from typing import Any, Optional, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, note, reject, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError, create_model

from fast_loop import examples

pytest.importorskip("mcp")

from mcp.server.mcpserver.tools.base import Tool

from signoff.mcp.declare import Hints, declare
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.tools import Registry

WS = os.path.realpath(tempfile.mkdtemp(prefix="signoff-mcp-prop-"))
for folder in (".signoff", "secrets", "config", "notes", "keys"):
    os.makedirs(os.path.join(WS, folder), exist_ok=True)
Path(WS, "secrets", "k").write_text("the secret\n")
Path(WS, ".signoff", "signoff.db").write_text("")
if not os.path.islink(os.path.join(WS, "notes", "state")):
    os.symlink(os.path.join(WS, ".signoff"), os.path.join(WS, "notes", "state"))

DENY = ["Read(secrets/**)", "Edit(config/**)"]
PROTECTED = [
    ".signoff/settings.local.toml",
    "./.signoff/settings.toml",
    "notes/../.signoff/signoff.db",
    f"{WS}/.signoff/signoff.db",
    ".signoff",
    "notes/state/settings.local.toml",
]
DENIED_READ = ["secrets/k", f"{WS}/secrets/k", "./secrets//k", "secrets"]
DENIED_WRITE = ["config/prod.yml", "./config/../config/app.toml"]
SECRET = [".env", "keys/id_rsa", "deploy.pem", "notes/.env"]
RESPELT = [f"file://{WS}/.signoff/settings.local.toml", "%2esignoff/settings.local.toml"]
PLAIN = ["hello", "notes/today.md", "SELECT 1", "a b c", "42", "notes", "", "x.txt", '{"q": 1}']
STRINGS = st.sampled_from([*PLAIN, *PROTECTED, *DENIED_READ, *DENIED_WRITE, *SECRET, *RESPELT])

FIELD_NAMES = ["file_name", "where", "target", "data", "item", "spec", "path", "dest", "q"]
FIELD_NAMES += ["body", "out", "entry", "value", "location", "doc", "src", "name", "to"]
_models = itertools.count()


def _model(fields: list[tuple[str, Any]]) -> Any:
    return create_model(f"Model{next(_models)}", **{name: (tp, ...) for name, tp in fields})


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda tp: Optional[tp]),  # noqa: UP045 (as people write it)
        inner.map(lambda tp: list[tp]),  # type: ignore[valid-type]
        inner.map(lambda tp: dict[str, tp]),  # type: ignore[valid-type]
        st.tuples(inner, inner).map(lambda ab: Union[ab[0], ab[1]]),  # noqa: UP007
        st.tuples(inner, inner).map(lambda ab: tuple[ab[0], ab[1]]),  # type: ignore[misc]
        st.lists(
            st.tuples(st.sampled_from(FIELD_NAMES), inner),
            min_size=1,
            max_size=3,
            unique_by=lambda field: field[0],
        ).map(_model),
    )


TYPES = st.recursive(st.sampled_from([str, str, str, Path, int, bool]), _extend, max_leaves=8)


def values(tp: Any) -> st.SearchStrategy[Any]:
    """JSON a client sends for a parameter of type `tp`."""
    if tp in (str, Path):
        return STRINGS
    if tp is int:
        return st.integers(0, 9)
    if tp is bool:
        return st.booleans()
    if tp is type(None):
        return st.none()
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return st.fixed_dictionaries(
            {name: values(field.annotation) for name, field in tp.model_fields.items()}
        )
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        return st.one_of([values(arg) for arg in args])
    if origin is list:
        return st.lists(values(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(STRINGS, values(args[1]), max_size=2)
    if origin is tuple:
        return st.tuples(*(values(arg) for arg in args)).map(list)
    raise AssertionError(f"no values for {tp!r}")


class Drawn:
    """A tool made by the SDK and a call of it, shown by its schema and arguments."""

    def __init__(self, tool: Tool, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments

    def __repr__(self) -> str:
        return f"schema={json.dumps(self.tool.parameters)}\narguments={json.dumps(self.arguments)}"


@st.composite
def tool_calls(draw: st.DrawFn) -> Drawn:
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=1, max_size=3, unique=True))
    params = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=draw(TYPES))
        for name in names
    ]

    def tool(**kwargs: Any) -> str:
        return "ok"

    tool.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in params}
    made = Tool.from_function(tool, name="t")
    arguments: dict[str, Any] = {}
    for param in params:
        value = draw(values(param.annotation))
        if isinstance(value, dict | list) and draw(st.booleans()):
            value = json.dumps(value)  # a model or list as JSON in a string: the SDK decodes it
        arguments[param.name] = value
    return Drawn(made, arguments)


def received_strings(value: Any) -> list[str]:
    """Every string the tool function gets (a Path as its text, map keys too)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str | Path):
            found.append(str(item))
        elif isinstance(item, BaseModel):
            stack.extend(getattr(item, name) for name in type(item).model_fields)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def sent_strings(arguments: dict[str, Any]) -> list[str]:
    """Every string the client sends (map keys, and JSON sent in a string, too)."""
    found: list[str] = []
    stack: list[Any] = list(arguments.values())
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
            if item[:1] in ("{", "["):
                stack.append(json.loads(item))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _inside(path: str, folder: str) -> bool:
    root = os.path.join(WS, folder)
    return path == root or path.startswith(root + "/")


def reached(text: str, *, writes: bool) -> str | None:
    """What the tool reaches when it opens `text` in the workspace, if it must not."""
    if not text or "\x00" in text:
        return None
    path = os.path.realpath(os.path.join(WS, text))
    name = os.path.basename(path)
    if _inside(path, ".signoff"):
        return "protected"
    if _inside(path, "secrets") or (writes and _inside(path, "config")):
        return "denied"
    if name == ".env" or name.startswith("id_rsa") or name.endswith((".pem", ".key")):
        return "secret"
    return None


HINTS = st.sampled_from(
    [
        Hints(read_only=True),
        Hints(read_only=False, destructive=False, open_world=False),
        Hints(read_only=False, destructive=True, open_world=False),
        None,
    ]
)


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    tool_calls(),
    HINTS,
    st.sampled_from([(), ("*",), ("srv__t",), ("Edit", "Read")]),
    st.sampled_from(["default", "accept-edits", "auto"]),
)
def test_no_schema_shape_lets_a_forbidden_target_through(
    drawn: Drawn,
    hints: Hints | None,
    allow: tuple[str, ...],
    mode: str,
) -> None:
    tool, arguments = drawn.tool, drawn.arguments
    note(repr(drawn))
    try:
        received = tool.fn_metadata.validate_arguments(arguments)
    except ValidationError:
        reject()  # the server would refuse the call: nothing reaches the tool
    spec = declare("srv__t", "", tool.parameters, hints, None, trusted=False)
    policy = Policy(
        Settings.from_rules(deny=DENY, allow=list(allow)),
        workspace=WS,
        registry=Registry({"srv__t": spec}),
        mode=mode,  # type: ignore[arg-type]
    )
    verdict = policy.evaluate(ToolCall("srv__t", arguments))
    writes = hints is None or hints.read_only is not True
    hits = {reached(s, writes=writes) for s in received_strings(received)} - {None}
    if mode == "auto":  # approvals off: asks run, but state and denied paths stay denied
        hits &= {"protected", "denied"}
        assert not hits or verdict.effect == "deny", (hits, verdict, tool.parameters)
    else:
        assert not hits or verdict.effect in ("ask", "deny"), (hits, verdict, tool.parameters)
    if all(s in PLAIN for s in sent_strings(arguments)):
        assert verdict.effect != "deny", (verdict, arguments)
