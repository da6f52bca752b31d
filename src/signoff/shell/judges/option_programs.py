"""Options that name a program to run (issue 12): `sort --compress-program=sh`, `less
--lesskey-src=x` (a lesskey file can set LESSOPEN), `pandoc --filter=x`, `ssh -o
ProxyCommand=…`, `strace -o '|cmd'`, `openssl -engine x.so`.

Whatever the program usually does, it then runs what the option names: the command is
opaque, and an "always" rule for it must be exact (a prefix rule `Bash(sort:*)` would allow
any program in the option next time). Every spelling counts: `--opt=v`, `--opt v`, a prefix
that GNU getopt_long completes (`--compress-prog`), a short option alone or inside a cluster
(`-Rk x`), and a quoted word (the shell removes the quotes before the program reads it).
Wrappers' own options that write or run (`time -o FILE`, `strace -o '|cmd'`) are here too.
"""

from __future__ import annotations

from ...lazyre import lazy
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_write

# Long options (`--x`, or `-x` for single-dash programs such as openssl) whose value is a
# program, a library or a file of commands the program obeys; and short option letters.
_LONG: dict[str, tuple[str, ...]] = {
    "sort": ("--compress-program",),
    "less": ("--lesskey-file", "--lesskey-src", "--lesskey-content"),
    "diff3": ("--diff-program",),
    "sdiff": ("--diff-program",),
    "man": ("--pager", "--html", "--config-file"),
    "rsync": ("--rsh", "--rsync-path"),
    "tar": (
        "--to-command",
        "--use-compress-program",
        "--checkpoint-action",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
    ),
    "zip": ("--unzip-command",),
    "mysql": ("--pager",),
    "mariadb": ("--pager",),
    "bat": ("--pager",),
    "batcat": ("--pager",),
    "delta": ("--pager",),
    "pandoc": ("--filter", "--lua-filter", "--pdf-engine"),
    "openssl": ("-engine", "-provider", "-provider-path", "-keygen_engine"),
}
_SHORT: dict[str, str] = {
    "less": "k",
    "man": "PHC",
    "rsync": "e",
    "tar": "IF",
    "scp": "SF",  # -S the ssh program to run, -F a config that may name a ProxyCommand
    "sftp": "SDF",  # -D a local sftp-server program
    "ssh": "F",
    "pandoc": "FL",
    "hash": "p",  # `hash -p ./x ls`: the name ls now runs ./x
}
# Options spelled with several letters after one dash (`zip -TT cmd`).
_WHOLE: dict[str, tuple[str, ...]] = {"zip": ("-TT",)}
# `ssh -o Key=value`: keys whose value is a command or a library ssh loads.
_SSH_KEYS = frozenset(
    {
        "proxycommand",
        "localcommand",
        "knownhostscommand",
        "match",
        "pkcs11provider",
        "securitykeyprovider",
    }
)
_SSH_FAMILY = frozenset({"ssh", "scp", "sftp", "autossh"})
# Options whose value is a configuration that can name programs, or a library to load:
# the reason says so rather than "runs the program it names".
_CONFIGS = frozenset(
    {"-k", "--lesskey-file", "--lesskey-src", "--lesskey-content", "-C", "--config-file", "-F"}
)
_LIBRARIES = frozenset(
    {
        "-engine",
        "-provider",
        "-provider-path",
        "-keygen_engine",
        "-o pkcs11provider",
        "-o securitykeyprovider",
    }
)
# Wrappers' options whose value is a file they write (or, with `|`/`!`, a command).
_WRAPPER_OUTPUT: dict[str, tuple[str, ...]] = {
    "time": ("-o", "--output"),
    "strace": ("-o", "--output"),
    "ltrace": ("-o", "--output"),
}
# Read-only programs' options that write a file.
_WRITES: dict[str, tuple[str, ...]] = {
    "less": ("-o", "-O", "--log-file", "--LOG-FILE"),
    "info": ("-o", "--output", "--dribble"),
    "history": ("-w", "-a"),  # `history -w ~/.bashrc` overwrites the file with the history
    "ncdu": ("-o",),
    "cloc": ("--report-file", "--out"),
    "scc": ("-o", "--output"),
    "nvidia-smi": ("-f", "--filename"),
}
# Options that turn a program that shows the system's state into one that changes it.
_CHANGES_SYSTEM: dict[str, tuple[str, ...]] = {
    "journalctl": (
        "--vacuum-size",
        "--vacuum-time",
        "--vacuum-files",
        "--rotate",
        "--flush",
        "--sync",
        "--relinquish-var",
        "--smart-relinquish-var",
        "--setup-keys",
        "--update-catalog",
    ),
    "dmesg": (
        "-C",
        "--clear",
        "-c",
        "--read-clear",
        "-D",
        "--console-off",
        "-E",
        "--console-on",
        "-n",
        "--console-level",
    ),
    "nvidia-smi": (
        "-r",
        "--gpu-reset",
        "-pm",
        "--persistence-mode",
        "-pl",
        "--power-limit",
        "-e",
        "--ecc-config",
        "-c",
        "--compute-mode",
        "-am",
        "--accounting-mode",
        "-ac",
        "--applications-clocks",
        "-rac",
        "-lgc",
        "--lock-gpu-clocks",
        "-rgc",
        "--reset-gpu-clocks",
        "-lmc",
        "-rmc",
    ),
}


# Environment variables that name the program, library or startup script a command runs
# (`PAGER=x git log`, `LD_PRELOAD=x.so ls`, `PATH=.:$PATH git`): a rule that names the
# command (`Bash(git log:*)`) cannot vouch for what they name, so they are a boundary (asks
# whatever the rules say, approved once). Options-only variables (PYTHONPATH, NODE_OPTIONS
# for a build that runs code anyway) stay ordinary opaque asks that a rule may allow.
PROGRAM_ENV = lazy(
    r"^(PATH|\w*PAGER|\w*EDITOR|VISUAL|\w*BROWSER|\w*ASKPASS\w*|LESSOPEN|LESSCLOSE|LESSKEY\w*"
    r"|LESSEDIT|FCEDIT|CVS_RSH|RSYNC_RSH|RSYNC_CONNECT_PROG|GIT_SSH|GIT_SSH_COMMAND"
    r"|GIT_EXTERNAL_DIFF|GIT_EXEC_PATH|GIT_PROXY_COMMAND|GIT_CONFIG\w*|GIT_DIR|BASH_ENV|ENV"
    r"|PROMPT_COMMAND|PS4|SHELLOPTS|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_\w+|BASH_FUNC_\w+"
    r"|MANOPT|TAR_OPTIONS)$"
)


def note_program_env(f: Facts, name: str) -> None:
    """`NAME=value cmd` (or `env NAME=value cmd`, `export NAME=value`) where NAME names
    what runs: no allow rule lifts the ask, and "always" is never offered."""
    if PROGRAM_ENV.match(name):
        reason = f"sets {name}, which names a program or library to run: approve it each time"
        f.exact_rule = True
        if reason not in f.boundaries:
            f.boundaries.append(reason)


_JUDGED = frozenset({*_LONG, *_SHORT, *_WHOLE, *_SSH_FAMILY, *_WRITES, *_CHANGES_SYSTEM})


def named_program(base: str, args: list[Word]) -> str:
    """The option of `base` in `args` that names a program to run, or ''."""
    longs = _LONG.get(base, ())
    short = _SHORT.get(base, "")
    whole = _WHOLE.get(base, ())
    ssh = base in _SSH_FAMILY
    for i, w in enumerate(args):
        t = w.text
        if t == "--":
            break
        if not t.startswith("-") or t == "-":
            continue
        name = t.partition("=")[0]
        if name in whole or any(t.startswith(o) and len(t) > len(o) for o in whole):
            return name
        if len(name) > 2 and any(o.startswith(name) for o in longs):
            return next(o for o in longs if o.startswith(name))  # getopt_long's prefixes
        if t.startswith("--"):
            continue
        letter = next((c for c in t[1:] if c in short), "")
        if letter:
            return "-" + letter
        if ssh and "o" in t[1:]:
            value = t[t.index("o", 1) + 1 :] or (args[i + 1].text if i + 1 < len(args) else "")
            key = value.replace("=", " ").split(" ", 1)[0].strip().lower()
            if key in _SSH_KEYS or w.dynamic:
                return f"-o {value.split('=', 1)[0].split(' ', 1)[0]}"
    return ""


def judge_option_programs(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """After the program's own judge: a program named in an option makes the part opaque,
    and an "always" rule for it exact; an option that writes a file is a write."""
    if base not in _JUDGED:
        return  # the common case: one set lookup
    option = named_program(base, args)
    if option:
        f.exact_rule = True
        if not f.runs_code:
            f.runs_code = True
            f.opaque(_why(base, option))
    changes = _CHANGES_SYSTEM.get(base)
    if changes:
        flag = next(
            (
                t
                for t in (w.text.partition("=")[0] for w in args)
                if t in changes
                or (t.startswith("--") and len(t) > 3 and any(o.startswith(t) for o in changes))
                or (
                    len(t) > 2
                    and t[0] == "-"
                    and t[1] != "-"
                    and base == "dmesg"
                    and any(c in "CcDEn" for c in t[1:])
                )
            ),
            "",
        )
        if flag:
            f.raise_to("privilege", f"{base} {flag} changes the system's state")
    for w in _option_values(args, _WRITES.get(base, ())):
        f.raise_to("reversible_write", f"{base} writes the file named in its options ({w.text})")
        note_write(f, w, cmd.cwd, ctx)


def _why(base: str, option: str) -> str:
    if option in _CONFIGS and not (base == "pandoc" and option == "-F"):
        return f"{base} {option} obeys a configuration file that can make it run programs"
    if option.lower() in _LIBRARIES:
        return f"{base} {option} loads code from the library it names"
    return f"{base} {option} runs the program it names"


def judge_wrapper_options(base: str, options: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """`time -o FILE ls` writes FILE; `strace -o '|sh' ls` pipes its trace into sh."""
    if base not in _WRAPPER_OUTPUT or not options:
        return
    for w in _option_values(options, _WRAPPER_OUTPUT.get(base, ())):
        if base == "strace" and w.text.startswith(("|", "!")):
            f.runs_code = True
            f.exact_rule = True
            f.opaque(f"strace -o {w.text} pipes its trace into a command")
            continue
        f.raise_to("reversible_write", f"{base} writes its report to {w.text}")
        note_write(f, w, cmd.cwd, ctx)


def _option_values(args: list[Word], names: tuple[str, ...]) -> list[Word]:
    """Values of `-o v`, `-ov`, `--output v`, `--output=v` and `--outp=v` (a prefix)."""
    if not names:
        return []
    out: list[Word] = []
    for i, w in enumerate(args):
        t = w.text
        if t == "--":
            break
        name, eq, value = t.partition("=")
        for n in names:
            if n.startswith("--") and len(name) > 2 and n.startswith(name):
                if eq:
                    out.append(Word(value, w.dynamic, w.glob, w.quoted))
                elif i + 1 < len(args):
                    out.append(args[i + 1])
                break
            if len(n) == 2 and t.startswith(n) and not t.startswith("--"):
                if len(t) > 2:
                    out.append(Word(t[2:], w.dynamic, w.glob, w.quoted))
                elif i + 1 < len(args):
                    out.append(args[i + 1])
                break
    return out


__all__ = [
    "PROGRAM_ENV",
    "judge_option_programs",
    "judge_wrapper_options",
    "named_program",
    "note_program_env",
]
