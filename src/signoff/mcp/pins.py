"""Rug-pull defence: what each upstream tool said about itself when it was trusted.

A tool's name, description, input schema and annotations are what the model reads and what
signoff's declaration is made from. They are pinned (hashed, and kept to show a diff) the
first time the proxy sees the tool. When an upstream later says something else (a
description that now asks the model to mail out a key, a schema with a new argument, a
read-only hint that appeared), calls to that tool ask a person, with the diff, whatever
rules or tiers would allow them; the change is pinned once a person approved a call of
the changed tool and it ran, or once a person read the diff and trusted the change
(`signoff mcp pins TOOL`, then `signoff mcp trust TOOL --pin PIN`). The proxy keeps the
changed version it saw beside the pin for that, so the diff can be read without the upstream.

The pins live in `.signoff/mcp/pins.json`, signoff's own state: no tool call may write it.
"""

from __future__ import annotations

import difflib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import ConfigurationError, InvalidInput
from .declare import pin

PINS = Path(".signoff") / "mcp" / "pins.json"


@dataclass(frozen=True, slots=True)
class Seen:
    """One tool as an upstream describes it now."""

    name: str  # namespaced
    description: str
    schema: Any
    annotations: Any

    @property
    def doc(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "schema": self.schema if self.schema is not None else {},
            "annotations": self.annotations if self.annotations is not None else {},
        }

    @property
    def pin(self) -> str:
        return pin(self.name, self.description, self.schema, self.annotations)


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """What changed, line by line, as a person reads it."""

    def lines(doc: Mapping[str, Any]) -> list[str]:
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(
        difflib.unified_diff(lines(before), lines(after), "pinned", "now", lineterm="", n=2)
    )


class Pins:
    """The pinned tools of one workspace."""

    def __init__(self, workspace: str) -> None:
        self.path = Path(workspace) / PINS
        self._docs: dict[str, dict[str, Any]] = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            doc = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise ConfigurationError(
                f"{self.path}: not JSON ({exc}); remove it to pin every tool afresh"
            ) from None
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise ConfigurationError(f"{self.path}: not a table of pinned tools")
        return doc

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(self._docs, handle, sort_keys=True, indent=1, ensure_ascii=False)
        os.replace(tmp, self.path)

    def check(self, seen: Seen) -> str | None:
        """None if the tool is as pinned (pinning it if new); else the diff."""
        self._docs = self._load()  # another proxy of this workspace may have pinned since
        pinned = self._docs.get(seen.name)
        if pinned is None:
            self.trust(seen)
            return None
        if pinned.get("pin") == seen.pin:
            return None
        before = pinned.get("doc") if isinstance(pinned.get("doc"), dict) else {}
        self._note_change(seen)
        return diff(before or {}, seen.doc)

    def _note_change(self, seen: Seen) -> None:
        """Keep the changed version beside the pin, for a person to review and trust."""
        changed = self._docs[seen.name].get("changed")
        if isinstance(changed, dict) and changed.get("pin") == seen.pin:
            return
        self._docs[seen.name]["changed"] = {"pin": seen.pin, "doc": seen.doc, "at": time.time()}
        self._save()

    def trust(self, seen: Seen) -> None:
        self._docs = self._load()
        self._docs[seen.name] = {"pin": seen.pin, "doc": seen.doc}
        self._save()

    def known(self, name: str) -> bool:
        return name in self._docs

    def pinned_as(self, name: str) -> str | None:
        """The pin of `name` as the file says now (another process may have trusted a
        change since); None if it is not pinned. Pins nothing."""
        self._docs = self._load()
        item = self._docs.get(name)
        pin = item.get("pin") if item is not None else None
        return pin if isinstance(pin, str) else None

    def entries(self) -> list[Entry]:
        """Every pinned tool, by name, with the changed version the proxy saw, if any."""
        self._docs = self._load()
        return [self._entry(name) for name in sorted(self._docs)]

    def entry(self, name: str) -> Entry:
        self._docs = self._load()
        if name not in self._docs:
            known = ", ".join(sorted(self._docs)) or "none yet: the proxy pins what it lists"
            raise InvalidInput(f"no pinned MCP tool {name!r} in {self.path} (pinned: {known})")
        return self._entry(name)

    def _entry(self, name: str) -> Entry:
        item = self._docs[name]
        doc = item.get("doc") if isinstance(item.get("doc"), dict) else {}
        changed = item.get("changed")
        if not isinstance(changed, dict) or changed.get("pin") == item.get("pin"):
            return Entry(name, str(item.get("pin", "")), doc or {})
        now = changed.get("doc") if isinstance(changed.get("doc"), dict) else {}
        at = changed.get("at")
        return Entry(
            name,
            str(item.get("pin", "")),
            doc or {},
            str(changed.get("pin", "")),
            now or {},
            float(at) if isinstance(at, int | float) else None,
        )

    def trust_change(self, name: str, expected: str | None = None) -> Entry:
        """Pin the changed version of `name` that a person reviewed. With `expected`, only
        if that is still the version seen (a tool that changed again is not trusted unread).
        Returns the entry as it was before."""
        entry = self.trustable(name, expected)
        self._docs[name] = {"pin": entry.changed_pin, "doc": entry.changed_doc}
        self._save()
        return entry

    def trustable(self, name: str, expected: str | None = None) -> Entry:
        """The entry `trust_change` would pin, or why not (InvalidInput); changes nothing."""
        entry = self.entry(name)
        if entry.changed_pin is None:
            raise InvalidInput(f"{name} is as pinned ({entry.pin[:16]}): nothing changed to trust")
        if expected is not None and len(expected) < 12:
            raise InvalidInput(f"--pin {expected!r}: give at least 12 characters of the pin")
        if expected is not None and not entry.changed_pin.startswith(expected):
            raise InvalidInput(
                f"{name} changed again since: now {entry.changed_pin[:16]}, not {expected}; "
                f"read the diff again with: signoff mcp pins {name}"
            )
        return entry


@dataclass(frozen=True, slots=True)
class Entry:
    """One pinned tool, and the changed version the proxy saw since (if any)."""

    name: str
    pin: str
    doc: Mapping[str, Any]
    changed_pin: str | None = None
    changed_doc: Mapping[str, Any] | None = None
    changed_at: float | None = None

    @property
    def diff(self) -> str:
        return diff(self.doc, self.changed_doc) if self.changed_doc is not None else ""


__all__ = ["PINS", "Entry", "Pins", "Seen", "diff"]
