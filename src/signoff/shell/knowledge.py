"""What signoff knows about shell programs, as data in one place.

The analyzer in `shell.py` reads these tables; adding a program or a flag should only
ever need an edit here. Sets are keyed by the program's basename (after wrappers are
stripped and a trusted directory such as /usr/bin is removed).
"""

from __future__ import annotations

import itertools
import re

from ..lazyre import lazy

# --------------------------------------------------------------------------- read-only

# Programs that only read (files, the system's state) whatever their arguments, except for
# the flags listed in WRITE_FLAGS / EXEC_FLAGS below.
READ_ONLY: frozenset[str] = frozenset(
    [
        "ls",
        "ll",
        "command",
        "dir",
        "vdir",
        "cat",
        "tac",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "zgrep",
        "rg",
        "ag",
        "ack",
        "find",
        "fd",
        "fdfind",
        "pwd",
        "echo",
        "printf",
        "true",
        "false",
        "test",
        "[",
        "[[",
        "which",
        "whereis",
        "type",
        "file",
        "stat",
        "du",
        "df",
        "tree",
        "less",
        "more",
        "most",
        "diff",
        "diff3",
        "cmp",
        "comm",
        "cut",
        "sort",
        "uniq",
        "tr",
        "nl",
        "rev",
        "seq",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "cal",
        "uname",
        "hostname",
        "whoami",
        "id",
        "groups",
        "printenv",
        "ps",
        "pgrep",
        "pstree",
        "uptime",
        "free",
        "lsblk",
        "lscpu",
        "lsusb",
        "lspci",
        "lsof",
        "ss",
        "netstat",
        "jq",
        "yq",
        "column",
        "fold",
        "fmt",
        "expand",
        "unexpand",
        "od",
        "hexdump",
        "xxd",
        "strings",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "base32",
        "base64",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "sed",
        "paste",
        "join",
        "numfmt",
        "expr",
        "tput",
        "locale",
        "getconf",
        "nproc",
        "arch",
        "tty",
        "sleep",
        "wait",
        "hash",
        "help",
        "man",
        "info",
        "apropos",
        "whatis",
        "dmesg",
        "last",
        "w",
        "who",
        "users",
        "env",
        "vmstat",
        "iostat",
        "top",
        "htop",
        "nvidia-smi",
        "journalctl",
        "zcat",
        "bzcat",
        "xzcat",
        "zless",
        "zmore",
        "gzcat",
        "shasum",
        "look",
        "cd",
        "pushd",
        "popd",
        "dirs",
        "jobs",
        "fg",
        "bg",
        "history",
        "alias",
        "unalias",
        "set",
        "unset",
        "shopt",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "let",
        "read",
        ":",
        "getopts",
        "shift",
        "return",
        "exit",
        "break",
        "continue",
        "umask",
        "ulimit",
        "yes",
        "colordiff",
        "icdiff",
        "delta",
        "bat",
        "batcat",
        "exa",
        "eza",
        "lsd",
        "duf",
        "dust",
        "ncdu",
        "glow",
        "tokei",
        "cloc",
        "scc",
        "xdg-user-dir",
        "sw_vers",
        "mdfind",
        "mdls",
        "tldr",
    ]
)

# Programs that print without reading any file argument: their arguments are never paths.
NO_PATH_ARGS: frozenset[str] = frozenset(
    [
        "echo",
        "printf",
        "true",
        "false",
        "sleep",
        "seq",
        "expr",
        "date",
        "cal",
        "uname",
        "whoami",
        "id",
        "groups",
        "nproc",
        "arch",
        "tput",
        "locale",
        "getconf",
        "yes",
        ":",
        "help",
        "type",
        "which",
        "whereis",
        "hash",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "let",
        "unset",
        "set",
        "shopt",
        "alias",
        "unalias",
        "trap",
        "umask",
        "ulimit",
        "return",
        "exit",
        "break",
        "continue",
        "shift",
        "getopts",
        "jobs",
        "fg",
        "bg",
        "wait",
        "dirs",
        "history",
        "command",
        "test",
        "[",
        "[[",
        "man",
        "info",
        "apropos",
        "whatis",
        "tldr",
        "pgrep",
        "ps",
    ]
)

# Flags that make an otherwise read-only program write files (value: what they write).
WRITE_FLAGS: dict[str, frozenset[str]] = {
    "sort": frozenset({"-o", "--output"}),
    "find": frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"}),
    "sed": frozenset({"-i", "--in-place"}),
    "yq": frozenset({"-i", "--inplace"}),
    "tree": frozenset({"-o"}),
    "base64": frozenset({"-o", "--output"}),
    "jq": frozenset(),
    "awk": frozenset({"-i", "--include"}),
    "gawk": frozenset({"-i", "--include"}),
    "date": frozenset({"-s", "--set"}),
    "hostname": frozenset({"-F", "--file", "-b", "--boot"}),
    "ss": frozenset({"-K", "--kill"}),
}

# Flags that make an otherwise read-only program run other programs or arbitrary code.
EXEC_FLAGS: dict[str, frozenset[str]] = {
    "find": frozenset({"-exec", "-execdir", "-ok", "-okdir"}),
    "fd": frozenset({"-x", "--exec", "-X", "--exec-batch"}),
    "fdfind": frozenset({"-x", "--exec", "-X", "--exec-batch"}),
    "rg": frozenset({"--pre", "--hostname-bin", "-z", "--search-zip"}),
    "awk": frozenset({"-f", "--file", "-E", "--exec", "-l", "--load"}),
    "gawk": frozenset({"-f", "--file", "-E", "--exec", "-l", "--load"}),
    "mawk": frozenset({"-f"}),
    "nawk": frozenset({"-f"}),
    "sed": frozenset({"-f", "--file"}),
    "less": frozenset(),
    "man": frozenset({"-P", "--pager", "-H", "--html"}),
    "env": frozenset({"-S", "--split-string"}),
    "watch": frozenset(),
    "git": frozenset(),
    "xxd": frozenset(),
    "bat": frozenset({"--pager"}),
    "delta": frozenset(),
    "jq": frozenset({"-L"}),
}

# Programs that search whole directory trees (grep only with -r/-R).
RECURSIVE_SEARCH = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep"})
# Directory trees that hold secrets: searching through them reads the secrets.
SECRET_TREES: tuple[str, ...] = ("/etc", "/root", "/var", "/proc", "/home", "/Users")

# Options of file-writing programs that run a program named in the option.
WRITER_EXEC_FLAGS: dict[str, frozenset[str]] = {
    "zip": frozenset({"-TT", "--unzip-command"}),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "tar": frozenset(
        {
            "--to-command",
            "--use-compress-program",
            "-I",
            "--checkpoint-action",
            "--info-script",
            "--new-volume-script",
            "-F",
        }
    ),
}

# awk / sed programs that can run commands or write files.
AWK_UNSAFE = lazy(r"\bsystem\b|\bgetline\b|\|\s*\"|\|&|\b(print|printf)\b[^;}]*>|@load")
# A versioned name of a program signoff knows (`python3.12`, `pypy3.10`, `pip3.11`,
# `perl5.36`): judged as the program it is a version of.
VERSIONED_PROGRAM = lazy(r"^(python[23]?|pypy[23]?|pip[23]?|ruby|perl|php|lua)(\d+(?:\.\d+)*)$")


def unversioned(base: str) -> str:
    """`python3.12` -> `python3`, `pip3.11` -> `pip3`, `ruby3.2` -> `ruby`; else as it is."""
    if not base[-1:].isdigit():
        return base
    m = VERSIONED_PROGRAM.match(base)
    if m is None:
        return base
    name, version = m.group(1), m.group(2)
    if name[-1:].isdigit() or version.startswith("."):
        return name
    major = version.partition(".")[0]
    return name + major if name in ("python", "pypy", "pip") and major in ("2", "3") else name


# Programs that serve: a person decides whether to start a server (inside the sandbox it
# would be cut off from the host, and it cannot outlive the command).
SERVER_PROGRAMS = frozenset(
    {"uvicorn", "gunicorn", "hypercorn", "daphne", "waitress-serve", "http-server", "serve"}
)
SERVER_SUBCOMMANDS = frozenset(
    {
        ("flask", "run"),
        ("rails", "server"),
        ("rails", "s"),
        ("jupyter", "notebook"),
        ("jupyter", "lab"),
        ("npm", "start"),
        ("yarn", "start"),
        ("pnpm", "start"),
        ("hugo", "server"),
        ("mkdocs", "serve"),
        ("manage.py", "runserver"),
    }
)
SERVER_MODULES = frozenset({"http.server", "SimpleHTTPServer", "uvicorn", "flask", "aiohttp.web"})


def serves(argv: tuple[str, ...] | list[str]) -> bool:
    """Whether a command starts a server (`python -m http.server`, `flask run`, ...)."""
    if not argv:
        return False
    base = argv[0].rsplit("/", 1)[-1]
    words = [a.rsplit("/", 1)[-1] for a in argv]
    if base in SERVER_PROGRAMS or any(
        (a, b) in SERVER_SUBCOMMANDS for a, b in itertools.pairwise(words)
    ):
        return True
    return any(a == "-m" and b in SERVER_MODULES for a, b in itertools.pairwise(argv)) or (
        base == "php" and "-S" in argv
    )


SED_WRITE_CMD = lazy(r"(^|[;{}\n]|[0-9$/]|!)\s*[wWe](\s|$)|\s[wWe]\s+\S")

# --------------------------------------------------------------------------- wrappers

# Wrappers that run their argument command with no privilege change: stripped entirely.
# Value: options that take a separate value (so the value is not the command).
WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata"}),
    "setsid": frozenset(),
    "noglob": frozenset(),
    "unbuffer": frozenset(),
    "caffeinate": frozenset({"-t", "-w"}),
    "nocache": frozenset(),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "catchsegv": frozenset(),
    "torsocks": frozenset(),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "dotenv": frozenset({"-f", "-e"}),
    "strace": frozenset({"-e", "-o", "-p", "-s", "-u", "-E"}),
    "ltrace": frozenset({"-e", "-o", "-p", "-s", "-u"}),
    "valgrind": frozenset(),
    "firejail": frozenset(),
    "xvfb-run": frozenset({"-a", "-n", "-s", "-f", "-e"}),
}
# Wrappers whose first positional argument is consumed before the command.
WRAPPER_POSITIONAL: dict[str, int] = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1}
WRAPPERS["timeout"] = frozenset({"-k", "--kill-after", "-s", "--signal"})
WRAPPERS["flock"] = frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"})

# Wrappers that change the user: the wrapper itself is a privileged part of its own.
PRIVILEGE_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset(
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "--close-from",
            "-D",
            "--chdir",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-r",
            "--role",
            "-t",
            "--type",
            "-T",
            "--command-timeout",
            "-U",
            "--other-user",
            "-R",
            "--chroot",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "pkexec": frozenset({"--user"}),
    "run0": frozenset({"-u", "--user", "-g", "--group", "-D", "--chdir"}),
    "runuser": frozenset({"-u", "--user", "-g", "--group", "-G"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "gosu": frozenset(),
    "su-exec": frozenset(),
    "sg": frozenset(),
}
PRIVILEGE_POSITIONAL: dict[str, int] = {"chroot": 1, "gosu": 1, "su-exec": 1}

SHELLS: frozenset[str] = frozenset(
    [
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "fish",
        "ash",
        "busybox-sh",
        "csh",
        "tcsh",
        "rbash",
        "yash",
    ]
)

# Interpreters and build/test runners: whatever they run is arbitrary code.
INTERPRETERS: frozenset[str] = frozenset(
    [
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "ipython",
        "node",
        "nodejs",
        "deno",
        "bun",
        "ruby",
        "irb",
        "perl",
        "php",
        "lua",
        "luajit",
        "Rscript",
        "R",
        "julia",
        "java",
        "jshell",
        "groovy",
        "scala",
        "kotlin",
        "swift",
        "osascript",
        "tclsh",
        "wish",
        "expect",
        "pwsh",
        "powershell",
        "elixir",
        "erl",
        "escript",
        "ghci",
        "runghc",
        "guile",
        "racket",
        "sbcl",
        "clisp",
        "ocaml",
    ]
)
RUNNERS: frozenset[str] = frozenset(
    [
        "make",
        "gmake",
        "cmake",
        "ninja",
        "meson",
        "bazel",
        "bazelisk",
        "buck",
        "gradle",
        "gradlew",
        "mvn",
        "mvnw",
        "ant",
        "sbt",
        "lein",
        "npm",
        "npx",
        "yarn",
        "pnpm",
        "pnpx",
        "corepack",
        "pip",
        "pip3",
        "pipx",
        "uv",
        "uvx",
        "poetry",
        "pdm",
        "hatch",
        "rye",
        "conda",
        "mamba",
        "micromamba",
        "cargo",
        "rustc",
        "rustup",
        "go",
        "gcc",
        "g++",
        "cc",
        "c++",
        "clang",
        "clang++",
        "ld",
        "tsc",
        "esbuild",
        "vite",
        "webpack",
        "rollup",
        "parcel",
        "turbo",
        "nx",
        "lerna",
        "jest",
        "vitest",
        "mocha",
        "ava",
        "playwright",
        "cypress",
        "pytest",
        "py.test",
        "tox",
        "nox",
        "coverage",
        "mypy",
        "ruff",
        "black",
        "isort",
        "flake8",
        "pylint",
        "eslint",
        "prettier",
        "biome",
        "gem",
        "bundle",
        "bundler",
        "rake",
        "rails",
        "composer",
        "dotnet",
        "msbuild",
        "xcodebuild",
        "swiftc",
        "zig",
        "nim",
        "stack",
        "cabal",
        "mix",
        "rebar3",
        "brew",
        "apt",
        "apt-get",
        "aptitude",
        "dpkg",
        "yum",
        "dnf",
        "rpm",
        "pacman",
        "zypper",
        "apk",
        "snap",
        "flatpak",
        "nix",
        "nix-env",
        "nix-shell",
        "port",
        "emerge",
        "pkg",
        "asdf",
        "mise",
        "pyenv",
        "nvm",
        "volta",
        "docker",
        "podman",
        "docker-compose",
        "buildah",
        "nerdctl",
        "vagrant",
        "ansible",
        "ansible-playbook",
        "just",
        "task",
        "invoke",
        "fab",
        "hyperfine",
        "entr",
        "parallel",
        "script",
        "tmux",
        "screen",
        "watch",
        "busybox",
        "pre-commit",
        "direnv",
        "source",
        ".",
        "eval",
    ]
)
# `npm ls`, `pip list`: read-only queries of runners (`--version` and kin: shell_help).
RUNNER_READ_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "npm": frozenset({"ls", "list", "help", "--version", "-v"}),
    "pip": frozenset({"list", "show", "freeze", "check", "--version", "-V", "help"}),
    "pip3": frozenset({"list", "show", "freeze", "check", "--version", "-V", "help"}),
    "cargo": frozenset({"--version", "-V", "version", "help"}),
    "go": frozenset({"version", "env", "doc", "help"}),
    "docker": frozenset({"ps", "images", "version", "info", "inspect", "logs"}),
    "podman": frozenset({"ps", "images", "version", "info", "inspect", "logs"}),
    "brew": frozenset({"list", "info", "--version", "config", "doctor"}),
    "rustup": frozenset({"show", "--version"}),
    "conda": frozenset({"list", "info", "--version"}),
    "dpkg": frozenset({"-l", "-L", "-s", "--list", "--status", "--listfiles"}),
    "rpm": frozenset({"-qa", "-q", "-qi", "-ql"}),
    "apt": frozenset({"list", "show", "policy"}),
    "apt-cache": frozenset({"show", "policy", "search", "depends"}),
    "yarn": frozenset({"--version"}),
    "uv": frozenset({"--version"}),  # `uv version 2.0` sets the project's version
    "poetry": frozenset({"--version", "show"}),
    "gem": frozenset({"list", "--version"}),
    "tmux": frozenset({"ls", "list-sessions"}),
    "dotnet": frozenset({"--version", "--info", "--list-sdks"}),
}

# --------------------------------------------------------------------------- writes

# Programs that write files; value names how their targets are found (see shell.py).
WRITERS: dict[str, str] = {
    "touch": "all",
    "mkdir": "all",
    "tee": "all",
    "truncate": "all",
    "cp": "last",
    "install": "last",
    "ln": "last",
    "mv": "move",
    "chmod": "after_first",
    "chown": "after_first",
    "chgrp": "after_first",
    "rsync": "last",
    "patch": "cwd",
    "tar": "tar",
    "unzip": "cwd",
    "gzip": "all",
    "gunzip": "all",
    "bzip2": "all",
    "xz": "all",
    "unxz": "all",
    "zip": "first",
    "7z": "cwd",
    "dd": "dd",
    "uniq": "second",
    "sort": "flag",
    "split": "cwd",
    "csplit": "cwd",
    "mkfifo": "all",
    "mknod": "first",
    "ssh-keygen": "cwd",
    "openssl": "flag",
    "git": "git",
    "curl": "flag",
    "wget": "flag",
    "convert": "last",
    "ffmpeg": "last",
    "pandoc": "flag",
    "mktemp": "none",
    "code": "none",
    "open": "none",
    "xdg-open": "none",
    "kill": "none",
    "pkill": "none",
    "killall": "none",
}
DELETERS: frozenset[str] = frozenset({"rm", "rmdir", "unlink", "shred", "srm"})

NETWORK: frozenset[str] = frozenset(
    [
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "ssh",
        "scp",
        "sftp",
        "ftp",
        "telnet",
        "http",
        "https",
        "httpie",
        "xh",
        "aria2c",
        "ping",
        "ping6",
        "dig",
        "nslookup",
        "host",
        "traceroute",
        "tracepath",
        "mtr",
        "whois",
        "nmap",
        "rsync-remote",
        "ssh-copy-id",
        "gh",
        "glab",
        "hub",
        "aws",
        "gcloud",
        "gsutil",
        "az",
        "kubectl",
        "helm",
        "terraform",
        "tofu",
        "pulumi",
        "doctl",
        "heroku",
        "fly",
        "flyctl",
        "vercel",
        "netlify",
        "firebase",
        "wrangler",
        "eksctl",
        "s3cmd",
        "rclone",
        "mosh",
        "openssl-s_client",
        "lftp",
        "tftp",
        "ngrok",
        "cloudflared",
        "tailscale",
        "mail",
        "sendmail",
        "mutt",
        "psql",
        "mysql",
        "mongo",
        "mongosh",
        "redis-cli",
        "sqlcmd",
        "clickhouse-client",
        "cqlsh",
    ]
)
PRIVILEGE: frozenset[str] = frozenset(
    [
        "su",
        "sudoedit",
        "visudo",
        "passwd",
        "chpasswd",
        "useradd",
        "usermod",
        "userdel",
        "groupadd",
        "groupmod",
        "groupdel",
        "adduser",
        "deluser",
        "mount",
        "umount",
        "swapon",
        "swapoff",
        "modprobe",
        "insmod",
        "rmmod",
        "sysctl",
        "iptables",
        "ip6tables",
        "nft",
        "ufw",
        "firewall-cmd",
        "setcap",
        "chattr",
        "setenforce",
        "csrutil",
        "launchctl",
        "service",
        "hostnamectl",
        "timedatectl",
        "localectl",
        "loginctl",
        "dscl",
        "update-rc.d",
        "chkconfig",
        "systemd-run",
        "nsenter",
        "unshare",
        "capsh",
        "setpriv",
        "newgrp",
        "gpasswd",
    ]
)
# Stop programs / the machine: irreversible once they run.
KILLERS: frozenset[str] = frozenset({"kill", "pkill", "killall", "skill", "xkill"})
POWER: frozenset[str] = frozenset({"shutdown", "reboot", "halt", "poweroff"})
DISK_TOOLS: frozenset[str] = frozenset(
    [
        "mkfs",
        "wipefs",
        "fdisk",
        "sfdisk",
        "cfdisk",
        "gdisk",
        "sgdisk",
        "parted",
        "mkswap",
        "blkdiscard",
        "cryptsetup",
        "hdparm",
        "mdadm",
        "pvcreate",
        "vgremove",
        "lvremove",
        "zpool",
        "diskutil",
        "format",
        "mke2fs",
        "e2fsck",
        "tune2fs",
    ]
)

# git subcommands.
GIT_READ: frozenset[str] = frozenset(
    [
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "describe",
        "shortlog",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "cat-file",
        "grep",
        "show-ref",
        "for-each-ref",
        "merge-base",
        "rev-list",
        "name-rev",
        "count-objects",
        "whatchanged",
        "version",
        "help",
        "check-ignore",
        "check-attr",
        "diff-tree",
        "diff-files",
        "diff-index",
        "var",
        "cherry",
        "show-branch",
        "range-diff",
        "annotate",
        "verify-commit",
        "verify-tag",
        "fsck",
    ]
)
GIT_NETWORK: frozenset[str] = frozenset(
    [
        "fetch",
        "pull",
        "push",
        "clone",
        "ls-remote",
        "remote-update",
        "submodule-update",
        "send-email",
        "request-pull",
        "archive-remote",
    ]
)
GIT_DESTRUCTIVE: frozenset[str] = frozenset(
    [
        "clean",
        "gc",
        "prune",
        "filter-branch",
        "filter-repo",
        "update-ref",
        "replace",
        "rm",
        "reflog-expire",
    ]
)
GIT_OPAQUE: frozenset[str] = frozenset(
    [
        "config",
        "bisect",
        "difftool",
        "mergetool",
        "am",
        "hook",
        "submodule",
        "instaweb",
        "daemon",
        "credential",
        "http-backend",
        "upload-pack",
        "receive-pack",
        "web--browse",
    ]
)
# Options that make a read-only git command run programs or write files.
GIT_UNSAFE_OPTS: tuple[str, ...] = (
    "--output",
    "--ext-diff",
    "--textconv",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "-O",
    "--open-files-in-pager",
)
GIT_GLOBAL_WITH_VALUE: frozenset[str] = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--config-env",
        "--super-prefix",
    }
)

# --------------------------------------------------------------------------- paths

SYSTEM_DIRS: tuple[str, ...] = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/home",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
    "/private",
    "/snap",
    "/mnt",
    "/media",
    "/nix",
    "/run",
)
# Writing into these (not merely under /usr/local or /opt) overwrites system files.
SYSTEM_WRITE_DENY: tuple[str, ...] = (
    "/bin",
    "/boot",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/sbin",
    "/sys",
    "/proc",
    "/root",
    "/System",
    "/Library",
    "/private/etc",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/share",
    "/usr/include",
)
TEMP_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp", "/private/tmp", "/dev/shm")
# Paths that are not files at all.
PSEUDO_FILES: frozenset[str] = frozenset(
    {
        "/dev/null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/stdin",
        "/dev/tty",
        "/dev/zero",
        "/dev/random",
        "/dev/urandom",
        "/dev/full",
    }
)
DISK_DEVICE = lazy(
    r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|mapper/|loop|sr|fd\d|zd|nbd)"
)
# Caches under the home directory that may be deleted (relative to home).
HOME_CACHES: tuple[str, ...] = (
    ".cache",
    ".npm",
    ".yarn/cache",
    ".pnpm-store",
    ".cargo/registry",
    ".cargo/git",
    ".gradle/caches",
    ".m2/repository",
    ".ivy2/cache",
    "Library/Caches",
    ".local/share/Trash",
    ".nuget/packages",
    "go/pkg/mod",
    ".rustup/toolchains",
    ".pyenv/cache",
    ".bun/install/cache",
    ".deno",
    ".node-gyp",
    ".expo",
    ".terraform.d/plugin-cache",
    ".composer/cache",
)
# Writing these (relative to home) plants code or credentials: catastrophic.
HOME_STARTUP = lazy(
    r"^(\.(bash|zsh|ksh|mksh|tcsh|csh)\w*|\.profile|\.zprofile|\.zlogin|\.zlogout|\.zshenv"
    r"|\.login|\.logout|\.inputrc|\.xinitrc|\.xprofile|\.xsession\w*|\.gitconfig|\.npmrc"
    r"|\.pypirc|\.netrc|\.curlrc|\.wgetrc|\.vimrc|\.exrc|\.tmux\.conf|\.screenrc|\.pam_environment"
    r"|\.ssh(/.*)?|\.gnupg(/.*)?|\.aws(/.*)?|\.kube(/.*)?|\.docker(/.*)?|\.config/(fish|autostart"
    r"|systemd|git|environment\.d)(/.*)?|Library/LaunchAgents(/.*)?|\.local/bin(/.*)?"
    r"|\.config/gcloud(/.*)?|\.git-credentials|\.pgpass|\.my\.cnf|\.env|\.envrc|\.Xauthority)$"
)
# Secrets: reading them asks; sending them to a remote is catastrophic.
SECRET_NAME = lazy(
    r"(^|/)(\.env(\.(?!example$|sample$|template$|dist$|defaults$)[\w.-]+)?|\.envrc|id_(rsa|dsa"
    r"|ecdsa|ed25519)(_sk)?|[\w.-]*\.(pem|key|p12|pfx|jks|keystore|kdbx|gpg|asc|ovpn)"
    r"|\.netrc|\.pgpass|\.git-credentials|credentials(\.json|\.csv)?|\.npmrc|\.pypirc"
    r"|\.htpasswd|secrets?\.(ya?ml|json|toml)|\.bash_history|\.zsh_history|\.my\.cnf"
    r"|service[-_]account[\w.-]*\.json)$"
)
SECRET_DIRS_HOME: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".azure",
    ".config/gh",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
)
SECRET_SYSTEM: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh",
    "/root",
    "/proc/self/environ",
    "/etc/master.passwd",
    "/var/lib/secrets",
)
# A read path only known at run time asks when its text hints at a secret or at decoding
# (`cat $(echo ~/.ssh/id_rsa)`, `cat $(printf '\x2e\x65\x6e\x76')`, `$(... | base64 -d)`).
DYNAMIC_SECRET_HINT = lazy(
    r"~|\$\{?HOME\b|/root\b|/etc/|/proc/|\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.netrc"
    r"|\.env\b|id_rsa|id_ed25519|id_ecdsa|\.pem\b|\.key\b|secret|credential|token|passw"
    r"|base64|printf|\\x|\$'|xxd|openssl|(?<![\w-])rev(?![\w-])",
    re.IGNORECASE,
)
SECRET_PROC = lazy(r"^/proc/[^/]+/(environ|mem|maps|cmdline)$")
# Sensitive inside the workspace: writing them asks.
WORKSPACE_PROTECTED: tuple[str, ...] = (
    ".git",
    ".signoff",
    ".env",
    ".claude",
    ".codex",
    ".vscode",
    ".idea",
    ".github/workflows",
    ".husky",
    ".envrc",
)

# Environment variables that change what a command loads or runs: a prefix with one of
# these makes the command opaque.
DANGEROUS_ENV = lazy(
    r"^(PATH|LD_\w+|DYLD_\w+|\w*PAGER|\w*EDITOR|VISUAL|\w*BROWSER|\w*ASKPASS\w*|LESSKEY\w*"
    r"|LESSEDIT|FCEDIT|CVS_RSH|BASH_ENV|ENV|PROMPT_COMMAND"
    r"|SHELLOPTS|BASHOPTS|PS[0-4]|IFS|GIT_\w+|PYTHON\w*|PERL\w*|RUBY\w*|NODE_OPTIONS|NODE_PATH"
    r"|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|LESSOPEN|LESSCLOSE|LESS|TAR_OPTIONS"
    r"|SSH_ASKPASS|SUDO_ASKPASS|SSH_AUTH_SOCK|XDG_\w+|HOME|ZDOTDIR|GCONV_PATH|GLIBC_TUNABLES"
    r"|LOCPATH|NLSPATH|HOSTALIASES|RES_OPTIONS|CDPATH|GLOBIGNORE|FPATH|BASH_FUNC_\w+|SHELL"
    r"|MANOPT|GREP_OPTIONS|RIPGREP_CONFIG_PATH|NPM_CONFIG_\w+|npm_config_\w+|CARGO_\w+|RUSTC\w*"
    r"|GOFLAGS|CC|CXX|MAKEFLAGS|KUBECONFIG|AWS_\w+|TMPDIR|LD|PKG_CONFIG\w*"
    # where docker, helm, curl, psql and mysql find plugins, daemons and rc files
    r"|DOCKER_(?:HOST|CONFIG|CONTEXT|CERT_PATH)|HELM_\w+|CURL_HOME|PSQLRC|MYSQL_HOME"
    # options read from the environment by archivers, patch and rsync: `UNZIP=-d.git`,
    # `GZIP=-N`, a backup suffix that names another file, a program to run
    r"|UNZIP|UNZIPOPT|ZIPOPT|GZIP|BZIP2?|XZ_OPT|XZ_DEFAULTS|PATCH_GET|SIMPLE_BACKUP_SUFFIX"
    r"|VERSION_CONTROL|RSYNC_RSH|RSYNC_CONNECT_PROG)$"
)

# Catastrophic remote deletions: argv prefixes (after the program) matched as words.
REMOTE_CATASTROPHIC: tuple[tuple[str, ...], ...] = (
    ("terraform", "destroy"),
    ("tofu", "destroy"),
    ("pulumi", "destroy"),
    ("terraform", "apply", "-destroy"),
    ("terragrunt", "destroy"),
    ("terragrunt", "run-all", "destroy"),
    ("cdk", "destroy"),
    ("serverless", "remove"),
    ("sls", "remove"),
    ("kubectl", "delete", "namespace"),
    ("kubectl", "delete", "ns"),
    ("kubectl", "delete", "--all"),
    ("kubectl", "delete", "all"),
    ("kubectl", "delete", "pv"),
    ("kubectl", "delete", "node"),
    ("kubectl", "delete", "nodes"),
    ("kubectl", "delete", "namespaces"),
    ("aws", "s3", "rb"),
    ("aws", "s3api", "delete-bucket"),
    ("aws", "eks", "delete-cluster"),
    ("aws", "rds", "delete-db-instance"),
    ("aws", "rds", "delete-db-cluster"),
    ("aws", "dynamodb", "delete-table"),
    ("aws", "ec2", "terminate-instances"),
    ("aws", "cloudformation", "delete-stack"),
    ("aws", "iam", "delete-user"),
    ("gsutil", "rb"),
    ("gsutil", "rm", "-r"),
    ("gsutil", "-m", "rm", "-r"),
    ("gcloud", "projects", "delete"),
    ("gcloud", "container", "clusters", "delete"),
    ("gcloud", "sql", "instances", "delete"),
    ("gcloud", "storage", "rm", "--recursive"),
    ("gcloud", "storage", "buckets", "delete"),
    ("gcloud", "compute", "instances", "delete"),
    ("az", "group", "delete"),
    ("az", "aks", "delete"),
    ("az", "storage", "account", "delete"),
    ("gh", "repo", "delete"),
    ("glab", "repo", "delete"),
    ("eksctl", "delete", "cluster"),
    ("doctl", "kubernetes", "cluster", "delete"),
    ("heroku", "apps:destroy"),
    ("heroku", "pg:reset"),
    ("fly", "apps", "destroy"),
    ("flyctl", "apps", "destroy"),
    ("helm", "uninstall", "--all"),
    ("dropdb",),
    ("redis-cli", "flushall"),
    ("redis-cli", "flushdb"),
    ("s3cmd", "rb"),
    ("rclone", "purge"),
    ("docker", "system", "prune", "--volumes"),
    ("podman", "system", "prune", "--volumes"),
    ("docker", "volume", "prune", "-a"),
    ("docker", "volume", "prune", "--all"),
    ("vercel", "remove"),
    ("firebase", "projects:delete"),
    ("aws", "s3", "rm", "--recursive"),
)
# SQL that drops a database wholesale, in any client's -c / -e / --eval argument.
SQL_CATASTROPHIC = lazy(
    r"\bdrop\s+(database|schema)\b|\bflushall\b|\bdropDatabase\s*\(|\btruncate\s+.*\bcascade\b",
    re.IGNORECASE,
)
# Inline interpreter code that opens a shell over the network (reverse shell).
REVERSE_SHELL_CODE = lazy(
    r"/dev/(tcp|udp)/|(socket|fsockopen|TCPSocket|Socket::|net\.connect|net\.Socket)"
    r"[\s\S]*(subprocess|pty\.spawn|/bin/(ba|z)?sh|exec\(|dup2|child_process|spawn|system\()",
    re.IGNORECASE,
)

# A program named by one of these directories is the program its basename says.
TRUSTED_BIN: frozenset[str] = frozenset(
    {
        "/bin",
        "/usr/bin",
        "/sbin",
        "/usr/sbin",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/opt/homebrew/bin",
    }
)
# Options of xargs that take a value (the next word is not the command).
XARGS_VALUE_OPTS: frozenset[str] = frozenset(
    {
        "-I",
        "-n",
        "-L",
        "-l",
        "-P",
        "-d",
        "-E",
        "-e",
        "-s",
        "-a",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--arg-file",
        "--replace",
        "--eof",
        "--max-chars",
    }
)
# find tests that narrow what -exec / -delete touch (no test: everything under the root).
FIND_FILTERS: frozenset[str] = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-iregex",
        "-wholename",
        "-iwholename",
        "-newer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-empty",
        "-perm",
        "-user",
        "-group",
        "-links",
        "-inum",
        "-samefile",
        "-lname",
        "-ilname",
        "-newermt",
        "-uid",
        "-gid",
    }
)
# Programs whose first positional argument is a pattern or program, not a path.
PATTERN_FIRST: frozenset[str] = frozenset(
    {
        "grep",
        "egrep",
        "fgrep",
        "zgrep",
        "rg",
        "ag",
        "ack",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "sed",
        "jq",
        "yq",
        "look",
    }
)
# Their options that certainly take a value. Erring towards "no value" is the safe side:
# a misread value is judged as a path, never the other way round.
VALUE_OPTS: frozenset[str] = frozenset(
    {
        "-A",
        "-B",
        "-m",
        "--max-count",
        "--context",
        "--after-context",
        "--before-context",
        "-g",
        "--glob",
        "-t",
        "--type",
        "--type-not",
        "--max-depth",
        "--include",
        "--exclude",
        "--exclude-dir",
        "--ignore-file",
        "--iglob",
    }
)
PATTERN_OPTS: frozenset[str] = frozenset({"-e", "-f", "--regexp", "--file"})
INLINE_CODE_FLAGS: frozenset[str] = frozenset(
    {"-c", "-e", "-E", "-r", "--eval", "-p", "--print", "--command"}
)
# Variable names whose value is a credential: echoing them into a remote is exfiltration.
SECRET_VAR = lazy(
    r"\$\{?\w*(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY"
    r"|CREDENTIAL)\w*",
    re.IGNORECASE,
)
