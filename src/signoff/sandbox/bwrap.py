"""The command line that runs a command contained on Linux.

Four programs, each replacing the one before (`exec`), so the whole chain is one process
until bubblewrap starts the command:

1. `unshare -Urm` (util-linux): a user and mount namespace of our own, where we are root
   without being root anywhere else;
2. `sh -c ENTER`: there, the workspace is covered by an overlay whose upper directory is
   the run's stage (`mount -t overlay`, allowed to an unprivileged user since Linux 5.11);
   every write of the command lands in the stage, not in the workspace;
3. `prlimit`: process and memory limits, set inside the namespace so that they count the
   command's processes only (a limit set before it would also count every other process
   of the user);
4. `bwrap` (bubblewrap): a second user namespace without capabilities and where no further
   namespace can be made, its own PID, network (loopback only), IPC and UTS namespaces, a
   new session (no terminal to inject keystrokes into), the root file system read-only,
   private `/tmp`, `/var/tmp` and `/run`, the overlaid workspace writable, signoff's state,
   git's hooks and config and the coding clients' settings read-only or hidden, and the
   credentials of the home directory hidden.
"""

from __future__ import annotations

import os

from ..plainpath import joined
from ..records import record
from . import profile

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    pass

# Run by `sh` in the namespace of step 1. The paths come as arguments, never inside the
# script, and the overlay's options name no path of the user's: the workspace is given as
# an open descriptor (/proc/self/fd/3) and the stage's folders relative to it, so that no
# workspace path is ever parsed as a mount option (a comma or colon in a name would be).
# metacopy stays off and redirect_dir makes no redirects ("nofollow"; "off" would follow
# them, which userxattr refuses): the stage must hold whole files and whole folders, to
# land as they are. `volatile` skips the overlay's fsync of each file it copies up: a
# stage does not outlive its run (a crash loses it either way), and the syncs would cost
# more than the run.
ENTER = """set -eu
mount=$1; stage=$2; workspace=$3; shift 3
cd "$stage"
exec 3<"$workspace"
"$mount" -t overlay -o lowerdir=/proc/self/fd/3,upperdir=upper,workdir=work,userxattr,\
index=off,metacopy=off,redirect_dir=nofollow,volatile overlay merged
exec 3<&-
"$mount" --bind merged "$workspace"
exec "$@"
"""

# Run in the sandbox just before the command: its first bytes on stderr say that the
# sandbox is made and the command is starting (`launch` takes them out of the output).
# Anything the chain writes before them is its own error; without them the command never
# ran.
STARTED = b"\036signoff-sandbox-started\036"
START = "printf '\\036signoff-sandbox-started\\036' >&2; exec \"$@\""

# private in the sandbox: nothing written there is seen outside, no socket there is reached
PRIVATE_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp", "/run")


@record(frozen=True)
class Tools:
    """Absolute paths of the programs of the chain."""

    bwrap: str
    unshare: str
    prlimit: str
    sh: str
    mount: str


@record(frozen=True)
class Limits:
    processes: int = 1024  # RLIMIT_NPROC, counted in the sandbox's user namespace
    memory: int = 8 << 30  # RLIMIT_DATA of each process (heap and private mappings)
    tmp_size: int = 2 << 30  # the private /tmp


@record(frozen=True)
class Layout:
    """Everything the command line is made of (all paths absolute and resolved)."""

    tools: Tools
    workspace: str
    cwd: str
    stage: str  # holds upper/, work/, merged/, empty/ and empty-file
    hidden_roots: tuple[str, ...]  # signoff's state root and others to hide whole
    secrets: tuple[str, ...]  # paths to hide when they exist
    uid: int
    gid: int
    limits: Limits


@record(frozen=True)
class Mounts:
    """The bwrap options for the file system; the workspace paths that had to be created in
    the overlay to be mounted on (they never land); and the workspace paths that are
    protected because a protected name leads there (a `.git/hooks` that is a link to a
    tracked folder, `core.hooksPath`): changes under them never land either."""

    options: tuple[str, ...]
    mountpoints: frozenset[str]
    protected: frozenset[str]


def stage_dirs(stage: str) -> dict[str, str]:
    return {name: joined(stage, name) for name in ("upper", "work", "merged", "empty")}


def empty_file(stage: str) -> str:
    return joined(stage, "empty-file")


def command_line(layout: Layout, mounts: Mounts, argv: list[str]) -> list[str]:
    """The whole chain, ready for `subprocess` (`mounts`: `file_system(layout)`)."""
    tools, limits = layout.tools, layout.limits
    return [
        tools.unshare,
        "--user",
        "--map-root-user",
        "--mount",
        "--propagation",
        "private",
        "--",
        tools.sh,
        "-c",
        ENTER,
        "signoff-sandbox",
        tools.mount,
        layout.stage,
        layout.workspace,
        tools.prlimit,
        f"--nproc={limits.processes}",
        f"--data={limits.memory}",
        "--core=0",
        "--",
        tools.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        str(layout.uid),
        "--gid",
        str(layout.gid),
        *mounts.options,
        "--chdir",
        layout.cwd,
        "--",
        tools.sh,
        "-c",
        START,
        "signoff-sandbox",
        *argv,
    ]


def file_system(layout: Layout, hidden: list[str] | None = None) -> Mounts:
    """The file system's mounts; `hidden` is `hidden_paths(layout)` when known."""
    ws = layout.workspace
    empty_dir, empty = stage_dirs(layout.stage)["empty"], empty_file(layout.stage)
    opts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    opts += ["--size", str(layout.limits.tmp_size), "--tmpfs", "/tmp"]
    for private in PRIVATE_DIRS[1:]:
        opts += ["--tmpfs", private]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        opts += ["--tmpfs", "/var/run"]
    opts += ["--bind", ws, ws]
    inside = _Covers(ws, empty_dir, empty)
    for name in profile.WORKSPACE_HIDDEN_DIRS:
        inside.cover(joined(ws, name), hide=True)
    for name in profile.WORKSPACE_READONLY_DIRS:
        inside.cover(joined(ws, name))
    for name in profile.WORKSPACE_READONLY_FILES:
        inside.cover(joined(ws, name), directory=False)
    for git_dir in profile.git_dirs(ws):
        for name in (*profile.GIT_CODE_DIRS, *profile.GIT_CODE_FILES):
            # refused on landing by name under `.git`; a git folder reached through a
            # `.git` file or link has another name
            inside.protected.add(os.path.relpath(joined(git_dir, name), ws))
        for name in profile.GIT_CODE_DIRS:
            inside.cover(joined(git_dir, name))
        for name in profile.GIT_CODE_FILES:
            inside.cover(joined(git_dir, name), directory=False)
        hooks = profile.hooks_path(git_dir, ws)
        if hooks is not None and profile.inside(hooks, ws) and hooks != ws:
            inside.protected.add(os.path.relpath(hooks, ws))
            inside.cover(hooks)
    opts += inside.options
    for path in hidden_paths(layout) if hidden is None else hidden:
        opts += ["--ro-bind", empty_dir if os.path.isdir(path) else empty, path]
    return Mounts(tuple(opts), frozenset(inside.mountpoints), frozenset(inside.protected))


class _Covers:
    """The mounts over protected paths inside the workspace."""

    def __init__(self, workspace: str, empty_dir: str, empty_file: str) -> None:
        self.ws, self.empty_dir, self.empty_file = workspace, empty_dir, empty_file
        self.options: list[str] = []
        self.mountpoints: set[str] = set()
        self.protected: set[str] = set()

    def cover(self, path: str, *, hide: bool = False, directory: bool = True) -> None:
        """Mount over `path`: itself read-only; an empty read-only directory or file when
        hiding it, or when a directory is absent (then contained code cannot create it).
        A link is followed: what it leads to inside the workspace is protected too."""
        if os.path.islink(path):
            real = os.path.realpath(path)
            if not profile.inside(real, self.ws):
                return  # outside the workspace: read-only (or hidden) already
            self.protected.add(os.path.relpath(real, self.ws))
            path = real
        if os.path.lexists(path):
            source = path
            if hide:
                source = self.empty_dir if os.path.isdir(path) else self.empty_file
        elif directory:
            self.mountpoints.add(os.path.relpath(path, self.ws))
            source = self.empty_dir
        else:
            return  # an absent file: a change there is refused when the stage lands
        self.options += ["--ro-bind", source, path]


def hidden_paths(layout: Layout) -> list[str]:
    """The secrets and signoff state that exist, resolved, outside what is private anyway
    (each is hidden by mounting an empty read-only file or directory over it)."""
    out: dict[str, None] = {}
    for path in (*layout.hidden_roots, *layout.secrets):
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        private = any(profile.inside(real, p) for p in PRIVATE_DIRS)
        if not os.path.exists(real) or (private and not profile.inside(real, layout.workspace)):
            continue  # (a workspace kept in /tmp is bound back in: what it holds is not private)
        out.setdefault(real, None)
    # an outer path hides all below it: the inner mounts would be hidden with it
    kept = sorted(out)
    return [p for p in kept if not any(q != p and profile.inside(p, q) for q in kept)]


def secret_paths(homes: list[str]) -> tuple[str, ...]:
    return (*profile.home_secrets(homes), *profile.SYSTEM_SECRETS)


__all__ = ["ENTER", "Layout", "Limits", "Mounts", "Tools", "command_line", "file_system"]
