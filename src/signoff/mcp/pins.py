"""Rug-pull defence: what each upstream tool said about itself when it was trusted.

What a pin covers is everything the client is shown of a tool, as the proxy lists it: its
name, title, description, input and output schemas, annotations, `_meta`, icons and
whatever else the tool object carries. That is what the model reads and what signoff's
declaration is made from. A server's first listing is pinned whole (hashed, and kept to
show a diff): trust on first use. After it, a tool is held, and every call of it asks a
person whatever rules or tiers would allow it, when

- it says something else than its pin (a description that now asks the model to mail out a
  key, a schema with a new argument, a read-only hint that appeared, a new title), or
- it was never seen before: a tool the server added since, or a pinned one it renamed (a
  rename is the old name gone and a new one come).

A held tool is pinned once a person approved a call of it and it ran, or once a person
read what it says and trusted it (`signoff mcp pins TOOL`, then `signoff mcp trust TOOL
--pin PIN`). The proxy keeps the version it saw beside the pin for that, so it can be read
without the upstream.

The pins live in `.signoff/mcp/pins.json`, signoff's own state: no tool call may write it.
Its format is versioned (`"version": 2`); a file of the first format (a bare table of tools
whose pins covered only name, description, input schema and annotations) is read, and each
of its tools is upgraded when the proxy next sees it as pinned with nothing the old pin did
not cover; a tool that shows more (a title, an output schema, ...) is held, once, with
those fields in its diff.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import ConfigurationError, InvalidInput
from ..models import canonical_json, sha256_hex

PINS = Path(".signoff") / "mcp" / "pins.json"
VERSION = 2
SEPARATOR = "__"  # as in `config`: the server's name ends at the first
LOCK_WAIT = 10.0  # seconds another process may hold the pins before a clear error
# What the first format's pin covered (its digest is recomputed to read those pins).
_V1_FIELDS = frozenset({"name", "description", "inputSchema", "annotations"})


def digest(doc: Mapping[str, Any]) -> str:
    """The pin of a tool as the client is shown it (`doc`: its JSON)."""
    return sha256_hex(canonical_json(dict(doc), where=f"tool {doc.get('name')}"))


def digest_v1(doc: Mapping[str, Any]) -> str:
    """The pin the first format gave the same tool (name, words, input schema, hints)."""
    old = {
        "name": doc.get("name"),
        "description": doc.get("description") or "",
        "schema": doc.get("inputSchema") or {},
        "annotations": doc.get("annotations") or {},
    }
    return sha256_hex(canonical_json(old, where=f"tool {doc.get('name')}"))


def _shown_v1(doc: Any) -> dict[str, Any]:
    """A tool as the first format kept it, in the shape the client is shown (for diffs)."""
    doc = doc if isinstance(doc, Mapping) else {}
    shown: dict[str, Any] = {"name": doc.get("name"), "inputSchema": doc.get("schema") or {}}
    if doc.get("description"):
        shown["description"] = doc["description"]
    if doc.get("annotations"):
        shown["annotations"] = doc["annotations"]
    return shown


@dataclass(frozen=True, slots=True)
class Seen:
    """One tool as an upstream describes it now: all the client is shown of it (JSON, its
    name namespaced), and the pin of that."""

    doc: Mapping[str, Any]
    pin: str

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> Seen:
        return cls(doc, digest(doc))

    @property
    def name(self) -> str:
        return str(self.doc.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.doc.get("description") or "")


@dataclass(frozen=True, slots=True)
class Held:
    """Why a tool's calls ask: what differs from its pin, as a diff; `new` when it has
    none (it was not in its server's first listing, or has not been trusted since)."""

    diff: str
    new: bool = False


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """What changed, line by line, as a person reads it."""

    def lines(doc: Mapping[str, Any]) -> list[str]:
        if not doc:
            return []
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(
        difflib.unified_diff(lines(before), lines(after), "pinned", "now", lineterm="", n=2)
    )


class Pins:
    """The pinned tools of one workspace, and the servers whose first listing is pinned."""

    def __init__(self, workspace: str) -> None:
        self.path = Path(workspace) / PINS
        self._tools: dict[str, dict[str, Any]] = {}
        self._servers: dict[str, dict[str, Any]] = {}
        self._read()

    # ------------------------------------------------------------------ the file

    def _read(self) -> None:
        try:
            doc = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            self._tools, self._servers = {}, {}
            return
        except ValueError as exc:
            raise ConfigurationError(
                f"{self.path}: not JSON ({exc}); remove it to pin every tool afresh"
            ) from None
        if not isinstance(doc, dict):
            raise ConfigurationError(f"{self.path}: not a table of pinned tools")
        if "version" not in doc:
            self._tools, self._servers = _from_v1(doc, self.path)
            return
        version = doc["version"]
        if not isinstance(version, int) or version > VERSION:
            raise ConfigurationError(
                f"{self.path}: pins of format version {version!r}, written by a newer "
                f"signoff; this one reads up to {VERSION}. Upgrade signoff to read them."
            )
        tools, servers = doc.get("tools", {}), doc.get("servers", {})
        if not (_table_of_tables(tools) and _table_of_tables(servers)):
            raise ConfigurationError(f"{self.path}: `tools` and `servers` must be tables")
        self._tools, self._servers = tools, servers

    def _save(self) -> None:
        doc = {"version": VERSION, "servers": self._servers, "tools": self._tools}
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, sort_keys=True, indent=1, ensure_ascii=False)
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[None]:
        """Read, change and write the file as one step: proxies of one workspace and
        `signoff mcp trust` do not write over each other's pins."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path.with_name(".pins.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + LOCK_WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ConfigurationError(
                            f"{self.path}: another process has held the pins for "
                            f"{LOCK_WAIT:.0f} s; nothing was pinned"
                        ) from None
                    time.sleep(0.01)
            self._read()  # what another process pinned meanwhile
            before = _snapshot(self._tools, self._servers)
            yield
            if _snapshot(self._tools, self._servers) != before:
                self._save()
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ the proxy

    def check_listing(self, server: str, seen: Sequence[Seen]) -> tuple[dict[str, Held], list[str]]:
        """Each tool of one upstream's listing against its pin: (the held tools, by name;
        the tools pinned now). The server's first listing is pinned whole; after it, a
        tool without a pin is new, and held like a changed one."""
        held: dict[str, Held] = {}
        pinned: list[str] = []
        with self._changing():
            first = server not in self._servers
            if first:
                self._servers[server] = {"first_listed": time.time()}
            for tool in seen:
                item = self._tools.get(tool.name)
                if item is None or not isinstance(item.get("pin"), str):
                    if first:
                        self._tools[tool.name] = {"pin": tool.pin, "doc": dict(tool.doc)}
                        pinned.append(tool.name)
                    else:
                        self._note(tool)
                        held[tool.name] = Held(diff({}, tool.doc), new=True)
                elif item.get("v") == 1 and _still_v1(item, tool):
                    self._tools[tool.name] = {"pin": tool.pin, "doc": dict(tool.doc)}
                    pinned.append(tool.name)
                elif item["pin"] != tool.pin:
                    before = item.get("doc") if isinstance(item.get("doc"), dict) else {}
                    self._note(tool)
                    held[tool.name] = Held(diff(before or {}, tool.doc))
        return held, pinned

    def _note(self, seen: Seen) -> None:
        """Keep the version seen beside the pin (or in its place, for a new tool), for a
        person to review and trust."""
        item = self._tools.setdefault(seen.name, {})
        changed = item.get("changed")
        if isinstance(changed, dict) and changed.get("pin") == seen.pin:
            return
        item["changed"] = {"pin": seen.pin, "doc": dict(seen.doc), "at": time.time()}

    def trust(self, seen: Seen) -> None:
        """Pin `seen` (a person approved a call of it, which ran)."""
        with self._changing():
            self._tools[seen.name] = {"pin": seen.pin, "doc": dict(seen.doc)}

    def pinned_as(self, name: str) -> str | None:
        """The pin of `name` as the file says now (another process may have trusted a
        change since); None if it is not pinned. Pins nothing."""
        self._read()
        item = self._tools.get(name)
        pin = item.get("pin") if item is not None else None
        return pin if isinstance(pin, str) else None

    # ------------------------------------------------------------------ a person

    def entries(self) -> list[Entry]:
        """Every tool seen, by name, with the version the proxy saw since (if any)."""
        self._read()
        return [self._entry(name) for name in sorted(self._tools)]

    def entry(self, name: str) -> Entry:
        self._read()
        return self._entry(name)

    def _entry(self, name: str) -> Entry:
        if name not in self._tools:
            known = ", ".join(sorted(self._tools)) or "none yet: the proxy pins what it lists"
            raise InvalidInput(f"no pinned MCP tool {name!r} in {self.path} (pinned: {known})")
        item = self._tools[name]
        pinned = item.get("pin")
        pin = pinned if isinstance(pinned, str) else ""
        doc = item.get("doc") if isinstance(item.get("doc"), dict) else {}
        changed = item.get("changed")
        if not isinstance(changed, dict) or changed.get("pin") == pin:
            return Entry(name, pin, doc or {})
        now = changed.get("doc") if isinstance(changed.get("doc"), dict) else {}
        at = changed.get("at")
        return Entry(
            name,
            pin,
            doc or {},
            str(changed.get("pin", "")),
            now or {},
            float(at) if isinstance(at, int | float) else None,
        )

    def trust_change(self, name: str, expected: str | None = None) -> Entry:
        """Pin the version of `name` that a person reviewed. With `expected`, only if that
        is still the version seen (a tool that changed again is not trusted unread).
        Returns the entry as it was before."""
        with self._changing():
            entry = self._trustable(name, expected)
            changed = self._tools[name]["changed"]
            self._tools[name] = {
                "pin": entry.changed_pin,
                "doc": entry.changed_doc,
                # a version kept by the first format has its pin: compared as such
                **({"v": 1} if changed.get("v") == 1 else {}),
            }
        return entry

    def trustable(self, name: str, expected: str | None = None) -> Entry:
        """The entry `trust_change` would pin, or why not (InvalidInput); changes nothing."""
        self._read()
        return self._trustable(name, expected)

    def _trustable(self, name: str, expected: str | None) -> Entry:
        entry = self._entry(name)
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


def _snapshot(*tables: Mapping[str, Any]) -> str:
    return json.dumps(tables, sort_keys=True, default=str)


def _table_of_tables(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def _from_v1(doc: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A file of the first format, as the second: each tool's pin marked as of the first
    format (`"v": 1`), its text in the shape the client is shown; a server with a pinned
    tool had its first listing pinned."""
    if not _table_of_tables(doc):
        raise ConfigurationError(f"{path}: not a table of pinned tools")
    tools: dict[str, Any] = {}
    servers: dict[str, Any] = {}
    for name, item in doc.items():
        tools[name] = {"v": 1, "pin": item.get("pin"), "doc": _shown_v1(item.get("doc"))}
        changed = item.get("changed")
        if isinstance(changed, dict):
            tools[name]["changed"] = {**changed, "v": 1, "doc": _shown_v1(changed.get("doc"))}
        servers[name.split(SEPARATOR, 1)[0]] = {"first_listed": None}
    return tools, servers


def _still_v1(item: Mapping[str, Any], seen: Seen) -> bool:
    """Whether a tool pinned by the first format is as pinned, and shows nothing that
    format did not cover: then it is pinned anew, in full, without asking."""
    return item.get("pin") == digest_v1(seen.doc) and set(seen.doc) <= _V1_FIELDS


@dataclass(frozen=True, slots=True)
class Entry:
    """One tool seen by the proxy: its pin ("" when it has none yet: new), and the version
    the proxy saw since (if any)."""

    name: str
    pin: str
    doc: Mapping[str, Any]
    changed_pin: str | None = None
    changed_doc: Mapping[str, Any] | None = None
    changed_at: float | None = None

    @property
    def new(self) -> bool:
        return not self.pin

    @property
    def state(self) -> str:
        if self.new:
            return "NEW"
        return "CHANGED" if self.changed_pin else "pinned"

    @property
    def diff(self) -> str:
        return diff(self.doc, self.changed_doc) if self.changed_doc is not None else ""


__all__ = ["PINS", "VERSION", "Entry", "Held", "Pins", "Seen", "diff", "digest", "digest_v1"]
