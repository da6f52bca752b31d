"""How far a command reaches beyond the operands each program's judge records.

Three facts the policy needs to judge paths by its own rules and protected state:

- `trees`: directories read as a whole (`grep -r`, `rg`, `cp -r`, `tar c`, `find -exec`);
  a tree that holds a protected or denied path reads it too.
- `mentions`: every argument that names a path, whatever the program (`sqlite3 FILE`,
  `python x.py FILE`, `--db=FILE`): a program signoff does not know may open any of them.
- link targets (`ln`) are recorded by `shell_files`; here only the whole-command notes.
"""

from __future__ import annotations

import itertools
import posixpath

from . import knowledge as K
from .facts import Context, Facts
from .parse import Cmd, Word
from .places import grep_trees, rg_trees

# Programs that read whole directory trees: the flags that make them recursive (None: always).
_TREE_READERS: dict[str, frozenset[str] | None] = {
    "grep": frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
    "egrep": frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
    "fgrep": frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
    "zgrep": frozenset({"-r", "-R", "--recursive"}),
    "rg": None,
    "ag": None,
    "ack": None,
    "ugrep": None,
    "ack-grep": None,
    "cp": frozenset({"-r", "-R", "-a", "--recursive", "--archive"}),
    "scp": frozenset({"-r"}),
    "rsync": frozenset({"-r", "-a", "--recursive", "--archive"}),
    "zip": frozenset({"-r", "--recurse-paths"}),
    "diff": frozenset({"-r", "--recursive"}),
    "find": frozenset({"-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"}),
    "tar": None,  # creating reads the trees; extracting reads one archive file
    "7z": None,
    "sha256sum": None,
    "sha1sum": None,
    "md5sum": None,
    "b2sum": None,
}
_DEFAULT_ROOT = frozenset(
    {"rg", "ag", "ack", "ugrep", "ack-grep", "grep", "egrep", "fgrep", "find"}
)
_TREE_WRITERS: dict[str, frozenset[str]] = {
    "chmod": frozenset({"-R", "--recursive"}),
    "chown": frozenset({"-R", "--recursive"}),
    "chgrp": frozenset({"-R", "--recursive"}),
}
STDIN_ARGS = "<stdin>"  # how the xargs judge marks arguments read from standard input
# Options whose value names what to leave out: naming a path there does not touch it.
_EXCLUDING = ("--exclude", "--ignore", "--skip", "--glob=!", "--iglob=!")
_EXCLUDING_NEXT = frozenset({"--exclude", "--exclude-dir", "--ignore"})  # value in next word


def _flagged(args: list[str], flags: frozenset[str] | None) -> bool:
    if flags is None:
        return True
    for text in args:
        if text == "--":
            return False
        for flag in flags:
            if text == flag or (flag.startswith("--") and text.startswith(flag + "=")):
                return True
            if (
                len(flag) == 2
                and flag[0] == "-"
                and text.startswith("-")
                and not text.startswith("--")
                and flag[1] in text[1:]
            ):
                return True
    return False


def _grep_recurses(args: list[str]) -> bool:
    """grep -d recurse / --directories=recurse: the long way to say -r."""
    return any(t in ("--directories=recurse", "-drecurse") for t in args) or any(
        a == "-d" and b == "recurse" for a, b in itertools.pairwise(args)
    )


def note_trees(f: Facts, cmd: Cmd, ctx: Context) -> None:
    """Record the directories `f`'s program reads (or changes) as whole trees."""
    if not f.argv:
        return
    base = posixpath.basename(f.argv[0])
    args = f.argv[1:]
    readers = _TREE_READERS.get(base, frozenset())
    recursive = _flagged(args, readers) or ("grep" in base and _grep_recurses(args))
    if base == "rg" and any(a in ("--files", "--type-list") for a in args):
        recursive = False  # names only, not contents
    if base in _TREE_READERS and recursive:
        roots = list(f.reads)
        if not roots and base in _DEFAULT_ROOT:
            if cmd.cwd is None:
                f.unknown_paths = True
                f.ask(f"{base} searches a directory only known at run time")
                return
            roots = [ctx.resolve(cmd.cwd)]
        if base == "rg":
            roots = rg_trees(roots, args, cmd.cwd, bool(cmd.assigns), ctx)  # hidden entries skipped
        elif base in ("grep", "egrep", "fgrep"):
            roots = grep_trees(roots, args)  # --exclude-dir=.signoff
        f.trees.extend(r for r in roots if r not in f.trees)
    if STDIN_ARGS in args and base not in K.NO_PATH_ARGS:
        # `… | xargs cat`: the names come from another program's output, any path at all.
        f.trees.append("/")
        if f.cls != "read_only":
            f.tree_writes.append("/")
    writers = _TREE_WRITERS.get(base)
    if writers and _flagged(args, writers):
        f.tree_writes.extend(w for w in f.writes if w not in f.tree_writes)


def note_mentions(f: Facts, cmd: Cmd, ctx: Context) -> None:
    """Every argument of the command that could name a file, resolved."""
    if not cmd.words:
        return
    program = posixpath.basename(cmd.words[0].text)
    if program in K.NO_PATH_ARGS and program not in (
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "alias",
    ):
        return  # `echo .signoff/x` prints a name; it opens nothing
    for before, word in itertools.pairwise(cmd.words):
        if (
            word.dynamic
            or not word.text
            or word.text.startswith(_EXCLUDING)
            or (before.text in _EXCLUDING_NEXT and before is not cmd.words[0])
        ):
            continue  # `--exclude-dir=.signoff`, `--exclude-dir .signoff`: left out
        for candidate in _path_candidates(word.text):
            path = ctx.path(Word(candidate), cmd.cwd)
            if path and path not in f.mentions:
                f.mentions.append(path)


def _path_candidates(text: str) -> list[str]:
    if text.startswith("-"):  # an option names a file only through its value
        if "=" in text:
            return [c for c in (text.partition("=")[2],) if c and c != "-"]  # --db=FILE
        rest = text[2:]
        return [rest] if not text.startswith("--") and ("/" in rest or "." in rest) else []
    out = [text]
    if "=" in text:
        out.append(text.partition("=")[2])  # of=FILE, NAME=FILE
    return [c for c in out if c and c != "-"]


__all__ = ["note_mentions", "note_trees"]
