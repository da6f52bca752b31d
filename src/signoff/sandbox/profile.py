"""What contained code sees: which paths are hidden, which are read-only inside the
workspace, which changes never land, and which environment variables it keeps.

Pure functions of paths and the environment: `bwrap.py` turns them into mounts, `land.py`
applies `refusal` to every change before it reaches the workspace.
"""

from __future__ import annotations

import os
import re

from ..plainpath import joined
from ..protected import STATE_DIR, store_files, user_config_dir

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# Credentials under a home directory: hidden (an empty, read-only file or directory is
# mounted over each that exists). A superset of the policy's list of secret places
# (`shell.knowledge.SECRET_DIRS_HOME`; a test holds it so), plus the coding clients' own
# logins and the browsers' profiles (cookies are credentials).
HOME_SECRETS: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/git/credentials",
    ".config/op",
    ".config/rclone",
    ".config/doctl",
    ".config/github-copilot",
    ".netrc",
    ".docker",
    ".kube",
    ".gnupg",
    ".password-store",
    ".vault-token",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".oci",
    ".terraform.d",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".local/share/keyrings",
    ".local/share/kwalletd",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    # the coding clients' logins and settings (an API key, an OAuth token)
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".cursor",
)
# Readable only by root, but the caller may be root (uid 0 without capabilities still
# owns them).
SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/var/lib/secrets",
)

# Inside the workspace, read-only (an empty read-only directory where one is absent, so
# that contained code cannot create it either): signoff's state and the coding clients'
# settings. `.signoff` is hidden, not only read-only: it decides over the agent.
WORKSPACE_HIDDEN_DIRS: tuple[str, ...] = (STATE_DIR,)
WORKSPACE_READONLY_DIRS: tuple[str, ...] = (".claude", ".codex", ".gemini", ".cursor", ".vscode")
WORKSPACE_READONLY_FILES: tuple[str, ...] = (".mcp.json",)
# In a git directory: what runs code later (hooks; config can name programs: core.editor,
# core.fsmonitor, core.hooksPath, filter and diff drivers).
GIT_CODE_DIRS: tuple[str, ...] = ("hooks",)
GIT_CODE_FILES: tuple[str, ...] = ("config", "config.worktree")

# A change to one of these names, at any depth of the workspace, never lands.
_CLIENT_NAMES = frozenset(
    n.casefold() for n in (STATE_DIR, *WORKSPACE_READONLY_DIRS, *WORKSPACE_READONLY_FILES)
)
# where git keeps objects and names, never code: a branch may be called "hooks"
_GIT_DATA = frozenset(("objects", "refs", "logs"))
_GIT_CODE = frozenset(n.casefold() for n in (*GIT_CODE_DIRS, *GIT_CODE_FILES))

# Environment variables whose name says they hold a credential, and values that carry one
# (a URL with a password in it).
SECRET_ENV_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH"
    r"|COOKIE|SESSION|_KEY$|^KEY$|_PAT$|_DSN$|^SIGNOFF_(KEY|TOKEN)",
    re.IGNORECASE,
)
_URL_WITH_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@", re.IGNORECASE)


def refusal(relative: str) -> str | None:
    """Why a change at `relative` (a path inside the workspace, "/"-separated) must not
    land, or None. Names are compared case-folded (a workspace may sit on a file system
    that folds case)."""
    parts = [p.casefold() for p in relative.split("/") if p and p != "."]
    for at, part in enumerate(parts):
        if part in _CLIENT_NAMES:
            return "signoff's state or a coding client's settings"
        if part == ".git":
            inner = parts[at + 1 :]
            if inner[:1] and inner[0] in _GIT_DATA:
                continue
            if any(p in _GIT_CODE for p in inner):
                return "git's hooks or config (code git runs later)"
    return None


def git_dirs(workspace: str) -> list[str]:
    """The workspace's git directories that lie inside it, resolved: `.git` (or where a
    `.git` file or link points, when that is inside), and each submodule's under
    `modules`."""
    dot_git = joined(workspace, ".git")
    found: list[str] = []
    if os.path.isdir(dot_git):  # a folder, or a link to one: where it leads
        target: str | None = os.path.realpath(dot_git)
    elif os.path.isfile(dot_git):
        target = _gitfile_target(dot_git)
    else:
        target = None
    if target is not None and inside(target, workspace) and os.path.isdir(target):
        found.append(target)
    for top in list(found):
        modules = joined(top, "modules")
        for root, dirs, files in os.walk(modules):
            if "HEAD" in files and root != modules:
                found.append(root)
            dirs[:] = [d for d in dirs if d not in _GIT_DATA and d not in GIT_CODE_DIRS]
    return found


_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"[^\"]*\")?\s*\]\s*(.*)$")
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.*?)\s*$", re.IGNORECASE)


def hooks_path(git_dir: str, workspace: str) -> str | None:
    """Where `core.hooksPath` in the git directory's own config sends git for hooks
    (resolved; relative to the top of the work tree, as git reads it), or None."""
    try:
        with open(joined(git_dir, "config"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 20).splitlines()
    except OSError:
        return None
    section, found = "", None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, line = header.group(1).casefold(), header.group(2)
        match = _HOOKS_PATH.match(line) if section == "core" else None
        if match:
            found = match.group(1).split(" #")[0].split(" ;")[0].strip().strip('"')
    if not found:
        return None
    return os.path.realpath(joined(workspace, os.path.expanduser(found)))


def _gitfile_target(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(4096)
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:") :].strip()
    return os.path.realpath(joined(os.path.dirname(path), target))


def inside(path: str, root: str) -> bool:
    """Whether `path` is `root` or under it (both absolute and resolved)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def home_secrets(homes: Iterable[str]) -> list[str]:
    return [joined(home, name) for home in homes for name in HOME_SECRETS]


def signoff_state(env: Mapping[str, str], homes: Iterable[str]) -> list[str]:
    """signoff's own files outside a workspace: the user config directory (settings and the
    key file), `$SIGNOFF_CONFIG_DIR`, `$SIGNOFF_KEY_FILE`, the `$SIGNOFF_DB` store and the
    state and cache directories (where the sandbox stages its runs)."""
    out = [user_config_dir(env)] if env.get("XDG_CONFIG_HOME") else []
    for name in ("SIGNOFF_CONFIG_DIR", "SIGNOFF_KEY_FILE"):
        if env.get(name):
            out.append(_expand(env[name], env))
    out.extend(store_files(env.get("SIGNOFF_DB")))
    out.append(state_root(env))
    for home in homes:
        out.append(joined(home, ".config", "signoff"))
        out.append(joined(home, ".local", "state", "signoff"))
        out.append(joined(home, ".cache", "signoff"))
    if env.get("XDG_CACHE_HOME"):
        out.append(joined(env["XDG_CACHE_HOME"], "signoff"))
    return out


def state_root(env: Mapping[str, str]) -> str:
    """Where signoff keeps per-user state: `$XDG_STATE_HOME/signoff`, else
    `~/.local/state/signoff`."""
    base = env.get("XDG_STATE_HOME") or _expand("~/.local/state", env)
    return joined(base, "signoff")


def cache_root(env: Mapping[str, str]) -> str:
    base = env.get("XDG_CACHE_HOME") or _expand("~/.cache", env)
    return joined(base, "signoff")


def _expand(path: str, env: Mapping[str, str]) -> str:
    """`~` from the given environment's HOME (not this process's)."""
    if path.startswith("~/") and env.get("HOME"):
        return joined(env["HOME"], path[2:])
    return os.path.expanduser(path)


_LISTENING = 0x10000  # __SO_ACCEPTCON in /proc/net/unix's Flags


def listening_sockets(table: str = "/proc/net/unix") -> list[str]:
    """The paths of the Unix sockets listening in this network namespace. A socket file is
    reached by its path, and a read-only mount does not stop a connection (only the
    socket's permissions do), so each is hidden: a docker, agent or database socket
    outside the folders that are private anyway."""
    try:
        with open(table, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        parts = line.split(None, 7)
        if len(parts) == 8 and parts[7].startswith("/"):
            try:
                listening = int(parts[3], 16) & _LISTENING
            except ValueError:
                continue
            if listening:
                found.append(parts[7])
    return found


def scrub_env(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The environment without the variables that hold credentials; and their names."""
    kept: dict[str, str] = {}
    removed: list[str] = []
    for name, value in env.items():
        if SECRET_ENV_NAME.search(name) or _URL_WITH_PASSWORD.search(value):
            removed.append(name)
        else:
            kept[name] = value
    return kept, sorted(removed)


__all__ = [
    "HOME_SECRETS",
    "SYSTEM_SECRETS",
    "cache_root",
    "git_dirs",
    "home_secrets",
    "hooks_path",
    "inside",
    "listening_sockets",
    "refusal",
    "scrub_env",
    "signoff_state",
    "state_root",
]
