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
    i, ended = 0, False
    while i < len(args):
        w = args[i]
        t = w.text
        nxt = args[i + 1] if i + 1 < len(args) else None
        i += 1
        if ended or t == "-" or not t.startswith("-"):
            operands.append(w)
        elif t == "--":
            ended = True
        elif t.startswith("--"):
            name, equals, value = t.partition("=")
            target = {"--expression": scripts, "--file": script_files}.get(name)
            if target is not None or name == "--line-length":
                if equals:
                    value_word = Word(value, w.dynamic, w.glob, w.quoted)
                elif nxt is not None:
                    value_word, i = nxt, i + 1
                else:
                    continue
                if target is not None:
                    target.append(value_word)
        else:  # a cluster of short options; e, f and l take the rest or the next word
            for at, letter in enumerate(t[1:], start=1):
                if letter in "efl":
                    rest = t[at + 1 :]
                    if rest:
                        value_word = Word(rest, w.dynamic, w.glob, w.quoted)
                    elif nxt is not None:
                        value_word, i = nxt, i + 1
                    else:
                        break
                    if letter == "e":
                        scripts.append(value_word)
                    elif letter == "f":
                        script_files.append(value_word)
                    break
                if letter == "i":
                    break  # -i.bak: the rest is the backup suffix
    if not scripts and not script_files and operands:
        scripts.append(operands.pop(0))
    return scripts, script_files, operands
