"""Files that something else will execute later: writing them is writing code.

A write is "reversible, inside the workspace" only when the bytes stay data. The places
below are read by git, a shell, a CI service or a hook manager and turned into programs
that run *later*, triggered by a command signoff allows without asking (`git status` runs
`core.fsmonitor`, `git commit` runs `.git/hooks/pre-commit`, opening a shell runs
`.bashrc`, `cd` runs `.envrc` under direnv) or by something signoff never sees (a CI run
after a push). So a write to any of them is at least **ask**, for declared file tools
(through `policy.SENSITIVE_WRITE`) and for every shell route (through `shell_paths`).

Every pattern matches at any depth (`**/`): a copy or rename can move a tree built in a
scratch directory into place, so the names must ask where the tree is built, not only
where it lands. Each entry is `(pattern, why)`; patterns use the file-rule syntax of
`rules.py` (gitignore style; a match on a directory covers what is inside it).

Not listed on purpose: `Makefile`, `package.json` scripts, `setup.py`, `conftest.py` and
other project code. They run only when a build or test runner runs, and runners ask.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re

from .lazyre import lazy

RUNS_LATER: tuple[tuple[str, str], ...] = (
    # git: hooks, config (fsmonitor, pager, editor, filters, aliases, sshCommand), info/attributes.
    # Any `.git`, also a nested one or a gitfile (`gitdir: …`) that points git elsewhere.
    ("**/.git", "git runs its hooks and the programs its config names"),
    # A directory holding HEAD (with objects/ and refs/) is a repository for git, whose
    # config git obeys when run inside it (the "embedded bare repository" trick).
    ("**/HEAD", "a HEAD file makes its directory a git repository that git obeys"),
    ("**/.gitattributes", "git runs the filter and diff drivers named here"),
    ("**/.gitmodules", "submodule settings make git fetch and run other repositories' code"),
    ("**/.lfsconfig", "git-lfs reads its settings (transfer agents) from here"),
    # Shell start-up files: the next shell (or the next `cd`, under direnv) runs them.
    ("**/.bashrc", "bash runs it when it starts"),
    ("**/.bash_profile", "bash runs it when it starts"),
    ("**/.bash_login", "bash runs it when it starts"),
    ("**/.bash_logout", "bash runs it when it exits"),
    ("**/.profile", "login shells run it"),
    ("**/.zshrc", "zsh runs it when it starts"),
    ("**/.zshenv", "zsh runs it when it starts"),
    ("**/.zprofile", "zsh runs it when it starts"),
    ("**/.zlogin", "zsh runs it when it starts"),
    ("**/.kshrc", "ksh runs it when it starts"),
    ("**/.cshrc", "csh runs it when it starts"),
    ("**/.tcshrc", "tcsh runs it when it starts"),
    ("**/.envrc", "direnv runs it when a shell enters the directory"),
    # CI: pushed, these run on the CI service with its secrets.
    ("**/.github/workflows", "GitHub Actions runs these workflows"),
    ("**/.github/actions", "GitHub Actions runs these actions"),
    ("**/.gitea/workflows", "Gitea Actions runs these workflows"),
    ("**/.forgejo/workflows", "Forgejo Actions runs these workflows"),
    ("**/.gitlab-ci.yml", "GitLab CI runs it"),
    ("**/.gitlab-ci", "GitLab CI includes it"),
    ("**/.circleci", "CircleCI runs it"),
    ("**/azure-pipelines.yml", "Azure Pipelines runs it"),
    ("**/azure-pipelines.yaml", "Azure Pipelines runs it"),
    ("**/Jenkinsfile", "Jenkins runs it"),
    ("**/.travis.yml", "Travis CI runs it"),
    ("**/bitbucket-pipelines.yml", "Bitbucket Pipelines runs it"),
    ("**/.drone.yml", "Drone CI runs it"),
    ("**/.woodpecker.yml", "Woodpecker CI runs it"),
    ("**/.woodpecker", "Woodpecker CI runs it"),
    ("**/.buildkite", "Buildkite runs it"),
    ("**/appveyor.yml", "AppVeyor runs it"),
    ("**/.appveyor.yml", "AppVeyor runs it"),
    ("**/.cirrus.yml", "Cirrus CI runs it"),
    # Git hook managers: installed hooks run what these say on every commit.
    ("**/.husky", "husky's git hooks run these scripts"),
    ("**/.githooks", "a usual core.hooksPath directory: git runs the hooks in it"),
    ("**/.pre-commit-config.yaml", "pre-commit runs the hooks it names on every commit"),
    ("**/lefthook.yml", "lefthook runs the commands it names on git events"),
    ("**/.lefthook.yml", "lefthook runs the commands it names on git events"),
    ("**/lefthook.yaml", "lefthook runs the commands it names on git events"),
    ("**/.lefthook", "lefthook runs the scripts in it on git events"),
    ("**/.overcommit.yml", "overcommit runs the hooks it names on git events"),
    # Editors and agents that run tasks or hooks on their own when a folder opens.
    ("**/.vscode", "VS Code runs tasks (folderOpen) and settings name programs"),
    ("**/.devcontainer", "dev containers run postCreateCommand and build steps"),
    ("**/.claude", "Claude Code runs the hooks its settings name"),
    ("**/.codex", "Codex reads its settings and commands from here"),
    ("**/.mcp.json", "Claude Code and other MCP clients start the servers it names"),
    ("**/.gemini", "Gemini CLI runs the hooks its settings name"),
    ("**/.cursor", "Cursor runs the hooks its hooks.json names"),
    # Package-manager hooks that run at install time.
    ("**/.yarnrc.yml", "yarn runs the program named by yarnPath"),
    ("**/.pnpmfile.cjs", "pnpm runs this file's hooks at install"),
    # JavaScript configurations of formatters and linters, which run without asking
    # (shell_tools): eslint and prettier execute them, at any depth of the tree they format.
    *(
        (f"**/{name}.{ext}", f"{tool} runs it when it formats or lints")
        for tool, names in (
            ("eslint", ("eslint.config", ".eslintrc")),
            ("prettier", ("prettier.config", ".prettierrc")),
        )
        for name in names
        for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")
    ),
)

# Directories that only hold a runs-later place one level down (`.github/workflows`): a
# tree moved or copied onto one of them can bring that place with it.
_PARENTS: frozenset[str] = frozenset(p.split("/")[-2] for p, _ in RUNS_LATER if p.count("/") >= 2)

# For `policy.SENSITIVE_WRITE` (declared file tools).
SENSITIVE_PATTERNS: tuple[str, ...] = tuple(p for p, _ in RUNS_LATER)

_GLOB_CHARS = lazy(r"[*?\[]")


@functools.cache
@functools.cache
def _table() -> tuple[tuple[tuple[str, ...], str], ...]:
    """Each pattern as its literal name components (after the leading `**/`)."""
    return tuple((tuple(p.removeprefix("**/").split("/")), why) for p, why in RUNS_LATER)


@functools.cache
def _by_first_name() -> dict[str, tuple[tuple[int, tuple[str, ...], str], ...]]:
    """The table indexed by its first component, lower case: `runs_later` is on the path
    of every write, so it looks up each component instead of trying every pattern."""
    index: dict[str, list[tuple[int, tuple[str, ...], str]]] = {}
    for rank, (names, why) in enumerate(_table()):
        lowered = tuple(n.lower() for n in names)
        index.setdefault(lowered[0], []).append((rank, lowered, f"{'/'.join(names)}: {why}"))
    return {first: tuple(entries) for first, entries in index.items()}


@functools.cache
def _parents_lower() -> frozenset[str]:
    return frozenset(p.lower() for p in _PARENTS)


# --------------------------------------------------------------------------- git config

# git configuration keys that make git run a program, load more configuration, or send
# data somewhere else. A key matching one of these (fnmatch, lower case) asks with its reason.
GIT_CONFIG_RUNS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "git status runs it"),
    ("core.hookspath", "git runs the hooks in that directory"),
    ("core.sshcommand", "git runs it to reach remotes"),
    ("core.editor", "git commit and rebase run it"),
    ("core.pager", "git log and diff run it"),
    ("core.askpass", "git runs it to ask for credentials"),
    ("core.gitproxy", "git runs it to connect"),
    ("core.alternaterefscommand", "git runs it on fetch and push"),
    ("core.attributesfile", "the attributes it names choose filters that run programs"),
    ("core.worktree", "moves where git writes the working tree"),
    ("core.bare", "turns the repository's layout around"),
    ("sequence.editor", "git rebase -i runs it"),
    ("diff.external", "git diff runs it"),
    ("diff.*.command", "git diff runs it"),
    ("diff.*.textconv", "git diff and blame run it"),
    ("difftool.*", "git difftool runs it"),
    ("merge.*.driver", "git merge runs it"),
    ("mergetool.*", "git mergetool runs it"),
    ("filter.*", "git add and checkout run clean/smudge/process filters"),
    ("credential.*", "git runs the credential helper"),
    ("gpg.*", "git runs the signing program"),
    ("alias.*", "an alias can run any shell command (!) or carry -c options"),
    ("include.*", "includes another configuration file"),
    ("includeif.*", "includes another configuration file"),
    ("uploadpack.*", "git runs the packObjectsHook"),
    ("receive.*", "changes what receiving pushes runs and accepts"),
    ("pager.*", "git runs that pager"),
    ("interactive.difffilter", "git add -p runs it"),
    ("http.*", "proxies and credentials: where git sends data"),
    ("https.*", "proxies and credentials: where git sends data"),
    ("remote.*", "remote URLs, proxies and upload/receive programs"),
    ("url.*", "rewrites remote URLs: where git sends data"),
    ("protocol.*", "allows transports such as ext:: that run commands"),
    ("ssh.*", "chooses how git runs ssh"),
    ("submodule.*", "submodule update commands (!) and URLs"),
    ("web.browser", "git runs that browser"),
    ("browser.*", "git runs that browser"),
    ("help.browser", "git runs that browser"),
    ("man.*", "git runs that man viewer"),
    ("instaweb.*", "git instaweb runs it"),
    ("sendemail.*", "git send-email runs the SMTP program named here"),
    ("imap.*", "git imap-send runs the tunnel command"),
    ("trailer.*", "git interpret-trailers runs the trailer command"),
    ("guitool.*", "git gui runs it"),
    ("lfs.*", "git-lfs runs custom transfer agents"),
    ("init.templatedir", "git init copies hooks from that template"),
    ("safe.*", "trusts repositories owned by someone else, with their config"),
    ("extensions.*", "changes how git reads the repository"),
    ("maintenance.*", "background maintenance jobs"),
)
# Keys known not to run anything: `git config KEY VALUE` for these is an ordinary change.
# Anything else asks: a new key is judged by a person, not assumed harmless.
GIT_CONFIG_HARMLESS: tuple[str, ...] = (
    "user.*",
    "author.*",
    "committer.*",
    "color.*",
    "column.*",
    "advice.*",
    "log.*",
    "format.*",
    "pretty.*",
    "status.*",
    "blame.*",
    "grep.*",
    "i18n.*",
    "tag.sort",
    "versionsort.*",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "fetch.prune",
    "fetch.prunetags",
    "fetch.fsckobjects",
    "transfer.fsckobjects",
    "merge.ff",
    "merge.conflictstyle",
    "merge.tool",
    "diff.tool",
    "rebase.autosquash",
    "rebase.autostash",
    "rebase.updaterefs",
    "rebase.instructionformat",
    "rerere.enabled",
    "rerere.autoupdate",
    "diff.algorithm",
    "diff.renames",
    "diff.colormoved",
    "diff.mnemonicprefix",
    "diff.noprefix",
    "diff.context",
    "diff.statgraphwidth",
    "branch.autosetupmerge",
    "branch.autosetuprebase",
    "branch.sort",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.description",
    "commit.verbose",
    "commit.template",
    "commit.cleanup",
    "commit.status",
    "checkout.defaultremote",
    "clean.requireforce",
    "apply.whitespace",
    "am.threeway",
    "stash.showpatch",
    "stash.showstat",
    "gc.auto",
    "gc.autodetach",
    "core.autocrlf",
    "core.eol",
    "core.filemode",
    "core.ignorecase",
    "core.quotepath",
    "core.whitespace",
    "core.safecrlf",
    "core.precomposeunicode",
    "core.longpaths",
    "core.compression",
    "core.abbrev",
    "core.commentchar",
    "core.commentstring",
    "core.logallrefupdates",
    "core.untrackedcache",
    "core.preloadindex",
    "core.checkstat",
    "core.trustctime",
    "core.excludesfile",
    "core.symlinks",
    "core.autocrlf",
    "help.autocorrect",
    "index.*",
    "pack.*",
    "feature.*",
    "notes.*",
)


def git_config_key_asks(key: str) -> str | None:
    """Why setting git configuration `key` asks, or None when it is known harmless."""
    lowered = key.lower()
    for pattern, why in GIT_CONFIG_RUNS:
        if fnmatch.fnmatchcase(lowered, pattern):
            return f"git config {key}: {why}"
    if any(fnmatch.fnmatchcase(lowered, p) for p in GIT_CONFIG_HARMLESS):
        return None
    return f"git config {key} is not a key known to be harmless (keys can make git run programs)"


def runs_later(rel: str) -> str | None:
    """Why writing workspace-relative `rel` writes code that runs later, or None.

    `rel` is a normalised path relative to the workspace root (no leading `/`). Names
    are compared case-insensitively: on macOS and Windows `.GIT/hooks` is `.git/hooks`.
    """
    parts = tuple(p.lower() for p in rel.split("/") if p and p != ".")
    index = _by_first_name()
    found: tuple[int, str] | None = None  # the first pattern of the table that matches
    for start, part in enumerate(parts):
        for rank, lowered, why in index.get(part, ()):
            if parts[start : start + len(lowered)] == lowered and (
                found is None or rank < found[0]
            ):
                found = (rank, why)
    if found is not None:
        return found[1]
    if parts and parts[-1] in _parents_lower():
        return f"{parts[-1]} holds places whose files run later (CI workflows)"
    return None


def glob_runs_later(rel_glob: str) -> str | None:
    """Why a write to a glob such as `.gi?/hooks/x` could write code that runs later.

    Bash expands the glob against the file system when the command runs, so judge every
    name the glob could stand for: a component with glob characters matches a table name
    (bash rules: `*` and `?` do not match a leading dot). A glob matching nothing is
    kept as typed by bash, which `runs_later` judges literally.
    """
    parts = [p for p in rel_glob.split("/") if p and p != "."]
    for names, why in _table():
        for start in range(len(parts)):
            window = parts[start : start + len(names)]
            if all(_component_matches(name, pat) for name, pat in zip(names, window, strict=False)):
                return f"{rel_glob} may expand to {'/'.join(names)}: {why}"
    literal = runs_later(rel_glob)
    if literal:
        return literal
    last = parts[-1] if parts else ""
    if any(_component_matches(p, last) for p in _PARENTS):
        return f"{rel_glob} may expand to a directory whose files run later"
    return None


def _component_matches(name: str, pattern: str) -> bool:
    if not _GLOB_CHARS.search(pattern):
        return name.lower() == pattern.lower()
    if name.startswith(".") and not pattern.startswith("."):
        return False  # bash: a leading dot is matched only by a literal dot
    if not re.search(r"[^*?]", pattern):
        # `scripts/*` names every file there; it is judged by what is written, not by
        # the chance that a HEAD or Jenkinsfile already sits in the directory.
        return False
    return fnmatch.fnmatch(name.lower(), pattern.lower())


# --------------------------------------------------------------------------- configured places

_SECTION = lazy(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY = lazy(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def config_entries(text: str) -> list[tuple[str, str]]:
    """`(key, value)` pairs of a git config file (`section.sub.name`, lower-cased
    section and name); enough of git's syntax to find the programs and paths it names."""
    out: list[tuple[str, str]] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = _SECTION.match(line)
        if m:
            name, sub, rest = m.groups()
            section = name.lower() + (f".{sub}" if sub is not None else "")
            line = rest.strip()
            if not line:
                continue
        e = _ENTRY.match(line)
        if e and section:
            value = (e.group(2) or "").split(" #")[0].split(" ;")[0].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            out.append((f"{section}.{e.group(1).lower()}", value))
    return out


def configured_places(config_text: str, config_dir: str, workspace: str) -> list[tuple[str, str]]:
    """Places inside `workspace` that a git config makes code: its hooks directory, the
    files it includes, and programs it names by a path (`core.fsmonitor = tools/x.sh`).
    Returns `(workspace-relative path, why)`."""
    out: list[tuple[str, str]] = []
    for key, value in config_entries(config_text):
        if not value:
            continue
        if key == "core.hookspath" or (
            key.endswith(".path") and key.startswith(("include", "includeif"))
        ):
            targets = [value]
        elif git_config_key_asks(key) and not key.startswith(("remote.", "url.", "http")):
            # A command line: the program and any script it is given (`sh tools/x.sh`);
            # a bare name is found on PATH, not in the project.
            targets = [t.strip("'\"") for t in value.lstrip("!").split() if "/" in t]
        else:
            continue
        # Included files are relative to the config file; hooks and programs to the
        # working tree, where git runs them. `~` is the home directory: outside the
        # workspace, which asks anyway.
        base = config_dir if key.startswith("include") else workspace
        for target in targets:
            if target.startswith("~"):
                continue
            path = posixpath.normpath(posixpath.join(base, target))
            rel = relative(path, workspace)
            if rel is not None and rel not in ("", "."):
                out.append((rel, f"git config {key} makes it code that git runs"))
    return out


def configured_runs_later(rel: str, places: list[tuple[str, str]]) -> str | None:
    """Why `rel` is code because of the repository's own config, or None."""
    for place, why in places:
        if rel == place or rel.startswith(place.rstrip("/") + "/"):
            return f"{place}: {why}"
    return None


def relative(path: str, workspace: str) -> str | None:
    """`path` relative to `workspace` (both absolute, normalised), or None outside it."""
    if path == workspace:
        return ""
    prefix = workspace.rstrip("/") + "/"
    return posixpath.normpath(path[len(prefix) :]) if path.startswith(prefix) else None


__all__ = [
    "GIT_CONFIG_HARMLESS",
    "GIT_CONFIG_RUNS",
    "RUNS_LATER",
    "SENSITIVE_PATTERNS",
    "config_entries",
    "configured_places",
    "configured_runs_later",
    "git_config_key_asks",
    "glob_runs_later",
    "relative",
    "runs_later",
]
