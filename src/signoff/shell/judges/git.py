"""Judging git: which subcommands only read, change the repository, destroy or go online."""

from __future__ import annotations

from collections.abc import Callable

from ...runs_later import git_config_key_asks, relative
from .. import knowledge as K
from ..args import has_flag, positionals, texts_of
from ..content import judge_git_patch
from ..facts import Context, Facts
from ..options import GIT_CONFIG_LONG, expand_long
from ..parse import Cmd, Word
from ..paths import note_delete, note_write, plant
from ..places import note_cwd_read
from .git_redirects import checkout_may_discard, judge_git_redirects

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..facts import ShellClass

    Write = Callable[[ShellClass, str], None]


def judge_git(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    i = 0
    cwd = cmd.cwd
    work_tree: str | None = None  # `--work-tree=X`: what git changes is X, not the cwd
    while i < len(texts) and texts[i].startswith("-"):
        t = texts[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if t in ("-c", "--config-env") or t.startswith("--config-env="):
            setting = t.partition("=")[2] if "=" in t else (value.text if value else "")
            if value is not None and value.dynamic and "=" not in t:
                f.opaque("git -c with a setting only known at run time")
            else:
                _config_override(setting, f)
        elif t.startswith(("-c", "--exec-path")):
            f.opaque("git -c / --exec-path can make git run any program")
        elif t in ("--git-dir", "--work-tree") or t.startswith(("--git-dir=", "--work-tree=")):
            _repository_option(t, value, f, cwd, ctx)
            if t.startswith("--work-tree"):
                tree = Word(t.partition("=")[2]) if "=" in t else value
                work_tree = ctx.path(tree, cwd) if tree is not None else None
        if t == "-C" and i + 1 < len(args):
            cwd = ctx.path(args[i + 1], cwd)
        i += 2 if t in K.GIT_GLOBAL_WITH_VALUE else 1
    if i >= len(texts):
        f.note("git without a subcommand prints help")
        return
    sub, rest = texts[i], texts[i + 1 :]
    if sub not in ("help", "version"):
        note_cwd_read(f, cwd, ctx)  # git reads the repository it runs in: `git -C ../x log`
    for t in rest:
        name = t.partition("=")[0]
        # git takes any unambiguous prefix of a long option: `--outp=x` is `--output=x`.
        if any(
            t == o
            or t.startswith(o + "=")
            or (len(name) >= 4 and o.startswith("--") and o.startswith(name))
            for o in K.GIT_UNSAFE_OPTS
        ):
            f.opaque(f"git {sub} {t} writes files or runs external programs")
    where = work_tree or cwd
    written = Word(where) if where else Word("", dynamic=True)

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
    flags = _flag_set(rest) | ({"."} if "." in rest else set())
    if judge_git_redirects(sub, rest, pos, flags, f, write):
        return
    if sub in K.GIT_READ:
        f.note(f"git {sub} only reads")
    elif sub in ("branch", "tag"):
        listing = {
            "-l",
            "--list",
            "-n",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "-r",
            "--remotes",
            "-v",
            "-vv",
            "--verbose",
        }
        deleting = flags & {"-d", "-D", "--delete"} or any(
            len(t) >= 5 and "--delete".startswith(t) for t in flags
        )
        # git takes an unambiguous prefix of a long option: `--forc` is `--force`.
        forced = flags & {"-D", "-f"} or any(len(t) >= 5 and "--force".startswith(t) for t in flags)
        if deleting and sub == "branch" and not forced:
            # -d refuses a branch that is not merged: its commits stay reachable.
            write("reversible_write", "git branch -d deletes a branch that is already merged")
        elif deleting:
            write(
                "destructive",
                "git branch -D deletes a branch even when it is not merged"
                if sub == "branch"
                else f"git {sub} -d deletes a {sub}",
            )
        elif flags & listing or any(
            t.startswith(("--sort", "--format", "--contains", "--points-at", "--merged"))
            for t in rest
        ):
            f.note(f"git {sub} lists")
        elif pos or (
            flags & {"-m", "-M", "-c", "-C", "-f", "--force", "-a", "-s", "-u"}
            and (sub == "tag" or flags & {"-m", "-M", "-c", "-C", "-f", "--force", "-u"})
        ):
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
    elif (sub, pos[:1]) in (
        ("lfs", ["install"]),
        ("lfs", ["update"]),
        ("maintenance", ["start"]),
        ("maintenance", ["register"]),
    ):
        plant(f, f"git {sub} {pos[0]} installs hooks or scheduled jobs that run later")
        write("reversible_write", f"git {sub} {pos[0]} changes the repository")
    elif sub in ("stash", "worktree", "reflog", "notes", "sparse-checkout", "lfs"):
        action = pos[0] if pos else ""
        if action in ("list", "show", ""):
            if sub == "stash" and not action:
                write("reversible_write", "git stash puts changes aside")
            else:
                f.note(f"git {sub} {action} only reads")
        elif sub == "worktree" and action == "add":
            targets = positionals(args[i + 1 :], frozenset({"-b", "-B", "--reason"}))[1:2]
            for w in targets:
                note_write(f, w, cwd, ctx)
            write("reversible_write", "git worktree add checks out another working tree")
        elif action in ("drop", "clear", "remove", "prune", "expire", "delete"):
            write("destructive", f"git {sub} {action} deletes irreversibly")
        else:
            write("reversible_write", f"git {sub} {action} changes the repository")
    elif sub == "config":
        judge_git_config(args[i + 1 :], f, write, cwd, ctx)
    elif sub == "init" and any(t.partition("=")[0] in _INIT_ELSEWHERE for t in rest):
        option = next(t for t in rest if t.partition("=")[0] in _INIT_ELSEWHERE)
        f.opaque(f"git init {option} makes a repository whose hooks or config come from elsewhere")
    elif sub == "rebase" and (has_flag(args[i + 1 :], "-x", "-i") or "--interactive" in rest):
        f.runs_code = True
        f.opaque("git rebase -x/-i runs commands or an editor")
    elif sub in ("mktree", "read-tree", "update-index") and not _plain_update_index(sub, rest):
        f.opaque(
            f"git {sub} puts content into the index that no file in the working tree "
            "shows (a later checkout writes it)"
        )
    elif sub == "mv" and len(pos) >= 2:
        f.raise_to("reversible_write", "git mv moves files")
        for w in [a for a in args[i + 1 :] if not a.text.startswith("-")][:-1]:
            note_delete(f, w, cwd, ctx, recursive=True, verb="moves away")
        note_write(f, [a for a in args[i + 1 :] if not a.text.startswith("-")][-1], cwd, ctx)
        write("reversible_write", "git mv changes the repository")
    elif sub in ("apply", "am"):
        if judge_git_patch(sub, args[i + 1 :], f, cmd, cwd, ctx):
            write("reversible_write", f"git {sub} changes the repository")
    elif sub in ("checkout", "switch", "restore", "reset"):
        discards = (
            (sub == "restore" and not (flags <= {"--staged", "-S"} and "--staged" in flags))
            or flags
            & {
                "-f",
                "--force",
                "--hard",
                "--merge",
                "--keep",
                "--discard-changes",
                "-p",
                "--patch",
                "--",
                ".",
                "--pathspec-from-file",
            }
            or checkout_may_discard(sub, rest, flags, cwd, ctx)
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
        if sub == "push" and (
            flags & {"-f", "--force", "--delete", "-d", "--mirror", "--force-with-lease", "--prune"}
            or any(p.startswith((":", "+")) for p in pos)
        ):
            f.note("rewrites or deletes history on the remote")
            _force_push_to_main(flags, pos, f)
        if sub in ("pull", "clone"):
            write("network", f"git {sub} writes into the working tree")
    elif sub in (
        "add",
        "commit",
        "merge",
        "rebase",
        "cherry-pick",
        "revert",
        "mv",
        "init",
        "tag",
        "rerere",
        "maintenance",
        "commit-tree",
        "update-index",
        "read-tree",
        "write-tree",
        "mktree",
        "hash-object",
        "pack-refs",
        "repack",
        "symbolic-ref",
        "format-patch",
    ):
        write("reversible_write", f"git {sub} changes the repository")
    elif sub in K.GIT_OPAQUE:
        f.opaque(f"git {sub} can run other programs")
    else:
        f.opaque(f"git {sub} is not a known git command (it may be an alias that runs anything)")


# Branches whose history a team shares: rewriting or deleting them on the remote loses
# everyone's work (a hosted remote keeps no reflog its users can reach).
_SHARED_BRANCHES = frozenset(
    {"main", "master", "trunk", "develop", "production", "prod", "release"}
)


def _force_push_to_main(flags: set[str], pos: list[str], f: Facts) -> None:
    """`git push --force origin main`, `git push origin +main`, `--mirror`, `--delete main`:
    deny. `--force-with-lease` (refuses to overwrite work it has not seen) keeps asking, as
    does a force push whose branch is not named (it depends on the current branch)."""
    refs = pos[1:]  # after the remote

    def names(ref: str) -> str:
        return ref.lstrip("+:").rpartition(":")[2].removeprefix("refs/heads/")

    forced = bool(flags & {"-f", "--force"}) and "--force-with-lease" not in flags
    deleting = bool(flags & {"--delete", "-d"})
    shared = [r for r in refs if names(r) in _SHARED_BRANCHES]
    if "--mirror" in flags:
        f.deny("git push --mirror overwrites and deletes every branch on the remote")
    elif shared and (forced or deleting or any(r.startswith((":", "+")) for r in shared)):
        f.deny(
            f"rewrites or deletes the shared branch {names(shared[0])} on the remote "
            "(use --force-with-lease, or a person pushes)"
        )


# --------------------------------------------------------------------------- git config

_INIT_ELSEWHERE = frozenset({"--bare", "--template", "--separate-git-dir"})
_CONFIG_VALUE_OPTS = frozenset(
    {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url", "-t"}
)
_CONFIG_READ_OPTS = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    }
)
_CONFIG_WRITE_OPTS = frozenset(
    {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section"}
)
_CONFIG_VERBS = frozenset(
    {"list", "get", "set", "unset", "rename-section", "remove-section", "edit"}
)


def judge_git_config(
    args: list[Word], f: Facts, write: Write, cwd: str | None, ctx: Context
) -> None:
    """`git config`: reading is free; setting a key that runs programs asks, in any scope."""
    args = expand_long(args, GIT_CONFIG_LONG)
    flags: set[str] = set()
    pos: list[Word] = []
    files: list[Word] = []
    skip = False
    for k, w in enumerate(args):
        t = w.text
        if skip:
            skip = False
            continue
        if t.startswith("--") and "=" in t:
            name = t.partition("=")[0]
            flags.add(name)
            if name == "--file":
                files.append(Word(t.partition("=")[2], w.dynamic, w.glob, w.quoted))
        elif t.startswith("-") and t != "-" and not w.quoted:
            flags.add(t)
            if t in _CONFIG_VALUE_OPTS:
                skip = True
                if t in ("-f", "--file") and k + 1 < len(args):
                    files.append(args[k + 1])
            elif t.startswith("-f") and not t.startswith("--"):  # `-fFILE`, attached
                files.append(Word(t[2:], w.dynamic, w.glob, w.quoted))
        else:
            pos.append(w)
    verb = pos[0].text if pos and pos[0].text in _CONFIG_VERBS else ""
    keys = pos[1:] if verb else pos
    if flags & {"-e", "--edit"} or verb == "edit":
        f.runs_code = True
        f.opaque("git config --edit runs an editor")
        return
    reading = (
        verb in ("list", "get")
        or bool(flags & _CONFIG_READ_OPTS)
        or (not verb and not flags & _CONFIG_WRITE_OPTS and len(keys) == 1)
    )
    if reading or (not keys and not verb):
        f.note("git config reads settings")
        return
    if any(w.dynamic for w in keys[:1]):
        f.opaque("git config sets a key only known at run time")
        return
    key = keys[0].text if keys else ""
    removing = verb in ("unset", "remove-section") or bool(
        flags & {"--unset", "--unset-all", "--remove-section"}
    )
    why = None
    if verb == "rename-section" or "--rename-section" in flags:
        why = "git config --rename-section moves keys into another section"
    elif not removing:
        why = git_config_key_asks(key)
    f.raise_to("reversible_write", f"git config {'removes' if removing else 'sets'} {key}")
    if why:
        plant(f, why)
    if flags & {"--global", "--system"}:
        scope = "--global" if "--global" in flags else "--system"
        f.ask(f"git config {scope} changes settings outside the workspace")
    for w in files:
        note_write(f, w, cwd, ctx)
    if not files and not flags & {"--global", "--system"}:
        write("reversible_write", "git config changes the repository's settings")


def _config_override(setting: str, f: Facts) -> None:
    """`git -c key=value` / `--config-env=key=ENV`: the same keys as git config."""
    key = setting.partition("=")[0]
    why = git_config_key_asks(key) if key else "git -c without a key"
    if why:
        f.runs_code = True
        f.opaque(why)
    else:
        f.note(f"git -c {key} only changes a harmless setting")


def _repository_option(
    opt: str, value: Word | None, f: Facts, cwd: str | None, ctx: Context
) -> None:
    """`--git-dir=X`: git obeys X's config and hooks, whatever X is called."""
    word = Word(opt.partition("=")[2]) if "=" in opt else value
    path = ctx.path(word, cwd) if word is not None else None
    name = opt.partition("=")[0]
    if path is None:
        f.opaque(f"git {name} names a directory only known at run time")
        return
    rel = relative(path, ctx.workspace)
    if rel is None:
        f.ask(f"git {name} points outside the workspace ({path})")
    elif name == "--git-dir" and rel.split("/")[-1] != ".git":
        f.opaque(f"git --git-dir={rel}: git would obey that directory's config and hooks")


def _plain_update_index(sub: str, rest: list[str]) -> bool:
    """`git update-index --refresh` and friends only touch what is already there."""
    if sub != "update-index":
        return False
    adding = {"--add", "--cacheinfo", "--index-info", "--replace", "--stdin", "-z"}
    return not any(t in adding or t.startswith("--cacheinfo=") for t in rest)


def _flag_set(words: list[str]) -> set[str]:
    """Options as git reads them: a bundle of short flags is each flag (`-qf` is `-q -f`,
    `-Dv` is `-D -v`), and a long option counts by its name too (`--opt=value`)."""
    flags: set[str] = set()
    for t in words:
        if t == "--":
            flags.add(t)
        elif not t.startswith("-"):
            continue
        elif t.startswith("--"):
            flags.update((t, t.partition("=")[0]))
        else:
            flags.add(t)
            if len(t) > 2:
                flags.update("-" + c for c in t[1:])
    return flags
