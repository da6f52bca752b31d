"""signoff's own state, and whether a path (or a glob pattern) can reach it.

The agent must never read or write what decides over it: the `.signoff/` directory of the
workspace and of every additional root (settings, grants, the store), the user settings
directory (where the key file lives), `$SIGNOFF_CONFIG_DIR`, and the store's files when the
store is a SQLite file elsewhere (`$SIGNOFF_DB`: the database, `-wal`, `-shm`, `-journal`).

`ProtectedPaths.relation(path)` says whether a resolved path, or a shell glob pattern, is
inside protected state, is a directory that holds it, or neither. A glob is judged by the
names it *can* match, never by listing the disk (the disk may change before it runs).
The policy (declared tools and shell commands) and helper H2's patch and archive checks
call the same functions.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping

from .hints import literal_type
from .lazyre import lazy
from .plainpath import joined
from .records import field, record

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Literal

    Relation = Literal["inside", "holds"]

RELATIONS: tuple[Relation, ...] = ("inside", "holds")
_LITERALS: dict[str, tuple[str, ...]] = {"Relation": RELATIONS}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


STATE_DIR = ".signoff"
_STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")
_GLOB_CHARS = frozenset("*?[")


def user_config_dir(env: Mapping[str, str] | None = None) -> str:
    """`$XDG_CONFIG_HOME/signoff`, else `~/.config/signoff` (settings and the key file)."""
    env = os.environ if env is None else env
    config_home = env.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return joined(config_home, "signoff")


def store_files(url: str | os.PathLike[str] | None) -> tuple[str, ...]:
    """The files of a SQLite store (db, -wal, -shm, -journal); none for other stores."""
    if url is None:
        return ()
    text = os.fspath(url)
    if text in ("memory:", "memory://", ":memory:") or text.startswith(
        ("postgresql://", "postgres://")
    ):
        return ()
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]
    elif "://" in text or text.startswith("sqlite:"):
        return ()
    if not text:
        return ()
    return tuple(text + suffix for suffix in _STORE_SUFFIXES)


def default_protected(
    roots: Iterable[str], env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """What is protected without being told: each root's `.signoff/`, the user config
    directory, `$SIGNOFF_CONFIG_DIR` and the `$SIGNOFF_DB` store's files."""
    env = os.environ if env is None else env
    paths = [os.path.join(root, STATE_DIR) for root in roots]
    paths.append(user_config_dir(env))
    if env.get("SIGNOFF_CONFIG_DIR"):
        paths.append(os.path.expanduser(env["SIGNOFF_CONFIG_DIR"]))
    paths.extend(store_files(env.get("SIGNOFF_DB")))
    return tuple(paths)


def is_pattern(path: str) -> bool:
    """Whether bash would expand this (already unquoted) path as a glob."""
    return not _GLOB_CHARS.isdisjoint(path)


@record(frozen=True)
class ProtectedPaths:
    """Absolute, resolved protected paths; compared case-insensitively (macOS and Windows
    file systems fold case, so `.SIGNOFF` may be `.signoff`)."""

    paths: tuple[str, ...]
    _folded: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_folded", tuple(p.casefold() for p in self.paths))

    @property
    def names(self) -> tuple[str, ...]:
        """How code would name protected state: each full path, and the names that are
        signoff's alone (`.signoff`, a store file such as `signoff.db-wal`)."""
        short = (posixpath.basename(p) for p in self.paths)
        own = (n for n in short if n.startswith(".") or ".db" in n)
        return tuple(dict.fromkeys((*self.paths, *own)))

    @classmethod
    def of(
        cls,
        paths: Iterable[str | os.PathLike[str]],
        *,
        resolver: Callable[[str], str] = os.path.realpath,
    ) -> ProtectedPaths:
        resolve = resolver
        seen: dict[str, None] = {}
        for raw in paths:
            text = os.path.abspath(os.path.expanduser(os.fspath(raw)))
            for form in (posixpath.normpath(text), posixpath.normpath(str(resolve(text)))):
                seen.setdefault(form, None)  # the link and where it leads are both protected
        return cls(tuple(p for p in seen if p != "/"))

    def relation(self, path: str, *, dotglob: bool = False) -> tuple[Relation, str] | None:
        """("inside", p) when `path` is p or under it (or a pattern that can match so),
        ("holds", p) when it is a directory above p, else None."""
        holds: tuple[Relation, str] | None = None
        if not is_pattern(path) and "{" not in path:  # the common case: plain prefixes
            folded = posixpath.normpath(path).casefold()
            for protected, key in zip(self.paths, self._folded, strict=True):
                if folded == key or folded.startswith(key + "/"):
                    return "inside", protected
                if holds is None and key.startswith(folded.rstrip("/") + "/"):
                    holds = ("holds", protected)
            return holds
        for spelling, any_dot in spellings(path):
            for protected in self.paths:
                found = _relation(spelling, protected, dotglob or any_dot)
                if found == "inside":
                    return "inside", protected
                if found == "holds" and holds is None:
                    holds = ("holds", protected)
        return holds

    def inside(self, path: str, *, dotglob: bool = False) -> str | None:
        """The protected path that `path` (or pattern) is in, or None."""
        found = self.relation(path, dotglob=dotglob)
        return found[1] if found and found[0] == "inside" else None

    def holds(self, path: str, *, dotglob: bool = False) -> str | None:
        """The protected path that lies under the directory `path`, or None."""
        found = self.relation(path, dotglob=dotglob)
        return found[1] if found and found[0] == "holds" else None


_BRACE_LIST = lazy(r"\{([^{}]*,[^{}]*)\}")
_BRACE_SEQUENCE = lazy(r"\{[^{}]*\.\.[^{}]*\}")


def spellings(path: str, limit: int = 64) -> list[tuple[str, bool]]:
    """The paths a word with braces stands for (`.{signoff,x}` is `.signoff` and `.x`),
    each with whether it may hold a leading dot a glob would not show: a sequence
    (`{a..z}`) becomes `*` that may match anything, dots included."""
    if "{" not in path:
        return [(path, False)]
    out = [path]
    for _ in range(8):
        grown: list[str] = []
        for item in out:
            match = _BRACE_LIST.search(item)
            if match is None:
                grown.append(item)
                continue
            grown.extend(
                item[: match.start()] + alt + item[match.end() :]
                for alt in match.group(1).split(",")
            )
        if grown == out:
            break
        out = grown[:limit]
    return [(_BRACE_SEQUENCE.sub("*", item), bool(_BRACE_SEQUENCE.search(item))) for item in out]


def _components(path: str) -> list[str]:
    return [c for c in posixpath.normpath(path).split("/") if c]


def glob_relation(path: str, target: str, dotglob: bool = False) -> Relation | None:
    """ "inside" when `path` (a literal path or a glob) is, or can match, `target` or
    something under it; "holds" when it is (or can match) a directory above it."""
    return _relation(path, target, dotglob, fold=False)


def name_may_match(component: str, name: str, dotglob: bool = False) -> bool:
    """Whether one path component (literal or glob) can be a name that the glob `name`
    (a rule's bare name such as `*.pem`) matches; two globs are assumed to overlap."""
    if not is_pattern(component):
        return _glob_regex(name).fullmatch(component) is not None
    if not is_pattern(name):
        return _component_matches(component, name, dotglob)
    if name.startswith(".") and not component.startswith(".") and not dotglob:
        return False  # `*.py` never expands to a dot name such as `.env.local`
    return _globs_overlap(component, name)


def _globs_overlap(a: str, b: str) -> bool:
    """False only when two globs certainly match no common name: their literal heads or
    tails disagree (`*.py` and `*.pem`). Otherwise they may overlap."""

    def head(glob: str) -> str:
        cut = min((glob.index(c) for c in _GLOB_CHARS | {"\\"} if c in glob), default=len(glob))
        return glob[:cut]

    def tail(glob: str) -> str:
        return head(glob[::-1])[::-1] if "\\" not in glob else ""

    ha, hb, ta, tb = head(a), head(b), tail(a), tail(b)
    heads_agree = ha.startswith(hb) or hb.startswith(ha)
    tails_agree = ta.endswith(tb) or tb.endswith(ta)
    return heads_agree and tails_agree


def _relation(path: str, protected: str, dotglob: bool, *, fold: bool = True) -> Relation | None:
    mine = _components(path.casefold() if fold else path)
    theirs = _components(protected.casefold() if fold else protected)
    for index in range(min(len(mine), len(theirs))):
        if not _component_matches(mine[index], theirs[index], dotglob):
            return None
    return "inside" if len(mine) >= len(theirs) else "holds"


def _component_matches(pattern: str, name: str, dotglob: bool) -> bool:
    if not is_pattern(pattern):
        return pattern == name
    if name.startswith(".") and not pattern.startswith(".") and not dotglob:
        return False  # bash: `*` and `?` never match a leading dot unless dotglob is set
    return _glob_regex(pattern).fullmatch(name) is not None


_CACHE: dict[str, re.Pattern[str]] = {}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """One path component of a bash glob (`*`, `?`, `[...]`, `[!...]`, `\\x`)."""
    hit = _CACHE.get(pattern)
    if hit is not None:
        return hit
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                inner = pattern[i + 1 : end]
                negate = inner[:1] in ("!", "^")
                body = inner[1:] if negate else inner
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    try:
        compiled = re.compile("".join(out), re.DOTALL)
    except re.error:
        compiled = re.compile(".*", re.DOTALL)  # a class we cannot read: it may match anything
    if len(_CACHE) > 1024:
        _CACHE.clear()
    _CACHE[pattern] = compiled
    return compiled


__all__ = [
    "ProtectedPaths",
    "default_protected",
    "glob_relation",
    "is_pattern",
    "name_may_match",
    "spellings",
    "store_files",
    "user_config_dir",
]
