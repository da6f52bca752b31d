"""Removing packages the system needs: libc, the init system, the shell, the package
manager itself, the kernel and its boot loader.

`apt remove some-lib` asks, like any removal; removing a package of `ESSENTIAL_PACKAGES`
(or one a glob or regex names, `apt purge 'lib*'`) is denied through every package manager
and every spelling of a removal (`apt install bash-`, `pacman -Rdd`, `rpm -e --nodeps`).
"""

from __future__ import annotations

import fnmatch
import re

from ...lazyre import lazy
from ..args import has_flag, positionals, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Word
from .transfer import Judge

# Packages whose removal leaves a machine that cannot boot, log in, run a shell or install
# anything again (Debian/Ubuntu, Fedora/RHEL, Alpine, Arch, SUSE names).
ESSENTIAL_PACKAGES: frozenset[str] = frozenset(
    {
        "libc6",
        "libc-bin",
        "glibc",
        "glibc-common",
        "musl",
        "libgcc-s1",
        "libstdc++6",
        "libcrypt1",
        "libxcrypt",
        "zlib1g",
        "zlib",
        "libssl3",
        "libselinux1",
        "libpam0g",
        "libpam-modules",
        "libpam-modules-bin",
        "libpam-runtime",
        "pam",
        "libsystemd0",
        "systemd",
        "systemd-sysv",
        "udev",
        "init",
        "init-system-helpers",
        "sysvinit",
        "sysvinit-core",
        "sysvinit-utils",
        "openrc",
        "runit",
        "bash",
        "dash",
        "busybox",
        "coreutils",
        "util-linux",
        "mount",
        "login",
        "passwd",
        "shadow",
        "shadow-utils",
        "sudo",
        "base-files",
        "base-passwd",
        "filesystem",
        "setup",
        "dpkg",
        "apt",
        "rpm",
        "yum",
        "dnf",
        "apk-tools",
        "alpine-baselayout",
        "pacman",
        "zypper",
        "libzypp",
        "grep",
        "sed",
        "tar",
        "gzip",
        "findutils",
        "diffutils",
        "debianutils",
        "hostname",
        "procps",
        "procps-ng",
        "ncurses-base",
        "ncurses-bin",
        "perl-base",
        "python3",
        "python3-minimal",
        "e2fsprogs",
        "kmod",
        "bsdutils",
        "gpgv",
        "openssh-server",
        "openssh",
        "linux",
        "linux-lts",
        "kernel",
        "kernel-core",
        "kernel-modules",
        "linux-generic",
        "grub2",
        "grub-pc",
        "grub-efi-amd64",
        "shim-signed",
        "ubuntu-minimal",
        "ubuntu-standard",
    }
)
# Families named by prefix: every kernel image and boot loader package.
ESSENTIAL_PREFIXES: tuple[str, ...] = (
    "linux-image-",
    "linux-modules-",
    "linux-generic-",
    "grub-",
    "grub2-",
    "shim-",
)
_GLOB_CHARS = lazy(r"[*?\[]")
_REGEX_CHARS = lazy(r"[\^$+|()]|\.\*")
# Names a wildcard is tried against (one member of each prefix family included).
_PROBES = (
    "libc6",
    "systemd",
    "bash",
    "coreutils",
    "glibc",
    "musl",
    *sorted(ESSENTIAL_PACKAGES),
    "linux-image-6.1.0-18-amd64",
    "grub-efi-amd64-bin",
)


def _bare(name: str) -> str:
    """`bash=5.1-6`, `libc6:amd64`, `bash/stable` -> the package name."""
    return re.split(r"[=:/]", name, maxsplit=1)[0]


def essential(name: str) -> str:
    """The essential package `name` names or matches, or ''."""
    bare = _bare(name)
    if bare in ESSENTIAL_PACKAGES or bare.startswith(ESSENTIAL_PREFIXES):
        return bare
    if _GLOB_CHARS.search(bare):
        hit = [p for p in _PROBES if fnmatch.fnmatchcase(p, bare)]
        if hit:
            return hit[0]
    if _REGEX_CHARS.search(bare):
        try:
            rx = re.compile(bare)
        except re.error:
            return ""
        hit = [p for p in _PROBES if rx.search(p)]
        if hit:
            return hit[0]
    return ""


def _deny_essential(tool: str, names: list[Word], f: Facts) -> None:
    for w in names:
        hit = essential(w.text)
        if hit:
            also = "" if hit == _bare(w.text) else f", which {w.text!r} matches"
            f.deny(
                f"removes {hit}{also}: the system needs it to boot, log in or install "
                f"anything ({tool})"
            )
            return


_APT_VALUES = frozenset(
    {"-o", "--option", "-c", "--config-file", "-t", "--target-release", "-a", "--host-architecture"}
)
_APT_REMOVE = frozenset({"remove", "purge", "autoremove", "autopurge", "erase"})


def _apt(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(args, _APT_VALUES)
    if not pos:
        return
    verb, names = pos[0].text, pos[1:]
    if verb in _APT_REMOVE:
        _deny_essential(f"{base} {verb}", [w for w in names if not w.text.endswith("+")], f)
    elif verb in ("install", "reinstall", "upgrade", "full-upgrade", "dist-upgrade"):
        # `apt install bash-`: a trailing minus removes the package instead.
        removed = [Word(w.text[:-1], w.dynamic) for w in names if w.text.endswith("-")]
        _deny_essential(f"{base} {verb} NAME-", removed, f)


def _dpkg(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if not has_flag(args, "-r", "--remove", "-P", "--purge"):
        return
    _deny_essential(base, positionals(args, frozenset({"--admindir", "--root", "--instdir"})), f)
    if any(
        t.startswith("--force-remove-essential") or t in ("--force-all",) for t in texts_of(args)
    ):
        f.deny("dpkg removes packages with --force-remove-essential")


def _rpm(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if has_flag(args, "-e", "--erase"):
        _deny_essential(f"{base} -e", positionals(args, frozenset({"--root", "--dbpath"})), f)


def _dnf(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(
        args,
        frozenset(
            {
                "-c",
                "--config",
                "--installroot",
                "--releasever",
                "--setopt",
                "--enablerepo",
                "--disablerepo",
                "-x",
                "--exclude",
            }
        ),
    )
    if pos and pos[0].text in ("remove", "erase", "autoremove", "rm", "purge", "delete"):
        _deny_essential(f"{base} {pos[0].text}", pos[1:], f)


def _pacman(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    # Operations are upper-case letters in the first cluster: -R, -Rns, -Rdd, --remove.
    removing = any(
        w.text == "--remove"
        or (w.text.startswith("-") and not w.text.startswith("--") and "R" in w.text)
        for w in args
    )
    if removing:
        _deny_essential(
            f"{base} -R", positionals(args, frozenset({"--root", "--dbpath", "-b", "--config"})), f
        )


def _apk(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(args, frozenset({"-X", "--repository", "-p", "--root", "--arch"}))
    if pos and pos[0].text in ("del", "delete", "remove"):
        _deny_essential(f"{base} {pos[0].text}", pos[1:], f)


def _zypper(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(args, frozenset({"-R", "--root", "-c", "--config"}))
    if pos and pos[0].text in ("remove", "rm"):
        _deny_essential(f"{base} {pos[0].text}", pos[1:], f)


def _emerge(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if has_flag(args, "-C", "--unmerge", "--depclean", "-c", "--prune", "-P"):
        names = [
            Word(w.text.rpartition("/")[2], w.dynamic, w.glob, w.quoted) for w in positionals(args)
        ]  # sys-apps/coreutils: category/name
        _deny_essential(f"{base} --unmerge", names, f)


def _snap(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = texts_of(positionals(args))
    if pos[:1] == ["remove"] and any(
        p in ("snapd", "core", "core18", "core20", "core22", "core24") for p in pos[1:]
    ):
        f.deny("removes the snap core runtime: every snap on the machine stops working")


PACKAGE_JUDGES: dict[str, Judge] = {
    "apt": _apt,
    "apt-get": _apt,
    "aptitude": _apt,
    "nala": _apt,
    "dpkg": _dpkg,
    "rpm": _rpm,
    "yum": _dnf,
    "dnf": _dnf,
    "dnf5": _dnf,
    "microdnf": _dnf,
    "tdnf": _dnf,
    "pacman": _pacman,
    "yay": _pacman,
    "paru": _pacman,
    "apk": _apk,
    "zypper": _zypper,
    "emerge": _emerge,
    "snap": _snap,
    "pkg": _dnf,
}
