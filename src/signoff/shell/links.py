"""Writes through a link that the same command line makes (issue 12).

`ln -s /etc/passwd p && echo x > p` writes /etc/passwd: each program's judge sees only
`p`, a name inside the workspace. After the whole line is judged, every link it makes
(`ln`, `ln -s`, `cp -s`, `cp -l`, in any order, in loops, after `cd`) is mapped to its
target, and each write or read of the link (or of a path below a linked directory) is
judged again as a write or read of the target: outside the workspace asks, system files
and startup files deny, protected paths ask. A write that comes before the link in the
text still asks: a loop can run it after the link.
"""

from __future__ import annotations

import posixpath

from . import knowledge as K
from .facts import Context, Facts
from .parse import Cmd, Word
from .paths import note_delete, note_read, note_write

# (link path, target path, the facts of the command that made it)
Link = tuple[str, str, Facts]
# Programs that replace or remove a link itself rather than writing through it.
_REPLACES_LINK = frozenset({"ln", "mv", "rm", "unlink", "rmdir"})
_LINKERS = frozenset({"ln", "cp"})
_VALUE_LETTERS = "tS"  # ln/cp short options that take a value: -t DIR, -S SUFFIX
_LONG = (
    "--symbolic",
    "--symbolic-link",
    "--link",
    "--relative",
    "--target-directory",
    "--no-target-directory",
    "--suffix",
)


def judge_link_writes(cmds: list[Cmd], per_cmd: list[list[Facts]], ctx: Context) -> None:
    """Judge writes and reads through links made earlier in the line; a write before the
    link asks (a loop may run it after the link)."""
    links: list[Link] = []
    for index, group in enumerate(per_cmd):
        for f in group:
            if f.argv and (f.argv[0] in _LINKERS or f.argv[0].endswith(("/ln", "/cp"))):
                cwd = cmds[index].cwd if index < len(cmds) else None
                links.extend(_made_links(f, cwd, ctx))
    if not links:
        return
    links = _through_each_other(links)
    for group in per_cmd:
        for f in group:
            _judge_through(f, links, ctx)


def _made_links(f: Facts, cwd: str | None, ctx: Context) -> list[Link]:
    prog = posixpath.basename(f.argv[0])
    flags, target_dir, pos = _read_options(f.argv[1:])
    symbolic = "s" in flags or "--symbolic" in flags or "--symbolic-link" in flags
    if prog == "cp" and not (symbolic or "l" in flags or "--link" in flags):
        return []
    if cwd is None or any(("$" in t or "`" in t) for t in pos):
        return []  # names only known at run time: their writes already ask
    if target_dir is not None:
        places = [(s, [posixpath.join(target_dir, posixpath.basename(s.rstrip("/")))]) for s in pos]
    elif len(pos) == 1:
        places = [(pos[0], [posixpath.basename(pos[0].rstrip("/"))])]
    elif len(pos) >= 2:
        dest = pos[-1]
        single = len(pos) == 2
        places = [
            (
                s,
                ([dest] if single else [])
                + (
                    []
                    if single and ("T" in flags or "--no-target-directory" in flags)
                    else [posixpath.join(dest, posixpath.basename(s.rstrip("/")))]
                ),
            )
            for s in pos[:-1]
        ]
    else:
        return []
    out: list[Link] = []
    relative = "r" in flags or "--relative" in flags
    for source, names in places:
        for name in names:
            link = ctx.path(Word(name), cwd)
            if link is None:
                continue
            # A relative symbolic target is read from the link's directory (or, with -r,
            # given from the current one); a hard link's source is a path from cwd.
            bases = [cwd] if not symbolic or relative else [posixpath.dirname(link), cwd]
            for base in dict.fromkeys(bases):
                target = ctx.path(Word(source), base)
                if target is not None and target != link and (link, target, f) not in out:
                    out.append((link, target, f))
    return out


def _read_options(args: list[str]) -> tuple[set[str], str | None, list[str]]:
    """ln/cp options as getopt reads them: short clusters (`-sfn`, `-st dir`), long
    options and their prefixes (`--sym`), `-t DIR` / `--target-directory=DIR`, `--`."""
    flags: set[str] = set()
    target_dir: str | None = None
    pos: list[str] = []
    i = 0
    ended = False
    while i < len(args):
        t = args[i]
        i += 1
        if ended or not t.startswith("-") or t == "-":
            pos.append(t)
        elif t == "--":
            ended = True
        elif t.startswith("--"):
            name, eq, value = t.partition("=")
            full = [o for o in _LONG if o.startswith(name)]
            name = name if name in _LONG else (full[0] if len(full) == 1 else name)
            flags.add(name)
            if name in ("--target-directory", "--suffix") and not eq and i < len(args):
                value = args[i]
                i += 1
            if name == "--target-directory":
                target_dir = value
        else:
            for k, letter in enumerate(t[1:], start=1):
                flags.add(letter)
                if letter in _VALUE_LETTERS:
                    value = t[k + 1 :]
                    if not value and i < len(args):
                        value = args[i]
                        i += 1
                    if letter == "t":
                        target_dir = value
                    break
    return flags, target_dir, pos


def _through_each_other(links: list[Link]) -> list[Link]:
    """`ln -s /etc a; ln -s a/passwd b`: b's target is itself reached through a."""
    for _ in range(4):
        changed = False
        resolved: list[Link] = []
        for link, target, maker in links:
            new = _via(target, links)
            if new is not None and new != target:
                changed = True
                target = new
            resolved.append((link, target, maker))
        links = resolved
        if not changed:
            break
    return links


def _via(path: str, links: list[Link]) -> str | None:
    for link, target, _ in links:
        if path.startswith(link.rstrip("/") + "/"):
            return target.rstrip("/") + path[len(link.rstrip("/")) :]
    return None


def _judge_through(f: Facts, links: list[Link], ctx: Context) -> None:
    prog = posixpath.basename(f.argv[0]) if f.argv else ""  # a bare redirect: `> p`
    recursive = any(
        a in ("-r", "-R", "--recursive")
        or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
        for a in f.argv[1:]
    )
    slashed = any(a.endswith("/") and len(a) > 1 for a in f.argv[1:])  # `rm -r link/`
    for kind, paths in (("write", list(f.writes)), ("read", list(f.reads))):
        for path in paths:
            for link, target, maker in links:
                if maker is f:
                    continue  # the link itself, and where ln would land it in a directory
                if path == link:
                    if prog in _REPLACES_LINK and not (prog in K.DELETERS and slashed):
                        continue  # the link itself is made, replaced or removed
                    through = target
                elif path.startswith(link.rstrip("/") + "/"):
                    through = target.rstrip("/") + path[len(link.rstrip("/")) :]
                else:
                    continue
                if f.cmd < maker.cmd:  # written before the link exists, unless a loop repeats
                    if not ctx.inside(through):
                        f.ask(
                            f"{path} may be written through a link made later in this "
                            f"command line (to {target})"
                        )
                    continue
                if not ctx.inside(through):
                    f.note(f"{link} is a link this command line makes to {target}")
                word = Word(through)
                if kind == "read":
                    note_read(f, word, None, ctx)
                elif prog in K.DELETERS:
                    note_delete(f, word, None, ctx, recursive=recursive)
                else:
                    note_write(f, word, None, ctx)


__all__ = ["judge_link_writes"]
