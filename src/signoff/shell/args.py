"""Reading a simple command's words: its name, options, option values and positionals."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from .parse import Word


def lookalike(name: str) -> bool:
    """A non-ASCII command name (`ｒｍ`, Cyrillic `с`) is not the program it looks like."""
    return any(ord(c) > 127 for c in name) or unicodedata.normalize("NFKC", name) != name


def texts_of(words: Iterable[Word]) -> list[str]:
    return [w.text for w in words]


def is_option(w: Word) -> bool:
    return w.text.startswith("-") and w.text != "-" and not w.quoted


def positionals(args: list[Word], value_opts: frozenset[str] = frozenset()) -> list[Word]:
    out: list[Word] = []
    skip = False
    ended = False
    for w in args:
        if skip:
            skip = False
        elif ended or not is_option(w):
            out.append(w)
        elif w.text == "--":
            ended = True
        elif w.text in value_opts:
            skip = True
    return out


def has_flag(args: list[Word], *flags: str) -> bool:
    """A flag given alone, as --flag=value, or inside a short-option cluster (-rf)."""
    for w in args:
        t = w.text
        if t == "--":
            return False
        for flag in flags:
            if t == flag or (flag.startswith("--") and t.startswith(flag + "=")):
                return True
            if (
                len(flag) == 2
                and flag[0] == "-"
                and t.startswith("-")
                and not t.startswith("--")
                and flag[1] in t[1:]
            ):
                return True
    return False


def option_values(args: list[Word], *names: str) -> list[Word]:
    """Values of options given as `-o v`, `-ov`, `--out v` or `--out=v`."""
    out: list[Word] = []
    for i, w in enumerate(args):
        t = w.text
        for n in names:
            if t == n and i + 1 < len(args):
                out.append(args[i + 1])
            elif n.startswith("--") and t.startswith(n + "="):
                out.append(Word(t[len(n) + 1 :], w.dynamic, w.glob, w.quoted))
            elif len(n) == 2 and t.startswith(n) and len(t) > 2 and not t.startswith("--"):
                out.append(Word(t[2:], w.dynamic, w.glob, w.quoted))
    return out


def sed_scripts(args: list[Word]) -> tuple[list[Word], list[Word], list[Word]]:
    """What sed reads as its program and what as files: (scripts given with -e or as the
    first operand, script files given with -f, file operands). `-ne 'p'` is -n then -e
    with the next word; `-i.bak` takes its suffix; `-l N` its number."""
    scripts: list[Word] = []
    script_files: list[Word] = []
    operands: list[Word] = []
    takes = {"-e": scripts, "--expression": scripts, "-f": script_files, "--file": script_files}
    i, ended = 0, False
    while i < len(args):
        w, t = args[i], args[i].text
        i += 1
        if ended or t == "-" or not t.startswith("-"):
            operands.append(w)
            continue
        if t == "--":
            ended = True
            continue
        if t.startswith("--"):  # --expression=S, --file F, --line-length N
            name, equals, attached = t.partition("=")
            if name not in takes and name != "--line-length":
                continue
        else:  # a cluster of short flags: e, f and l take the rest or the next word
            at = next((k for k, c in enumerate(t[1:], 1) if c in "efli"), None)
            if at is None or t[at] == "i":
                continue  # -i.bak: the rest is the backup suffix
            name, equals, attached = "-" + t[at], "", t[at + 1 :]
        if attached or equals:
            value = Word(attached, w.dynamic, w.glob, w.quoted)
        elif i < len(args):
            value, i = args[i], i + 1
        else:
            continue
        takes.get(name, []).append(value)
    if not scripts and not script_files and operands:
        scripts.append(operands.pop(0))
    return scripts, script_files, operands
