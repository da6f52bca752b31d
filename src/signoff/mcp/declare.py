"""An upstream tool as a signoff declaration.

The tier comes from `[tools."server__tool"]` first; otherwise from the tool's annotations,
which an upstream server writes about itself, so they are read as the spec's defaults
make them (absent hints are the dangerous ones) and may only tighten:

    readOnlyHint                                  -> read         (allow)
    not destructive and closed-world              -> write        (notify)
    destructive (or absent)                       -> destructive  (ask)
    open-world (or absent)                        -> external     (ask)
    no annotations at all                         -> unknown      (ask)

A declared tier is tightened by annotations saying worse, unless the server is `trusted`.
Arguments that name paths or URLs in the input schema (by name or `format`, with local
`$ref`s and `anyOf`/`oneOf`/`allOf` followed: see `schema`) are judged as paths (the
workspace, sensitive files, signoff's own state) and as domains. What the schema does not
classify is not taken as harmless: every other string of a call, nested anywhere, is
judged as the path it would name (`ToolSpec.other_strings`), and a schema that hides a path
or URL in an object, or cannot be read, makes the tool ask.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..tools import ToolSpec
from .config import ToolSetting
from .schema import SchemaReader

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..effects import Access
    from ..models import Tier, ToolKind

# How strict a tier is: a tier may be replaced only by one at least as strict.
_RANK: dict[str, int] = {
    "read": 0,
    "write": 1,
    "external": 2,
    "destructive": 2,
    "unknown": 2,
    "privileged": 3,
}
# Matched on the name in snake case (filePath, file-path and FILE_PATH read file_path).
_PATHISH = re.compile(
    r"(?:^|_)(?:path|paths|file|files|filename|filepath|dir|dirs|directory|directories|"
    r"folder|folders|source|sources|destination|dest|src|target|root|cwd)$"
)
_URLISH = re.compile(r"(?:^|_)(?:url|urls|uri|uris|href|endpoint|endpoints|link|links)$")
_URL_FORMATS = ("uri", "url", "iri", "uri-reference", "iri-reference")
_PATH_FORMATS = ("path", "file-path", "directory-path", "new-path")  # pydantic's Path types


def _snake(name: str) -> str:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _role(name: str, prop: Any, reader: SchemaReader) -> str | None:
    """ "path" or "url" when a string-typed property names one (by its name in any
    spelling, or its `format`), else None."""
    if not reader.is_string(prop):
        return None
    formats = reader.formats(prop)
    snake = _snake(name)
    if formats.intersection(_URL_FORMATS) or _URLISH.search(snake):
        return "url"
    if formats.intersection(_PATH_FORMATS) or _PATHISH.search(snake):
        return "path"
    return None


@dataclass(frozen=True, slots=True)
class Hints:
    """A tool's annotations as the server sent them (None: absent)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def of(cls, annotations: Any) -> Hints | None:
        if annotations is None:
            return None
        return cls(
            read_only=getattr(annotations, "read_only_hint", None),
            destructive=getattr(annotations, "destructive_hint", None),
            idempotent=getattr(annotations, "idempotent_hint", None),
            open_world=getattr(annotations, "open_world_hint", None),
        )

    def tier(self) -> Tier:
        if self.read_only is True:
            return "read"
        if self.destructive is False and self.open_world is False:
            return "write"
        if self.destructive is not False:
            return "destructive"
        return "external"


def stricter(a: Tier, b: Tier) -> Tier:
    return b if _RANK[b] > _RANK[a] else a


def tier_of(setting: ToolSetting | None, hints: Hints | None, *, trusted: bool) -> Tier:
    from_hints: Tier = hints.tier() if hints is not None else "unknown"
    if setting is None or setting.tier is None:
        return from_hints
    if trusted or hints is None:
        return setting.tier
    return stricter(setting.tier, from_hints)


def argument_roles(schema: Mapping[str, Any] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The input schema's arguments that name paths, and those that name URLs."""
    reader = SchemaReader(schema)
    props = reader.root.get("properties")
    if not isinstance(props, Mapping):
        return (), ()
    paths: list[str] = []
    urls: list[str] = []
    for name, prop in props.items():
        role = _role(name, prop, reader) if isinstance(name, str) else None
        if role == "url":
            urls.append(name)
        elif role == "path":
            paths.append(name)
    return tuple(paths), tuple(urls)


def _string_only(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The arguments whose value is only ever a string (or null) to the tool: the JSON a
    text holds (a file's content) is not read out of it before it is judged."""
    reader = SchemaReader(schema)
    props = reader.root.get("properties")
    if not isinstance(props, Mapping):
        return ()
    return tuple(n for n, p in props.items() if isinstance(n, str) and reader.only_string(p))


def unjudged(schema: Mapping[str, Any] | None) -> str | None:
    """Why the policy cannot judge this tool's calls by its arguments alone, or None: a
    path or URL inside an object or a list of objects (the policy judges the top-level
    ones as such; strings inside are judged only as paths they might name, see
    `effects`), a schema that cannot be read, one that allows unnamed arguments."""
    reader = SchemaReader(schema)
    for name, prop in reader.nested_properties():
        if _role(name, prop, reader):
            return f"argument schema has a path or URL inside an object ({name!r})"
    if reader.unreadable:
        return f"argument schema cannot be read: {reader.unreadable}"
    if reader.root.get("additionalProperties"):
        return "argument schema allows arguments it does not name"
    return None


def declare(
    name: str,
    description: str,
    schema: Mapping[str, Any] | None,
    hints: Hints | None,
    setting: ToolSetting | None,
    *,
    trusted: bool,
) -> ToolSpec:
    """The signoff declaration of one upstream tool, under its namespaced `name`."""
    tier = tier_of(setting, hints, trusted=trusted)
    # A string no argument role accounts for may still be a path to the upstream
    # (`file_name`, a model's field, JSON inside a string): each is judged as a path the
    # call may read, and also write unless the tool is read-only (see `effects`).
    strings: Access = "read" if tier == "read" else "write"
    paths, urls = argument_roles(schema)
    kind: ToolKind = "other"
    if paths:
        kind = "file_read" if tier == "read" else "file_write"
    elif urls:
        kind = "network"
    if len(urls) > 1 or (paths and urls):
        # The policy judges one URL per call: a tool with more cannot be allowed by tier.
        tier = stricter(tier, "external")
    if unjudged(schema):
        # a path or URL in an object is judged only as a string that might be a path,
        # and arguments the schema does not name or cannot say are not judged: a person
        # decides (without `additionalProperties`, the proxy refuses an unnamed argument)
        tier = stricter(tier, "destructive")
    idempotent = bool(setting.idempotent) if setting and setting.idempotent is not None else False
    if setting is None or setting.idempotent is None:
        idempotent = bool(trusted and hints is not None and hints.idempotent)
    return ToolSpec(
        name=name,
        tier=tier,
        kind=kind,
        description=description.split("\n\n")[0][:500],
        path_arg=paths[0] if paths else None,
        path_args=paths[1:],
        url_arg=urls[0] if urls and kind == "network" else None,
        default_path=None,
        subject_args=(),
        idempotent=idempotent,
        schema=schema,
        other_strings=strings,
        string_args=_string_only(schema),
    )


__all__ = ["Hints", "argument_roles", "declare", "stricter", "tier_of", "unjudged"]
