"""Running a command contained: a stage is prepared, the chain of `bwrap.py` runs the
command in it, and when it has ended (with every process it started) its changes land in
the workspace (`land.py`). Nothing here ever runs a command uncontained: when a sandbox
cannot be made, `SandboxUnavailable` says why and the command does not run.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time

from ..exceptions import InvalidInput, SandboxUnavailable
from ..records import field, record
from . import bwrap, profile
from .land import Change, land
from .stage import landing_lock, stage_root, staged, sweep

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import IO, Any

# `exit_code` when the sandbox could not be made (the command never ran), as `env` and
# container runners use it
NOT_STARTED = 125
# keyctl(2) by architecture: the command gets a session keyring of its own (the caller's
# may hold secrets, and a new user namespace does not detach it)
_KEYCTL = {
    "x86_64": 250,
    "aarch64": 219,
    "riscv64": 219,
    "loongarch64": 219,
    "i386": 288,
    "i686": 288,
    "armv7l": 311,
    "armv6l": 311,
    "ppc64le": 271,
    "ppc64": 271,
    "s390x": 280,
}
_KEYCTL_JOIN_SESSION_KEYRING = 1

# What contained code prints when the sandbox stops it (a hint: only the code knows what
# it tried; what the landing refused is exact)
_SIGNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("write", re.compile(rb"[^\n]*Read-only file system[^\n]*")),
    (
        "network",
        re.compile(
            rb"[^\n]*(Network is unreachable|Temporary failure in name resolution"
            rb"|Name or service not known|Could not resolve host|No address associated"
            rb"|nodename nor servname)[^\n]*",
            re.IGNORECASE,
        ),
    ),
)


@record(frozen=True)
class Blocked:
    """Something the sandbox stopped: `kind` is write, network, secret (from what the
    command printed), or protected, conflict, special (a change that did not land)."""

    kind: str
    detail: str


@record(frozen=True)
class Outcome:
    exit_code: int
    started: bool  # False: the sandbox could not be made and the command did not run
    changes: tuple[Change, ...] = ()
    blocked: tuple[Blocked, ...] = ()
    removed_env: tuple[str, ...] = ()
    error: str = ""
    seconds: float = 0.0
    land_seconds: float = 0.0
    interrupted: bool = False

    @property
    def landed(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.landed)


def changed_since() -> int:
    """Now, to tell a change made in the workspace while the command ran (its ctime is
    later). The precise clock: a file changed just before has an earlier ctime, whether
    the kernel stamped it coarsely or finely (multigrain timestamps). A change made within
    the kernel's clock tick after this moment may carry a coarse ctime a little before it
    and go unseen: the window is a few milliseconds."""
    return time.time_ns()


def default_limits() -> bwrap.Limits:
    """1024 processes; half the memory (at most 16 GiB) for each process; a quarter (at
    most 4 GiB) for the private /tmp."""
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        memory = 8 << 30
    return bwrap.Limits(
        processes=1024, memory=min(memory // 2, 16 << 30), tmp_size=min(memory // 4, 4 << 30)
    )


def find_tools(path: str | None = None, *, workspace: str | None = None) -> bwrap.Tools:
    """The chain's programs on PATH (trusted ones only: `trusted.which`), or
    SandboxUnavailable naming what is missing."""
    from .trusted import which

    found: dict[str, str] = {}
    for name, package in (
        ("bwrap", "bubblewrap"),
        ("unshare", "util-linux"),
        ("prlimit", "util-linux"),
        ("mount", "mount"),
        ("sh", "dash or bash"),
    ):
        where = which(name, path, workspace=workspace)
        if where is None:
            raise SandboxUnavailable(
                f"{name} is not installed (no root-owned {name} on PATH outside the "
                f"workspace): install the package {package}"
            )
        found[name] = where
    return bwrap.Tools(**found)


@record(frozen=True)
class Plan:
    """A prepared run: its stage and the command line."""

    layout: bwrap.Layout
    mounts: bwrap.Mounts
    argv: tuple[str, ...]
    env: dict[str, str] = field(compare=False)
    removed_env: tuple[str, ...]
    hidden: tuple[str, ...]


def homes_of(env: Mapping[str, str], home: str | None, uid: int) -> list[str]:
    import pwd

    found = [home, env.get("HOME")]
    with contextlib.suppress(KeyError):
        found.append(pwd.getpwuid(uid).pw_dir)
    out: dict[str, None] = {}
    for item in found:
        if item and os.path.isabs(item):
            out.setdefault(os.path.realpath(item), None)
    return [h for h in out if h != "/"]


def prepare(
    argv: Sequence[str],
    *,
    workspace: str,
    stage: str,
    home: str | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    limits: bwrap.Limits | None = None,
    tools: bwrap.Tools | None = None,
    user: tuple[int, int] | None = None,
    hide: Sequence[str] = (),
) -> Plan:
    """The command line that runs `argv` contained, over a stage folder that exists."""
    if not argv:
        raise InvalidInput("sandbox: no command to run")
    env = dict(os.environ if env is None else env)
    uid, gid = user if user is not None else (os.getuid(), os.getgid())
    homes = homes_of(env, home, uid)
    ws = check_workspace(workspace, homes, stage)
    here = os.path.realpath(cwd or os.getcwd())
    layout = bwrap.Layout(
        tools=tools or find_tools(env.get("PATH"), workspace=ws),
        workspace=ws,
        cwd=here if profile.inside(here, ws) else ws,
        stage=stage,
        hidden_roots=(os.path.dirname(stage), *profile.signoff_state(env, homes)),
        secrets=(*bwrap.secret_paths(homes), *profile.listening_sockets(), *hide),
        uid=uid,
        gid=gid,
        limits=limits or default_limits(),
    )
    hidden = tuple(bwrap.hidden_paths(layout))
    for path in hidden:
        if profile.inside(ws, path):
            raise InvalidInput(f"sandbox: the workspace {ws} is inside {path}, which is hidden")
    kept, removed = profile.scrub_env(env)
    kept.update(TMPDIR="/tmp", SIGNOFF_SANDBOX="1")
    mounts = bwrap.file_system(layout, list(hidden))
    return Plan(
        layout=layout,
        mounts=mounts,
        argv=tuple(bwrap.command_line(layout, mounts, list(argv))),
        env=kept,
        removed_env=tuple(removed),
        hidden=hidden,
    )


def check_workspace(workspace: str, homes: Sequence[str], stage: str) -> str:
    """The workspace, resolved; refused when it cannot be contained: the root, a folder
    that holds a home folder (its start-up files run code later), or one that holds the
    stage."""
    ws = os.path.realpath(workspace)
    if not os.path.isdir(ws):
        raise InvalidInput(f"sandbox: the workspace {workspace} is not a folder")
    if ws == "/":
        raise InvalidInput("sandbox: the workspace cannot be / (everything would be writable)")
    for home in homes:
        if profile.inside(home, ws):
            raise InvalidInput(
                f"sandbox: the workspace {ws} holds the home folder {home}: its start-up "
                "files and settings would be writable; use the project's folder"
            )
    if profile.inside(os.path.realpath(stage), ws):
        raise InvalidInput(f"sandbox: the stage {stage} cannot be inside the workspace {ws}")
    return ws


# ---------------------------------------------------------------------- running


def run(
    argv: Sequence[str],
    *,
    workspace: str,
    home: str | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    limits: bwrap.Limits | None = None,
    stage_root_dir: str | None = None,
    backup: str | None = None,
    hide: Sequence[str] = (),
    user: tuple[int, int] | None = None,
    stdin: int | IO[Any] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: IO[bytes] | None = None,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> Outcome:
    """Run `argv` contained in `workspace` and land its changes. Output goes to this
    process's stdout and stderr (or the given streams); stderr passes through signoff,
    which reads in it the signs of an attempt the sandbox stopped.

    `backup`: a folder where what the changes replace or delete is kept (for a revert).
    `hide`: more paths to hide, as the credentials are (what the policy denies reading).
    `user`: run as this uid and gid (the caller must be root; the workspace and the stage
    root must be theirs): the tests attack as an unprivileged user this way."""
    started_at = time.monotonic()
    since_ns = changed_since()
    root = stage_root_dir or stage_root(env)
    if user is not None:
        os.makedirs(root, mode=0o700, exist_ok=True)
        os.chown(root, *user)
    keyctl = _KEYCTL.get(os.uname().machine)
    if keyctl is None:
        raise SandboxUnavailable(
            f"no keyctl system call number known for {os.uname().machine}: the command "
            "would share the caller's session keyring"
        )
    with staged(root) as stage:
        if user is not None:
            for path in (stage, *bwrap.stage_dirs(stage).values()):
                os.chown(path, *user)
        with contextlib.suppress(OSError):  # the overlay's root takes the upper's mode
            os.chmod(bwrap.stage_dirs(stage)["upper"], stat.S_IMODE(os.stat(workspace).st_mode))
        plan = prepare(
            argv,
            workspace=workspace,
            stage=stage,
            home=home,
            cwd=cwd,
            env=env,
            limits=limits,
            user=user,
            hide=hide,
        )
        code, watch, interrupted = _launch(plan, keyctl, user, stdin, stdout, stderr, on_start)
        if not watch.started:  # the caller forgets the kept answer (detect.forget)
            return Outcome(
                exit_code=NOT_STARTED,
                started=False,
                removed_env=plan.removed_env,
                error=watch.text().strip() or f"the sandbox exited with {code}",
                seconds=time.monotonic() - started_at,
            )
        landing = time.monotonic()
        with landing_lock(plan.layout.workspace):
            changes = land(
                bwrap.stage_dirs(stage)["upper"],
                plan.layout.workspace,
                since_ns=since_ns,
                mountpoints=plan.mounts.mountpoints,
                protected=plan.mounts.protected,
                backup=backup,
            )
        land_seconds = time.monotonic() - landing
    return Outcome(
        exit_code=code if code >= 0 else 128 - code,
        started=True,
        changes=tuple(changes),
        blocked=tuple(_blocked(changes, watch, plan.hidden)),
        removed_env=plan.removed_env,
        seconds=time.monotonic() - started_at,
        land_seconds=land_seconds,
        interrupted=interrupted,
    )


def _launch(
    plan: Plan,
    keyctl: int,
    user: tuple[int, int] | None,
    stdin: int | IO[Any] | None,
    stdout: int | IO[Any] | None,
    stderr: IO[bytes] | None,
    on_start: Callable[[subprocess.Popen[bytes]], None] | None,
) -> tuple[int, _Watch, bool]:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def before_exec() -> None:  # in the child, between fork and exec
        if libc.syscall(keyctl, _KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
            raise OSError(ctypes.get_errno(), "keyctl(JOIN_SESSION_KEYRING)")
        if user is not None:
            os.setgroups([])
            os.setgid(user[1])
            os.setuid(user[0])

    proc = subprocess.Popen(
        plan.argv,
        env=plan.env,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=before_exec,
    )
    assert proc.stderr is not None
    out = stderr if stderr is not None else getattr(sys.stderr, "buffer", None)
    watch = _Watch(proc.stderr, out)
    watch.start()
    if on_start is not None:
        on_start(proc)
    with contextlib.suppress(OSError):  # earlier runs' stages, while this one runs
        sweep(os.path.dirname(plan.layout.stage))
    interrupted = False
    with _stopping_on_terminate():
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            interrupted = True
            proc.kill()  # bwrap: --die-with-parent takes the command and its children
            code = proc.wait()
    watch.join()
    return code, watch, interrupted


@contextlib.contextmanager
def _stopping_on_terminate() -> Any:
    """SIGTERM and SIGHUP stop the command as Ctrl-C does (and its changes still land)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


class _Watch(threading.Thread):
    """Copies the command's stderr through as it comes, keeping its signs of a blocked
    attempt (and the start of it, to explain a sandbox that would not start). The
    sandbox's first words there are `bwrap.STARTED`, written just before the command is
    executed: whatever comes before is the chain's own (an error, when it never comes)."""

    def __init__(self, pipe: IO[bytes], out: IO[bytes] | None) -> None:
        super().__init__(daemon=True)
        self.pipe, self.out = pipe, out
        self.started = False
        self.head = bytearray()
        self.signs: dict[tuple[str, bytes], None] = {}

    def run(self) -> None:
        carry = b""
        fd = self.pipe.fileno()
        while chunk := os.read(fd, 65536):
            if not self.started:
                carry += chunk
                at = carry.find(bwrap.STARTED)
                if at < 0:
                    self._pass(carry[: -len(bwrap.STARTED)])
                    carry = carry[-len(bwrap.STARTED) :]
                    continue
                self.started = True
                self._pass(carry[:at])
                chunk, carry = carry[at + len(bwrap.STARTED) :], b""
            self._pass(chunk)
            text = carry + chunk
            if len(self.signs) < 50:
                for kind, pattern in _SIGNS:
                    for match in pattern.finditer(text):
                        self.signs.setdefault((kind, match.group(0).strip()[:300]), None)
            carry = text[-300:]
        if not self.started:
            self._pass(carry)
        self.pipe.close()

    def _pass(self, data: bytes) -> None:
        if not data:
            return
        if self.out is not None:
            with contextlib.suppress(OSError, ValueError):
                self.out.write(data)
                self.out.flush()
        if len(self.head) < 8192:
            self.head += data[: 8192 - len(self.head)]

    def text(self) -> str:
        return self.head.decode("utf-8", "replace")


def _blocked(changes: list[Change], watch: _Watch, hidden: tuple[str, ...]) -> list[Blocked]:
    out: list[Blocked] = []
    kinds = {"refused": "protected", "conflict": "conflict", "skipped": "special"}
    for change in changes:
        if change.action in kinds:
            out.append(Blocked(kinds[change.action], f"{change.path}: {change.detail}"))
    for kind, line in watch.signs:
        out.append(Blocked(kind, line.decode("utf-8", "replace")))
    text = watch.head
    for path in hidden:
        if path.encode() in text:
            out.append(Blocked("secret", f"{path} is hidden in the sandbox"))
    return out


__all__ = ["NOT_STARTED", "Blocked", "Outcome", "Plan", "find_tools", "prepare", "run"]
