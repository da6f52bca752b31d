"""The built-in tools are declared once, by signature and docstring, and what they send
over the wire is what signoff shipped before: `tests/data/builtin_tools.json` was captured
from the hand-written declarations this replaced (schemas with their key order, roles,
descriptions, the aliases coding agents use, and the chat-completions `tools` array)."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import InvalidInput
from signoff.tool_schema import argument_fields, arguments_schema
from signoff.tools import ALIASES, BUILTIN_SPECS, Registry, ToolSpec
from signoff.workspace import Workspace
from signoff.workspace.previews import openai_tools

SHIPPED = json.loads((Path(__file__).parent / "data" / "builtin_tools.json").read_text())


def _fields(spec: ToolSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(spec):
        if f.name in ("validator", "lazy_validator"):
            continue
        value = getattr(spec, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def test_the_same_built_ins_in_the_same_order() -> None:
    assert list(BUILTIN_SPECS) == list(SHIPPED["specs"])


@pytest.mark.parametrize("name", list(SHIPPED["specs"]))
def test_each_declaration_is_what_shipped(name: str) -> None:
    got = _fields(BUILTIN_SPECS[name])
    assert got == SHIPPED["specs"][name]
    # key order too: schemas are shown to models and people
    assert json.dumps(got) == json.dumps(SHIPPED["specs"][name])


@pytest.mark.parametrize("alias", list(ALIASES))
def test_each_alias_is_what_shipped(alias: str) -> None:
    assert _fields(Registry().get(alias)) == SHIPPED["aliases"][alias]


def test_the_openai_tools_array_is_what_shipped() -> None:
    assert json.dumps(openai_tools()) == json.dumps(SHIPPED["openai_tools"])


@pytest.mark.parametrize("name", list(SHIPPED["specs"]))
def test_the_workspace_takes_what_the_declaration_says(name: str) -> None:
    """Each tool's implementation accepts exactly the declared arguments, with the same
    ones required (its own extras are keyword-only and optional: `idempotency_key`)."""
    params = inspect.signature(getattr(Workspace, name)).parameters.values()
    taken = [p for p in params if p.name != "self" and p.kind != p.KEYWORD_ONLY]
    schema = BUILTIN_SPECS[name].schema or {}
    assert [p.name for p in taken] == list(schema["properties"])
    required = [p.name for p in taken if p.default is inspect.Parameter.empty]
    assert required == schema.get("required", [])
    assert all(p.default is not p.empty for p in params if p.kind == p.KEYWORD_ONLY)


def test_a_type_the_light_schema_cannot_express_is_refused_by_name() -> None:
    def plan(when: set[str]) -> str:
        return ""

    with pytest.raises(InvalidInput, match=r"tool 'plan': argument 'when' has a type"):
        arguments_schema(argument_fields(plan, "plan"), "plan")


def test_a_catch_all_argument_is_refused_by_name() -> None:
    def run(*commands: str) -> str:
        return ""

    with pytest.raises(InvalidInput, match=r"tool 'run': \*commands cannot be a declared"):
        argument_fields(run, "run")


def test_optional_arguments_read_as_pydantic_reads_them() -> None:
    def note(text: str, tags: list[str] | None = None, meta: dict[str, Any] | None = None) -> str:
        return text

    fields = argument_fields(note, "note")
    assert fields == {
        "text": (str, True),
        "tags": (list[str], False),
        "meta": (dict[str, Any], False),
    }
    schema = arguments_schema(fields, "note")
    assert schema["required"] == ["text"]
    assert schema["properties"]["meta"] == {
        "additionalProperties": True,
        "default": None,
        "title": "Meta",
        "type": "object",
    }


def _signature_reading(fn: Any) -> dict[str, tuple[Any, bool]]:
    """What `inspect` reads of the same function (the reading argument_fields replaced)."""
    hints = inspect.get_annotations(fn, eval_str=True)
    return {
        p.name: (hints[p.name], p.default is p.empty)
        for p in inspect.signature(fn).parameters.values()
        if p.name not in ("self", "ctx", "idempotency_key") and p.kind != p.KEYWORD_ONLY
    }


def _samples() -> list[Any]:
    def plain(a: str, b: int, c: float = 1.0, d: bool = False) -> str:
        return a

    def with_context(ctx: object, /, text: str, *, flag: bool = False) -> str:
        return text

    def catch_all_context(text: str, *ctx: str, idempotency_key: str = "") -> str:
        return text

    def listed(items: list[str], table: dict[str, int] | None = None) -> str:
        return ""

    from signoff.tools import BuiltinTools

    builtins = [fn for fn in vars(BuiltinTools).values() if hasattr(fn, "__signoff_builtin__")]
    return [plain, with_context, catch_all_context, listed, *builtins]


@pytest.mark.parametrize("fn", _samples(), ids=lambda fn: fn.__name__)
def test_arguments_are_read_from_the_code_as_inspect_reads_them(fn: Any) -> None:
    """argument_fields reads code, defaults and annotations without inspect (start-up)."""
    from signoff.tool_schema import summary

    fields = argument_fields(fn, fn.__name__)
    reading = _signature_reading(fn)
    assert list(fields) == list(reading)
    for key, (annotation, required) in fields.items():
        assert required == reading[key][1]
        assert annotation in (reading[key][0], *getattr(reading[key][0], "__args__", ()))
    assert summary(fn) == (inspect.getdoc(fn) or "").split("\n\n")[0]


def test_a_declaration_is_a_plain_function() -> None:
    import functools

    def base(text: str) -> str:
        return text

    @functools.wraps(base)
    def wrapped(*args: Any, **kwargs: Any) -> str:
        return base(*args, **kwargs)

    with pytest.raises(InvalidInput, match="tool 'wrapped': declare it with a plain function"):
        argument_fields(wrapped, "wrapped")


def test_a_summary_is_the_first_paragraph_without_indentation() -> None:
    from signoff.tool_schema import summary

    def long(text: str) -> str:
        """Do one thing
        over two lines.

        Then the details."""
        return text

    assert summary(long) == "Do one thing\nover two lines."
