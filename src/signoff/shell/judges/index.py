"""Which programs the judges that are called for every command look at, known without
importing them.

`programs.judge_program` asks two judges about any program: `queries.judge_local` (local
queries, dry runs, formatters, binary inspectors) and `system.judge_system` (catastrophic
forms of system programs). Loading them, and the families they import (databases, SQL,
packages, transfers, archives), for every `git status` would be most of what judging it
costs in a fresh process. So the dispatch reads these names first and imports a judge only
for a program it knows.

The names are written out here, and `tests/test_startup.py` holds them equal to the
judges' own tables: a program added to a judge and not here would go unjudged by it, so the
test fails instead (`missing_from_index` says which). The other families are dispatched by
the tables in `shell.knowledge` and load on first use the same way.
"""

from __future__ import annotations

# `queries.judge_local` may judge these (its own tables, `tools.TOOLS`, cargo/terraform
# fmt, ruff, the binary inspectors, ldd); for any other program it returns False.
LOCAL_QUERIES: frozenset[str] = frozenset(
    {
        "addr2line",
        "black",
        "c++filt",
        "cargo",
        "clang-format",
        "curl",
        "docker",
        "dwarfdump",
        "elfedit-dump",
        "eslint",
        "gmake",
        "go",
        "gofmt",
        "goimports",
        "helm",
        "isort",
        "kubectl",
        "ldd",
        "llvm-dwarfdump",
        "llvm-nm",
        "llvm-objdump",
        "llvm-readelf",
        "llvm-readobj",
        "llvm-size",
        "make",
        "mariadb",
        "mypy",
        "mysql",
        "nm",
        "npm",
        "objdump",
        "otool",
        "pnpm",
        "podman",
        "prettier",
        "psql",
        "readelf",
        "rmdir",
        "rsync",
        "ruff",
        "rustfmt",
        "shfmt",
        "size",
        "sqlite3",
        "terraform",
        "tofu",
        "yarn",
    }
)

# `system.judge_system` looks at these (`system.JUDGES`: its own, packages', transfers').
SYSTEM_PROGRAMS: frozenset[str] = frozenset(
    {
        "apk",
        "apt",
        "apt-get",
        "aptitude",
        "aws",
        "az",
        "chpasswd",
        "croc",
        "deluser",
        "dnf",
        "dnf5",
        "docker",
        "dpkg",
        "dscl",
        "emerge",
        "ffsend",
        "finch",
        "gcloud",
        "gh",
        "gshred",
        "gsutil",
        "http",
        "httpie",
        "https",
        "init",
        "kill",
        "killall",
        "killall5",
        "loginctl",
        "luserdel",
        "mail",
        "mailx",
        "microdnf",
        "mutt",
        "nala",
        "neomutt",
        "nerdctl",
        "pacman",
        "paru",
        "passwd",
        "perl",
        "pkg",
        "pkill",
        "podman",
        "pw",
        "rclone",
        "rpm",
        "rsync",
        "ruby",
        "s-nail",
        "scp",
        "sftp",
        "shred",
        "skill",
        "snap",
        "srm",
        "sysadminctl",
        "systemctl",
        "tdnf",
        "telinit",
        "userdel",
        "usermod",
        "wipe",
        "wormhole",
        "xh",
        "xhs",
        "yay",
        "yum",
        "zypper",
    }
)


def missing_from_index() -> dict[str, set[str]]:
    """Programs a judge knows that this index does not send to it (empty when in step).
    Imports the judges: for tests and diagnostics, never on the judging path."""
    from . import queries, system

    gaps = {
        "queries.judge_local": set(queries.local_programs()) - LOCAL_QUERIES,
        "system.judge_system": set(system.JUDGES) - SYSTEM_PROGRAMS,
    }
    return {judge: names for judge, names in gaps.items() if names}


__all__ = ["LOCAL_QUERIES", "SYSTEM_PROGRAMS", "missing_from_index"]
