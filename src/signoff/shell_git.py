"""Judging git: which subcommands only read, change the repository, destroy or go online."""

from __future__ import annotations

from . import shell_knowledge as K
from .shell_args import texts_of
from .shell_facts import Context, Facts, ShellClass
from .shell_parse import Cmd, Word


def judge_git(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    i = 0
    cwd = cmd.cwd
    while i < len(texts) and texts[i].startswith("-"):
        t = texts[i]
        if t.startswith(("-c", "--config-env", "--exec-path")):
            f.opaque("git -c / --config-env can make git run any program")
        if t == "-C" and i + 1 < len(args):
            cwd = ctx.path(args[i + 1], cwd)
        i += 2 if t in K.GIT_GLOBAL_WITH_VALUE else 1
    if i >= len(texts):
        f.note("git without a subcommand prints help")
        return
    sub, rest = texts[i], texts[i + 1:]
    for t in rest:
        if any(t == o or t.startswith(o + "=") for o in K.GIT_UNSAFE_OPTS):
            f.opaque(f"git {sub} {t} writes files or runs external programs")
    written = Word(cwd) if cwd else Word("", dynamic=True)

    def write(cls: ShellClass, reason: str) -> None:
        f.raise_to(cls, reason)
        if written.dynamic:
            f.unknown_paths = True
            f.ask("git runs in a directory only known at run time")
        elif not ctx.inside(written.text):
            f.ask(f"changes a repository outside the workspace ({written.text})")
        else:
            f.writes.append(written.text)

    pos = [t for t in rest if not t.startswith("-")]
    flags = {t for t in rest if t.startswith("-")} | ({"."} if "." in rest else set())
    if sub in K.GIT_READ:
        f.note(f"git {sub} only reads")
    elif sub in ("branch", "tag"):
        listing = {"-l", "--list", "-n", "--contains", "--no-contains", "--merged",
                   "--no-merged", "--points-at", "-r", "--remotes", "-v", "-vv", "--verbose"}
        if flags & {"-d", "-D", "--delete"}:
            write("destructive", f"git {sub} -d deletes a {sub}")
        elif flags & listing or any(t.startswith(("--sort", "--format", "--contains",
                                                   "--points-at", "--merged")) for t in rest):
            f.note(f"git {sub} lists")
        elif pos or (flags & {"-m", "-M", "-c", "-C", "-f", "--force", "-a", "-s", "-u"} and (
            sub == "tag" or flags & {"-m", "-M", "-c", "-C", "-f", "--force", "-u"}
        )):
            write("reversible_write", f"git {sub} creates or changes a {sub}")
        else:
            f.note(f"git {sub} lists")
    elif sub == "remote":
        if not pos or pos[0] in ("-v", "get-url"):
            f.note("git remote lists remotes")
        elif pos[0] in ("show", "prune", "update"):
            f.network = True
            f.raise_to("network", f"git remote {pos[0]} contacts the remote")
        else:
            write("reversible_write", "git remote changes the repository's remotes")
    elif sub in ("stash", "worktree", "reflog", "notes", "sparse-checkout", "lfs"):
        action = pos[0] if pos else ""
        if action in ("list", "show", ""):
            if sub == "stash" and not action:
                write("reversible_write", "git stash puts changes aside")
            else:
                f.note(f"git {sub} {action} only reads")
        elif action in ("drop", "clear", "remove", "prune", "expire", "delete"):
            write("destructive", f"git {sub} {action} deletes irreversibly")
        else:
            write("reversible_write", f"git {sub} {action} changes the repository")
    elif sub == "config":
        if flags & {"--get", "--get-all", "--get-regexp", "--list", "-l"} or len(pos) == 1:
            f.note("git config reads settings")
        else:
            f.opaque("git config can make git run other programs (pager, hooks, aliases)")
    elif sub in ("checkout", "switch", "restore", "reset"):
        discards = (
            (sub == "restore" and not (flags <= {"--staged", "-S"} and "--staged" in flags))
            or flags & {"-f", "--force", "--hard", "--merge", "--keep", "--discard-changes",
                        "-p", "--patch", "--", "."}
            or (sub == "checkout" and not flags & {"-b", "-B", "--orphan"}
                and any("." in p or "/" in p for p in pos))
        )
        if discards:
            write("destructive", f"git {sub} can discard uncommitted work irreversibly")
        else:
            write("reversible_write", f"git {sub} changes the working tree")
    elif sub in ("clean", "rm"):
        if sub == "clean" and flags & {"-n", "--dry-run"}:
            f.note("git clean -n only lists")
        elif sub == "rm" and "--cached" in flags:
            write("reversible_write", "git rm --cached unstages files")
        else:
            write("destructive", f"git {sub} deletes files irreversibly")
    elif sub in K.GIT_DESTRUCTIVE:
        write("destructive", f"git {sub} deletes history or objects irreversibly")
    elif sub in ("push", "fetch", "pull", "clone", "ls-remote", "archive", "send-email"):
        f.network = True
        f.raise_to("network", f"git {sub} talks to a remote repository")
        if sub == "push" and (flags & {"-f", "--force", "--delete", "-d", "--mirror",
                                       "--force-with-lease", "--prune"}
                              or any(p.startswith((":", "+")) for p in pos)):
            f.note("rewrites or deletes history on the remote")
        if sub in ("pull", "clone"):
            write("network", f"git {sub} writes into the working tree")
    elif sub in ("add", "commit", "merge", "rebase", "cherry-pick", "revert", "mv", "init",
                 "apply", "tag", "rerere", "maintenance", "commit-tree",
                 "update-index", "read-tree", "write-tree", "mktree", "hash-object", "pack-refs",
                 "repack", "symbolic-ref", "format-patch"):
        write("reversible_write", f"git {sub} changes the repository")
    elif sub in K.GIT_OPAQUE:
        f.opaque(f"git {sub} can run other programs")
    else:
        f.opaque(f"git {sub} is not a known git command (it may be an alias that runs anything)")
