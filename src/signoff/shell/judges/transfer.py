"""Catastrophic transfers: mirror deletes into home or a root, containers that reach the
host through a bind mount, and secret files uploaded to any remote.

- `rsync --delete` / `rclone sync` make the destination look like the source: into `/`,
  the home directory (or a parent), the project (or a parent), a credential place, or a
  remote root or home, that deletes everything the source lacks. `--remove-source-files`
  and `rclone move` delete their sources.
- `docker run -v /:/host alpine rm -rf /host`: the command run inside a container is judged
  again with every path mapped back through the bind mounts (`/host` is `/`).
- Uploading a secret file (dotenv, keys, cloud credentials) or a tree that holds them
  (home, `/etc`) through gh, aws, gsutil, gcloud, az, httpie, mail, croc and friends.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable

from ...lazyre import lazy
from .. import knowledge as K
from ..args import has_flag, option_values, positionals, texts_of
from ..facts import Context, Facts, under
from ..parse import Cmd, Word
from ..paths import is_secret, note_delete, note_read
from .network import is_remote

Judge = Callable[[str, list[Word], Facts, Cmd, Context], "list[Facts] | None"]

# --------------------------------------------------------------------------- secret uploads


def _secret_tree(path: str, ctx: Context) -> bool:
    """A directory whose upload carries secrets with it: /, home or a parent, /etc, /root."""
    home = ctx.home.rstrip("/")
    return (
        path == "/"
        or path == ctx.home
        or home.startswith(path.rstrip("/") + "/")
        or under(path, ("/etc", "/root"))
    )


def sends(
    tool: str, words: list[Word], f: Facts, cmd: Cmd, ctx: Context, *, files: bool = True
) -> None:
    """`words` name local files sent to a remote: a secret (or a tree of them) is denied.
    `files` false when the caller already judged single files (scp, rsync, curl)."""
    f.network = True
    for w in words:
        if w.text.startswith("-") or is_remote(w) or "://" in w.text:
            continue
        if not w.dynamic and (w.text == "~" or w.text.startswith("~/")):
            w = Word(ctx.home + w.text[1:], glob=w.glob)  # httpie, aws: they expand ~ too
        path = ctx.path(w, cmd.cwd)
        if path is None:
            continue
        if files and is_secret(path, ctx):
            note_read(f, w, cmd.cwd, ctx)
            f.deny(f"uploads a secret file ({path}) to a remote ({tool})")
        elif not ctx.inside(path) and _secret_tree(path, ctx):
            f.secret = True
            f.deny(f"uploads {path}, which holds keys and credentials, to a remote ({tool})")


_AT_FILE = lazy(r"^[^=:@]*(?::=@|=@|@)(.+)$")


def _at_files(items: list[Word]) -> list[Word]:
    """`@file`, `field@file`, `field=@file`, `field:=@file` (httpie, gh api -F)."""
    out = []
    for w in items:
        m = _AT_FILE.match(w.text)
        if m and "://" not in w.text:
            out.append(Word(m.group(1), w.dynamic, w.glob, w.quoted))
    return out


_GH_VALUES = frozenset(
    {
        "-d",
        "--desc",
        "-f",
        "--filename",
        "-n",
        "--notes",
        "-t",
        "--title",
        "-F",
        "--notes-file",
        "--target",
        "--discussion-category",
        "-R",
        "--repo",
        "-b",
        "--body",
        "-a",
        "--add",
        "-B",
        "--base",
        "-H",
        "--head",
        "-l",
        "--label",
        "-m",
        "--milestone",
        "-p",
        "--project",
        "--body-file",
        "--notes-start-tag",
    }
)


def _gh(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(args, _GH_VALUES)
    verb = texts_of(pos[:2])
    files: list[Word] = []
    if verb == ["gist", "create"] or verb == ["gist", "new"]:
        files = pos[2:]
    elif verb[:1] == ["gist"]:
        files = option_values(args, "-a", "--add")
    elif verb in (["release", "upload"], ["release", "create"]):
        files = [Word(w.text.split("#")[0], w.dynamic, w.glob, w.quoted) for w in pos[3:]]
        files += option_values(args, "-F", "--notes-file")
    elif verb[:1] in (["issue"], ["pr"]):
        files = option_values(args, "-F", "--body-file")
    elif verb[:1] == ["api"]:
        files = option_values(args, "--input") + _at_files(option_values(args, "-F", "--field"))
    sends(f"{base} {' '.join(verb)}", files, f, cmd, ctx)


_AWS_FLAGS = frozenset(
    {
        "--recursive",
        "--delete",
        "--dryrun",
        "--quiet",
        "--no-progress",
        "--follow-symlinks",
        "--no-follow-symlinks",
        "--exact-timestamps",
        "--size-only",
        "--only-show-errors",
        "--no-guess-mime-type",
        "--force-glacier-transfer",
        "--no-sign-request",
        "--debug",
        "--no-verify-ssl",
        "--no-paginate",
        "--ignore-glacier-warnings",
    }
)


def _aws(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    values = frozenset(
        t for t in texts_of(args) if t.startswith("--") and "=" not in t and t not in _AWS_FLAGS
    )
    pos = positionals(args, values)
    verb = texts_of(pos[:2])
    if verb in (["s3", "cp"], ["s3", "mv"], ["s3", "sync"]):
        sends(f"aws s3 {verb[1]}", pos[2:-1], f, cmd, ctx)
    elif verb == ["s3api", "put-object"]:
        sends("aws s3api put-object", option_values(args, "--body"), f, cmd, ctx)


def _gsutil(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(args, frozenset({"-h", "-o", "-p", "-u", "-x", "-z", "-j", "-a"}))
    words = texts_of(pos)
    tool = base
    if base == "gcloud":
        if words[:1] != ["storage"]:
            return
        pos, words, tool = pos[1:], words[1:], "gcloud storage"
    if words[:1] and words[0] in ("cp", "mv", "rsync"):
        sends(f"{tool} {words[0]}", pos[1:-1], f, cmd, ctx)


def _az(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if "upload" in texts_of(args) or "upload-batch" in texts_of(args) or "sync" in texts_of(args):
        sends("az storage", option_values(args, "-f", "--file", "-s", "--source"), f, cmd, ctx)


def _httpie(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    sends(base, _at_files(positionals(args)), f, cmd, ctx)


def _mail(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    flags = ("-A", "--attach") if base in ("mail", "mailx") else ("-a", "--attach")
    sends(base, option_values(args, *flags), f, cmd, ctx)


def _sender(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    """croc send, wormhole send, ffsend upload: hand files to a stranger's relay."""
    pos = positionals(
        args,
        frozenset(
            {
                "--code",
                "-c",
                "--relay",
                "--text",
                "-d",
                "--downloads",
                "-p",
                "--password",
                "-e",
                "--expiry-time",
            }
        ),
    )
    if pos[:1] and pos[0].text in ("send", "upload", "u", "up"):
        f.network = True
        f.raise_to("network", f"{base} sends files over the network")
        sends(base, pos[1:], f, cmd, ctx)


# --------------------------------------------------------------------------- mirror deletes

_RSYNC_DELETES = (
    "--delete",
    "--del",
    "--delete-before",
    "--delete-during",
    "--delete-delay",
    "--delete-after",
    "--delete-excluded",
    "--delete-missing-args",
)
_RSYNC_VALUES = frozenset(
    {
        "-e",
        "--rsh",
        "--rsync-path",
        "--exclude",
        "--include",
        "-f",
        "--filter",
        "--exclude-from",
        "--include-from",
        "--files-from",
        "-T",
        "--temp-dir",
        "--partial-dir",
        "--backup-dir",
        "--suffix",
        "--chown",
        "--chmod",
        "--log-file",
        "--password-file",
        "--port",
        "--timeout",
        "--bwlimit",
        "--max-size",
        "--min-size",
        "--compare-dest",
        "--copy-dest",
        "--link-dest",
        "-B",
        "--block-size",
        "-M",
        "--remote-option",
        "--out-format",
        "--info",
        "--debug",
        "--usermap",
        "--groupmap",
        "--iconv",
        "--max-delete",
        "--modify-window",
        "--contimeout",
        "--sockopts",
        "--read-batch",
        "--write-batch",
        "--only-write-batch",
        "--protocol",
        "--checksum-choice",
        "--compress-choice",
        "--compress-level",
        "--skip-compress",
        "--address",
    }
)
# A remote path that is the remote's root, a system place or a home directory.
_REMOTE_ROOT = lazy(
    r"^(/*|~[^/]*/?|/(home|Users)/[^/]+/?|/root/?|/(var|opt|srv|home)/?"
    r"|/(etc|usr|bin|sbin|boot|lib\w*)(/.*)?)$"
)


def mirror_target(path: str, ctx: Context) -> str:
    """Why mirroring into (and so deleting what is not in the source from) `path` is
    catastrophic, or ''."""
    ws = ctx.workspace
    if path == "/" or under(path, K.SYSTEM_WRITE_DENY):
        return f"system files ({path})"
    if path == ctx.home or ctx.home.startswith(path.rstrip("/") + "/"):
        return f"the home directory ({path})"
    if path == ws or ws.startswith(path.rstrip("/") + "/"):
        return f"the project or one of its parents ({path})"
    rel = ctx.under_home(path)
    if rel and not ctx.inside(path) and K.HOME_STARTUP.match(rel):
        return f"a startup or credential place ({path})"
    return ""


def _remote_target(word: Word) -> str:
    host, _, path = word.text.partition(":")
    if not word.dynamic and _REMOTE_ROOT.match(path):
        return f"the remote {'home directory' if not path.startswith('/') else path} ({host})"
    return ""


def _dry_run(args: list[Word]) -> bool:
    return has_flag(args, "-n", "--dry-run")


def _rsync(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if _dry_run(args):
        return
    pos = positionals(args, _RSYNC_VALUES)
    if len(pos) < 2:
        return
    sources, dest = pos[:-1], pos[-1]
    if any(is_remote(w) for w in pos):
        sends(base, sources, f, cmd, ctx, files=False)
    if has_flag(args, "--remove-source-files"):
        for w in sources:
            why = _remote_target(w) if is_remote(w) else ""
            if why:
                f.deny(f"rsync --remove-source-files deletes {why}")
            elif not is_remote(w):
                note_delete(f, w, cmd.cwd, ctx, recursive=True, verb="moves away")
    if not has_flag(args, *_RSYNC_DELETES):
        return
    f.raise_to("destructive", "rsync --delete deletes what the source lacks at the destination")
    if is_remote(dest):
        why = _remote_target(dest)
        if why:
            f.deny(f"rsync --delete mirrors into {why}, deleting everything the source lacks")
        return
    whole = has_flag(args, "-R", "--relative") or any(
        s.dynamic or s.text.endswith("/") or posixpath.basename(s.text) in (".", "..", "")
        for s in sources
    )
    # `rsync -a --delete src dest` mirrors into dest/src; `src/` mirrors into dest itself.
    scopes = (
        [dest.text]
        if whole
        else [posixpath.join(dest.text, posixpath.basename(s.text)) for s in sources]
    )
    for text in scopes:
        path = ctx.path(Word(text, dest.dynamic), cmd.cwd)
        why = mirror_target(path, ctx) if path else ""
        if why:
            f.deny(f"rsync --delete mirrors into {why}, deleting everything the source lacks")
            return


def _rclone(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    if _dry_run(args):
        return
    pos = positionals(
        args,
        frozenset(
            {
                "--config",
                "--exclude",
                "--include",
                "--filter",
                "--transfers",
                "--checkers",
                "--backup-dir",
                "--log-file",
                "--bwlimit",
                "--max-age",
                "--min-age",
            }
        ),
    )
    verb, rest = (pos[0].text, pos[1:]) if pos else ("", [])
    if verb in ("copy", "copyto", "sync", "move", "moveto", "bisync"):
        sends(f"rclone {verb}", rest[:-1], f, cmd, ctx, files=False)
    if verb in ("move", "moveto"):
        for w in rest[:-1]:
            if not is_remote(w):
                note_delete(f, w, cmd.cwd, ctx, recursive=True, verb="moves away")
    targets = (
        rest[-1:] if verb in ("sync", "bisync") else rest if verb in ("delete", "rmdirs") else []
    )
    for w in targets:
        path = None if is_remote(w) else ctx.path(w, cmd.cwd)
        why = mirror_target(path, ctx) if path else ""
        if why:
            f.deny(
                f"rclone {verb} deletes every file in {why}"
                if verb in ("delete", "rmdirs")
                else f"rclone {verb} into {why} deletes everything the source lacks"
            )


# --------------------------------------------------------------------------- containers

_RUN_VALUES = frozenset(
    {
        "-e",
        "--env",
        "-v",
        "--volume",
        "-p",
        "--publish",
        "--name",
        "-w",
        "--workdir",
        "--mount",
        "--network",
        "--net",
        "-u",
        "--user",
        "--entrypoint",
        "-l",
        "--label",
        "--env-file",
        "-h",
        "--hostname",
        "--add-host",
        "--device",
        "--cpus",
        "-m",
        "--memory",
        "--restart",
        "--platform",
        "--pull",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--tmpfs",
        "--ulimit",
        "--log-driver",
        "--log-opt",
        "--volumes-from",
        "--gpus",
        "--shm-size",
        "--ipc",
        "--pid",
        "--uts",
        "--cidfile",
        "--cgroupns",
        "-a",
        "--attach",
        "--dns",
        "--expose",
        "--link",
        "--stop-signal",
        "--stop-timeout",
        "--runtime",
        "--label-file",
        "-c",
        "--cpu-shares",
        "--group-add",
        "--health-cmd",
        "--userns",
        "--cgroup-parent",
        "--memory-swap",
        "--network-alias",
        "--mac-address",
        "--ip",
        "--ip6",
        "--sysctl",
        "--annotation",
        "--pod",
        "--arch",
        "--os",
        "--detach-keys",
        "--init-path",
    }
)
_GLOBAL_VALUES = frozenset(
    {
        "-H",
        "--host",
        "-c",
        "--context",
        "--config",
        "-l",
        "--log-level",
        "--namespace",
        "-n",
        "--root",
        "--url",
        "--connection",
    }
)


def _container_argv(args: list[Word]) -> tuple[dict[str, list[Word]], list[Word]] | None:
    """For `docker [global] (run|create|container run) OPTIONS IMAGE CMD…`: the options by
    name and the command run inside (None for other subcommands)."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in _GLOBAL_VALUES else 1
    if i < len(args) and args[i].text == "container":
        i += 1
    if i >= len(args) or args[i].text not in ("run", "create"):
        return None
    opts: dict[str, list[Word]] = {}
    i += 1
    while i < len(args):
        w = args[i]
        t = w.text
        if not t.startswith("-") or t == "-":
            break
        name, eq, value = t.partition("=")
        if eq:
            opts.setdefault(name, []).append(Word(value, w.dynamic, w.glob, w.quoted))
        elif t in _RUN_VALUES and i + 1 < len(args):
            opts.setdefault(t, []).append(args[i + 1])
            i += 1
        elif not t.startswith("--") and len(t) > 2 and t[:2] in _RUN_VALUES:
            opts.setdefault(t[:2], []).append(Word(t[2:], w.dynamic, w.glob, w.quoted))
        else:
            opts.setdefault(t, [])
        i += 1
    inner = args[i + 1 :]
    for entry in opts.get("--entrypoint", [])[:1]:
        inner = [entry, *inner]
    return opts, inner


def _mounts(opts: dict[str, list[Word]], cmd: Cmd, ctx: Context) -> list[tuple[str, str]]:
    """(container path, host path) of every writable bind mount whose source is known."""
    found: list[tuple[Word, str, bool]] = []
    for w in opts.get("-v", []) + opts.get("--volume", []):
        parts = w.text.split(":")
        if len(parts) >= 2:
            found.append((Word(parts[0], w.dynamic), parts[1], "ro" in parts[2:3]))
    for w in opts.get("--mount", []):
        kv: dict[str, str] = {}
        for item in w.text.split(","):
            key, _, value = item.partition("=")
            kv[key] = value
        source = kv.get("source") or kv.get("src")
        target = kv.get("target") or kv.get("dst") or kv.get("destination")
        if kv.get("type", "volume") == "bind" and source and target:
            ro = "readonly" in kv or "ro" in kv
            found.append((Word(source, w.dynamic), target, ro))
    out = []
    for word, dst, ro in found:
        text = word.text
        if text.startswith("~"):
            text = ctx.home + text[1:]
        host = ctx.path(Word(text, word.dynamic), cmd.cwd) if text.startswith(("/", ".")) else None
        if host and not ro and dst.startswith("/") and dst != "/":
            out.append((posixpath.normpath(dst), host))
    return out


def _container(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    parsed = _container_argv(args)
    if parsed is None:
        return
    opts, inner = parsed
    mounts = _mounts(opts, cmd, ctx)
    if not inner or not mounts:
        return
    host_pid = any(w.text == "host" for w in opts.get("--pid", [])) or "--privileged" in opts
    workdir = (opts.get("-w") or opts.get("--workdir") or [Word("/")])[0]
    # A glob the host shell left alone reaches the container as written: keep it a glob.
    text = " ".join(
        w.text if w.glob and _PLAIN.fullmatch(w.text) else shlex.quote(w.text) for w in inner
    )
    for fact in _inside(text, workdir.text, mounts, ctx):
        if not fact.catastrophic:
            continue
        prog = posixpath.basename(fact.argv[0]) if fact.argv else ""
        if not host_pid and prog in (*K.KILLERS, *K.POWER, "killall5"):
            continue  # the container's own processes, not the host's
        src, dst = mounts[0][1], mounts[0][0]
        f.deny(f"{base} run mounts {src} at {dst}, and the command inside {fact.reasons[-1]}")
        return


_PLAIN = lazy(r"[\w./*?\[\]~-]+")


def _inside(text: str, workdir: str, mounts: list[tuple[str, str]], ctx: Context) -> list[Facts]:
    """The facts of `text` run in a container, its paths mapped back to the host. A path
    outside every mount is the container's own (a scratch place on the host), except a
    parent of a mount point: deleting it recursively deletes what is mounted below it."""
    ordered = sorted(mounts, key=lambda m: -len(m[0]))

    def to_host(path: str) -> str:
        for dst, src in ordered:
            if path == dst or path.startswith(dst + "/"):
                return ctx.resolve(src + path[len(dst) :])
        for dst, src in ordered:
            if path == "/" or dst.startswith(path.rstrip("/") + "/"):
                return src
        if path in K.PSEUDO_FILES:
            return path
        return posixpath.join("/tmp/.container", path.lstrip("/"))

    inner = Context(ctx.workspace, ctx.home, to_host, ctx.script, ctx.reader)
    inner.workspace, inner.home = ctx.workspace, ctx.home
    inner.git_places = []
    inner.depth = ctx.depth + 1
    inner.run_in = ctx.run_in
    inner.script = lambda t, at, env: ctx.run_in(t, at, env, inner)
    if inner.depth > 6:
        return []
    return ctx.run_in(text, workdir if workdir.startswith("/") else "/", {}, inner)


TRANSFER_JUDGES: dict[str, Judge] = {
    "gh": _gh,
    "aws": _aws,
    "gsutil": _gsutil,
    "gcloud": _gsutil,
    "az": _az,
    "http": _httpie,
    "https": _httpie,
    "httpie": _httpie,
    "xh": _httpie,
    "xhs": _httpie,
    "mail": _mail,
    "mailx": _mail,
    "mutt": _mail,
    "neomutt": _mail,
    "s-nail": _mail,
    "croc": _sender,
    "wormhole": _sender,
    "ffsend": _sender,
    "rsync": _rsync,
    "rclone": _rclone,
    "docker": _container,
    "podman": _container,
    "nerdctl": _container,
    "finch": _container,
}


def _scp(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    pos = positionals(args, frozenset({"-i", "-P", "-o", "-F", "-c", "-l", "-S", "-J", "-D", "-X"}))
    if any(is_remote(w) for w in pos):
        sends(base, pos[:-1], f, cmd, ctx, files=False)
    if base == "sftp" and cmd.stdin_text:  # `sftp host <<< 'put .env'`: a batch of puts
        puts = [line.split() for line in cmd.stdin_text.splitlines()]
        sends(
            base,
            [Word(p[1]) for p in puts if len(p) > 1 and p[0] in ("put", "mput", "reput")],
            f,
            cmd,
            ctx,
        )


TRANSFER_JUDGES.update({"scp": _scp, "sftp": _scp})
