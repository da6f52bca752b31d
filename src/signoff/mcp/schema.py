"""An upstream tool's input schema, read the way a validator reads it.

Schemas written the ordinary way (pydantic's, which the MCP Python SDK sends) hide what an
argument is behind indirection: a model is a `$ref` into `$defs`, `Optional[str]` is an
`anyOf` of a string and null, a union is an `anyOf`, a `Path` is `"format": "path"`.
`SchemaReader` follows local `$ref`s (JSON pointers into the same document) and the variants
of `anyOf`/`oneOf`/`allOf`, so an argument is a string if any shape it may take is one, and
it finds every property nested anywhere (objects, lists, maps, tuples, unions). What it
cannot read (a `$ref` to another document or to nothing, nesting deeper than it follows) is
kept in `unreadable`: a tool whose schema cannot be read asks (see `declare`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

MAX_DEPTH = 32  # deeper than any schema written by hand or by pydantic
# Keywords whose value is one schema, or a list or map of schemas, that an argument's
# value may have to match (JSON Schema 2020-12 and draft 7).
_ONE = (
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "if",
    "then",
    "else",
)
_MAP = ("patternProperties", "dependentSchemas")
# A schema without any of these accepts any value, a string too.
_STRUCTURE = frozenset(
    ("type", "$ref", "enum", "const", "not", "properties", "prefixItems", "anyOf", "oneOf")
).union(_ONE, _MAP, ("allOf",))


class SchemaReader:
    """One input schema: the shapes a value may take, its properties anywhere, and what
    could not be read."""

    def __init__(self, root: Any) -> None:
        self.root: Mapping[str, Any] = root if isinstance(root, Mapping) else {}
        self.unreadable: str | None = None

    def _fail(self, why: str) -> None:
        self.unreadable = self.unreadable or why

    def target(self, ref: Any) -> Mapping[str, Any] | None:
        """What a local `$ref` (`#/$defs/Model`) points to; None (and noted) otherwise."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            self._fail(f"$ref {ref!r} points outside the schema")
            return None
        from urllib.parse import unquote

        node: Any = self.root
        pointer = unquote(ref[1:])
        for part in pointer.split("/")[1:] if pointer else ():
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                node = None
                break
        if not isinstance(node, Mapping):
            self._fail(f"$ref {ref!r} points to no schema")
            return None
        return node

    def shapes(self, node: Any) -> list[Mapping[str, Any]]:
        """`node` and every shape it may take: the target of its `$ref` and the variants of
        its `anyOf`/`oneOf`/`allOf`, followed to the end (each once)."""
        out: list[Mapping[str, Any]] = []
        seen: set[int] = set()
        stack: list[tuple[Any, int]] = [(node, 0)]
        while stack:
            item, depth = stack.pop()
            if not isinstance(item, Mapping) or id(item) in seen:
                continue
            if depth > MAX_DEPTH:
                self._fail(f"$ref and variants nest deeper than {MAX_DEPTH} levels")
                continue
            seen.add(id(item))
            out.append(item)
            if "$ref" in item:
                stack.append((self.target(item["$ref"]), depth + 1))
            for key in ("anyOf", "oneOf", "allOf"):
                options = item.get(key)
                if isinstance(options, list):
                    stack.extend((option, depth + 1) for option in options)
        return out

    def is_string(self, node: Any, depth: int = 0) -> bool:
        """Whether a value of this schema may be a string, or a list of strings (what the
        policy reads as one path or several). An untyped schema may be anything."""
        if depth > MAX_DEPTH:
            self._fail(f"lists of lists nest deeper than {MAX_DEPTH} levels")
            return False
        for shape in self.shapes(node):
            kind = shape.get("type")
            kinds = kind if isinstance(kind, list) else [kind]
            if "string" in kinds or not _STRUCTURE.intersection(shape):
                return True
            if "array" in kinds and self.is_string(shape.get("items"), depth + 1):
                return True
        return False

    def only_string(self, node: Any) -> bool:
        """Whether a value of this schema is only ever a string (or null): a validator
        hands it over as it is, and reads no JSON out of it (as it would for a model or
        a list sent as a string, or a string marked as JSON content)."""
        shapes = self.shapes(node)
        for shape in shapes:
            if "contentMediaType" in shape or "contentSchema" in shape:
                return False
            kind = shape.get("type")
            if kind is None:
                if not _STRUCTURE.intersection(shape):
                    return False  # untyped: anything
                if ("enum" in shape or "const" in shape) and not _all_strings(shape):
                    return False
                continue  # a wrapper: its variants and target are among the shapes
            kinds = kind if isinstance(kind, list) else [kind]
            if not set(kinds) <= {"string", "null"}:
                return False
        return bool(shapes)

    def formats(self, node: Any) -> set[str]:
        """The `format`s any shape of this schema names (`uri`, `path`, ...)."""
        return {f for s in self.shapes(node) if isinstance(f := s.get("format"), str)}

    def nested_properties(self) -> Iterator[tuple[str, Any]]:
        """Every property below the top level (inside an object, a list, a map, a tuple or
        a variant of an argument), each object schema visited once."""
        seen: set[int] = set()
        stack: list[tuple[Any, int]] = [(self.root, 0)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                self._fail(f"objects nest deeper than {MAX_DEPTH} levels")
                continue
            for shape in self.shapes(node):
                if id(shape) in seen:
                    continue
                seen.add(id(shape))
                props = shape.get("properties")
                if isinstance(props, Mapping):
                    for name, prop in props.items():
                        if depth > 0 and isinstance(name, str):
                            yield name, prop
                        stack.append((prop, depth + 1))
                for key in _ONE:  # (variants and $ref are among the shapes already)
                    stack.append((shape.get(key), depth + 1))
                options = shape.get("prefixItems")
                if isinstance(options, list):
                    stack.extend((option, depth + 1) for option in options)
                for key in _MAP:
                    table = shape.get(key)
                    if isinstance(table, Mapping):
                        stack.extend((sub, depth + 1) for sub in table.values())


def _all_strings(shape: Mapping[str, Any]) -> bool:
    values = shape.get("enum") if "enum" in shape else [shape.get("const")]
    return isinstance(values, list) and all(isinstance(v, str | None) for v in values)


__all__ = ["MAX_DEPTH", "SchemaReader"]
