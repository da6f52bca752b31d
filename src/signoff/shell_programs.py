"""Judging one simple command: wrappers, programs, flags and the paths they touch.

`judge_words` looks through wrappers (`sudo`, `env`, `timeout`, `xargs`, `bash -c`,
`eval`, `find -exec`, …) and classifies the effective program with the tables in
`shell_knowledge`. It fills `Facts`; `shell.py` turns facts into verdicts and judges
what flows between commands.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from . import shell_knowledge as K
from .shell_parse import Cmd, Word

ShellClass = Literal["read_only", "reversible_write", "destructive", "network", "privilege",
                     "opaque"]
_CLASS_RANK = {"read_only": 0, "reversible_write": 1, "destructive": 2, "network": 3,
               "privilege": 4, "opaque": 5}
# Runs a nested script (`bash -c '…'`): set by shell.py, which owns parsing and data flow.
ScriptRunner = Callable[[str, "str | None", "dict[str, str | None]"], "list[Facts]"]




@dataclass(slots=True)
class Facts:
    """What one effective command does; mutable while it is being worked out."""

    argv: list[str]
    cls: ShellClass = "read_only"
    reasons: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    catastrophic: bool = False
    force_ask: bool = False  # e.g. a secret read or a write outside the workspace
    unknown_paths: bool = False
    network: bool = False
    fetch: bool = False  # network data comes out on stdout
    runs_stdin: bool = False  # executes what arrives on stdin as code
    runs_code: bool = False  # executes code given in its arguments
    secret: bool = False  # reads a secret (file, or the environment)
    downloads: list[str] = field(default_factory=list)
    executes: list[str] = field(default_factory=list)
    cmd: int = -1

    def raise_to(self, cls: ShellClass, reason: str) -> None:
        if _CLASS_RANK[cls] > _CLASS_RANK[self.cls]:
            self.cls = cls
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

    def __init__(self, workspace: str, home: str, resolver: Callable[[str], str],
                 script: ScriptRunner) -> None:
        self.resolver = resolver
        self.script = script
        self._cache: dict[str, str] = {}
        self.workspace = _resolve_root(workspace, resolver)
        self.home = _resolve_root(home, resolver)
        self.functions: set[str] = set()
        self.depth = 0

    def resolve(self, path: str) -> str:
        norm = posixpath.normpath(path)
        if norm.startswith("//"):
            norm = "/" + norm.lstrip("/")
        hit = self._cache.get(norm)
        if hit is None:
            try:
                hit = posixpath.normpath(self.resolver(norm))
            except (OSError, ValueError):
                hit = norm
            self._cache[norm] = hit
        return hit

    def path(self, word: Word, cwd: str | None) -> str | None:
        """The absolute resolved path a word names, or None when it is only known later."""
        if word.dynamic or "\x00" in word.text:
            return None
        text = word.text
        if not text.startswith("/"):
            if cwd is None:
                return None
            text = posixpath.join(cwd, text)
        return self.resolve(text)

    def inside(self, path: str) -> bool:
        return path == self.workspace or path.startswith(self.workspace.rstrip("/") + "/")

    def under_home(self, path: str) -> str | None:
        """The path relative to home, or None when it is not under home."""
        if path == self.home:
            return ""
        prefix = self.home.rstrip("/") + "/"
        return path[len(prefix):] if path.startswith(prefix) else None


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


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


# --------------------------------------------------------------------------- paths


def is_secret(path: str, ctx: Context) -> bool:
    rel = ctx.under_home(path)
    if rel is not None and rel and not ctx.inside(path) and _under(rel, K.SECRET_DIRS_HOME):
        return True
    if _under(path, K.SECRET_SYSTEM) or K.SECRET_PROC.match(path):
        return True
    return bool(K.SECRET_NAME.search(path))


def note_read(f: Facts, word: Word, cwd: str | None, ctx: Context) -> None:
    path = ctx.path(word, cwd)
    if path is None:
        if word.text.startswith("/proc/") and "environ" in word.text:
            f.secret = True  # /proc/$pid/environ: someone's environment
            f.ask("reads a process environment")
        return
    if path in K.PSEUDO_FILES:
        return
    f.reads.append(path)
    if is_secret(path, ctx):
        f.secret = True
        f.ask(f"reads secrets ({path})")


def note_write(f: Facts, word: Word, cwd: str | None, ctx: Context, *,
               content: bool = True) -> None:
    """A file written (or created/changed) by the command; `content` false for chmod etc."""
    if word.text.startswith(("/dev/tcp/", "/dev/udp/")):
        f.network = True
        f.raise_to("network", f"opens a network connection ({word.text})")
        return
    path = ctx.path(word, cwd)
    if path is None:
        f.unknown_paths = True
        f.ask(f"writes a path only known at run time ({word.text})")
        return
    if path in K.PSEUDO_FILES or path.startswith(("/dev/fd/", "/proc/self/fd/")):
        return
    f.writes.append(path)
    if K.DISK_DEVICE.match(path):
        f.deny(f"writes a disk device ({path})")
    elif path == "/" or _under(path, K.SYSTEM_WRITE_DENY):
        f.deny(f"overwrites system files ({path})")
    elif ctx.inside(path):
        rel = path[len(ctx.workspace):].lstrip("/")
        if rel and _under(rel, K.WORKSPACE_PROTECTED):
            f.ask(f"writes a protected path in the workspace ({rel})")
    else:
        home_rel = ctx.under_home(path)
        if content and home_rel and K.HOME_STARTUP.match(home_rel):
            f.deny(f"overwrites a startup or credential file in the home directory ({path})")
        else:
            f.ask(f"writes outside the workspace ({path})")


def bulk_target(path: str) -> str:
    """`/x/*` or `/x/.*` wipes /x: judge the directory, not the pattern."""
    base = posixpath.basename(path)
    if base and not base.strip("*?.[]!^{},"):
        return posixpath.dirname(path) or "/"
    return path


def note_delete(f: Facts, word: Word, cwd: str | None, ctx: Context, *,
                recursive: bool, verb: str = "deletes") -> None:
    path = ctx.path(word, cwd)
    if path is None:
        f.unknown_paths = True
        f.ask(f"{verb} a path only known at run time ({word.text})")
        return
    if path in K.PSEUDO_FILES:
        return
    f.writes.append(path)
    target = bulk_target(path) if word.glob else path
    why = catastrophic_target(target, ctx, recursive)
    if why:
        f.deny(f"{verb} {why}")
    elif not ctx.inside(path):
        f.ask(f"{verb} outside the workspace ({path})")
    elif _under(path[len(ctx.workspace):].lstrip("/"), K.WORKSPACE_PROTECTED):
        f.ask(f"{verb} a protected path in the workspace ({path})")


def catastrophic_target(path: str, ctx: Context, recursive: bool) -> str:
    """Why deleting or moving `path` is catastrophic, or '' when it is not."""
    ws = ctx.workspace
    if recursive:
        if path == "/":
            return "the root directory"
        if path == ctx.home:
            return "the home directory"
        if path == ws or ws.startswith(path.rstrip("/") + "/"):
            return f"the project or one of its parents ({path})"
        if path == ws.rstrip("/") + "/.git":
            return "the project's git history (.git)"
    if ctx.inside(path) or _under(path, K.TEMP_DIRS) or path.startswith("/var/folders/"):
        return ""
    rel = ctx.under_home(path)
    if rel is not None:
        if rel == "":
            return "the home directory" if recursive else ""
        if K.HOME_STARTUP.match(rel):
            return f"a startup or credential file ({path})"
        if recursive and not _under(rel, K.HOME_CACHES):
            return f"files in the home directory ({path})"
        return ""
    if _under(path, K.SYSTEM_WRITE_DENY) or (recursive and _under(path, K.SYSTEM_DIRS)):
        return f"system files ({path})"
    return ""


def lookalike(name: str) -> bool:
    """A non-ASCII command name (`ｒｍ`, Cyrillic `с`) is not the program it looks like."""
    return any(ord(c) > 127 for c in name) or unicodedata.normalize("NFKC", name) != name


# --------------------------------------------------------------------------- helpers


def _texts(words: Iterable[Word]) -> list[str]:
    return [w.text for w in words]


def _is_opt(w: Word) -> bool:
    return w.text.startswith("-") and w.text != "-" and not w.quoted


def positionals(args: list[Word], value_opts: frozenset[str] = frozenset()) -> list[Word]:
    out: list[Word] = []
    skip = False
    ended = False
    for w in args:
        if skip:
            skip = False
        elif ended or not _is_opt(w):
            out.append(w)
        elif w.text == "--":
            ended = True
        elif w.text in value_opts:
            skip = True
    return out


def _has(args: list[Word], *flags: str) -> bool:
    """A flag given alone, as --flag=value, or inside a short-option cluster (-rf)."""
    for w in args:
        t = w.text
        if t == "--":
            return False
        for flag in flags:
            if t == flag or (flag.startswith("--") and t.startswith(flag + "=")):
                return True
            if len(flag) == 2 and flag[0] == "-" and t.startswith("-") and not t.startswith(
                "--"
            ) and flag[1] in t[1:]:
                return True
    return False


def _opt_value(args: list[Word], *names: str) -> list[Word]:
    """Values of options given as `-o v`, `-ov`, `--out v` or `--out=v`."""
    out: list[Word] = []
    for i, w in enumerate(args):
        t = w.text
        for n in names:
            if t == n and i + 1 < len(args):
                out.append(args[i + 1])
            elif n.startswith("--") and t.startswith(n + "="):
                out.append(Word(t[len(n) + 1:], w.dynamic, w.glob, w.quoted))
            elif len(n) == 2 and t.startswith(n) and len(t) > 2 and not t.startswith("--"):
                out.append(Word(t[2:], w.dynamic, w.glob, w.quoted))
    return out


# --------------------------------------------------------------------------- unwrapping


def judge_words(words: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> tuple[list[Facts], Facts]:
    """All facts for one simple command (wrappers first), and the one redirects belong to."""
    out: list[Facts] = []
    i = 0
    while i < len(words):
        w = words[i]
        name = w.text
        f.argv = _texts(words[i:])
        rest = words[i + 1:]
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
        base = name
        if "/" in name:
            folder, base = posixpath.split(name)
            if folder not in K.TRUSTED_BIN:
                shadow = Facts(list(f.argv))
                _program(base, rest, shadow, cmd, ctx)
                f.runs_code = True
                path = ctx.path(w, cmd.cwd)
                if path:
                    f.executes.append(path)
                f.opaque(f"runs {name} by path: it need not be the program its name suggests")
                if shadow.catastrophic:
                    f.deny(shadow.reasons[-1])
                break
        j = _skip_wrapper(base, rest)
        if j is not None:
            if base == "env":
                for a in rest[:j]:
                    key = a.text.partition("=")[0]
                    if "=" in a.text and K.DANGEROUS_ENV.match(key):
                        f.opaque(f"sets {key}, which changes what programs load or run")
                split = _opt_value(rest[:j], "-S", "--split-string")
                if split:
                    return _nested(" ".join(_texts([*split, *rest[j:]])), split[0], f, cmd, ctx)
            if j >= len(rest):
                if base == "env":
                    f.secret = True  # harmless alone, fatal when piped to a remote
                    f.note("env prints the environment")
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
            inner = _privileged_inner(base, rest, p, cmd, ctx)
            if inner is None:
                return out, p
            if isinstance(inner, list):
                if any(x.catastrophic for x in inner):
                    p.deny(f"{base} with a catastrophic command")
                return out + inner, p
            i += 1 + inner
            continue
        if base == "xargs":
            j = _xargs(rest, f)
            if j is None:
                break
            words = [*words, Word("<stdin>", dynamic=True)]  # arguments read from stdin
            i += 1 + j
            continue
        if base == "busybox" and rest:
            i += 1
            continue
        if base in K.SHELLS or base in ("eval", "watch", "trap"):
            nested = _shell(base, rest, f, cmd, ctx)
            return out + nested[0], nested[1]
        extras = _program(base, rest, f, cmd, ctx)
        return [*out, f, *extras], f
    out.append(f)
    return out, f


def _skip_wrapper(base: str, rest: list[Word]) -> int | None:
    """Index in `rest` where the wrapped command starts, or None if `base` is no wrapper."""
    if base not in K.WRAPPERS:
        return None
    value_opts = K.WRAPPERS[base]
    if base == "command" and _has(rest, "-v", "-V"):
        return None  # `command -v x` only looks x up
    positional = K.WRAPPER_POSITIONAL.get(base, 0)
    j = 0
    while j < len(rest):
        t = rest[j].text
        if t == "--":
            j += 1
            break
        if t in value_opts:
            j += 2
        elif (t.startswith("-") and len(t) > 1) or (base == "env" and "=" in t):
            j += 1
        elif positional:
            positional -= 1
            j += 1
        else:
            break
    if base == "flock" and j < len(rest) and rest[j].text in ("-c", "--command"):
        return None
    return j


def _privileged_inner(base: str, rest: list[Word], p: Facts, cmd: Cmd,
                      ctx: Context) -> int | list[Facts] | None:
    if base == "su":
        code = _opt_value(rest, "-c", "--command")
        if not code:
            p.note("opens a shell as another user")
            return None
        text = code[0]
        if text.dynamic:
            p.opaque("runs a command only known at run time as another user")
            return None
        return ctx.script(text.text, cmd.cwd, cmd.vars)
    value_opts = K.PRIVILEGE_WRAPPERS[base]
    positional = K.PRIVILEGE_POSITIONAL.get(base, 0)
    j = 0
    while j < len(rest):
        t = rest[j].text
        if t == "--":
            j += 1
            break
        if t in value_opts:
            j += 2
        elif t.startswith("-"):
            if base == "sudo" and t in ("-s", "-i", "--shell", "--login") and j + 1 >= len(rest):
                p.note("opens a root shell")
            j += 1
        elif positional:
            positional -= 1
            j += 1
        else:
            break
    if j >= len(rest):
        return None
    return j


def _xargs(rest: list[Word], f: Facts) -> int | None:
    j = 0
    replace = ""
    while j < len(rest):
        t = rest[j].text
        if t in K.XARGS_VALUE_OPTS:
            if t in ("-I", "--replace"):
                replace = rest[j + 1].text if j + 1 < len(rest) else ""
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


def _nested(text: str, word: Word, f: Facts, cmd: Cmd,
            ctx: Context) -> tuple[list[Facts], Facts]:
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


def _shell(base: str, rest: list[Word], f: Facts, cmd: Cmd,
           ctx: Context) -> tuple[list[Facts], Facts]:
    f.runs_code = True
    if base == "eval":
        return _nested(" ".join(_texts(rest)), Word("", any(w.dynamic for w in rest)), f, cmd,
                       ctx)
    if base == "trap":
        if not rest or rest[0].text.startswith("-"):
            f.runs_code = False
            return [f], f
        return _nested(rest[0].text, rest[0], f, cmd, ctx)
    if base == "watch":
        j = 0
        while j < len(rest) and rest[j].text.startswith("-"):
            j += 2 if rest[j].text in ("-n", "--interval", "-d", "--differences") else 1
        return _nested(" ".join(_texts(rest[j:])), Word("", any(w.dynamic for w in rest)), f,
                       cmd, ctx)
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
            return _nested(rest[k + 1].text, rest[k + 1], f, cmd, ctx)
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
        return _nested(cmd.stdin_text, Word(""), f, cmd, ctx)
    f.runs_stdin = True
    f.opaque("runs shell commands read from its input")
    return [f], f


# --------------------------------------------------------------------------- programs


def _program(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    """Classify one program with its arguments; returns extra facts (find -exec …)."""
    cwd = cmd.cwd
    texts = _texts(args)
    lowered = [t.lower() for t in texts]
    for pattern in K.REMOTE_CATASTROPHIC:
        if pattern[0] == base and all(p in lowered for p in pattern[1:]):
            f.network = True
            f.raise_to("network", "reaches a remote service")
            f.deny(f"irreversibly deletes remote resources ({' '.join(pattern)})")
            return []
    if base in K.POWER or (base in ("init", "telinit") and texts[:1] in (["0"], ["6"])) or (
        base == "systemctl" and any(t in ("poweroff", "reboot", "halt", "kexec") for t in texts)
    ):
        f.raise_to("privilege", "stops the machine")
        f.deny("shuts down or reboots the machine")
        return []
    if base in K.DISK_TOOLS or base.startswith(("mkfs", "mke2fs")):
        f.raise_to("destructive", "manages disks and file systems")
        f.deny(f"{base} can wipe a disk")
        return []
    if base == "dd":
        _dd(args, f, cmd, ctx)
        return []
    if base in K.KILLERS:
        f.raise_to("destructive", "stops running processes")
        if (base == "kill" and "-1" in texts[1:]) or texts[-1:] == ["-1"] or base == "killall5":
            f.deny("kills every process (kill -1)")
        return []
    if base in K.DELETERS:
        _delete(base, args, f, cmd, ctx)
        return []
    if base == "git":
        _git(args, f, cmd, ctx)
        return []
    if base in K.NETWORK:
        _network(base, args, f, cmd, ctx)
        return []
    if base in K.READ_ONLY:
        return _read_only(base, args, f, cmd, ctx)
    if base in K.WRITERS:
        _writer(base, args, f, cmd, ctx)
        return []
    if base == "systemctl" or base == "crontab":
        if any(t in ("status", "is-active", "is-enabled", "list-units", "show", "cat", "-l",
                     "list-timers", "is-failed") for t in texts) or not texts:
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
        _runner(base, args, f, cmd, ctx)
        return []
    f.opaque(f"{base} is not a program signoff knows; its effects are unknown")
    return []


def _delete(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    recursive = base == "rm" and _has(args, "-r", "-R", "--recursive")
    f.raise_to("destructive", f"{base} deletes files irreversibly" if not recursive
               else "rm -r deletes files irreversibly")
    if _has(args, "--no-preserve-root"):
        f.deny("rm --no-preserve-root")
    targets = positionals(args, frozenset({"-n", "--iterations", "-s", "--size"}))
    if not targets:
        f.note("no files named")
    for w in targets:
        if base == "shred" and K.DISK_DEVICE.match(w.text):
            f.deny(f"shreds a disk device ({w.text})")
        note_delete(f, w, cmd.cwd, ctx, recursive=recursive or base == "rmdir")


def _dd(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    f.raise_to("reversible_write", "dd copies raw data")
    for w in args:
        key, _, value = w.text.partition("=")
        if key == "if":
            note_read(f, Word(value, w.dynamic, w.glob, w.quoted), cmd.cwd, ctx)
        elif key == "of":
            f.raise_to("reversible_write", "dd writes its output in place")
            note_write(f, Word(value, w.dynamic, w.glob, w.quoted), cmd.cwd, ctx)


def _read_only(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    cwd = cmd.cwd
    texts = _texts(args)
    extras: list[Facts] = []
    f.note(f"{base} only reads")
    if base in K.WRITE_FLAGS or base in K.EXEC_FLAGS:
        if any(w.glob and not w.quoted for w in args):
            f.ask("an unquoted glob could expand to an option that writes or runs programs")
        for flag in K.EXEC_FLAGS.get(base, frozenset()) if base != "find" else ():
            if flag in texts or any(t.startswith(flag + "=") for t in texts) or (
                len(flag) == 2 and _has(args, flag)
            ):
                f.runs_code = True
                f.opaque(f"{base} {flag} runs other programs")
        written = K.WRITE_FLAGS.get(base, frozenset())
        if base == "find":
            extras = _find(args, f, cmd, ctx)
            for w in _opt_value(args, *written):
                f.raise_to("reversible_write", "find writes a file list")
                note_write(f, w, cwd, ctx)
        elif base in ("sed", "yq") and _has(args, *written):
            f.raise_to("reversible_write", f"{base} -i edits files in place")
            for w in positionals(args)[0 if _has(args, "-e", "--expression") else 1:]:
                note_write(f, w, cwd, ctx)
        elif base in ("date", "hostname") and _has(args, *written):
            f.raise_to("privilege", f"{base} changes the system's settings")
        elif written:
            for w in _opt_value(args, *written):
                f.raise_to("reversible_write", f"{base} writes its output to a file")
                note_write(f, w, cwd, ctx)
    if base == "sed":
        script = " ".join(texts)
        stripped = re.sub(r"s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1([a-zA-Z0-9]*)",
                          lambda m: "" if not set(m.group(2)) & set("ew") else " w ", script)
        stripped = re.sub(r"y(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1", "", stripped)
        if K.SED_WRITE_CMD.search(stripped):
            f.opaque("the sed script writes files or runs commands (w / e)")
    if base in ("awk", "gawk", "mawk", "nawk") and any(K.AWK_UNSAFE.search(t) for t in texts):
        f.opaque("the awk program runs commands or writes files")
    if base in ("less", "more", "most", "man") and any(
        t.startswith("+") and ("!" in t or "|" in t) for t in texts
    ):
        f.opaque(f"{base} +command runs shell commands")
    if base == "hostname" and positionals(args):
        f.raise_to("privilege", "hostname NAME renames the machine")
    if base in ("uniq", "xxd"):
        pos = positionals(args)
        if len(pos) >= 2 and not (base == "xxd" and not _has(args, "-r") and False):
            f.raise_to("reversible_write", f"{base} writes its second file argument")
            note_write(f, pos[1], cwd, ctx)
    if base in ("echo", "printf") and any(K.SECRET_VAR.search(w.text) for w in args if w.dynamic):
        f.secret = True  # harmless on screen, exfiltration when piped to a remote
    if base in ("env", "printenv", "set", "export", "declare", "typeset") and (
        (base in ("env", "printenv") and not positionals(args)) or not args or "-p" in texts
    ):
        f.secret = True  # prints the environment: harmless here, fatal when piped to a remote
    if base == "alias":
        for w in args:
            if "=" in w.text:
                extras.extend(ctx.script(w.text.partition("=")[2], cwd, cmd.vars))
    if base in K.NO_PATH_ARGS:
        return extras
    pos = positionals(args, K.VALUE_OPTS if base in K.PATTERN_FIRST else frozenset())
    if base in K.PATTERN_FIRST and not _has(args, *K.PATTERN_OPTS):
        pos = pos[1:]
    if base == "find":
        pos = _find_roots(args)
    for w in pos:
        note_read(f, w, cwd, ctx)
    for w in _opt_value(args, "-f", "--file"):
        note_read(f, w, cwd, ctx)
    return extras


def _find_roots(args: list[Word]) -> list[Word]:
    roots: list[Word] = []
    for w in args:
        if w.text.startswith(("-", "(", "!", ")")) and not w.quoted:
            break
        roots.append(w)
    return roots or [Word(".")]


def _find(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    roots = _find_roots(args)
    texts = _texts(args)
    filtered = any(t in K.FIND_FILTERS for t in texts)
    # What -exec/-delete act on: anything below the root, or the root's whole content.
    found = [Word(posixpath.join(r.text, "{}") if filtered else posixpath.join(r.text, "*"),
                  r.dynamic, not filtered, r.quoted) for r in roots]
    if "-delete" in texts:
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
            inner = args[i + 1:end]
            for root in found:
                words = [root if w.text == "{}" else w for w in inner]
                if words:
                    sub = Facts(_texts(words))
                    fake = Cmd(words, [], [], cmd.cwd, cmd.vars, " ".join(_texts(words)))
                    extras.extend(judge_words(words, sub, fake, ctx)[0])
            i = end
        i += 1
    if extras:
        f.note("find runs other commands, judged on their own")
    return extras


def _git(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = _texts(args)
    i = 0
    cwd = cmd.cwd
    while i < len(texts) and texts[i].startswith("-"):
        t = texts[i]
        if t == "-c" or t.startswith(("--config-env", "-c")) or t.startswith("--exec-path"):
            f.opaque("git -c / --config-env can make git run any program")
        if t == "-C" and i + 1 < len(args):
            cwd = ctx.path(args[i + 1], cwd)
        i += 2 if t in K.GIT_GLOBAL_WITH_VALUE else 1
    if i >= len(texts):
        f.note("git without a subcommand prints help")
        return
    sub, rest = texts[i], texts[i + 1:]
    for t in rest:
        if any(t == o or t.startswith(o + "=") for o in K.GIT_UNSAFE_OPTS):
            f.opaque(f"git {sub} {t} writes files or runs external programs")
    written = Word(cwd) if cwd else Word("", dynamic=True)

    def write(cls: ShellClass, reason: str) -> None:
        f.raise_to(cls, reason)
        if written.dynamic:
            f.unknown_paths = True
            f.ask("git runs in a directory only known at run time")
        elif not ctx.inside(written.text):
            f.ask(f"changes a repository outside the workspace ({written.text})")
        else:
            f.writes.append(written.text)

    pos = [t for t in rest if not t.startswith("-")]
    flags = {t for t in rest if t.startswith("-")} | ({"."} if "." in rest else set())
    if sub in K.GIT_READ:
        f.note(f"git {sub} only reads")
    elif sub in ("branch", "tag"):
        listing = {"-l", "--list", "-n", "--contains", "--no-contains", "--merged",
                   "--no-merged", "--points-at", "-r", "--remotes", "-v", "-vv", "--verbose"}
        if flags & {"-d", "-D", "--delete"}:
            write("destructive", f"git {sub} -d deletes a {sub}")
        elif flags & listing or any(t.startswith(("--sort", "--format", "--contains",
                                                   "--points-at", "--merged")) for t in rest):
            f.note(f"git {sub} lists")
        elif pos or (flags & {"-m", "-M", "-c", "-C", "-f", "--force", "-a", "-s", "-u"} and (
            sub == "tag" or flags & {"-m", "-M", "-c", "-C", "-f", "--force", "-u"}
        )):
            write("reversible_write", f"git {sub} creates or changes a {sub}")
        else:
            f.note(f"git {sub} lists")
    elif sub == "remote":
        if not pos or pos[0] in ("-v", "get-url"):
            f.note("git remote lists remotes")
        elif pos[0] in ("show", "prune", "update"):
            f.network = True
            f.raise_to("network", f"git remote {pos[0]} contacts the remote")
        else:
            write("reversible_write", "git remote changes the repository's remotes")
    elif sub in ("stash", "worktree", "reflog", "notes", "sparse-checkout", "lfs"):
        action = pos[0] if pos else ""
        if action in ("list", "show", ""):
            if sub == "stash" and not action:
                write("reversible_write", "git stash puts changes aside")
            else:
                f.note(f"git {sub} {action} only reads")
        elif action in ("drop", "clear", "remove", "prune", "expire", "delete"):
            write("destructive", f"git {sub} {action} deletes irreversibly")
        else:
            write("reversible_write", f"git {sub} {action} changes the repository")
    elif sub == "config":
        if flags & {"--get", "--get-all", "--get-regexp", "--list", "-l"} or len(pos) == 1:
            f.note("git config reads settings")
        else:
            f.opaque("git config can make git run other programs (pager, hooks, aliases)")
    elif sub in ("checkout", "switch", "restore", "reset"):
        discards = (
            (sub == "restore" and not (flags <= {"--staged", "-S"} and "--staged" in flags))
            or flags & {"-f", "--force", "--hard", "--merge", "--keep", "--discard-changes",
                        "-p", "--patch", "--", "."}
            or (sub == "checkout" and not flags & {"-b", "-B", "--orphan"}
                and any("." in p or "/" in p for p in pos))
        )
        if discards:
            write("destructive", f"git {sub} can discard uncommitted work irreversibly")
        else:
            write("reversible_write", f"git {sub} changes the working tree")
    elif sub in ("clean", "rm"):
        if sub == "clean" and flags & {"-n", "--dry-run"}:
            f.note("git clean -n only lists")
        elif sub == "rm" and "--cached" in flags:
            write("reversible_write", "git rm --cached unstages files")
        else:
            write("destructive", f"git {sub} deletes files irreversibly")
    elif sub in K.GIT_DESTRUCTIVE:
        write("destructive", f"git {sub} deletes history or objects irreversibly")
    elif sub in ("push", "fetch", "pull", "clone", "ls-remote", "archive", "send-email"):
        f.network = True
        f.raise_to("network", f"git {sub} talks to a remote repository")
        if sub == "push" and (flags & {"-f", "--force", "--delete", "-d", "--mirror",
                                       "--force-with-lease", "--prune"}
                              or any(p.startswith((":", "+")) for p in pos)):
            f.note("rewrites or deletes history on the remote")
        if sub in ("pull", "clone"):
            write("network", f"git {sub} writes into the working tree")
    elif sub in ("add", "commit", "merge", "rebase", "cherry-pick", "revert", "mv", "init",
                 "apply", "tag", "rerere", "maintenance", "commit-tree",
                 "update-index", "read-tree", "write-tree", "mktree", "hash-object", "pack-refs",
                 "repack", "symbolic-ref", "format-patch"):
        write("reversible_write", f"git {sub} changes the repository")
    elif sub in K.GIT_OPAQUE:
        f.opaque(f"git {sub} can run other programs")
    else:
        f.opaque(f"git {sub} is not a known git command (it may be an alias that runs anything)")


def _network(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    cwd = cmd.cwd
    texts = _texts(args)
    f.network = True
    f.raise_to("network", f"{base} reaches the network")
    lowered = " ".join(texts).lower()
    if base in ("nc", "ncat", "netcat") and (
        _has(args, "-e", "-c") or any(t in ("--exec", "--sh-exec", "--lua-exec") for t in texts)
    ):
        f.deny(f"{base} -e hands a shell to a remote host (reverse shell)")
    if base == "socat" and re.search(r"\b(exec|system):", lowered):
        f.deny("socat connects a program to the network (reverse shell)")
    if (base in K.NETWORK and any(K.SQL_CATASTROPHIC.search(t) for t in texts)) or (
        cmd.stdin_text and K.SQL_CATASTROPHIC.search(cmd.stdin_text)
    ):
        f.deny("drops a whole database")
    uploads: list[Word] = []
    if base == "curl":
        uploads += _opt_value(args, "-T", "--upload-file")
        for w in _opt_value(args, "-d", "--data", "--data-binary", "--data-raw",
                            "--data-urlencode", "-F", "--form", "--json"):
            if "@" in w.text or "=<" in w.text:
                path = re.split(r"@|=<", w.text, maxsplit=1)[1].split(";")[0]
                uploads.append(Word(path, w.dynamic))
        outs = _opt_value(args, "-o", "--output")
        if _opt_value(args, "-K", "--config"):
            f.opaque("curl -K reads options from a file")
        if "-O" in texts or "--remote-name" in texts or _has(args, "-O"):
            outs += [Word(posixpath.basename(t.split("?")[0]) or "index.html")
                     for t in texts if "://" in t]
        for w in outs:
            if w.text != "-":
                note_write(f, w, cwd, ctx)
                path = ctx.path(w, cwd)
                if path:
                    f.downloads.append(path)
        if not outs:
            f.fetch = True
    elif base == "wget":
        outs = _opt_value(args, "-O", "--output-document")
        uploads += _opt_value(args, "--post-file", "--body-file")
        if not outs:
            folder = (_opt_value(args, "-P", "--directory-prefix") or [Word(".")])[0]
            outs = [Word(posixpath.join(folder.text, posixpath.basename(t.split("?")[0])
                                        or "index.html"), folder.dynamic)
                    for t in texts if "://" in t]
        for w in outs:
            if w.text == "-":
                f.fetch = True
                continue
            note_write(f, w, cwd, ctx)
            path = ctx.path(w, cwd)
            if path:
                f.downloads.append(path)
    elif base in ("scp", "rsync", "sftp", "rclone", "s3cmd"):
        pos = positionals(args, frozenset({"-i", "-P", "-p", "-e", "-F", "-o", "-c", "-l", "-S"}))
        for w in pos[:-1]:
            uploads.append(w)
        if pos and not re.match(r"^[\w.@-]+:", pos[-1].text):
            note_write(f, pos[-1], cwd, ctx)
        if base == "rsync" and any(re.match(r"^[\w.@-]+:", w.text) for w in pos):
            f.network = True
            f.raise_to("network", "rsync copies to or from a remote host")
        if base == "rsync" and _has(args, "--delete", "--delete-after", "--delete-before"):
            f.raise_to("destructive", "rsync --delete deletes files at the destination")
    for w in uploads:
        if ":" in w.text.split("/")[0] and base != "curl":
            continue  # remote source (host:path), not a local file
        before = f.secret
        note_read(f, w, cwd, ctx)
        if f.secret and not before:
            f.deny(f"sends a secret file over the network ({w.text})")


def _writer(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    cwd = cmd.cwd
    mode = K.WRITERS[base]
    texts = _texts(args)
    pos = positionals(args, frozenset({"-t", "--target-directory", "-m", "--mode", "-o", "-g",
                                       "-S", "--suffix", "-s", "--size", "-C", "-d", "-f",
                                       "--reference"} if base in ("install", "truncate", "tar",
                                                                  "unzip", "cp", "mv", "ln")
                                      else frozenset()))
    f.raise_to("reversible_write", f"{base} changes files")
    if base == "rsync" and any(re.match(r"^[\w.@-]+:", w.text) for w in pos):
        _network(base, args, f, cmd, ctx)
        return
    if base == "rsync" and _has(args, "--delete", "--delete-after", "--delete-before"):
        f.raise_to("destructive", "rsync --delete deletes files at the destination")
    recursive = _has(args, "-R", "-r", "--recursive")
    if base in ("chmod", "chown", "chgrp"):
        mode_word = pos[0].text if pos else ""
        if base == "chmod" and (re.fullmatch(r"0?[2-7][0-7]{3}", mode_word)
                                or re.search(r"[+=][rwxXt]*s", mode_word)):
            f.deny("sets the setuid/setgid bit (a privilege backdoor)")
        for w in pos[1:]:
            path = ctx.path(w, cwd)
            why = catastrophic_target(path, ctx, True) if path and recursive else ""
            if why:
                f.deny(f"{base} -R on {why}")
            note_write(f, w, cwd, ctx, content=False)
        return
    if base == "mv":
        target_dir = _opt_value(args, "-t", "--target-directory")
        sources = pos if target_dir else pos[:-1]
        for w in sources:
            note_delete(f, w, cwd, ctx, recursive=True, verb="moves away")
        for w in target_dir or pos[-1:]:
            if w.text in K.PSEUDO_FILES:
                f.raise_to("destructive", "moving to /dev/null deletes")
            note_write(f, w, cwd, ctx)
        return
    if base in ("cp", "install", "ln", "rsync", "convert", "ffmpeg"):
        target_dir = _opt_value(args, "-t", "--target-directory")
        for w in pos if target_dir else pos[:-1]:
            if base != "ln":
                note_read(f, w, cwd, ctx)
        dest = target_dir or pos[-1:]
        if base == "ln" and len(pos) == 1:
            dest = [Word(posixpath.basename(pos[0].text))]
        for w in dest:
            note_write(f, w, cwd, ctx)
        return
    if base == "tar":
        first = texts[0] if texts else ""
        cluster = first.lstrip("-") if first and not first.startswith("--") else ""
        if any(t in ("--to-command", "--use-compress-program", "-I", "--checkpoint-action",
                     "--info-script", "--new-volume-script", "-F") or t.startswith(
                         ("--to-command=", "--use-compress-program=", "--checkpoint-action=",
                          "--info-script=", "--new-volume-script=")) for t in texts):
            f.opaque("tar runs an external program")
        if _has(args, "-t", "--list") or "t" in cluster:
            f.cls = "read_only"
            f.reasons = ["tar lists an archive"]
            return
        archive = _opt_value(args, "-f", "--file")
        if not archive and "f" in cluster and len(args) > 1:
            archive = [args[1]]
        if _has(args, "-c", "--create") or "c" in cluster or _has(args, "-r", "-u"):
            for w in archive:
                if w.text != "-":
                    note_write(f, w, cwd, ctx)
            for w in pos:
                if w not in archive and w is not args[0]:
                    note_read(f, w, cwd, ctx)
            return
        for w in archive:
            note_read(f, w, cwd, ctx)
        for w in _opt_value(args, "-C", "--directory") or [Word(".")]:
            note_write(f, w, cwd, ctx)
        return
    if mode == "all":
        for w in pos:
            note_write(f, w, cwd, ctx, content=base not in ("touch", "mkdir"))
        if base == "truncate":
            f.raise_to("destructive", "truncate discards file contents")
    elif mode == "first" and pos:
        note_write(f, pos[0], cwd, ctx)
        for w in pos[1:]:
            note_read(f, w, cwd, ctx)
    elif mode == "cwd":
        for w in _opt_value(args, "-d", "-o", "--output", "-f") or [Word(".")]:
            note_write(f, w, cwd, ctx)
    elif mode == "flag":
        for w in _opt_value(args, "-o", "-out", "--output"):
            note_write(f, w, cwd, ctx)
        if base == "openssl" and any(t in ("s_client", "s_server") for t in texts):
            f.network = True
            f.raise_to("network", "openssl connects to a remote host")
        elif not _opt_value(args, "-o", "-out", "--output") and base in ("openssl", "pandoc"):
            f.cls = "read_only"
    elif mode == "none" and base in ("code", "open", "xdg-open"):
        f.opaque(f"{base} hands files to another application")
    if base == "ssh-keygen":
        f.ask("ssh-keygen manages SSH keys")


def _runner(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = _texts(args)
    if (len(texts) == 1 and texts[0] in K.VERSION_FLAGS) or (
        texts and texts[0] in K.RUNNER_READ_SUBCOMMANDS.get(base, frozenset())
    ):
        f.note(f"{base} {texts[0]} only reports information")
        return
    f.runs_code = True
    code = _opt_value(args, *K.INLINE_CODE_FLAGS) if base in K.INTERPRETERS else []
    body = " ".join(t.text for t in code) + (cmd.stdin_text or "")
    if K.REVERSE_SHELL_CODE.search(body):
        f.deny("the inline code opens a shell over the network (reverse shell)")
    if K.SQL_CATASTROPHIC.search(body):
        f.deny("drops a whole database")
    if base in K.INTERPRETERS:
        pos = positionals(args, frozenset({"-m", "-W", "-X", "-I", "-r", "--require"}))
        if code or _has(args, "-m"):
            f.opaque(f"{base} runs inline code")
        elif pos and pos[0].text != "-":
            path = ctx.path(pos[0], cmd.cwd)
            if path:
                f.executes.append(path)
            f.opaque(f"{base} runs the script {pos[0].text}")
        else:
            if cmd.stdin_text is None:
                f.runs_stdin = True
            f.opaque(f"{base} runs code read from its input")
        return
    if base in ("npm", "pnpm", "yarn", "pip", "pip3", "gem", "cargo", "go", "brew", "apt",
                "apt-get", "uv", "poetry", "composer", "bundle") and any(
        t in ("install", "add", "i", "ci", "update", "upgrade", "sync", "get") for t in texts[:2]
    ):
        f.network = True
        f.opaque(f"{base} installs packages, which may run their install scripts")
        return
    if base in ("npm", "pnpm", "yarn", "cargo") and texts[:1] == ["publish"]:
        f.network = True
        f.opaque(f"{base} publish uploads a package")
        return
    f.opaque(f"{base} runs project code (build, test or tool scripts)")
