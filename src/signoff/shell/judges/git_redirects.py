"""git commands that change where future pushes and pulls go, that rewrite a commit in an
editor, or that may treat a name as a file and discard its changes (issue 12).

- `git remote add/set-url/rename` and `git branch -u/--set-upstream-to`: a later `git push`
  or `git pull`, approved by its short text, would talk to another place. Setting the same
  thing through `git config remote.*` already asks; so do these, as network parts (an
  exact rule, and `accept-edits` does not take them for file edits).
- `git commit --amend` without a message, `git rebase --edit-todo`: an editor-driven
  rewrite (`--amend --no-edit` or `-m` rewrites without an editor, recoverable: notify).
- `git checkout NAME`: when NAME is not a branch git falls back to a path and silently
  discards that file's uncommitted changes. It asks when NAME looks like a path (a dot, a
  slash, a glob, pathspec magic, a conventional file or directory name, an existing file)
  or when names follow the first (`git checkout main README`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from ...lazyre import lazy
from ..facts import Context, Facts

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..facts import ShellClass

    Write = Callable[[ShellClass, str], None]


_REDIRECTING_REMOTE = {
    "add": "adds a remote that later fetches and pushes can name",
    "set-url": "changes where git pushes and fetches",
    "rename": "changes which remote a name means to later pushes and fetches",
}
_UPSTREAM = frozenset({"--set-upstream-to", "--set-upstream", "-u"})
# Options of git commit that give the message, so no editor opens.
_MESSAGE = frozenset(
    {"-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit", "--fixup", "--squash"}
)
_BRANCHING = frozenset({"-b", "-B", "--orphan", "-t", "--track", "--detach", "-c", "-C"})
_PATHSPEC = lazy(r"^:|[*?\[]")  # `:(top)x`, `:/x`, a glob
# Names that are, by convention, files or directories of a project, not branches.
_PROJECT_NAMES = frozenset(
    {
        "readme",
        "license",
        "licence",
        "makefile",
        "dockerfile",
        "gemfile",
        "rakefile",
        "procfile",
        "jenkinsfile",
        "vagrantfile",
        "changelog",
        "authors",
        "notice",
        "copying",
        "codeowners",
        "pipfile",
        "brewfile",
        "justfile",
        "src",
        "lib",
        "docs",
        "doc",
        "test",
        "tests",
        "spec",
        "app",
        "bin",
        "scripts",
        "config",
        "public",
        "assets",
        "build",
        "dist",
        "vendor",
        "pkg",
        "cmd",
        "internal",
        "include",
        "examples",
        "tools",
        "api",
    }
)


def judge_git_redirects(
    sub: str, rest: list[str], pos: list[str], flags: set[str], f: Facts, write: Write
) -> bool:
    """True when `sub` was judged here (the caller's generic rule must not add to it)."""
    if sub == "remote" and pos and pos[0] in _REDIRECTING_REMOTE:
        what = (
            (f"{pos[1]}: {pos[2]}" if pos[0] == "add" else " -> ".join(pos[1:3]))
            if len(pos) >= 3
            else " ".join(pos[1:])
        )
        why = f"git remote {pos[0]} {_REDIRECTING_REMOTE[pos[0]]} ({what})"
        # Where the network goes, not a file edit: `accept-edits` must not wave it through.
        write("network", why)
        if pos[0] == "add" and flags & {"-f", "--fetch"}:
            f.network = True
            f.raise_to("network", "git remote add -f fetches from the new remote")
        return True
    if sub == "remote" and pos and pos[0] in ("remove", "rm"):
        write(
            "destructive",
            f"git remote {pos[0]} deletes the remote {' '.join(pos[1:2])} "
            "and its remote-tracking branches",
        )
        return True
    if sub == "branch" and flags & _UPSTREAM:
        upstream = next((t.partition("=")[2] for t in rest if "=" in t), "") or (
            pos[0] if pos else ""
        )
        why = (
            "git branch --set-upstream-to changes where git pull and git push of the "
            f"branch go ({upstream})"
        )
        write("network", why)
        return True
    if sub == "branch" and "--unset-upstream" in flags:
        write("reversible_write", "git branch --unset-upstream forgets the branch's upstream")
        return True
    if sub == "commit" and "--amend" in flags and not flags & _MESSAGE:
        why = "git commit --amend rewrites the last commit in an editor"
        write("reversible_write", "git commit --amend changes the repository")
        f.runs_code = True
        f.exact_rule = True
        f.opaque(why)  # like `git rebase -i`: not an ordinary edit for accept-edits
        return True
    if sub == "grep" and any(
        t.startswith("-") and not t.startswith("--") and "O" in t for t in rest
    ):  # `-O./x`, `-nO./x`: the value is attached
        f.runs_code = True
        f.exact_rule = True
        f.opaque("git grep -O opens the matching files with the program it names")
        return True
    if sub == "rebase" and "--edit-todo" in flags:
        f.runs_code = True
        f.opaque("git rebase --edit-todo rewrites the rebase plan in an editor")
        f.exact_rule = True
        return True
    return False


def checkout_may_discard(
    sub: str, rest: list[str], flags: set[str], cwd: str | None, ctx: Context
) -> bool:
    """`git checkout NAME…` (no `--`): may git read a NAME as a path?"""
    if sub != "checkout":
        return False
    if flags & _BRANCHING:
        # `-b NEW [START]`, `--track START`: a name after the branch and its start point
        # is a path (`git checkout --track origin/x file.py` restores file.py)
        names = _names_after_values(rest)
        return len(names) > (2 if flags & _NAMED_BRANCH else 1)
    names = [t for t in rest if not t.startswith("-")]
    if len(names) >= 2:
        return True  # `git checkout main README`: the names after the first are paths
    for name in names:
        if name in (".", "..") or "/" in name or "." in name or _PATHSPEC.search(name):
            return True
        if name.lower() in _PROJECT_NAMES:
            return True
        if cwd is not None and ctx.reader(posixpath.join(cwd, name)) is not None:
            return True  # a file of that name exists: git would restore it from the index
    return False


_NAMED_BRANCH = frozenset({"-b", "-B", "--orphan", "-c", "-C"})  # take the new name


def _names_after_values(rest: list[str]) -> list[str]:
    """The words that are not options, counting a branch option's value as a name."""
    names: list[str] = []
    for t in rest:
        if t == "--":
            break
        if not t.startswith("-"):
            names.append(t)
    return names


__all__ = ["checkout_may_discard", "judge_git_redirects"]
