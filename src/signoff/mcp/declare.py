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
Arguments that name paths or URLs in the input schema are judged as paths (the workspace,
sensitive files, signoff's own state) and as domains.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..tools import ToolSpec
from .config import ToolSetting

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
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


def _snake(name: str) -> str:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _nested_roles(schema: Any, depth: int = 0) -> bool:
    """Whether a path or URL hides inside an object or a list of objects: one the policy
    cannot judge (it judges top-level arguments)."""
    if not isinstance(schema, Mapping) or depth > 8:
        return False
    for key in ("items", "additionalProperties"):
        if _nested_roles(schema.get(key), depth + 1):
            return True
    for variant in ("anyOf", "oneOf", "allOf"):
        options = schema.get(variant)
        if isinstance(options, list) and any(_nested_roles(o, depth + 1) for o in options):
            return True
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for name, prop in props.items():
            if depth > 0 and isinstance(name, str) and _string_typed(prop):
                snake = _snake(name)
                fmt = prop.get("format") if isinstance(prop, Mapping) else None
                if _PATHISH.search(snake) or _URLISH.search(snake) or fmt in _URL_FORMATS:
                    return True
            if _nested_roles(prop, depth + 1):
                return True
    return False


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


def _string_typed(schema: Any) -> bool:
    """A string, or a list of strings (what the policy reads as one path or several)."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds:
        return True
    return "array" in kinds and _string_typed(schema.get("items"))


def argument_roles(schema: Mapping[str, Any] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The input schema's arguments that name paths, and those that name URLs."""
    props = (schema or {}).get("properties")
    if not isinstance(props, Mapping):
        return (), ()
    paths: list[str] = []
    urls: list[str] = []
    for name, prop in props.items():
        if not isinstance(name, str) or not _string_typed(prop):
            continue
        fmt = prop.get("format") if isinstance(prop, Mapping) else None
        snake = _snake(name)
        if fmt in _URL_FORMATS or _URLISH.search(snake):
            urls.append(name)
        elif _PATHISH.search(snake):
            paths.append(name)
    return tuple(paths), tuple(urls)


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
    paths, urls = argument_roles(schema)
    kind: ToolKind = "other"
    if paths:
        kind = "file_read" if tier == "read" else "file_write"
    elif urls:
        kind = "network"
    if len(urls) > 1 or (paths and urls):
        # The policy judges one URL per call: a tool with more cannot be allowed by tier.
        tier = stricter(tier, "external")
    if (schema or {}).get("additionalProperties"):
        # arguments the schema does not name would be passed on unjudged: a person decides
        # (without it, the proxy refuses any argument the schema does not name)
        tier = stricter(tier, "destructive")
    if _nested_roles(schema):
        # a path or URL inside an object or a list of objects is not judged: a person is
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
    )


__all__ = ["Hints", "argument_roles", "declare", "stricter", "tier_of"]
