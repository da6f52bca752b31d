"""Looking through wrappers: where the wrapped command starts, and nested shell scripts.

`env`, `timeout`, `nice`, … (`skip_wrapper`), `sudo`/`su` (`privileged_start`), `xargs`,
and `bash -c '…'`, `eval`, `trap`, `watch` (`judge_shell`), whose scripts are judged like
the top level through `Context.script`.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import knowledge as K
from ..args import has_flag, option_values, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_read


def skip_wrapper(base: str, rest: list[Word]) -> int | None:
    """Index in `rest` where the wrapped command starts, or None if `base` is no wrapper."""
    if base not in K.WRAPPERS:
        return None
    value_opts = K.WRAPPERS[base]
    if base == "command" and has_flag(_leading_options(rest), "-v", "-V"):
        return None  # `command -v x` only looks x up (`command rm -v x` runs rm)
    j, _ = _command_start(
        rest,
        value_opts,
        K.WRAPPER_POSITIONAL.get(base, 0),
        lambda t: (t.startswith("-") and len(t) > 1) or (base == "env" and "=" in t),
    )
    if base == "flock" and j < len(rest) and rest[j].text in ("-c", "--command"):
        return None
    return j


def _leading_options(rest: list[Word]) -> list[Word]:
    """The wrapper's own options: those before the wrapped program's name."""
    for index, word in enumerate(rest):
        if word.text == "--" or not (word.text.startswith("-") and len(word.text) > 1):
            return rest[:index]
    return rest


def privileged_start(
    base: str, rest: list[Word], p: Facts, cmd: Cmd, ctx: Context
) -> int | list[Facts] | None:
    """Where the command run by `sudo`/`doas`/… starts in `rest`; for `su -c`, its facts.

    None when nothing is wrapped (an interactive shell, or a script only known later).
    """
    if base == "su":
        code = option_values(rest, "-c", "--command")
        if not code:
            p.note("opens a shell as another user")
            return None
        text = code[0]
        if text.dynamic:
            p.opaque("runs a command only known at run time as another user")
            return None
        return ctx.script(text.text, cmd.cwd, cmd.vars)
    j, options = _command_start(
        rest,
        K.PRIVILEGE_WRAPPERS[base],
        K.PRIVILEGE_POSITIONAL.get(base, 0),
        lambda t: t.startswith("-"),
    )
    if (
        base == "sudo"
        and len(rest) - 1 in options
        and rest[-1].text in ("-s", "-i", "--shell", "--login")
    ):
        p.note("opens a root shell")
    if j >= len(rest):
        return None
    return j


def _command_start(
    rest: list[Word], value_opts: frozenset[str], positional: int, is_option: Callable[[str], bool]
) -> tuple[int, list[int]]:
    """Where the wrapped command starts in `rest`, and the indices of the options before it.

    Options in `value_opts` take the next word as their value; `positional` words (the
    duration of `timeout`, the directory of `chroot`) come before the command.
    """
    j = 0
    options: list[int] = []
    while j < len(rest):
        t = rest[j].text
        if t == "--":
            j += 1
            break
        if t in value_opts:
            j += 2
        elif is_option(t):
            options.append(j)
            j += 1
        elif positional:
            positional -= 1
            j += 1
        else:
            break
    return j, options


def xargs_start(
    rest: list[Word], f: Facts, cwd: str | None = None, ctx: Context | None = None
) -> int | None:
    j = 0
    replace = ""
    while j < len(rest):
        t = rest[j].text
        if t in K.XARGS_VALUE_OPTS:
            if t in ("-I", "--replace"):
                replace = rest[j + 1].text if j + 1 < len(rest) else ""
            if t in ("-a", "--arg-file") and ctx is not None and j + 1 < len(rest):
                note_read(f, rest[j + 1], cwd, ctx)  # its lines become arguments
            j += 2
        elif t.startswith("-") and len(t) > 1:
            if t.startswith("-I"):
                replace = t[2:]
            j += 1
        else:
            break
    if j >= len(rest):
        f.note("xargs echo: prints its input")
        return None
    if replace:
        for k in range(j, len(rest)):
            if replace in rest[k].text:
                rest[k] = Word(rest[k].text, dynamic=True, quoted=rest[k].quoted)
    return j


def judge_nested(
    text: str, word: Word, f: Facts, cmd: Cmd, ctx: Context
) -> tuple[list[Facts], Facts]:
    if word.dynamic:
        f.runs_code = True
        f.opaque("runs a script only known at run time")
        return [f], f
    if ctx.depth >= 6:
        f.opaque("shell nesting too deep to analyze")
        return [f], f
    inner = ctx.script(text, cmd.cwd, cmd.vars)
    if not inner:
        f.note("runs an empty script")
        return [f], f
    return inner, inner[-1]


def judge_shell(
    base: str, rest: list[Word], f: Facts, cmd: Cmd, ctx: Context
) -> tuple[list[Facts], Facts]:
    f.runs_code = True
    if base == "eval":
        return judge_nested(
            " ".join(texts_of(rest)), Word("", any(w.dynamic for w in rest)), f, cmd, ctx
        )
    if base == "trap":
        if not rest or rest[0].text.startswith("-"):
            f.runs_code = False
            return [f], f
        return judge_nested(rest[0].text, rest[0], f, cmd, ctx)
    if base == "watch":
        j = 0
        while j < len(rest) and rest[j].text.startswith("-"):
            j += 2 if rest[j].text in ("-n", "--interval", "-d", "--differences") else 1
        return judge_nested(
            " ".join(texts_of(rest[j:])), Word("", any(w.dynamic for w in rest)), f, cmd, ctx
        )
    k = 0
    while k < len(rest):
        t = rest[k].text
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            k += 2
            continue
        if t.startswith("-") and not t.startswith("--") and "c" in t[1:]:
            if k + 1 >= len(rest):
                f.opaque(f"{base} -c without a script")
                return [f], f
            return judge_nested(rest[k + 1].text, rest[k + 1], f, cmd, ctx)
        if t == "--" or t == "-s":
            k += 1
            break
        if t.startswith(("-", "+")):
            k += 1
            continue
        break
    if k < len(rest) and rest[k].text != "-":
        path = ctx.path(rest[k], cmd.cwd)
        if path:
            f.executes.append(path)
        f.opaque(f"runs the shell script {rest[k].text}")
        return [f], f
    if cmd.stdin_text is not None:
        return judge_nested(cmd.stdin_text, Word(""), f, cmd, ctx)
    f.runs_stdin = True
    f.opaque("runs shell commands read from its input")
    return [f], f
