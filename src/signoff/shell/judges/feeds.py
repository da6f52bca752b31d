"""Catastrophic payloads that only show across words or commands: one pass over a script.

After every simple command is judged on its own, `judge_payloads` looks again at what
the words and the pipes make visible and denies what is catastrophic:

- code that programs run: interpreter one-liners and here-documents, awk and sed
  programs (`shell_payload`), git settings and options, pager and editor variables
  (`shell_settings`);
- commands completed by what feeds them: what `xargs` / `parallel` receive from a visible
  producer (an `echo` / `printf` literal in the stage before, a here-string or
  here-document, `:::` arguments), jobs fed to `crontab -` or `at`, scripts piped into a
  shell or an interpreter;
- spellings: `$IFS` as a word separator (`rm$IFS-rf$IFS~`), and a file named like a flag
  (`touch ./-rf`) that a later glob without `--` turns into an option (`rm *`).

Only denies are added here: every command keeps the verdict it was given on its own.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from itertools import pairwise

from ...lazyre import lazy
from .. import knowledge as K
from ..args import option_values, positionals, sed_scripts, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Walk, Word
from ..paths import note_delete
from ..programs import judge_words
from ..words import decode_ansi_c
from .payload import scan_code, scan_shell_texts, sed_commands
from .settings import judge_git, judge_pager_option, judge_variable
from .wrappers import skip_wrapper

_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_IFS = lazy(r"\$\{IFS[^}]*\}|\$IFS(?!\w)")  # also ${IFS%?}, ${IFS:0:1}
_PRINTF_SPEC = lazy(r"%(%|[-+ 0#]*\d*(?:\.\d+)?[a-zA-Z])")
_PARALLEL_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})
_REPLACEMENT = lazy(r"\{[./#%]*\d*[./#%]*\}")
_CRON_ASSIGNMENT = lazy(r"^[A-Za-z_]\w*\s*=")
_ASSIGNMENT = lazy(r"[A-Za-z_]\w*=")
_MAX_ITEMS = 16
# Programs worth a second look (cheap gate for the common commands).
_WATCHED = (
    K.INTERPRETERS
    | K.SHELLS
    | _AWKS
    | {"sed", "git", "man", "bat", "find", "xargs", "parallel", "crontab", "at", "batch"}
)
_CREATORS = frozenset({"touch", "mkdir", "mkfifo", "cp", "mv", "ln", "install"})
_RUN_IN_ENV = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi"})
_INTERESTING = _RUN_IN_ENV | _WATCHED | _CREATORS | set(K.WRAPPERS) | set(K.PRIVILEGE_WRAPPERS)


def judge_payloads(walk: Walk, per_cmd: list[list[Facts]], ctx: Context) -> None:
    fed = _fed_texts(walk)
    flag_files: list[str] = []  # files named like an option, made earlier in the script
    for index, cmd in enumerate(walk.cmds):
        if index >= len(per_cmd) or not per_cmd[index]:
            continue
        f = per_cmd[index][-1]
        for name, value in cmd.assigns:
            judge_variable(name, value, f, cmd.cwd, ctx)
        if "IFS" in cmd.source and _IFS.search(cmd.source):
            scan_shell_texts(
                "the command split at $IFS", [_IFS.sub(" ", cmd.source)], f, cmd.cwd, ctx
            )
        if not cmd.words or (
            cmd.words[0].text.rpartition("/")[2] not in _INTERESTING
            and not flag_files
            and not cmd.redirects
        ):
            if cmd.redirects:
                _note_flag_files([], cmd, flag_files, ctx)
            continue  # the common case: a program with nothing to look at again
        words, env = _effective(cmd.words)
        for setting in env:
            key, _, text = setting.partition("=")
            judge_variable(key, Word(text), f, cmd.cwd, ctx)
        if flag_files and any(w.glob and not w.quoted for w in words):
            _flag_glob(words, flag_files, f, cmd, ctx)
        _note_flag_files(words, cmd, flag_files, ctx)
        if not words or words[0].dynamic:
            continue
        base = posixpath.basename(words[0].text)
        if base in _WATCHED:
            _judge_program(base, words[1:], fed.get(index), f, cmd, ctx)


def _judge_program(
    base: str, args: list[Word], fed: str | None, f: Facts, cmd: Cmd, ctx: Context
) -> None:
    cwd = cmd.cwd
    texts = texts_of(args)
    if base in K.INTERPRETERS:
        code = _inline_code(base, args)
        if code is None and not any(t == "-" or not t.startswith("-") for t in texts):
            code = cmd.stdin_text if cmd.stdin_text is not None else fed  # code from stdin
        elif code is None and texts and texts[-1] == "-":
            code = cmd.stdin_text if cmd.stdin_text is not None else fed
        scan_code(base, code or "", f, cwd, ctx)
    elif base in _AWKS:
        for t in texts:
            if K.AWK_UNSAFE.search(t):
                scan_code(base, t, f, cwd, ctx)
    elif base == "sed":
        scripts = [w.text for w in sed_scripts(args)[0]]
        scan_shell_texts(
            "the sed script", [c for t in scripts if "e" in t for c in sed_commands(t)], f, cwd, ctx
        )
    elif base == "git":
        judge_git(args, f, cwd, ctx)
    elif base in ("man", "bat"):
        judge_pager_option(base, args, f, cwd, ctx)
    elif base == "find":
        _find_deletes(args, f, cmd, ctx)
    elif base == "parallel":
        _parallel(texts, fed if fed is not None else cmd.stdin_text, f, cmd, ctx)
    text = cmd.stdin_text if cmd.stdin_text is not None else fed
    if text is None:
        return
    if base == "xargs":
        _xargs(args, text, f, cmd, ctx)
    elif base == "crontab":
        _crontab(texts, text, f, cwd, ctx)
    elif base in ("at", "batch"):
        scan_shell_texts(f"the job given to {base}", [text], f, cwd, ctx)
    elif (
        base in K.SHELLS
        and fed is not None
        and cmd.stdin_text is None
        and all(t.startswith(("-", "+")) and "c" not in t[1:] for t in texts)
    ):
        scan_shell_texts(f"the script piped into {base}", [fed], f, cwd, ctx)


def _find_deletes(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """`find / -name '*.py' -delete` (or `-exec rm {} +`): whatever the filter, it deletes
    matching files across the whole system or a system tree."""
    texts = texts_of(args)
    deletes = "-delete" in texts or any(
        t in ("-exec", "-execdir", "-ok", "-okdir")
        and k + 1 < len(texts)
        and posixpath.basename(texts[k + 1]) in K.DELETERS
        for k, t in enumerate(texts)
    )
    if not deletes:
        return
    for w in args:
        if w.text.startswith(("-", "(", "!", ")")) and not w.quoted:
            break
        root = ctx.path(w, cmd.cwd)
        if (
            root
            and not ctx.inside(root)
            and (
                root == "/"
                or root in K.SYSTEM_DIRS
                or any(root == d or root.startswith(d + "/") for d in K.SYSTEM_WRITE_DENY)
            )
        ):
            f.deny(f"find deletes files matching its tests across {root}")
            return
        if root is None or ctx.inside(root):
            continue
        # `-exec rm {} +` deletes what `-delete` would: judge it the same way.
        probe = Facts(["find"])
        note_delete(
            probe,
            Word(posixpath.join(w.text, "{}"), w.dynamic, False, w.quoted),
            cmd.cwd,
            ctx,
            recursive=True,
        )
        if probe.catastrophic:
            f.deny(f"find {probe.reasons[-1]}")
            return


def _inline_code(base: str, args: list[Word]) -> str | None:
    texts = texts_of(args)
    code = [w.text for w in option_values(args, *K.INLINE_CODE_FLAGS)]
    for k, t in enumerate(texts[:-1]):  # bundles: perl -ne CODE, ruby -pe CODE
        if re.fullmatch(r"-[A-Za-z]+[ce]", t) and t not in K.INLINE_CODE_FLAGS:
            code.append(texts[k + 1])
    if base in ("deno", "bun") and texts[:1] == ["eval"] and len(texts) > 1:
        code.append(texts[1])
    return "\n".join(code) if code else None


# --------------------------------------------------------------------------- what is fed


def _fed_texts(walk: Walk) -> dict[int, str]:
    """What each command reads on stdin when the pipe stage before it prints literals."""
    fed: dict[int, str] = {}
    for stages in walk.pipes:
        for before, stage in pairwise(stages):
            text = _printed(before, walk)
            if text is not None:
                for index in stage:
                    fed.setdefault(index, text)
    return fed


def _printed(stage: list[int], walk: Walk) -> str | None:
    out: list[str] = []
    for index in stage:
        if index >= len(walk.cmds):
            continue
        cmd = walk.cmds[index]
        words = cmd.words
        if not words or any(w.dynamic for w in words):
            continue
        head, args = words[0].text, [w.text for w in words[1:]]
        if head == "echo":
            flags = ""
            while args and re.fullmatch(r"-[neE]+", args[0]):
                flags += args.pop(0)
            line = " ".join(args)
            out.append(
                (decode_ansi_c(line) if "e" in flags else line) + ("" if "n" in flags else "\n")
            )
        elif head == "printf" and args:
            printed = _printf(args)
            if printed is not None:
                out.append(printed)
        elif head == "cat" and len(words) == 1 and cmd.stdin_text is not None:
            out.append(cmd.stdin_text)
    return "".join(out) if out else None


def _printf(args: list[str]) -> str | None:
    """What `printf FORMAT ARGS…` prints: the format is reused while arguments remain."""
    fmt, rest = decode_ansi_c(args[0]), args[1:]
    out: list[str] = []
    for _ in range(_MAX_ITEMS):
        used = 0
        last = 0
        for m in _PRINTF_SPEC.finditer(fmt):
            out.append(fmt[last : m.start()])
            last = m.end()
            if m.group(1) == "%":
                out.append("%")
                continue
            out.append(rest[used] if used < len(rest) else "")
            used += 1
        out.append(fmt[last:])
        rest = rest[used:]
        if not rest or not used:
            break
    return "".join(out)


# --------------------------------------------------------------------------- consumers


def _xargs(args: list[Word], text: str, f: Facts, cmd: Cmd, ctx: Context) -> None:
    """xargs completes its command with the items it reads: judge the completed argv."""
    import shlex

    replace = ""
    delimiter: str | None = None
    j = 0
    while j < len(args):
        t = args[j].text
        value = args[j + 1].text if j + 1 < len(args) else ""
        if t in ("-I", "--replace"):
            replace = value
        elif t.startswith("--replace="):
            replace = t.partition("=")[2]
        elif t.startswith("-I"):
            replace = t[2:]
        elif t in ("-i",):
            replace = "{}"
        elif t in ("-0", "--null"):
            delimiter = "\0"
        elif t in ("-d", "--delimiter"):
            delimiter = decode_ansi_c(value)
        if t in K.XARGS_VALUE_OPTS:
            j += 2
        elif t.startswith("-") and len(t) > 1:
            j += 1
        else:
            break
    inner = args[j:] or [Word("echo")]
    if replace:
        items = [line.strip() for line in text.splitlines() if line.strip()]
    elif delimiter:
        items = [x for x in text.split(delimiter) if x.strip()]
    else:
        try:
            items = shlex.split(text)
        except ValueError:
            items = text.split()
    items = items[:_MAX_ITEMS]
    if replace:
        readings = [
            [Word(w.text.replace(replace, item), quoted=w.quoted) for w in inner] for item in items
        ]
    else:
        readings = [inner + [Word(x) for x in items]]
        readings += [[*inner, Word(x)] for x in items] if len(items) > 1 else []
    for words in readings:
        if _deny_completed("xargs completes the command to", words, f, cmd, ctx):
            return


def _deny_completed(prefix: str, words: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    import shlex

    text = shlex.join(w.text for w in words)
    fake = Cmd(words, [], [], cmd.cwd, cmd.vars, text)
    for inner in judge_words(list(words), Facts(texts_of(words)), fake, ctx)[0]:
        if inner.catastrophic:
            f.deny(f"{prefix} `{text}`: {inner.reasons[-1]}")
            return True
    return False


def _parallel(texts: list[str], fed: str | None, f: Facts, cmd: Cmd, ctx: Context) -> None:
    """parallel runs its command through a shell once per argument (`:::` or stdin)."""
    import shlex

    cut = next((k for k, t in enumerate(texts) if t in _PARALLEL_SEPARATORS), len(texts))
    items: list[str] = []
    sep = ""
    for t in texts[cut:]:
        if t in _PARALLEL_SEPARATORS:
            sep = t
        elif sep.startswith(":::") and not sep.startswith("::::"):
            items.append(t)
    if cut == len(texts) and fed is not None:
        items = [line for line in fed.splitlines() if line.strip()]
    scripts: list[str] = []
    starts = [k for k in range(cut) if not texts[k].startswith("-")][:4]
    for item in items[:_MAX_ITEMS]:
        if not starts:
            scripts.append(item)  # no command: each argument is a command line
        for k in starts:
            line = " ".join(texts[k:cut])
            parts = _REPLACEMENT.split(line)
            quoted = shlex.quote(item)
            scripts.append(quoted.join(parts) if len(parts) > 1 else f"{line} {quoted}")
    scan_shell_texts("parallel", scripts, f, cmd.cwd, ctx)


def _crontab(texts: list[str], text: str, f: Facts, cwd: str | None, ctx: Context) -> None:
    """`crontab -` (or no file) installs the jobs it reads: judge each job's command."""
    if any(t in ("-l", "-r", "-e", "-V", "-h", "--help", "-T") for t in texts):
        return
    files = [
        t for k, t in enumerate(texts) if not t.startswith("-") and (k == 0 or texts[k - 1] != "-u")
    ]
    if files and files[-1] != "-":
        return  # the jobs are in a file: its content is not visible here
    jobs: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or _CRON_ASSIGNMENT.match(line):
            continue
        fields = line.split(None, 1 if line.startswith("@") else 5)
        job = fields[-1] if len(fields) == (2 if line.startswith("@") else 6) else ""
        jobs.append(re.split(r"(?<!\\)%", job, maxsplit=1)[0])  # `%` starts the job's stdin
    scan_shell_texts("crontab installs a job that", [j for j in jobs if j], f, cwd, ctx)


# --------------------------------------------------------------------------- spellings


def _effective(words: list[Word]) -> tuple[list[Word], list[str]]:
    """The words from the program that really runs (past env, sudo, timeout, …), and the
    NAME=value settings `env` gave it."""
    env: list[str] = []
    i = 0
    for _ in range(8):
        if i >= len(words) or words[i].dynamic:
            break
        base = posixpath.basename(words[i].text)
        rest = words[i + 1 :]
        j = skip_wrapper(base, rest)
        if j is not None:
            if base == "env":
                env.extend(w.text for w in rest[:j] if "=" in w.text and not w.dynamic)
            i += 1 + j
            continue
        if base in _RUN_IN_ENV and rest and rest[0].text == "run":
            k = 1  # `uv run python -c …`: the program after the runner's own flags
            while k < len(rest) and rest[k].text.startswith("-"):
                k += 1
            i += 1 + k
            continue
        if base in K.PRIVILEGE_WRAPPERS and base != "su":
            k = 0
            while k < len(rest) and (
                rest[k].text.startswith("-") or _ASSIGNMENT.match(rest[k].text)
            ):
                if _ASSIGNMENT.match(rest[k].text):  # `sudo EDITOR=… cmd` sets it for cmd
                    env.append(rest[k].text)
                k += 2 if rest[k].text in K.PRIVILEGE_WRAPPERS[base] else 1
            i += 1 + k + K.PRIVILEGE_POSITIONAL.get(base, 0)
            continue
        break
    return words[i:], env


def _note_flag_files(words: list[Word], cmd: Cmd, flag_files: list[str], ctx: Context) -> None:
    """Remember files this command makes whose name reads as an option (`touch ./-rf`)."""
    made: list[Word] = [
        r.target
        for r in cmd.redirects
        if r.target is not None and r.op in (">", ">>", ">|", "&>", "&>>")
    ]
    if words and posixpath.basename(words[0].text) in _CREATORS:
        pos = positionals(words[1:])
        made += pos if words[0].text in ("touch", "mkdir", "mkfifo") else pos[-1:]
    for w in made:
        name = posixpath.basename(w.text)
        if len(name) > 1 and name.startswith("-") and not w.dynamic:
            path = ctx.path(w, cmd.cwd)
            if path:
                flag_files.append(path)


def _flag_glob(words: list[Word], flag_files: list[str], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """`rm *` after `touch ./-rf`: the glob expands to `-rf` first, an option (GNU
    programs take options anywhere before `--`)."""
    for k, w in enumerate(words[1:], start=1):
        if w.text == "--":
            return
        if not w.glob or w.quoted or "/" in w.text:
            continue  # `./*` expands to `./-rf`, which is no option
        pattern = ctx.path(Word(w.text), cmd.cwd)
        for path in flag_files:
            if (
                pattern
                and posixpath.dirname(path) == posixpath.dirname(pattern)
                and fnmatch.fnmatchcase(posixpath.basename(path), posixpath.basename(pattern))
                and not posixpath.basename(w.text).startswith(".")
            ):
                flag = posixpath.basename(path)
                if _deny_completed(
                    f"the glob {w.text} expands to the file {flag} made "
                    "earlier, an option: it runs",
                    [*words[:k], Word(flag), *words[k:]],
                    f,
                    cmd,
                    ctx,
                ):
                    return


__all__ = ["judge_payloads"]
