"""What a function's signature says about a tool's arguments, read without pydantic: their
JSON schema, and the named arguments of a call made positionally.

The built-in tools are judged on every call, often in a process started for that one call,
so their declarations are made from their signatures here, with no model building: each
parameter is a property (titled as pydantic titles it), a parameter without a default is
required, and an optional one reads `"default": null` (absent: the tool's own default).
Only the types the built-ins use are understood (`str`, `int`, `float`, `bool`,
`list[...]`, `dict[str, ...]`, `Any` inside them, and `X | None` for an optional `X`); any
other is refused, naming the tool and the parameter. The result is what pydantic derives
for the same fields, key order included (tests/test_startup.py compares the two).
"""

from __future__ import annotations

import sys
import types

from .exceptions import InvalidInput

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    import inspect
    from collections.abc import Callable
    from typing import Any

# Parameters that are not arguments of the call: the bound object, a framework's context,
# and the idempotency key the executor passes.
NOT_ARGUMENTS = frozenset({"self", "ctx", "idempotency_key"})

_SCALARS: dict[type, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    bool: {"type": "boolean"},
    float: {"type": "number"},
}


def argument_fields(fn: Callable[..., Any], name: str) -> dict[str, tuple[Any, bool]]:
    """Each argument of `fn`, in order: (its type without `| None`, required?). Read from
    the function's code, defaults and annotations as `inspect.signature` and
    `inspect.get_annotations(eval_str=True)` read them, without importing inspect (the
    built-ins are declared at every start-up, a hook's included)."""
    code = getattr(fn, "__code__", None)
    if code is None or hasattr(fn, "__wrapped__") or isinstance(fn, (staticmethod, classmethod)):
        raise InvalidInput(f"tool {name!r}: declare it with a plain function")
    hints = {
        key: eval(value, fn.__globals__) if isinstance(value, str) else value
        for key, value in fn.__annotations__.items()
    }
    positional = code.co_varnames[: code.co_argcount]
    after = code.co_argcount + code.co_kwonlyargcount
    catch_all = [
        code.co_varnames[after + n]
        for n, flag in enumerate(f for f in (0x04, 0x08) if code.co_flags & f)  # *args, **kw
    ]
    defaults = len(fn.__defaults__ or ())
    fields: dict[str, tuple[Any, bool]] = {}
    for at, key in enumerate(positional):
        if key in NOT_ARGUMENTS:
            continue
        if key not in hints:
            raise InvalidInput(f"tool {name!r}: argument {key!r} has no type annotation")
        required = at < len(positional) - defaults
        fields[key] = (_without_none(hints[key], name, key), required)
    for key in catch_all:
        if key not in NOT_ARGUMENTS:
            raise InvalidInput(f"tool {name!r}: *{key} cannot be a declared argument")
    return fields


def summary(fn: Callable[..., Any]) -> str:
    """The first paragraph of `fn`'s docstring, as `inspect.getdoc` reads it (imported only
    for a docstring of several lines, to take its indentation off)."""
    doc = fn.__doc__
    if not isinstance(doc, str):
        import inspect

        doc = inspect.getdoc(fn)  # a method may inherit one
    elif "\n" in doc:
        import inspect

        doc = inspect.cleandoc(doc)
    return (doc or "").strip().split("\n\n")[0]


def arguments_schema(fields: dict[str, tuple[Any, bool]], name: str) -> dict[str, Any]:
    """The JSON schema of `fields` (from `argument_fields`), laid out as pydantic does."""
    properties: dict[str, Any] = {}
    for key, (annotation, required) in fields.items():
        prop: dict[str, Any] = {} if required else {"default": None}
        prop.update(_json_type(annotation, name, key))
        prop["title"] = key.replace("_", " ").title()
        properties[key] = dict(sorted(prop.items()))
    schema: dict[str, Any] = {"additionalProperties": False, "properties": properties}
    required_keys = [key for key, (_, required) in fields.items() if required]
    if required_keys:
        schema["required"] = required_keys
    schema.update(title=f"{name}_arguments", type="object")
    return schema


def _union(annotation: Any) -> bool:
    """`X | Y`, or `typing.Union[X, Y]` (which only a program that imported typing has)."""
    typing = sys.modules.get("typing")
    union = getattr(typing, "Union", types.UnionType)
    return isinstance(annotation, types.UnionType) or getattr(annotation, "__origin__", 0) is union


def _without_none(annotation: Any, name: str, key: str) -> Any:
    if _union(annotation):
        rest = [a for a in annotation.__args__ if a is not type(None)]
        if len(rest) != 1:
            raise InvalidInput(f"tool {name!r}: argument {key!r}: one type or `X | None`")
        return rest[0]
    return annotation


def _json_type(annotation: Any, name: str, key: str) -> dict[str, Any]:
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    origin = getattr(annotation, "__origin__", None)  # as typing.get_origin for list[...]
    args: tuple[Any, ...] = getattr(annotation, "__args__", ())
    if origin is list and len(args) == 1:
        return {"items": _json_type(args[0], name, key), "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        typing = sys.modules.get("typing")  # Any exists once typing is imported
        anything = typing is not None and args[1] is typing.Any
        values = True if anything else _json_type(args[1], name, key)
        return {"additionalProperties": values, "type": "object"}
    raise InvalidInput(
        f"tool {name!r}: argument {key!r} has a type ({annotation!r}) that a built-in "
        "declaration cannot express; use str, int, float, bool, list[...] or dict[str, ...]"
    )


def bind_arguments(
    fn: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The named arguments of the call `fn(*args, **kwargs)`, in signature order, so that a
    positional call becomes the same tool call as its keyword form. A call the signature
    does not accept is refused before anything is judged, naming the tool and argument."""
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (some C functions): names only
        if args:
            raise TypeError(f"tool {name!r}: call it with named arguments") from None
        return dict(kwargs)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        shown = signature.replace(return_annotation=inspect.Signature.empty)
        problem = _bind_problem(exc, signature, args)
        raise TypeError(f"tool {name!r}: {problem}; it is called as {name}{shown}") from None
    named: dict[str, Any] = {}
    for key, value in bound.arguments.items():
        kind = signature.parameters[key].kind
        if kind == inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind == inspect.Parameter.VAR_POSITIONAL:
            if value:  # a tool call's arguments are a JSON object: every one has a name
                raise TypeError(f"tool {name!r}: *{key} cannot be passed to a guarded tool")
        else:
            named[key] = value
    return named


def call_by_name(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, callable with every argument by name (positional-only ones included)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return fn
    only = [p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_ONLY]
    if not only:
        return fn

    def by_name(**named: Any) -> Any:
        front = [named.pop(key) for key in only if key in named]
        return fn(*front, **named)

    return by_name


def _bind_problem(exc: TypeError, signature: inspect.Signature, args: tuple[Any, ...]) -> str:
    text = str(exc)
    if text == "too many positional arguments":
        takes = [
            p.name
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        return (
            f"takes {len(takes)} positional argument{'s' * (len(takes) != 1)} "
            f"({', '.join(takes) or 'none'}) but {len(args)} were given"
        )
    return text


__all__ = [
    "NOT_ARGUMENTS",
    "argument_fields",
    "arguments_schema",
    "bind_arguments",
    "call_by_name",
    "summary",
]
