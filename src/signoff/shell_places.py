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

import itertools
import posixpath

from . import shell_knowledge as K
from .shell_facts import Context, Facts, under
from .shell_parse import Word

SCRATCH_DIRS: tuple[str, ...] = (*K.TEMP_DIRS, "/var/folders", "/private/var/folders")
SYSTEM_READS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                 "/libx32")
# Under /usr, but the configuration and data of locally installed services (Homebrew on
# Intel Macs keeps e.g. its databases' files in /usr/local/var).
SYSTEM_READS_EXCEPT: tuple[str, ...] = ("/usr/local/etc", "/usr/local/var")
IDENTITY_FILES: frozenset[str] = frozenset({
    "/etc/os-release", "/etc/lsb-release", "/etc/debian_version", "/etc/redhat-release",
    "/etc/fedora-release", "/etc/alpine-release", "/etc/arch-release", "/etc/system-release",
    "/etc/issue", "/etc/hostname", "/etc/timezone", "/etc/localtime",
    "/proc/cpuinfo", "/proc/meminfo", "/proc/version", "/proc/loadavg", "/proc/uptime",
    "/System/Library/CoreServices/SystemVersion.plist",
})
# Relative to home: where package managers unpack the public sources they download.
HOME_PACKAGE_SOURCES: tuple[str, ...] = (
    "go/pkg/mod", ".cargo/registry", ".cargo/git", ".rustup/toolchains", ".m2/repository",
    ".gradle/caches", ".pyenv/versions", ".nvm/versions",
)
# Directories whose names alone are no one's data: listing them (`ls -la /`, `ls /dev`,
# `find / -maxdepth 1`) is free; reading below them is judged path by path.
LISTABLE: frozenset[str] = frozenset({"/", "/dev", "/opt", "/mnt", "/media", "/Volumes",
                                      "/Applications"})
# Programs whose path operands name a directory to go to, or whose names they compute or
# whose metadata they show (like `test -e`), not something whose content they read.
_NOT_READING = frozenset({"cd", "pushd", "popd", "dirname", "basename", "realpath", "readlink",
                          "stat"})
# Programs that read the system's logs without naming a file.
_SYSTEM_LOG_READERS = frozenset({"journalctl"})
# Programs that read the current directory when no path is given.
_LIST_CWD = frozenset({"ls", "dir", "vdir", "tree", "du", "exa", "eza", "lsd", "fd", "fdfind",
                       "rg", "ag", "ack", "ack-grep", "ugrep"})
_GREP = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_GREP_RECURSIVE = frozenset({"-r", "-R", "--recursive", "--dereference-recursive",
                             "--directories=recurse", "-drecurse"})


def free_read(path: str, ctx: Context) -> bool:
    """Whether reading `path` (absolute, resolved) needs nobody's approval."""
    if ctx.inside(path) or path in IDENTITY_FILES:
        return True
    rel = ctx.under_home(path)
    if rel is not None:  # before the temp directories: a home may live under /tmp (tests, CI)
        return bool(rel) and under(rel, HOME_PACKAGE_SOURCES)
    if under(path, SYSTEM_READS):
        return not under(path, SYSTEM_READS_EXCEPT)
    return under(path, SCRATCH_DIRS)


def scratch(path: str, ctx: Context, *, content: bool = True) -> bool:
    """A path in the temp directories. The directory itself counts only for what is put
    into it (`cp a.txt /tmp/`): changing its mode or owner (`chmod 700 /tmp`) changes it
    for every user of the machine."""
    return (under(path, SCRATCH_DIRS) and (content or path not in SCRATCH_DIRS)
            and ctx.under_home(path) is None)


def note_outside_read(f: Facts, path: str, ctx: Context) -> None:
    """Ask, like a file tool does, when a command reads outside the workspace and the
    free places; like a file tool's boundary, no allow rule lifts it."""
    base = posixpath.basename(f.argv[0]) if f.argv else ""
    if free_read(path, ctx) or base in _NOT_READING or (
            path in LISTABLE and _lists_only(base, f.argv[1:])):
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
        return not any(a == "--recursive" or (a.startswith("-") and not a.startswith("--")
                                              and "R" in a) for a in args)
    if base == "find":
        return any(a == "-maxdepth" and b in ("0", "1") for a, b in itertools.pairwise(args))
    return False


def within_bounds(f: Facts, ctx: Context) -> bool:
    """Every write in the workspace or scratch space, every read in a free place."""
    return all(ctx.inside(p) or scratch(p, ctx) for p in f.writes) and all(
        free_read(p, ctx) for p in f.reads)


def note_implicit_reads(base: str, texts: list[str], named: bool, f: Facts,
                        cwd: str | None, ctx: Context) -> None:
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
        t in _GREP_RECURSIVE or (t.startswith("-") and not t.startswith("--")
                                 and ("r" in t[1:] or "R" in t[1:]))
        for t in texts)


def note_cwd_read(f: Facts, cwd: str | None, ctx: Context) -> None:
    """The command reads its working directory (`cd ~ && ls`, `git log` in another
    repository): judged like the path `.`."""
    if cwd is None:
        return  # a directory only known at run time: its reads are unknown, as for `cat $x`
    path = ctx.path(Word(cwd), None)
    if path is not None and path not in f.reads:
        f.reads.append(path)
        note_outside_read(f, path, ctx)


__all__ = ["free_read", "note_cwd_read", "note_implicit_reads", "note_outside_read", "scratch",
           "within_bounds"]
