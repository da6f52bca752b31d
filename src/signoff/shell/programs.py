"""Judging one simple command: wrappers first, then the program it really runs.

`judge_words` looks through wrappers (`sudo`, `env`, `timeout`, `xargs`, `bash -c`,
`eval`, `find -exec`, …) and `judge_program` hands the effective program to its family's
judge (`shell_files`, `shell_git`, `shell_network`, `shell_runners`), which fill `Facts`
with the tables in `shell_knowledge`. `shell.py` turns facts into verdicts and judges what
flows between commands.
"""

from __future__ import annotations

import posixpath

from ..records import replace
from . import knowledge as K
from .args import lookalike, option_values, texts_of
from .facts import Context, Facts
from .help import describes_itself
from .judges.index import LOCAL_QUERIES, SYSTEM_PROGRAMS
from .judges.option_programs import (
    judge_option_programs,
    judge_wrapper_options,
    note_program_env,
)
from .judges.wrappers import judge_nested, judge_shell, privileged_start, skip_wrapper, xargs_start
from .parse import Cmd, Word
from .paths import note_delete, note_read, note_write


def judge_words(words: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> tuple[list[Facts], Facts]:
    """All facts for one simple command (wrappers first), and the one redirects belong to."""
    out: list[Facts] = []
    i = 0
    while i < len(words):
        w = words[i]
        name = w.text
        f.argv = texts_of(words[i:])
        rest = words[i + 1 :]
        if w.dynamic or w.glob:
            f.runs_code = True
            f.opaque("the program to run is only known at run time")
            break
        if lookalike(name):
            f.opaque(f"the command name {name!r} contains non-ASCII look-alike characters")
            break
        if i == 0 and cmd.calls_function:
            f.note(f"calls {name}, a function defined earlier in this command")
            break
        base = K.unversioned(name)
        if "/" in name:
            folder, base = posixpath.split(name)
            base = K.unversioned(base)
            if folder not in K.TRUSTED_BIN:
                shadow = Facts(list(f.argv))
                judge_program(base, rest, shadow, cmd, ctx)
                f.runs_code = True
                path = ctx.path(w, cmd.cwd)
                if path:
                    f.executes.append(path)
                f.opaque(f"runs {name} by path: it need not be the program its name suggests")
                if shadow.catastrophic:
                    f.deny(shadow.reasons[-1])
                break
        j = skip_wrapper(base, rest)
        if j is not None:
            judge_wrapper_options(base, rest[:j], f, cmd, ctx)
            cmd = moved_by_options(base, rest[:j], cmd)
            if base == "env":
                for a in rest[:j]:
                    key = a.text.partition("=")[0]
                    if "=" in a.text and K.DANGEROUS_ENV.match(key):
                        f.opaque(f"sets {key}, which changes what programs load or run")
                        note_program_env(f, key)
                split = option_values(rest[:j], "-S", "--split-string")
                if split:
                    script = " ".join(texts_of([*split, *rest[j:]]))
                    return judge_nested(script, split[0], f, cmd, ctx)
            if j >= len(rest):
                if base == "env":
                    f.secret = True  # its output goes to the model and its provider
                    f.ask("env prints the whole environment (secrets included) to the model")
                if base in ("env", "time", "command", "builtin", "exec", "nice", "noglob"):
                    break  # nothing wrapped: `env` prints, `exec >log` redirects
                f.opaque(f"{base} without a command to run")
                break
            i += 1 + j
            continue
        if base in K.PRIVILEGE_WRAPPERS or base == "su":
            p = Facts(list(f.argv))
            p.raise_to("privilege", f"runs a command as another user ({base})")
            out.append(p)
            inner = privileged_start(base, rest, p, cmd, ctx)
            if inner is None:
                return out, p
            if isinstance(inner, int):
                cmd = moved_by_options(base, rest[:inner], cmd)
            if isinstance(inner, list):
                if any(x.catastrophic for x in inner):
                    p.deny(f"{base} with a catastrophic command")
                return out + inner, p
            i += 1 + inner
            continue
        if base == "xargs":
            j = xargs_start(rest, f, cmd.cwd, ctx)
            if j is None:
                break
            # `rest` now marks the -I placeholders as run-time values; arguments come from stdin.
            words = [*words[: i + 1], *rest, Word("<stdin>", dynamic=True)]
            i += 1 + j
            continue
        if base == "busybox" and rest:
            i += 1
            continue
        if base in K.SHELLS and describes_itself(base, texts_of(rest)):
            f.note(f"{base} {rest[0].text} only prints its version or help")
            break
        if base in K.SHELLS or base in ("eval", "watch", "trap"):
            nested = judge_shell(base, rest, f, cmd, ctx)
            return out + nested[0], nested[1]
        extras = judge_program(base, rest, f, cmd, ctx)
        judge_option_programs(base, rest, f, cmd, ctx)
        return [*out, f, *extras], f
    out.append(f)
    return out, f


# Wrappers whose option runs the wrapped command in another directory.
_CHDIR_OPTIONS: dict[str, tuple[str, ...]] = {
    "env": ("-C", "--chdir"),
    "sudo": ("-D", "--chdir"),
    "run0": ("-D", "--chdir"),
}


def moved_by_options(base: str, options: list[Word], cmd: Cmd) -> Cmd:
    """The command as the wrapper runs it: `env -C dir cmd` runs cmd in dir, so every
    relative path after it is judged from there (a dynamic dir: from nowhere known)."""
    names = _CHDIR_OPTIONS.get(base)
    values = option_values(options, *names) if names else []
    if not values:
        return cmd
    target = values[-1]

    def moved(start: str | None) -> str | None:
        if start is None or target.dynamic or target.glob:
            return None
        return posixpath.normpath(posixpath.join(start, target.text))

    return replace(cmd, cwd=moved(cmd.cwd), alt_cwds=tuple(moved(a) for a in cmd.alt_cwds))


def judge_program(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    """Classify one program with its arguments; returns extra facts (find -exec …). Then
    its catastrophic system forms (kill 1, userdel, apt purge libc6, docker -v /:/host …)."""
    extras = _judge_family(base, args, f, cmd, ctx)
    if base in SYSTEM_PROGRAMS:
        from .judges.system import judge_system

        extras += judge_system(base, args, f, cmd, ctx)
    return extras


# Each family's judge is imported on its first program (`judges.index` says why): judging
# `git status` in a fresh process loads git's judge, not the databases', packages' or
# archives'. Which judge sees a program is decided by the tables, as before.


def _judge_family(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    cwd = cmd.cwd
    texts = texts_of(args)
    # `mkfs --help`, `dd --version`: the long spellings print and exit everywhere, even for
    # a program whose other uses are catastrophic (`shutdown -h` is not help: not here)
    if texts in (["--help"], ["--version"]) and describes_itself(base, texts):
        f.note(f"{base} {texts[0]} only prints its version or help")
        return []
    lowered = [t.lower() for t in texts]
    for pattern in K.REMOTE_CATASTROPHIC:
        if pattern[0] == base and all(p in lowered for p in pattern[1:]):
            f.network = True
            f.raise_to("network", "reaches a remote service")
            f.deny(f"irreversibly deletes remote resources ({' '.join(pattern)})")
            return []
    if base == "crontab" and any(
        t == "-r" or (t.startswith("-") and not t.startswith("--") and "r" in t[1:]) for t in texts
    ):
        f.raise_to("destructive", "removes scheduled jobs")
        f.deny("crontab -r deletes every scheduled job of the user, and keeps no copy")
        return []
    if (
        base in K.POWER
        or (base in ("init", "telinit") and texts[:1] in (["0"], ["6"]))
        or (
            base == "systemctl" and any(t in ("poweroff", "reboot", "halt", "kexec") for t in texts)
        )
    ):
        f.raise_to("privilege", "stops the machine")
        f.deny("shuts down or reboots the machine")
        return []
    if base in K.DISK_TOOLS or base.startswith(("mkfs", "mke2fs")):
        f.raise_to("destructive", "manages disks and file systems")
        f.deny(f"{base} can wipe a disk")
        return []
    if base == "dd":
        from .judges.files import judge_dd

        judge_dd(args, f, cmd, ctx)
        return []
    if describes_itself(base, texts):
        f.note(f"{base} {texts[0]} only prints its version or help")
        return []
    if base in LOCAL_QUERIES:  # queries, dry runs, formatters (judges.queries)
        from .judges.queries import judge_local

        if judge_local(base, args, f, cmd, ctx):
            return []
    if base in K.KILLERS:
        f.raise_to("destructive", "stops running processes")
        if (base == "kill" and "-1" in texts[1:]) or texts[-1:] == ["-1"] or base == "killall5":
            f.deny("kills every process (kill -1)")
        return []
    if base in K.DELETERS:
        from .judges.files import judge_delete

        judge_delete(base, args, f, cmd, ctx)
        return []
    if base == "git":
        from .judges.git import judge_git

        judge_git(args, f, cmd, ctx)
        return []
    if base in K.NETWORK:
        from .judges.network import judge_network

        judge_network(base, args, f, cmd, ctx)
        return []
    if base == "find":
        return _find(args, f, cmd, ctx)
    if base in K.READ_ONLY:
        from .judges.files import judge_read_only

        return judge_read_only(base, args, f, cmd, ctx)
    if base in K.WRITERS:
        from .judges.files import judge_writer

        judge_writer(base, args, f, cmd, ctx)
        return []
    if base == "systemctl" or base == "crontab":
        if any(
            t
            in (
                "status",
                "is-active",
                "is-enabled",
                "list-units",
                "show",
                "cat",
                "-l",
                "list-timers",
                "is-failed",
            )
            for t in texts
        ) or (
            not texts and base == "systemctl"  # a bare crontab installs what stdin holds
        ):
            f.note(f"{base} query")
        else:
            f.raise_to("privilege", f"{base} changes system services or scheduled jobs")
        return []
    if base in K.PRIVILEGE:
        f.raise_to("privilege", f"{base} changes system or account settings")
        return []
    if base in ("gpg", "gpg2") and any("export-secret" in t for t in texts):
        f.secret = True
        f.ask("gpg exports secret keys")
    if base in ("source", "."):
        path = ctx.path(args[0], cwd) if args else None
        if path:
            f.executes.append(path)
        f.runs_code = True
        f.opaque("runs a script in the current shell")
        return []
    if base in K.INTERPRETERS or base in K.RUNNERS:
        from .judges.runners import judge_runner

        judge_runner(base, args, f, cmd, ctx)
        return []
    f.opaque(f"{base} is not a program signoff knows; its effects are unknown")
    return []


def _find(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    """find reads below its roots; -delete deletes; -exec commands are judged on their own."""
    f.note("find only reads")
    if any(w.glob and not w.quoted for w in args):
        f.ask("an unquoted glob could expand to an option that writes or runs programs")
    extras = _find_actions(args, f, cmd, ctx)
    for w in option_values(args, *K.WRITE_FLAGS["find"]):
        f.raise_to("reversible_write", "find writes a file list")
        note_write(f, w, cmd.cwd, ctx)
    for w in _find_roots(args):
        note_read(f, w, cmd.cwd, ctx)
    for w in option_values(args, "-f", "--file"):
        note_read(f, w, cmd.cwd, ctx)
    return extras


def _find_roots(args: list[Word]) -> list[Word]:
    roots: list[Word] = []
    for w in args:
        if w.text.startswith(("-", "(", "!", ")")) and not w.quoted:
            break
        roots.append(w)
    return roots or [Word(".")]


def _find_actions(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    """-delete and -exec/-execdir/-ok/-okdir: what find does to what it finds."""
    roots = _find_roots(args)
    texts = texts_of(args)
    own = _find_own_words(texts)  # `-exec echo -delete {} ;`: -delete is echo's argument
    filtered = any(t in K.FIND_FILTERS for t in own)
    # What -exec/-delete act on: anything below the root, or the root's whole content.
    found = [
        Word(
            posixpath.join(r.text, "{}") if filtered else posixpath.join(r.text, "*"),
            r.dynamic,
            not filtered,
            r.quoted,
        )
        for r in roots
    ]
    if "-delete" in own:
        f.raise_to("destructive", "find -delete deletes files irreversibly")
        for w in found:
            note_delete(f, w, cmd.cwd, ctx, recursive=True)
    extras: list[Facts] = []
    i = 0
    while i < len(args):
        if texts[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(args) and texts[end] not in (";", "+"):
                end += 1
            inner = args[i + 1 : end]
            # -execdir runs the command in the directory of each file found: somewhere
            # below the root, so a relative path in it is only known at run time.
            where = None if texts[i] in ("-execdir", "-okdir") else cmd.cwd
            for root in found:
                if where is None and cmd.cwd is not None and not root.dynamic:
                    root = Word(posixpath.join(cmd.cwd, root.text), False, root.glob, root.quoted)
                words = [root if w.text == "{}" else w for w in inner]
                if words:
                    sub = Facts(texts_of(words))
                    fake = Cmd(words, [], [], where, cmd.vars, " ".join(texts_of(words)))
                    extras.extend(judge_words(words, sub, fake, ctx)[0])
            i = end
        i += 1
    if extras:
        f.note("find runs other commands, judged on their own")
    return extras


def _find_own_words(texts: list[str]) -> list[str]:
    """find's own expression, without the commands that -exec/-ok run (up to `;` or `+`)."""
    own: list[str] = []
    inside = False
    for t in texts:
        if inside:
            inside = t not in (";", "+")
        elif t in ("-exec", "-execdir", "-ok", "-okdir"):
            inside = True
        else:
            own.append(t)
    return own
