"""Catastrophic system commands: killing init or every process, deleting accounts or their
passwords, removing packages the system needs, stopping the services that keep the machine
reachable, shredding files.

`judge_system` runs after a program's family judge (`shell_programs.judge_program`) for the
programs in `SYSTEM_PROGRAMS`, and only ever adds denials or asks: a harmless look-alike
(`kill 1234`, `apt remove some-lib`, `userdel --help`) keeps the verdict its family gave.
Mirror deletes, containers and secret uploads are judged in `shell_transfer`.
"""

from __future__ import annotations

import fnmatch
import re

from ...lazyre import lazy
from .. import knowledge as K
from ..args import has_flag, option_values, positionals, texts_of
from ..facts import Context, Facts, under
from ..parse import Cmd, Word
from ..paths import note_write
from .packages import PACKAGE_JUDGES
from .transfer import TRANSFER_JUDGES, Judge

# --------------------------------------------------------------------------- processes

# Signals that do not stop init when sent to PID 1 (status checks, reloads).
_GENTLE_SIGNALS = frozenset(
    {"0", "HUP", "1", "USR1", "10", "USR2", "12", "CONT", "18", "WINCH", "28"}
)
# Processes whose death takes the machine, its logins or remote access down.
CRITICAL_PROCESSES: tuple[str, ...] = (
    "init",
    "systemd",
    "launchd",
    "kthreadd",
    "sshd",
    "dbus-daemon",
    "dbus-broker",
    "systemd-logind",
    "systemd-journald",
    "systemd-udevd",
    "login",
    "WindowServer",
    "loginwindow",
    "kernel_task",
)
# What `pkill -f` sees of them: their command lines.
_CRITICAL_COMMAND_LINES: tuple[str, ...] = (
    "/sbin/init",
    "/lib/systemd/systemd --system --deserialize 31",
    "/usr/sbin/sshd -D",
    "/usr/bin/dbus-daemon --system",
    "/sbin/launchd",
)
# A pattern that finds all of these finds every process.
_ANY_NAMES: tuple[str, ...] = ("init", "bash", "node", "Xorg", "kworker/0:1", "a1", "zsh")
# pkill options that take a value; those that narrow the match to some processes.
_PKILL_VALUES = frozenset(
    {
        "-u",
        "--euid",
        "-U",
        "--uid",
        "-G",
        "--group",
        "-g",
        "--pgroup",
        "-P",
        "--parent",
        "-s",
        "--session",
        "-t",
        "--terminal",
        "-F",
        "--pidfile",
        "--signal",
        "--ns",
        "--nslist",
        "-d",
        "--delimiter",
    }
)
_PKILL_NARROW = (
    "-G",
    "--group",
    "-g",
    "--pgroup",
    "-s",
    "--session",
    "-t",
    "--terminal",
    "-F",
    "--pidfile",
    "-n",
    "--newest",
    "--ns",
)
_KILLALL_VALUES = frozenset(
    {
        "-s",
        "--signal",
        "-u",
        "--user",
        "-o",
        "--older-than",
        "-y",
        "--younger-than",
        "-n",
        "--ns",
        "-Z",
        "--context",
    }
)


def _signal_name(text: str) -> str:
    return text.upper().removeprefix("SIG")


def _kill(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """`kill [-SIG | -s SIG | -n NUM] PID…`: PID 1 is init; -1 is every process."""
    signal = "TERM"
    signal_given = False
    pids: list[str] = []
    words = texts_of(args)
    i = 0
    while i < len(words):
        t = words[i]
        if pids or (signal_given and t != "--" and not t.startswith("-")):
            pids.append(t)
        elif t == "--":
            pids.extend(words[i + 1 :])
            break
        elif t in ("-l", "-L", "--list", "--table"):
            return  # lists signal names
        elif t in ("-s", "-n", "--signal") and i + 1 < len(words):
            signal, signal_given = _signal_name(words[i + 1]), True
            i += 1
        elif t.startswith("-") and len(t) > 1 and not signal_given:
            signal, signal_given = _signal_name(t[1:]), True
        else:
            pids.append(t)
        i += 1
    numbers = {int(p) for p in pids if p.lstrip("+-").isdigit()}  # `kill 01`, `kill -- -01`
    if -1 in numbers and signal != "0" and not f.catastrophic:  # `-1` itself: shell_programs
        f.deny(f"kills every process (kill -{signal} -1)")
    if 1 in numbers and signal not in _GENTLE_SIGNALS:
        name = _SIGNAL_NUMBERS.get(signal, signal)
        f.deny(f"kills init (PID 1) with SIG{name}: the whole system goes down")


_SIGNAL_NUMBERS = {
    "2": "INT",
    "3": "QUIT",
    "6": "ABRT",
    "9": "KILL",
    "11": "SEGV",
    "15": "TERM",
    "19": "STOP",
}


def _matches(pattern: str, names: tuple[str, ...], exact: bool, fold: bool) -> list[str]:
    try:
        rx = re.compile(pattern, re.IGNORECASE if fold else 0)
    except re.error:
        return []
    return [n for n in names if (rx.fullmatch(n) if exact else rx.search(n))]


def _process_pattern(
    tool: str, pattern: str, f: Facts, *, exact: bool, fold: bool, full: bool, invert: bool
) -> None:
    """Deny a pattern that picks every process, or one the machine cannot live without."""
    if invert:
        f.deny(f"{tool} -v {pattern!r} kills every process except those it names")
        return
    if len(_matches(pattern, _ANY_NAMES, exact, fold)) == len(_ANY_NAMES):
        f.deny(f"kills every process ({tool} pattern {pattern!r} matches any name)")
        return
    names = CRITICAL_PROCESSES + (_CRITICAL_COMMAND_LINES if full else ())
    hit = _matches(pattern, names, exact, fold)
    if hit:
        f.deny(
            f"kills {hit[0].split()[0]} ({tool} {pattern!r}), which the system or remote "
            "logins depend on"
        )


def _owner_is_root(values: list[Word]) -> bool:
    return any(v.text in ("root", "0") for v in values)


def _pkill(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    if any(t in ("-h", "--help", "-V", "--version") for t in texts):
        return
    args = [w for w in args if not _is_signal_word(w.text)]  # `-KILL` is no option cluster
    owners = option_values(args, "-u", "--euid", "-U", "--uid")
    parents = option_values(args, "-P", "--parent")
    pos = positionals(args, _PKILL_VALUES)
    if any(p.text in ("0", "1") for p in parents):
        f.deny("kills every child of init (pkill -P 1): every service on the machine")
    if not pos:
        for who in owners:
            f.deny(f"kills every process of user {who.text} ({base} -u)")
        return
    narrowed = any(has_flag(args, o) for o in _PKILL_NARROW) or (
        owners and not _owner_is_root(owners)
    )
    if narrowed:
        return
    _process_pattern(
        base,
        pos[0].text,
        f,
        exact=has_flag(args, "-x", "--exact"),
        fold=has_flag(args, "-i", "--ignore-case"),
        full=has_flag(args, "-f", "--full"),
        invert=has_flag(args, "-v", "--inverse"),
    )


def _is_signal_word(text: str) -> bool:
    """`-9`, `-KILL`, `-SIGTERM`, `--signal=KILL`: a pkill/killall signal, not an option."""
    body = text[1:]
    return text.startswith("-") and (
        body.isdigit() or (body.upper().removeprefix("SIG") in _SIGNAL_NAMES and len(body) > 2)
    )


_SIGNAL_NAMES = frozenset(
    {
        "KILL",
        "TERM",
        "HUP",
        "INT",
        "QUIT",
        "ABRT",
        "STOP",
        "CONT",
        "USR1",
        "USR2",
        "SEGV",
        "PIPE",
        "ALRM",
        "TSTP",
        "BUS",
        "TRAP",
        "SYS",
        "IOT",
        "XCPU",
        "XFSZ",
        "VTALRM",
        "PROF",
        "WINCH",
        "PWR",
        "TTIN",
        "TTOU",
    }
)


def _killall(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    if any(t in ("-l", "--list", "-h", "--help", "-V", "--version") for t in texts):
        return
    args = [w for w in args if not _is_signal_word(w.text)]
    owners = option_values(args, "-u", "--user")
    names = positionals(args, _KILLALL_VALUES)
    if not names:
        for who in owners:
            f.deny(f"kills every process of user {who.text} (killall -u)")
        return
    if owners and not _owner_is_root(owners):
        return
    regex = has_flag(args, "-r", "--regexp")
    for w in names:
        _process_pattern(
            base,
            w.text if regex else re.escape(w.text),
            f,
            exact=not regex,
            fold=has_flag(args, "-I", "--ignore-case"),
            full=False,
            invert=False,
        )


def _killall5(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    f.raise_to("destructive", "stops running processes")
    f.deny("kills every process outside the current session (killall5)")


def _skill(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """`skill -KILL -u dev`, `skill -9 root`: every process of a user (or of root)."""
    who = option_values(args, "-u", "--user")
    loose = [
        w
        for w in positionals(
            args, frozenset({"-u", "--user", "-t", "--tty", "-p", "--pid", "-c", "--command"})
        )
        if w.text in ("root", *CRITICAL_PROCESSES)
    ]
    for w in [*who, *loose]:
        f.deny(f"kills every process of {w.text} ({base})")


# systemd units the machine or its remote access cannot do without.
CRITICAL_UNITS: tuple[str, ...] = (
    "ssh",
    "sshd",
    "dbus",
    "dbus-broker",
    "systemd-journald",
    "systemd-logind",
    "systemd-udevd",
    "init.scope",
    "-.slice",
    "-.mount",
    "system.slice",
    "user.slice",
    "user@*",
    "getty@*",
    "serial-getty@*",
    "networking",
    "NetworkManager",
    "systemd-networkd",
)
# Targets that stop (nearly) everything when isolated.
_FINAL_TARGETS = frozenset(
    {
        "rescue",
        "emergency",
        "halt",
        "poweroff",
        "reboot",
        "kexec",
        "shutdown",
        "sysinit",
        "basic",
        "runlevel0",
        "runlevel1",
        "runlevel6",
        "final",
    }
)
_UNIT_STOPS = frozenset({"stop", "kill", "mask", "freeze", "clean"})


def _systemctl(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(
        args,
        frozenset(
            {
                "-s",
                "--signal",
                "-H",
                "--host",
                "-M",
                "--machine",
                "-t",
                "--type",
                "--kill-whom",
                "--kill-value",
                "--what",
                "--root",
                "--job-mode",
                "-p",
                "--property",
            }
        ),
    )
    verbs = [w.text for w in pos]
    if not verbs:
        return
    verb = verbs[0]
    units = [u.removesuffix(".service").removesuffix(".socket") for u in verbs[1:]]
    if verb in ("rescue", "emergency", "soft-reboot", "halt", "kexec", "exit"):
        f.deny(f"systemctl {verb} stops every service and ends every session")
    if verb == "isolate" and any(u.removesuffix(".target") in _FINAL_TARGETS for u in units):
        f.deny(f"systemctl isolate {units[0]} stops every service and ends every session")
    if verb == "default" and has_flag(args, "--force"):
        f.deny("systemctl default --force restarts into the default target, ending sessions")
    disables = verb == "disable" and has_flag(args, "--now")
    if verb in _UNIT_STOPS or disables:
        for unit in units:
            if any(
                fnmatch.fnmatchcase(unit, pat) or fnmatch.fnmatchcase(pat, unit)
                for pat in CRITICAL_UNITS
            ):  # `stop 'ssh*'` names sshd too
                f.deny(
                    f"systemctl {verb} {unit}: the machine loses logins, logging or remote access"
                )
                return


def _init(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    level = texts_of(args)[:1]
    if level and level[0] in ("1", "s", "S", "single"):
        f.raise_to("privilege", "changes the runlevel")
        f.deny(f"{base} {level[0]} drops the machine to single-user mode, stopping everything")


def _loginctl(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    verbs = texts_of(positionals(args, frozenset({"-s", "--signal", "--kill-whom", "-H", "-M"})))
    if verbs[:1] and verbs[0] in (
        "kill-user",
        "terminate-user",
        "kill-session",
        "terminate-session",
        "terminate-seat",
    ):
        f.deny(f"loginctl {verbs[0]} ends a login and every process in it")


# --------------------------------------------------------------------------- accounts


def _userdel(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    if any(t in ("-h", "--help") for t in texts):
        return
    users = positionals(
        args, frozenset({"-R", "--root", "-P", "--prefix", "--conf", "-b", "--backup-to"})
    )
    if base == "deluser" and len(users) >= 2:
        return  # `deluser USER GROUP` takes a user out of a group
    if not users:
        return
    home = (
        " and their home directory"
        if has_flag(args, "-r", "--remove", "--remove-home", "--remove-all-files")
        else ""
    )
    name = "named at run time" if users[0].dynamic else users[0].text
    f.deny(f"deletes the user account {name}{home} ({base})")


def _passwd(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if has_flag(args, "-d", "--delete"):
        who = positionals(args, frozenset({"-r", "--repository", "-R", "--root"}))
        name = who[0].text if who else "the current user"
        f.deny(f"deletes the password of {name}: anyone may log in as them (passwd -d)")


def _usermod(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    for w in option_values(args, "-p", "--password"):
        if not w.dynamic and w.text in ("", "''", '""'):
            f.deny("sets an empty password (usermod -p '')")


def _chpasswd(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    for line in (cmd.stdin_text or "").splitlines():
        user, sep, password = line.partition(":")
        if sep and not password.strip():
            f.deny(f"sets an empty password for {user} (chpasswd)")


def _dscl(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    for i, t in enumerate(texts[:-1]):
        if t in ("-delete", "delete") and texts[i + 1].startswith("/Users/"):
            f.deny(f"deletes the user account {texts[i + 1][7:]} (dscl -delete)")
        if (
            t in ("-passwd", "passwd")
            and texts[i + 1].startswith("/Users/")
            and (texts[i + 2 : i + 3] in ([""], ["''"]))
        ):
            f.deny("sets an empty password (dscl -passwd)")


def _sysadminctl(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    for w in option_values(args, "-deleteUser"):
        f.deny(f"deletes the user account {w.text} (sysadminctl -deleteUser)")


def _pw(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    if texts[:1] in (["userdel"], ["deluser"]) and texts[1:]:
        f.deny(f"deletes the user account {texts[1]} (pw userdel)")


_JUDGES: dict[str, Judge] = {
    "kill": _kill,
    "pkill": _pkill,
    "killall": _killall,
    "killall5": _killall5,
    "skill": _skill,
    "systemctl": _systemctl,
    "init": _init,
    "telinit": _init,
    "loginctl": _loginctl,
    "userdel": _userdel,
    "deluser": _userdel,
    "luserdel": _userdel,
    "passwd": _passwd,
    "usermod": _usermod,
    "chpasswd": _chpasswd,
    "dscl": _dscl,
    "sysadminctl": _sysadminctl,
    "pw": _pw,
}


# --------------------------------------------------------------------------- shredding

_SHRED_VALUES = frozenset({"-n", "--iterations", "-s", "--size", "--random-source", "--remove"})


def _shred(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """Shredding overwrites a file so that nothing, not even a backup of the disk's blocks,
    brings it back: denied, except for scratch files under the temporary directories."""
    if any(t in ("--help", "--version", "-h") for t in texts_of(args)):
        return
    f.raise_to("destructive", f"{base} overwrites files so they can never be recovered")
    for w in positionals(args, _SHRED_VALUES):
        path = ctx.path(w, cmd.cwd)
        scratch = under(path, K.TEMP_DIRS) and not ctx.inside(path) if path else False
        if path is None or path in K.PSEUDO_FILES or scratch:
            continue  # a name known only at run time asks; scratch space may be shredded
        what = path if not path.endswith("/{}") else f"the files find picks under {path[:-3]}"
        f.deny(f"shreds {what}: its content is overwritten and can never be recovered")


_JUDGES.update({"shred": _shred, "gshred": _shred, "wipe": _shred, "srm": _shred})

# `perl -pi -e CODE FILE…`, `ruby -i.bak -pe …`: -i (after switches without values) edits
# the file operands in place.
_IN_PLACE = lazy(r"^-[aclnpsTtuUwWX0-9]*i")
_CODE_VALUES = frozenset({"-e", "-E", "-M", "-m", "-I", "-r", "-x", "-C", "-d", "-D"})


def _in_place(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if not any(_IN_PLACE.match(w.text) for w in args if not w.quoted):
        return
    operands = positionals(args, _CODE_VALUES)
    if not option_values(args, "-e", "-E"):
        operands = operands[1:]  # the first operand is the script
    f.raise_to("reversible_write", f"{base} -i edits files in place")
    for w in operands:
        note_write(f, w, cmd.cwd, ctx)


_JUDGES.update({"perl": _in_place, "ruby": _in_place})


# --------------------------------------------------------------------------- entry point

JUDGES: dict[str, Judge] = {**_JUDGES, **PACKAGE_JUDGES, **TRANSFER_JUDGES}
SYSTEM_PROGRAMS: frozenset[str] = frozenset(JUDGES)


def judge_system(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> list[Facts]:
    """Catastrophic forms of a system program (see the module docstring); extra facts for
    commands it runs elsewhere (a container's command)."""
    judge = JUDGES.get(base)
    extra = judge(base, args, f, cmd, ctx) if judge else None
    if f.catastrophic:  # `killall5`, `telinit`: known now, whatever the family said
        f.reasons = [r for r in f.reasons if not r.endswith(_UNKNOWN)]
    return extra or []


_UNKNOWN = "is not a program signoff knows; its effects are unknown"
