"""The paths a command touches: secrets, protected and catastrophic targets."""

from __future__ import annotations

import posixpath
import re

from ..runs_later import (
    configured_places,
    configured_runs_later,
    glob_runs_later,
    relative,
    runs_later,
)
from . import knowledge as K
from .facts import Context, Facts, under
from .parse import Word, expand_braces
from .places import note_outside_read, scratch


def is_secret(path: str, ctx: Context) -> bool:
    rel = ctx.under_home(path)
    if rel is not None:
        # One's own home (even when it is /root): only its secret places and names.
        if rel and not ctx.inside(path) and under(rel, K.SECRET_DIRS_HOME):
            return True
        return bool(K.SECRET_NAME.search(path))
    if under(path, K.SECRET_SYSTEM) or K.SECRET_PROC.match(path):
        return True
    return bool(K.SECRET_NAME.search(path))


def holds_secrets(path: str, ctx: Context) -> bool:
    """A directory whose tree holds secrets: /, the home directory or one of its parents,
    or a system place such as /etc or /root."""
    home = ctx.home.rstrip("/")
    if path == "/" or path == ctx.home or home.startswith(path.rstrip("/") + "/"):
        return True
    return under(path, K.SECRET_TREES)


def note_read(f: Facts, word: Word, cwd: str | None, ctx: Context) -> None:
    path = ctx.path(word, cwd)
    if path is None:
        f.unknown_reads = True  # harmless for most files, but it may be a protected one
        if word.text.startswith("/proc/") and "environ" in word.text:
            f.secret = True  # /proc/$pid/environ: someone's environment
            f.ask("reads a process environment")
        elif K.DYNAMIC_SECRET_HINT.search(word.text):
            # `cat $(echo ~/.ssh/id_rsa)`: a file named at run time that may be a secret.
            f.unknown_paths = True
            f.ask(f"reads a path built at run time that may be a secret ({word.text})")
        return
    if path in K.PSEUDO_FILES:
        return
    f.reads.append(path)
    if is_secret(path, ctx):
        f.secret = True
        f.ask(f"reads secrets ({path})")
    else:
        note_outside_read(f, path, ctx)


def note_write(
    f: Facts, word: Word, cwd: str | None, ctx: Context, *, content: bool = True
) -> None:
    """A file written (or created/changed) by the command; `content` false for chmod etc."""
    if word.text.startswith(("/dev/tcp/", "/dev/udp/")):
        f.network = True
        f.raise_to("network", f"opens a network connection ({word.text})")
        return
    path = ctx.path(word, cwd)
    if path is None:
        f.unknown_paths = True
        f.ask(f"writes a path only known at run time ({word.text})")
        return
    if path in K.PSEUDO_FILES or path.startswith(("/dev/fd/", "/proc/self/fd/")):
        return
    f.writes.append(path)
    home_rel = ctx.under_home(path)
    if K.DISK_DEVICE.match(path):
        f.deny(f"writes a disk device ({path})")
    elif content and home_rel and K.HOME_STARTUP.match(home_rel):
        f.deny(f"overwrites a startup or credential file in the home directory ({path})")
    elif ctx.inside(path):
        # The workspace first: a project under /root (CI runs as root) is still the project.
        rel = path[len(ctx.workspace) :].lstrip("/")
        if rel and under(rel, K.WORKSPACE_PROTECTED):
            f.ask(f"writes a protected path in the workspace ({rel})")
        note_runs_later(f, word, path, ctx, "writes")
    elif home_rel is None and (path == "/" or under(path, K.SYSTEM_WRITE_DENY)):
        f.deny(f"overwrites system files ({path})")
    elif scratch(path, ctx, content=content):  # temp directories: an ordinary recorded write
        f.note(f"writes scratch space in the temp directory ({path})")
    else:
        f.ask(f"writes outside the workspace ({path})")


def plant(f: Facts, reason: str) -> None:
    """The command plants code that something runs later. Like `crontab`, that is a
    privilege: it asks, `accept-edits` does not wave it through as an ordinary edit, and
    "always" saves an exact rule, never a prefix."""
    f.raise_to("privilege", reason)
    f.ask(reason)
    f.boundaries.append(reason)


def unjudged(f: Facts, reason: str) -> None:
    """The files a command writes could not be worked out (content unread, a transform):
    its effects are unknown, so it asks and is never an ordinary edit."""
    f.opaque(reason)
    f.ask(reason)
    f.boundaries.append(reason)


def note_runs_later(f: Facts, word: Word, path: str, ctx: Context, verb: str) -> None:
    """Ask when `path` (inside the workspace) is code that git, a shell or CI runs later;
    a glob is judged by every name it could expand to."""
    rel = relative(path, ctx.workspace)
    if rel is None:
        return
    # `{.git,src}/hooks` inside a longer word reaches here unexpanded: judge each reading.
    for text in _readings(rel, word):
        why = (glob_runs_later(text) if word.glob else runs_later(text)) or (
            configured_runs_later(text, git_places(ctx))
        )
        if why and verb == "writes":
            plant(f, f"{verb} code that runs later ({why})")
            return
        if why:  # deleting or moving it away plants nothing, but it is still code: ask
            f.ask(f"{verb} code that runs later ({why})")
            return


def git_places(ctx: Context) -> list[tuple[str, str]]:
    """What the workspace's git config (and the user's) makes code: a custom hooks
    directory, included files, programs named by path; and where `.git/hooks` links to.
    Read once per analysis through the context's reader."""
    if ctx.git_places is None:
        places: list[tuple[str, str]] = []
        gitdir = posixpath.join(ctx.workspace, ".git")
        for config, folder in (
            (posixpath.join(gitdir, "config"), gitdir),
            (posixpath.join(ctx.home, ".gitconfig"), ctx.home),
            (
                posixpath.join(ctx.home, ".config/git/config"),
                posixpath.join(ctx.home, ".config/git"),
            ),
        ):
            data = ctx.reader(ctx.resolve(config))
            if data:
                places += configured_places(data.decode("utf-8", "replace"), folder, ctx.workspace)
        hooks = ctx.resolve(posixpath.join(gitdir, "hooks"))
        rel = relative(hooks, ctx.workspace)
        if rel and not rel.startswith(".git/"):
            places.append((rel, ".git/hooks links here: git runs the hooks in it"))
        ctx.git_places = places
    return ctx.git_places


def _readings(rel: str, word: Word) -> list[str]:
    """Each text a glob word may stand for: brace lists expanded, `{a..z}` as `*`."""
    if not word.glob or "{" not in rel:
        return [rel]
    return [re.sub(r"\{[^{}]*\.\.[^{}]*\}", "*", t) for t in expand_braces(rel)]


def note_link_target(f: Facts, word: Word, link_dirs: list[str | None], ctx: Context) -> None:
    """`ln [-s] TARGET LINK`: a link to protected state or to code that runs later lets a
    later, harmless-looking write (`cp x link/hooks/pre-commit`) go there, so making it asks.
    A relative symbolic target is read from the link's directory or from the current one
    (`ln -r`): every reading in `link_dirs` is judged."""
    if word.dynamic:
        f.unknown_paths = True
        f.ask(f"links to a path only known at run time ({word.text})")
        return
    for base in link_dirs:
        path = ctx.path(word, base)
        if path is None or not ctx.inside(path):
            continue
        rel = relative(path, ctx.workspace) or ""
        for text in _readings(rel, word):
            why = (glob_runs_later(text) if word.glob else runs_later(text)) or (
                f"{text} is protected" if text and under(text, K.WORKSPACE_PROTECTED) else None
            )
            if why:
                plant(f, f"links to code that runs later or protected state ({why})")
                return


def note_repository_copy(f: Facts, word: Word, cwd: str | None, ctx: Context) -> None:
    """Copying a `.git` directory (or its HEAD) elsewhere makes a repository under another
    name, whose config git obeys when run there; its config is then no longer a `.git` path."""
    path = ctx.path(word, cwd)
    rel = relative(path, ctx.workspace) if path else None
    if rel is None:
        return
    parts = rel.lower().split("/")
    if ".git" in parts or parts[-1] == "head":
        plant(f, f"copies git internals ({rel}): the copy is a repository git would obey")


def bulk_target(path: str) -> str:
    """`/x/*` or `/x/.*` wipes /x: judge the directory, not the pattern."""
    base = posixpath.basename(path)
    if base and not base.strip("*?.[]!^{},"):
        return posixpath.dirname(path) or "/"
    return path


def note_delete(
    f: Facts, word: Word, cwd: str | None, ctx: Context, *, recursive: bool, verb: str = "deletes"
) -> None:
    path = ctx.path(word, cwd)
    if path is None:
        f.unknown_paths = True
        f.ask(f"{verb} a path only known at run time ({word.text})")
        return
    if path in K.PSEUDO_FILES:
        return
    f.writes.append(path)
    target = bulk_target(path) if word.glob else path
    why = catastrophic_target(target, ctx, recursive)
    if why:
        f.deny(f"{verb} {why}")
    elif not ctx.inside(path):
        f.ask(f"{verb} outside the workspace ({path})")
    elif under(path[len(ctx.workspace) :].lstrip("/"), K.WORKSPACE_PROTECTED):
        f.ask(f"{verb} a protected path in the workspace ({path})")
    else:
        note_runs_later(f, word, path, ctx, verb)


def catastrophic_target(path: str, ctx: Context, recursive: bool) -> str:
    """Why deleting or moving `path` is catastrophic, or '' when it is not."""
    ws = ctx.workspace
    if recursive:
        if path == "/":
            return "the root directory"
        if path == ctx.home:
            return "the home directory"
        if path == ws or ws.startswith(path.rstrip("/") + "/"):
            return f"the project or one of its parents ({path})"
        if path == ws.rstrip("/") + "/.git":
            return "the project's git history (.git)"
    if ctx.inside(path) or under(path, K.TEMP_DIRS) or path.startswith("/var/folders/"):
        return ""
    rel = ctx.under_home(path)
    if rel is not None:
        if rel == "":
            return "the home directory" if recursive else ""
        if K.HOME_STARTUP.match(rel):
            return f"a startup or credential file ({path})"
        if recursive and not under(rel, K.HOME_CACHES):
            return f"files in the home directory ({path})"
        return ""
    if under(path, K.SYSTEM_WRITE_DENY) or (recursive and under(path, K.SYSTEM_DIRS)):
        return f"system files ({path})"
    return ""
