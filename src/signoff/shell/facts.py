"""What the shell analyzer works out about one command, and what it knows of the machine.

`Facts` collects a command's class, reasons and the paths it reads and writes while it is
being judged; `Context` holds the resolved workspace and home and resolves paths.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable, Iterable

from ..hints import literal_type
from ..lazyre import lazy
from ..records import field, record
from .parse import Word

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Literal

    ShellClass = Literal[
        "read_only", "reversible_write", "destructive", "network", "privilege", "opaque"
    ]

SHELL_CLASSES: tuple[ShellClass, ...] = (
    "read_only",
    "reversible_write",
    "destructive",
    "network",
    "privilege",
    "opaque",
)
_LITERALS: dict[str, tuple[str, ...]] = {"ShellClass": SHELL_CLASSES}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


_CLASS_RANK = {
    "read_only": 0,
    "reversible_write": 1,
    "destructive": 2,
    "network": 3,
    "privilege": 4,
    "opaque": 5,
}
_EXACT_CLASSES = frozenset({"destructive", "network", "privilege"})
# Runs a nested script (`bash -c '…'`): set by shell.py, which owns parsing and data flow.
ScriptRunner = Callable[[str, "str | None", "dict[str, str | None]"], "list[Facts]"]
# Runs a script in another context (a container's mounts mapped back to the host): set by
# shell.py too, so that the judges below it never import it.
ContextRunner = Callable[[str, "str | None", "dict[str, str | None]", "Context"], "list[Facts]"]


@record(slots=True)
class Facts:
    """What one effective command does; mutable while it is being worked out."""

    argv: list[str]
    cls: ShellClass = "read_only"
    reasons: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    trees: list[str] = field(default_factory=list)  # directories read as a whole
    tree_writes: list[str] = field(default_factory=list)  # trees changed by content or -R
    links: list[str] = field(default_factory=list)  # what links made here point to
    mentions: list[str] = field(default_factory=list)  # every argument that names a path
    catastrophic: bool = False
    force_ask: bool = False  # e.g. a secret read or a write outside the workspace
    unknown_paths: bool = False
    unknown_reads: bool = False  # reads a file named only at run time (`cat "$(…)"`)
    network: bool = False
    fetch: bool = False  # network data comes out on stdout
    runs_stdin: bool = False  # executes what arrives on stdin as code
    runs_code: bool = False  # executes code given in its arguments
    secret: bool = False  # reads a secret (file, or the environment)
    downloads: list[str] = field(default_factory=list)
    executes: list[str] = field(default_factory=list)
    content_from: list[str] = field(default_factory=list)  # patches/archives read to judge
    # Files a formatter rewrites in place: same code laid out again, never new content, so
    # not a race with a part that read them to judge itself (shell_tools).
    reformats: list[str] = field(default_factory=list)
    boundaries: list[str] = field(default_factory=list)  # asks no allow rule may silence
    # An "always" rule must name this command exactly: it destroyed, escalated, went online
    # or ran a program its options name, even if a higher class (opaque) now hides that.
    exact_rule: bool = False
    cmd: int = -1

    def raise_to(self, cls: ShellClass, reason: str) -> None:
        if _CLASS_RANK[cls] > _CLASS_RANK[self.cls]:
            self.cls = cls
        if cls in _EXACT_CLASSES:
            self.exact_rule = True
        self.note(reason)

    def note(self, reason: str) -> None:
        if reason and reason not in self.reasons:
            self.reasons.append(reason)

    def ask(self, reason: str) -> None:
        self.force_ask = True
        self.note(reason)

    def deny(self, reason: str) -> None:
        self.catastrophic = True
        self.note(reason)

    def opaque(self, reason: str) -> None:
        self.raise_to("opaque", reason)


class Context:
    """Everything `analyze` knows about the machine: resolved roots and a resolver."""

    def __init__(
        self,
        workspace: str,
        home: str,
        resolver: Callable[[str], str],
        script: ScriptRunner,
        reader: Reader | None = None,
    ) -> None:
        self.resolver = resolver
        # Reads a patch or archive whose content names the files a command writes.
        self.reader: Reader = reader or read_bounded
        self.script = script
        self.run_in: ContextRunner = lambda *_: []
        self._cache: dict[str, str] = {}
        self.workspace = _resolve_root(workspace, resolver)
        self.home = _resolve_root(home, resolver)
        self.functions: set[str] = set()
        self.depth = 0
        # Directories besides the workspace that the file tools may read (shell_places).
        self.read_roots: tuple[str, ...] = ()
        # Places the repository's own git config makes code (runs_later.configured_places).
        self.git_places: list[tuple[str, str]] | None = None

    def resolve(self, path: str) -> str:
        norm = posixpath.normpath(path)
        if norm.startswith("//"):
            norm = "/" + norm.lstrip("/")
        hit = self._cache.get(norm)
        if hit is None:
            try:
                hit = (
                    self._realpath(norm)
                    if self.resolver is os.path.realpath
                    else posixpath.normpath(self.resolver(norm))
                )
            except (OSError, ValueError):
                hit = norm
            self._cache[norm] = hit
        return hit

    def _realpath(self, norm: str) -> str:
        """`os.path.realpath`, a component at a time through this analysis's cache: the
        parent is resolved once for every path below it (the workspace, the home), and only
        the last name is looked at on disk (realpath looks at every component, each time)."""
        parent, name = posixpath.split(norm)
        if not name:
            return norm
        candidate = posixpath.join(self.resolve(parent), name)
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:
            return candidate  # nothing there, so not a link
        return posixpath.normpath(os.path.realpath(candidate)) if stat.S_ISLNK(mode) else candidate

    def path(self, word: Word, cwd: str | None) -> str | None:
        """The absolute resolved path a word names, or None when it is only known later."""
        if word.dynamic or "\x00" in word.text:
            return None
        text = word.text
        if not text.startswith("/"):
            if cwd is None:
                return None
            text = posixpath.join(cwd, text)
        if _PROC_LINK.match(posixpath.normpath(text)):
            return None  # /proc/self/cwd is the command's directory, not ours: unknown here
        return self.resolve(text)

    def inside(self, path: str) -> bool:
        return path == self.workspace or path.startswith(self.workspace.rstrip("/") + "/")

    def under_home(self, path: str) -> str | None:
        """The path relative to home, or None when it is not under home."""
        if path == self.home:
            return ""
        prefix = self.home.rstrip("/") + "/"
        return path[len(prefix) :] if path.startswith(prefix) else None


# A process's own view of the file system: where it leads depends on the process.
_PROC_LINK = lazy(r"^/+proc/+[^/]+/+(?:task/+[^/]+/+)?(?:cwd|root|map_files)(?:/|$)")
# A file's bytes, or None when it cannot be judged: missing, not a regular file, too big.
Reader = Callable[[str], "bytes | None"]
MAX_CONTENT = 1 << 20  # patches and archives bigger than 1 MiB are not read: ask


def read_bounded(path: str) -> bytes | None:
    """A regular file's content up to MAX_CONTENT bytes; never blocks on a FIFO or device."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CONTENT:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_CONTENT + 1)
    except (OSError, ValueError):
        return None
    return data if len(data) <= MAX_CONTENT else None


_ROOTS: dict[str, str] = {}  # workspace and home rarely move: resolve them once


def _resolve_root(path: str, resolver: Callable[[str], str]) -> str:
    cacheable = resolver is os.path.realpath
    hit = _ROOTS.get(path) if cacheable else None
    if hit is None:
        try:
            hit = posixpath.normpath(resolver(posixpath.normpath(path)))
        except (OSError, ValueError):
            hit = posixpath.normpath(path)
        if cacheable:
            if len(_ROOTS) > 256:
                _ROOTS.clear()
            _ROOTS[path] = hit
    return hit


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)
