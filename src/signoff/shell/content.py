"""Commands whose targets are named by content: patches (here) and archives (shell_archives).

`patch -p1 < fix.patch`, `git apply x.patch`, `git am`, `tar x`, `unzip`: the files they
write are not in the command line but in a file. Such a command asks unless every target
is read from the content and judged as a write of its own (through `shell_paths`, the same
judgement as `cp x TARGET`): the content must be a regular file inside the workspace of at
most 1 MiB (read through the context's injectable reader, so the analysis is the same for
the same file system), or a here-document in the command itself. Content from a pipe, a
process substitution or a file that cannot be read asks; so does anything the parser here
does not understand (an ed script, a name transform, an unknown archive format).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from ..lazyre import lazy
from ..runs_later import relative
from .args import has_flag, option_values, positionals, texts_of
from .facts import Context, Facts
from .options import (
    GIT_APPLY_LONG,
    PATCH_LONG,
    PATCH_SHORT_VALUES,
    expand_long,
    split_short,
)
from .parse import Cmd, Word
from .paths import note_write, unjudged

MAX_MEMBERS = 5000  # more targets than this: ask rather than judge them one by one

# --------------------------------------------------------------------------- reading


def read_content(
    files: list[Word], cmd: Cmd, cwd: str | None, ctx: Context, what: str, f: Facts | None = None
) -> tuple[list[bytes] | None, str]:
    """The bytes of each named file, or of standard input when none is named; on failure
    None and why (which makes the command ask). Paths read are recorded in
    `f.content_from`, so that a command that also writes them asks (`judge_races`)."""
    if any(w.text == "-" for w in files):
        files = [w for w in files if w.text != "-"]
        if cmd.stdin_text is None and not _stdin_file(cmd):
            return None, f"the {what} comes from standard input (a pipe or the terminal)"
    out: list[bytes] = []
    base = cwd
    if not files:
        if cmd.stdin_text is not None:
            # An unquoted here-document also joins lines at a backslash-newline.
            if cmd.stdin_dynamic or "\\\n" in cmd.stdin_text:
                return None, (
                    f"the {what} is a here-document that expands variables or commands when it runs"
                )
            return [cmd.stdin_text.encode("utf-8", "surrogateescape")], ""
        src = _stdin_file(cmd)
        if src is None:
            return None, f"the {what} comes from standard input (a pipe or the terminal)"
        files, base = [src], cmd.cwd  # the shell opens a redirect, before `patch -d`
    for w in files:
        path = ctx.path(w, base)
        if path is None:
            return None, f"the {what} is named only at run time ({w.text})"
        if not ctx.inside(path):
            return None, f"the {what} is outside the workspace ({path})"
        if f is not None:
            f.content_from.append(path)
        data = ctx.reader(path)
        if data is None:
            return None, (
                f"the {what} {w.text} cannot be read now (missing, not a regular "
                "file, or over 1 MiB)"
            )
        out.append(data)
    return out, ""


def _stdin_file(cmd: Cmd) -> Word | None:
    files = [r.target for r in cmd.redirects if r.op == "<" and r.fd in ("", "0")]
    return files[-1] if files else None


# --------------------------------------------------------------------------- patches

_GIT_HEADER = lazy(r"^diff --git (.*)$")
_ED_COMMAND = lazy(r"^\d+(,\d+)?[acdi]$|^\d+(,\d+)?[acd]\d+(,\d+)?$")
_CONTEXT_RANGE = lazy(r"^\*\*\* \d+(,\d+)? \*\*\*\*")
_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    '"': '"',
    "\\": "\\",
}


def _unquote(name: str) -> str:
    """git quotes unusual names C-style: "a/sp\\303\\251cial"."""
    name = name.split("\t", 1)[0].rstrip("\r")
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    raw = bytearray()
    body = name[1:-1]
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                raw.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            raw.extend(_C_ESCAPES.get(nxt, nxt).encode())
            i += 2
            continue
        raw.extend(c.encode("utf-8", "surrogateescape"))
        i += 1
    return raw.decode("utf-8", "surrogateescape")


def patch_names(text: str) -> tuple[list[str], list[str], list[str], str]:
    """(names with a strip prefix, names without one, executable names, problem).

    Names with a prefix come from `diff --git`, `---`/`+++`, `***`/`---` and `Index:`
    lines; `rename/copy from/to` names are never stripped. `problem` is set when the text
    holds something that is not a diff of named files (an ed script, a symlink)."""
    # Lines end at "\n" only, as patch reads them (str.splitlines would also split at
    # form feeds and other separators, pulling a header pair apart).
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    prefixed: list[str] = []
    plain: list[str] = []
    executable: list[str] = []
    # No hunk bookkeeping: hunk lines start with " ", "+" or "-", so they never look like
    # the headers below except a "--- "/"+++ " pair, and a spurious name only asks more.
    for k, line in enumerate(lines):
        nxt = lines[k + 1] if k + 1 < len(lines) else ""
        m = _GIT_HEADER.match(line)
        if m:
            prefixed.extend(_split_git_names(m.group(1)))
        elif (line.startswith("--- ") and nxt.startswith("+++ ")) or (
            line.startswith("*** ") and nxt.startswith("--- ") and not _CONTEXT_RANGE.match(line)
        ):
            for header in (line[4:], nxt[4:]):
                # GNU patch may end an unquoted name at a space (before a timestamp).
                prefixed += [_unquote(header), _unquote(header).split(" ", 1)[0]]
        elif line.startswith("Index: "):
            prefixed.append(line[7:].strip())
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            plain.append(_unquote(line.split(" ", 2)[2]))
        elif line.startswith(("new file mode ", "new mode ")):
            mode = line.rsplit(" ", 1)[-1]
            if mode.startswith("120"):
                return prefixed, plain, executable, "the patch creates a symbolic link"
            if mode.startswith("100") and int(mode[-3:] or "0", 8) & 0o111:
                executable.append(prefixed[-1] if prefixed else "")
        elif _ED_COMMAND.match(line):
            return (
                prefixed,
                plain,
                executable,
                ("the patch holds an ed-style or normal diff (no file names; patch may run ed)"),
            )
    names = [n for n in prefixed if n and n != "/dev/null"]
    if not names and not plain:
        return [], [], executable, "no file names were found in the patch"
    return names, plain, executable, ""


def _split_git_names(rest: str) -> list[str]:
    """`a/x b/y` (or quoted): every reading of where the first name ends is kept."""
    if rest.startswith('"'):
        end = rest.find('" ', 1)
        return [_unquote(rest[: end + 1]), _unquote(rest[end + 2 :])] if end > 0 else [rest]
    out: list[str] = []
    for m in re.finditer(r" (?=[^ ])", rest):
        out += [rest[: m.start()], _unquote(rest[m.end() :])]
    return out or [rest]


def strip_name(name: str, level: int) -> str | None:
    """`-pN`: drop N leading components (None when the name has too few)."""
    if level == 0:
        return name
    parts = [p for p in name.split("/") if p]
    return "/".join(parts[level:]) if len(parts) > level else None


def judge_patch(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """GNU `patch`: every file named in the patch is judged as a write."""
    args = split_short(expand_long(args, PATCH_LONG), PATCH_SHORT_VALUES)
    f.raise_to("reversible_write", "patch changes the files named in the patch")
    if has_flag(args, "-e", "--ed", "-g", "--get"):
        f.runs_code = True
        f.opaque("patch -e/-g runs ed or a version-control program on the patch's commands")
    cwd = cmd.cwd
    for w in option_values(args, "-d", "--directory"):
        cwd = ctx.path(w, cwd)
    if has_flag(args, "-B", "--prefix", "-Y", "--basename-prefix", "-z", "--suffix"):
        unjudged(f, "patch -B/-Y/-z writes backups to places built from options")
    pos = positionals(
        args,
        frozenset(
            {
                "-p",
                "-d",
                "-i",
                "-o",
                "-D",
                "-F",
                "-V",
                "-r",
                "-B",
                "-Y",
                "-z",
                "-g",
                "--directory",
                "--input",
                "--output",
                "--strip",
                "--ifdef",
                "--fuzz",
                "--reject-file",
            }
        ),
    )
    patch_files = option_values(args, "-i", "--input") or pos[1:2]
    for w in pos[:1] + option_values(args, "-o", "--output", "-r", "--reject-file"):
        note_write(f, w, cwd, ctx)  # the original file named on the command line, -o, -r
    levels = _strip_levels(args, "-p", "--strip")
    if levels is None:
        unjudged(f, "patch -p is not a plain number: the names it writes are unknown")
        return
    contents, why = read_content(patch_files, cmd, cwd, ctx, "patch", f)
    if contents is None:
        unjudged(f, why)
        return
    candidates: list[str] = []
    for data in contents:
        names, plain, executable, problem = patch_names(data.decode("utf-8", "surrogateescape"))
        if problem:
            unjudged(f, problem)
            return
        for level in levels if levels else (0, 1):
            candidates += [n for n in (strip_name(x, level) for x in names) if n]
        if not levels:
            candidates += [posixpath.basename(n) for n in names]  # no -p: the base name
        candidates += plain
        _note_executable(f, executable)
    judge_targets(f, candidates, [cwd], ctx, "patch")


def judge_git_patch(
    sub: str, args: list[Word], f: Facts, cmd: Cmd, cwd: str | None, ctx: Context
) -> bool:
    """`git apply` / `git am`: True when it writes (then the caller records the repo)."""
    args = split_short(expand_long(args, GIT_APPLY_LONG), "pCS")  # -Rp2 is -R -p2
    texts = texts_of(args)
    if (
        sub == "apply"
        and "--apply" not in texts
        and any(t in ("--stat", "--numstat", "--summary", "--check") for t in texts)
    ):
        f.note("git apply --stat/--check only reads the patch")
        return False
    if sub == "am" and any(
        t
        in (
            "--continue",
            "--skip",
            "--abort",
            "--quit",
            "--resolved",
            "-r",
            "--show-current-patch",
            "--retry",
        )
        or t.startswith("--show-current-patch")
        for t in texts
    ):
        return True  # works on patches an earlier, judged `git am` stored
    if sub == "am" and has_flag(args, "-i", "--interactive"):
        f.opaque("git am -i runs an editor")
    levels = _strip_levels(args, "-p")
    directories = option_values(args, "--directory")
    if levels is None or any(w.dynamic for w in directories):
        unjudged(f, f"git {sub} -p/--directory is only known at run time")
        return True
    levels = levels or [1]
    prefixes = [w.text for w in directories] or [""]
    files = positionals(
        args,
        frozenset(
            {
                "-p",
                "-C",
                "--directory",
                "--include",
                "--exclude",
                "--whitespace",
                "--exclude-dir",
                "--patch-format",
                "-S",
                "--build-fake-ancestor",
            }
        ),
    )
    contents, why = read_content(files, cmd, cwd, ctx, "patch", f)
    f.raise_to("reversible_write", f"git {sub} changes the files named in the patch")
    if contents is None:
        unjudged(f, why)
        return True
    candidates: list[str] = []
    for data in contents:
        names, plain, executable, problem = patch_names(data.decode("utf-8", "surrogateescape"))
        if problem:
            unjudged(f, problem)
            return True
        stripped = [n for n in (strip_name(x, lv) for x in names for lv in levels) if n]
        candidates += [posixpath.join(p, n) for p in prefixes for n in stripped + plain]
        _note_executable(f, executable)
    judge_targets(f, candidates, [cwd], ctx, f"git {sub}")
    return True


def _strip_levels(args: list[Word], *names: str) -> list[int] | None:
    """The `-pN` levels given; None when one is not a plain number (then the names the
    patch writes are unknown: stripping more can make `a/b/.signoff/x` `.signoff/x`)."""
    levels: list[int] = []
    for w in option_values(args, *names):
        if w.dynamic or not w.text.isdigit():
            return None
        levels.append(int(w.text))
    return levels


def _note_executable(f: Facts, names: Iterable[str]) -> None:
    for name in names:
        if name:
            f.note(f"makes {name} executable")


def judge_races(facts: list[Facts]) -> None:
    """The content judged is the content as it is now: if another part of the same command
    writes the patch or archive first (`cp evil.patch ok.patch; patch < ok.patch`), what
    runs is not what was read, so ask."""
    for f in facts:
        for path in f.content_from:
            if any(
                path == w or path.startswith(w.rstrip("/") + "/")
                for g in facts
                if g is not f
                for w in g.writes
                if w not in g.reformats
            ):
                unjudged(
                    f, f"another part of the command writes {path}, which was read to judge it"
                )


def protected_state(path: str, ctx: Context) -> bool:
    """signoff's own files, which no command may write (issue 11, item 1).

    The seam for the protected-state module: until it is wired here, the workspace's
    `.signoff` directory (any spelling resolves to it through `ctx.path`)."""
    rel = relative(path, ctx.workspace)
    return rel is not None and (rel == ".signoff" or rel.startswith(".signoff/"))


def judge_targets(
    f: Facts, names: list[str], roots: list[str | None], ctx: Context, tool: str
) -> None:
    """Each target, under each place it may land, goes through the same write judgement."""
    unique = list(dict.fromkeys(names))
    if len(unique) > MAX_MEMBERS:
        unjudged(f, f"{tool} names more than {MAX_MEMBERS} targets")
        return
    for root in roots:
        if root is None:
            f.unknown_paths = True
            unjudged(f, f"{tool} writes under a directory only known at run time")
            continue
        for name in unique:
            word = Word(name)
            note_write(f, word, root, ctx)
            path = ctx.path(word, root)
            if path is not None and protected_state(path, ctx):
                f.deny(f"{tool} would write signoff's own state ({path})")
    shown = ", ".join(unique[:5]) + (f" and {len(unique) - 5} more" if len(unique) > 5 else "")
    if unique:
        f.note(f"{tool} writes {shown}")


__all__ = [
    "MAX_MEMBERS",
    "judge_git_patch",
    "judge_patch",
    "judge_races",
    "judge_targets",
    "patch_names",
    "protected_state",
    "read_content",
    "strip_name",
]
