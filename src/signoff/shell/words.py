"""The records the shell walker produces, and bash's own word decoding.

`Word`, `Redir`, `Cmd` and `Walk` are what `shell_parse.Walker` makes of a parse tree;
`decode_ansi_c` and `expand_braces` read `$'…'` strings and `{a,b}` lists as bash does.
(Split from `shell_parse`, which re-exports them.)
"""

from __future__ import annotations

import re

from ..lazyre import lazy
from ..records import field, record


@record(slots=True)
class Word:
    """One shell word after quote removal, and what is known about its value."""

    text: str
    dynamic: bool = False  # holds a value only known at run time
    glob: bool = False  # unquoted *, ? or [ (or a brace sequence): expands at run time
    quoted: bool = False


@record(slots=True)
class Redir:
    """One redirection: operator, descriptor and target."""

    op: str
    fd: str
    target: Word | None  # None for a descriptor duplication such as 2>&1


@record(slots=True)
class Cmd:
    """One simple command as the walker found it: words, assignments, redirections, context."""

    words: list[Word]
    assigns: list[tuple[str, Word]]
    redirects: list[Redir]
    cwd: str | None
    vars: dict[str, str | None]
    source: str
    owner: int | None = None  # index of the command whose word holds this substitution
    sub_kind: str = ""  # "$(", "<(", ">(" when this runs inside a substitution
    stdin_text: str | None = None  # heredoc or here-string fed to this command
    stdin_dynamic: bool = False  # that text expands $vars or $(…) when the command runs
    function: str | None = None  # name of the function whose body holds this command
    alt_cwds: tuple[str | None, ...] = ()  # where it runs if an earlier `cd` failed
    calls_function: bool = False  # words[0] names a function defined earlier in the string
    problems: list[str] = field(default_factory=list)


@record(slots=True)
class Walk:
    """Everything the walker found in a command line: commands, pipelines, functions, problems."""

    cmds: list[Cmd] = field(default_factory=list)
    pipes: list[list[list[int]]] = field(default_factory=list)  # pipeline -> stage -> cmd ids
    functions: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_RE = lazy(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}"
    r"|c.|.)",
    re.DOTALL,
)
_BRACE_RE = lazy(r"\{([^{}]*,[^{}]*)\}")
BRACE_SEQ_RE = lazy(r"\{[^{}]*\.\.[^{}]*\}")


def decode_ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        head = esc[0]
        if head in "xuU":
            try:
                return chr(int(esc[1:], 16))
            except (ValueError, OverflowError):
                return "\ufffd"
        if head.isdigit():
            return chr(int(esc, 8) & 0xFF)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_SIMPLE.get(esc, "\\" + esc)

    return _ANSI_RE.sub(one, body)


def expand_braces(text: str, limit: int = 64) -> list[str]:
    """`{rm,-rf,/}` -> ["rm", "-rf", "/"]; bash does this before anything else."""
    out = [text]
    for _ in range(8):
        nxt: list[str] = []
        changed = False
        for item in out:
            m = _BRACE_RE.search(item)
            if m is None:
                nxt.append(item)
                continue
            changed = True
            nxt.extend(item[: m.start()] + alt + item[m.end() :] for alt in m.group(1).split(","))
        out = nxt[:limit]
        if not changed:
            break
    return out


__all__ = ["Cmd", "Redir", "Walk", "Word", "decode_ansi_c", "expand_braces"]
