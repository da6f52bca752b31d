"""Rug-pull defence: what each upstream tool said about itself when it was trusted.

A tool's name, description, input schema and annotations are what the model reads and what
signoff's declaration is made from. They are pinned (hashed, and kept to show a diff) the
first time the proxy sees the tool. When an upstream later says something else (a
description that now asks the model to mail out a key, a schema with a new argument, a
read-only hint that appeared), calls to that tool ask a person, with the diff, whatever
rules or tiers would allow them; the change is pinned once a person approved a call of
the changed tool and it ran.

The pins live in `.signoff/mcp/pins.json`, signoff's own state: no tool call may write it.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import ConfigurationError
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
        return diff(before or {}, seen.doc)

    def trust(self, seen: Seen) -> None:
        self._docs = self._load()
        self._docs[seen.name] = {"pin": seen.pin, "doc": seen.doc}
        self._save()

    def known(self, name: str) -> bool:
        return name in self._docs


__all__ = ["PINS", "Pins", "Seen", "diff"]
