"""Where a shell command may read, and write scratch files, without asking.

A file tool's read outside the workspace asks (a boundary no allow rule lifts); a shell
command that reads outside it asks the same way: the home directory and its dotfiles,
sibling checkouts next to the project, other repositories (`git -C ../other log`), system
logs, other users' files. Three kinds of places stay free to read, because what they hold is
the same on every machine of a kind and is not anybody's data:

- scratch space: the system temp directories (`/tmp`, `/var/tmp`, `/dev/shm`, macOS's
  per-user `/var/folders/…`); writing there is an ordinary, recorded write (notify);
- installed software: `/usr` (but not `/usr/local/etc` or `/usr/local/var`, where local
  services keep configuration and data), `/bin`, `/sbin`, `/lib*`;
- identity files that say what the machine is (`/etc/os-release`, `/proc/cpuinfo`, …),
  and the package sources that build tools unpack under the home directory
  (`~/go/pkg/mod`, `~/.cargo/registry`, …): public code, read to understand a dependency.

Paths arrive resolved (symlinks followed), so a link in the workspace or in `/tmp` that
leads into the home directory is judged where it leads.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import posixpath
import re

from ..lazyre import lazy
from . import knowledge as K
from .facts import Context, Facts, under
from .parse import Word

SCRATCH_DIRS: tuple[str, ...] = (*K.TEMP_DIRS, "/var/folders", "/private/var/folders")
SYSTEM_READS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Under /usr, but the configuration and data of locally installed services (Homebrew on
# Intel Macs keeps e.g. its databases' files in /usr/local/var).
SYSTEM_READS_EXCEPT: tuple[str, ...] = ("/usr/local/etc", "/usr/local/var")
IDENTITY_FILES: frozenset[str] = frozenset(
    {
        "/etc/os-release",
        "/etc/lsb-release",
        "/etc/debian_version",
        "/etc/redhat-release",
        "/etc/fedora-release",
        "/etc/alpine-release",
        "/etc/arch-release",
        "/etc/system-release",
        "/etc/issue",
        "/etc/hostname",
        "/etc/timezone",
        "/etc/localtime",
        # How the machine resolves names and services: what a network problem is debugged with.
        "/etc/hosts",
        "/etc/resolv.conf",
        "/etc/nsswitch.conf",
        "/etc/services",
        "/etc/protocols",
        "/etc/shells",
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/version",
        "/proc/loadavg",
        "/proc/uptime",
        "/System/Library/CoreServices/SystemVersion.plist",
    }
)
# The command's own input and terminal (`cat /dev/fd/0`, `diff <(a) <(b)`).
_OWN_DESCRIPTORS = ("/dev/fd/", "/proc/self/fd/", "/dev/pts/")
# Relative to home: where package managers unpack the public sources they download.
HOME_PACKAGE_SOURCES: tuple[str, ...] = (
    "go/pkg/mod",
    ".cargo/registry",
    ".cargo/git",
    ".rustup/toolchains",
    ".m2/repository",
    ".gradle/caches",
    ".pyenv/versions",
    ".nvm/versions",
)
# Directories whose names alone are no one's data: listing them (`ls -la /`, `ls /dev`,
# `find / -maxdepth 1`) is free; reading below them is judged path by path.
LISTABLE: frozenset[str] = frozenset(
    {"/", "/dev", "/opt", "/mnt", "/media", "/Volumes", "/Applications"}
)
# Programs whose path operands name a directory to go to, or whose names they compute or
# whose metadata they show (like `test -e`), not something whose content they read.
_NOT_READING = frozenset(
    {"cd", "pushd", "popd", "dirname", "basename", "realpath", "readlink", "stat"}
)
# Programs that read the system's logs without naming a file.
_SYSTEM_LOG_READERS = frozenset({"journalctl"})
# Programs that read the current directory when no path is given.
_LIST_CWD = frozenset(
    {
        "ls",
        "dir",
        "vdir",
        "tree",
        "du",
        "exa",
        "eza",
        "lsd",
        "fd",
        "fdfind",
        "rg",
        "ag",
        "ack",
        "ack-grep",
        "ugrep",
    }
)
_GREP = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_GREP_RECURSIVE = frozenset(
    {"-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse", "-drecurse"}
)


def free_read(path: str, ctx: Context) -> bool:
    """Whether reading `path` (absolute, resolved) needs nobody's approval."""
    if ctx.inside(path) or path in IDENTITY_FILES or path.startswith(_OWN_DESCRIPTORS):
        return True
    if ctx.read_roots and under(path, ctx.read_roots):
        return True  # `additional_directories`: readable by the file tools, so by the shell
    rel = ctx.under_home(path)
    if rel is not None:  # before the temp directories: a home may live under /tmp (tests, CI)
        return bool(rel) and under(rel, HOME_PACKAGE_SOURCES)
    if under(path, SYSTEM_READS):
        return not under(path, SYSTEM_READS_EXCEPT)
    return under(path, SCRATCH_DIRS) and not _beside_workspace(path, ctx)


def scratch(path: str, ctx: Context, *, content: bool = True) -> bool:
    """A path in the temp directories. The directory itself counts only for what is put
    into it (`cp a.txt /tmp/`): changing its mode or owner (`chmod 700 /tmp`) changes it
    for every user of the machine."""
    return (
        under(path, SCRATCH_DIRS)
        and (content or path not in SCRATCH_DIRS)
        and ctx.under_home(path) is None
        and not _beside_workspace(path, ctx)
    )


def _beside_workspace(path: str, ctx: Context) -> bool:
    """A project kept in a temp directory has neighbours there (`/tmp/work/app` beside
    `/tmp/work/lib`): what is in the folder that holds the workspace is another project's,
    not scratch space."""
    parent = posixpath.dirname(ctx.workspace.rstrip("/"))
    return under(parent, SCRATCH_DIRS) and (path == parent or path.startswith(parent + "/"))


def note_outside_read(f: Facts, path: str, ctx: Context) -> None:
    """Ask, like a file tool does, when a command reads outside the workspace and the
    free places; like a file tool's boundary, no allow rule lifts it."""
    base = posixpath.basename(f.argv[0]) if f.argv else ""
    if (
        free_read(path, ctx)
        or base in _NOT_READING
        or (path in LISTABLE and _lists_only(base, f.argv[1:]))
    ):
        return
    rel = ctx.under_home(path)
    if rel == "":
        reason = f"reads the home directory ({path}), outside the workspace"
    elif rel is not None:
        reason = f"reads {path} in the home directory, outside the workspace"
    else:
        reason = f"reads {path}, outside the workspace"
    f.ask(reason)
    f.boundaries.append(reason)


def _lists_only(base: str, args: list[str]) -> bool:
    """`ls` without -R, `find` no deeper than the directory's own entries."""
    if base in ("ls", "dir", "vdir"):
        return not any(
            a == "--recursive" or (a.startswith("-") and not a.startswith("--") and "R" in a)
            for a in args
        )
    if base == "find":
        return any(a == "-maxdepth" and b in ("0", "1") for a, b in itertools.pairwise(args))
    return False


def within_bounds(f: Facts, ctx: Context) -> bool:
    """Every write in the workspace or scratch space, every read in a free place."""
    return all(ctx.inside(p) or scratch(p, ctx) for p in f.writes) and all(
        free_read(p, ctx) for p in f.reads
    )


def note_implicit_reads(
    base: str, texts: list[str], named: bool, f: Facts, cwd: str | None, ctx: Context
) -> None:
    """What a read-only program reads without naming it: the current directory when no
    path is `named` (`cd ~ && ls`, `rg foo` in another checkout), the system journal."""
    if base in _SYSTEM_LOG_READERS:
        reason = f"{base} reads the system logs, outside the workspace"
        f.ask(reason)
        f.boundaries.append(reason)
    elif not named and _reads_cwd(base, texts):
        note_cwd_read(f, cwd, ctx)


def _reads_cwd(base: str, texts: list[str]) -> bool:
    """Whether a program given no path reads the current directory (`ls`, `rg foo`,
    `grep -r foo`); plain grep reads its input instead."""
    if base in _LIST_CWD:
        return True
    return base in _GREP and any(
        t in _GREP_RECURSIVE
        or (t.startswith("-") and not t.startswith("--") and ("r" in t[1:] or "R" in t[1:]))
        for t in texts
    )


def note_cwd_read(f: Facts, cwd: str | None, ctx: Context) -> None:
    """The command reads its working directory (`cd ~ && ls`, `git log` in another
    repository): judged like the path `.`."""
    if cwd is None:  # a directory only known at run time: its reads are unknown, as for `cat $x`
        f.unknown_reads = True
        return
    path = ctx.path(Word(cwd), None)
    if path is not None and path not in f.reads:
        f.reads.append(path)
        note_outside_read(f, path, ctx)


__all__ = [
    "free_read",
    "grep_trees",
    "note_cwd_read",
    "note_implicit_reads",
    "note_outside_read",
    "revoke_hidden_skip",
    "rg_trees",
    "scratch",
    "within_bounds",
]


# --------------------------------------------------------------------------- rg's hidden skip

# ripgrep leaves out hidden files and directories (`.signoff`, `.env`, `.git`) unless told
# otherwise: its tree is then `ROOT/*` in bash's sense (a `*` never matches a leading dot),
# so a search of the workspace does not read signoff's own state. What tells it otherwise:
_RG_LONG_SHOWS = ("--hidden", "--follow", "--ignore-file", "--unrestricted")
_RG_GLOBS = ("-g", "--glob", "--iglob")
_IGNORE_NAMES = (".ignore", ".rgignore", ".gitignore")
_NEGATION = re.compile(rb"^[ \t]*!", re.MULTILINE)  # bytes: compiled at once (cheap)
# A cluster of short options whose value-taking option is not alone: `-ng GLOB`, `-nig*`.
_RG_VALUE_LAST = lazy(r"^-[^-\s]+[ABCEefgjMmrTt]")


def rg_trees(
    roots: list[str], args: list[str], cwd: str | None, cmd_assigns: bool, ctx: Context
) -> list[str]:
    """The trees `rg ARGS` reads below `roots`: `ROOT/*` when it skips hidden entries."""
    if cwd is not None and any(_RG_VALUE_LAST.match(a) for a in args):
        # `rg -ng '*' x`: the glob is -g's value, x the pattern and the search runs in the
        # current directory; the word-level split saw a pattern `*` and a path x.
        roots = [*roots, ctx.resolve(cwd)]
    if cmd_assigns or "RIPGREP_CONFIG_PATH" in os.environ or not _rg_skips_hidden(args):
        return roots  # a config file (or `-.` in it) may show hidden files
    return [f"{root.rstrip('/')}/*" if not _whitelisted(root, ctx) else root for root in roots]


def _rg_skips_hidden(args: list[str]) -> bool:
    unrestricted = 0
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg.startswith("--"):
            name, _, value = arg.partition("=")
            if name in _RG_LONG_SHOWS[:3]:
                return False
            unrestricted += name == "--unrestricted"
            if name in _RG_GLOBS:  # a glob that matches a hidden name brings it back
                value = value or (args[i + 1] if i + 1 < len(args) else "")
                if not value.startswith("!"):
                    return False
        elif arg.startswith("-") and len(arg) > 1:
            # `-.` is --hidden, `-L` --follow, each `u` one level of --unrestricted (-uu
            # shows hidden files); a value glued to a short option only makes this stricter.
            if "." in arg or "L" in arg:
                return False
            unrestricted += arg.count("u")
            if "g" in arg:
                value = arg[arg.index("g") + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                if not value.startswith("!"):
                    return False
    return unrestricted < 2


def _whitelisted(root: str, ctx: Context) -> bool:
    """An ignore file of `root` or above it with a `!pattern` line: ripgrep searches what
    such a line names, hidden or not."""
    folder = root
    while True:
        for name in (*_IGNORE_NAMES, ".git/info/exclude"):
            data = ctx.reader(posixpath.join(folder, name))
            if data and _NEGATION.search(data):
                return True
        if folder in ("/", ""):
            return False
        folder = posixpath.dirname(folder)


def revoke_hidden_skip(facts: list[Facts]) -> None:
    """A command line that writes an ignore file (`echo '!.signoff' > .ignore; rg x`), a
    whole directory (`git checkout`, `cp -r`), or paths known only at run time, may
    whitelist hidden entries before ripgrep runs: its trees are whole directories again."""
    credited = [f for f in facts if any(t.endswith("/*") for t in f.trees)]
    if not credited:
        return
    roots = {t[:-2] or "/" for f in credited for t in f.trees if t.endswith("/*")}
    for f in facts:
        if f.unknown_paths or any(
            posixpath.basename(w) in _IGNORE_NAMES
            or w.endswith("/info/exclude")
            or any(r == w or r.startswith(w.rstrip("/") + "/") for r in roots)
            for w in (*f.writes, *f.tree_writes)
        ):
            for g in credited:
                g.trees[:] = [t[:-2] or "/" if t.endswith("/*") else t for t in g.trees]
            return


# --------------------------------------------------------------------------- grep --exclude-dir

_STATE_DIR = ".signoff"


def grep_trees(roots: list[str], args: list[str]) -> list[str]:
    """`grep -r --exclude-dir=.signoff`: every entry of each root but `.signoff`, spelled as
    globs (`ROOT/*`, `ROOT/.[!s]*`, …) that the policy judges like any tree. Not with -R,
    which follows links: a link to `.signoff` under another name would be read."""
    if any(
        a == "--dereference-recursive"
        or (a.startswith("-") and not a.startswith("--") and "R" in a)
        for a in args
    ):
        return roots
    values = [b for a, b in itertools.pairwise(args) if a == "--exclude-dir"]
    values += [a.partition("=")[2] for a in args if a.startswith("--exclude-dir=")]
    if not any(fnmatch.fnmatchcase(_STATE_DIR, v) for v in values):
        return roots
    return [t for root in roots for t in _all_but(root.rstrip("/"), _STATE_DIR)]


def _all_but(root: str, name: str) -> list[str]:
    """Globs for every entry of `root` except `name` (which starts with a dot)."""
    out = [f"{root}/*"]  # names without a leading dot
    for k in range(1, len(name)):
        out.append(f"{root}/{name[:k]}[!{name[k]}]*")  # differs at position k
        if k > 1:
            out.append(f"{root}/{name[:k]}")  # a proper prefix of the name
    out.append(f"{root}/{name}?*")  # longer names
    return out
