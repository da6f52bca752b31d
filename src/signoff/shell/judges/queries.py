"""Local tools asked only to look: queries, listings, dry runs, and harmless removals.

Clients of databases, clusters and containers (`psql -l`, `kubectl get pods`, `docker
compose ps`), binary inspectors (`objdump`, `nm`, `readelf`), a HEAD request to a local
server, `rsync -n`: each is judged here by what this particular invocation does, so a
listing is allowed while the same program's writes, deletions and code keep asking with a
reason of their own (`kubectl delete` is not "reaches the network", `docker rm -f` is not
"runs project code"). Anything this module does not recognise returns False and falls
back to the program's family judgement, which asks.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from ..args import has_flag, option_values, positionals, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_delete, note_read, note_write
from .databases import DATABASE_JUDGES, LOCAL_HOSTS, parse_options
from .files import judge_read_only
from .tools import TOOL_PROGRAMS, judge_tool, loads_code

# Inspect binaries without running them. `ldd` is not one: glibc's ldd may run the program's
# own loader, so it asks (objdump -p / readelf -d show the same).
BINARY_INSPECTORS = frozenset(
    {
        "objdump",
        "nm",
        "readelf",
        "size",
        "c++filt",
        "addr2line",
        "otool",
        "llvm-objdump",
        "llvm-nm",
        "llvm-readelf",
        "llvm-readobj",
        "llvm-size",
        "elfedit-dump",
        "dwarfdump",
        "llvm-dwarfdump",
    }
)


def judge_local(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    """Judge `base` if this invocation is one of the known local queries; else False."""
    if judge_tool(base, args, f, cmd, ctx):
        return True
    if base in BINARY_INSPECTORS:
        judge_read_only(base, args, f, cmd, ctx)
        f.reasons = [f"{base} inspects a binary without running it"]
        return True
    if base == "ldd":
        f.runs_code = True
        f.opaque(
            "ldd may run the program it inspects (through its loader); "
            "objdump -p or readelf -d show its libraries without running it"
        )
        return True
    judge = _JUDGES.get(base)
    return judge is not None and judge(base, args, f, cmd, ctx)


# --------------------------------------------------------------------------- clusters

_KUBE_GLOBAL_VALUES = frozenset(
    {"-n", "--namespace", "--context", "--cluster", "--user", "--request-timeout", "-v", "--v"}
)
_KUBE_READ = frozenset(
    {
        "get",
        "describe",
        "logs",
        "explain",
        "api-resources",
        "api-versions",
        "version",
        "top",
        "events",
        "cluster-info",
    }
)
_KUBE_READ_PAIRS = frozenset(
    {
        ("auth", "can-i"),
        ("auth", "whoami"),
        ("config", "view"),
        ("config", "get-contexts"),
        ("config", "current-context"),
        ("config", "get-clusters"),
        ("config", "get-users"),
        ("rollout", "status"),
        ("rollout", "history"),
        ("plugin", "list"),
    }
)
_HELM_READ = frozenset(
    {
        "list",
        "ls",
        "status",
        "history",
        "hist",
        "version",
        "show",
        "inspect",
        "search",
        "lint",
        "template",
        "env",
    }
)
_HELM_READ_PAIRS = frozenset(
    {
        ("repo", "list"),
        ("repo", "ls"),
        ("plugin", "list"),
        ("plugin", "ls"),
        ("dependency", "list"),
        ("dep", "list"),
    }
)
# Reach another cluster with another user's credentials program, print secret values, or
# run a program: never a plain query.
_KUBE_REFUSED = ("--kubeconfig", "--raw", "--post-renderer", "--output-directory")


# Read only the local files (kubeconfig, helm's repository index and plugins).
_LOCAL_PAIRS = frozenset(
    {
        ("config", "get-contexts"),
        ("config", "current-context"),
        ("config", "get-clusters"),
        ("config", "get-users"),
        ("config", "view"),
        ("plugin", "list"),
        ("plugin", "ls"),
        ("repo", "list"),
        ("repo", "ls"),
        ("search", "repo"),
        ("dependency", "list"),
        ("dep", "list"),
    }
)


def _subcommand(texts: list[str], values: frozenset[str]) -> int:
    """The index of the first word that is not a global option (or its value)."""
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        i += 2 if texts[i] in values else 1
    return i


def _kubectl(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    texts = texts_of(args)
    if any(w.dynamic for w in args) or any(t.partition("=")[0] in _KUBE_REFUSED for t in texts):
        return False
    i = _subcommand(texts, _KUBE_GLOBAL_VALUES)
    sub = texts[i] if i < len(texts) else ""
    verb = next((t for t in texts[i + 1 :] if not t.startswith("-")), "")
    reads = _HELM_READ if base == "helm" else _KUBE_READ
    pairs = _HELM_READ_PAIRS if base == "helm" else _KUBE_READ_PAIRS
    if not (sub in reads or (sub, verb) in pairs):
        return _cluster_change(base, sub, f)
    if base == "kubectl" and sub == "cluster-info" and verb:
        return False  # cluster-info dump: everything, into files
    if base == "helm" and sub == "search" and verb not in ("repo", ""):
        return False
    if base == "kubectl" and sub == "get" and _prints_secrets(args[i + 1 :]):
        f.secret = True
        f.raise_to("network", "kubectl get reads the cluster")
        f.ask("kubectl get -o prints the values of Kubernetes secrets to the model")
        return True
    if base == "kubectl" and (sub, verb) == ("config", "view") and "--flatten" in texts:
        return False
    if (
        (sub, verb) in _LOCAL_PAIRS
        or (base == "helm" and sub in ("lint", "template", "env", "version"))
        or (sub == "version" and "--client" in texts)
    ):
        f.note(f"{base} {sub} only reads the local configuration")
        return True
    # A query of a live cluster sends what it holds (pods, logs, config maps, events) to
    # the model and its provider: like fetching a page, a person sees it first.
    f.network = True
    f.raise_to("network", f"{base} {sub} reads the state of a remote cluster")
    return True


# What the cluster commands that are not queries do, in their own words.
_CLUSTER_CHANGES = {
    "delete": "deletes resources from the cluster",
    "uninstall": "removes a release and its resources from the cluster",
    "drain": "evicts every pod from a node",
    "apply": "changes resources in the cluster",
    "create": "creates resources in the cluster",
    "replace": "replaces resources in the cluster",
    "patch": "changes resources in the cluster",
    "edit": "opens an editor and changes resources in the cluster",
    "scale": "changes how many pods run",
    "rollout": "restarts or rolls back deployments",
    "install": "installs a release into the cluster",
    "upgrade": "upgrades a release in the cluster",
    "rollback": "rolls a release back",
    "label": "changes resource labels",
    "annotate": "changes resource annotations",
    "set": "changes resources in the cluster",
    "cordon": "stops scheduling on a node",
    "taint": "changes where pods may run",
    "exec": "runs a command inside a container",
    "run": "starts a pod",
    "attach": "attaches to a running container",
    "cp": "copies files to or from a container",
    "port-forward": "opens a connection into the cluster",
    "proxy": "opens a proxy to the cluster's API",
    "debug": "starts a debugging container",
}


def _cluster_change(base: str, sub: str, f: Facts) -> bool:
    what = _CLUSTER_CHANGES.get(sub)
    if what is None:
        return False  # plugins and unknown subcommands: the network judgement
    f.network = True
    f.raise_to("network", f"{base} {sub} {what}")
    return True


def _prints_secrets(args: list[Word]) -> bool:
    kinds = [
        w.text.lower()
        for w in positionals(
            args, frozenset({"-o", "--output", "-l", "--selector", "-n", "--namespace"})
        )
    ]
    shown = [w.text for w in option_values(args, "-o", "--output")]
    revealing = any(o not in ("name", "wide") for o in shown) or any(
        t.startswith(("--template", "--show-managed")) for t in texts_of(args)
    )
    return revealing and any("secret" in k or k in ("all", "*") for k in kinds)


# --------------------------------------------------------------------------- containers

_DOCKER_GLOBAL_VALUES = frozenset({"--log-level", "-l"})
_DOCKER_READ = frozenset(
    {
        "ps",
        "images",
        "version",
        "info",
        "inspect",
        "logs",
        "top",
        "port",
        "history",
        "stats",
        "diff",
        "events",
        "search",
    }
)
_DOCKER_READ_PAIRS = frozenset(
    {
        ("container", v)
        for v in ("ls", "list", "ps", "inspect", "logs", "top", "port", "diff", "stats")
    }
    | {("image", v) for v in ("ls", "list", "inspect", "history")}
    | {
        (g, v)
        for g in (
            "volume",
            "network",
            "context",
            "plugin",
            "secret",
            "config",
            "node",
            "service",
            "stack",
        )
        for v in ("ls", "list")
    }
    | {("system", "df"), ("system", "info"), ("context", "show"), ("buildx", "ls")}
    | {("compose", v) for v in ("ps", "ls", "logs", "images", "top", "version", "port")}
)
_DOCKER_DELETE = {
    "rm": "deletes containers and the data inside them",
    "rmi": "deletes images",
    "kill": "stops running containers",
    "stop": "stops running containers",
    "down": "stops and deletes the project's containers and networks (and volumes with -v)",
    "prune": "deletes unused containers, images, networks or volumes",
}
_DOCKER_NETWORK = {
    "push": "uploads an image to a registry",
    "pull": "downloads an image",
    "login": "stores credentials for a registry",
    "logout": "removes stored registry credentials",
}


def _docker(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    texts = texts_of(args)
    if any(w.dynamic for w in args) or any(
        t.startswith(("-H", "--host", "--config", "-c", "--context")) for t in texts
    ):
        return False  # another daemon, another configuration: plugins and credentials
    i = _subcommand(texts, _DOCKER_GLOBAL_VALUES)
    sub = texts[i] if i < len(texts) else ""
    j = i + 1
    if sub == "compose":  # compose's own options: -f FILE, -p NAME, --profile P
        j = (
            i
            + 1
            + _subcommand(
                texts[i + 1 :],
                frozenset(
                    {
                        "-f",
                        "--file",
                        "-p",
                        "--project-name",
                        "--profile",
                        "--env-file",
                        "--project-directory",
                        "--ansi",
                        "--progress",
                    }
                ),
            )
        )
    verb = texts[j] if j < len(texts) else ""
    if sub == "compose" and (sub, verb) in _DOCKER_READ_PAIRS:
        f.note(f"{base} compose {verb} only reports on the project's containers")
        return True
    if sub == "compose" and verb == "config":
        f.secret = True
        f.ask(
            f"{base} compose config prints the project's configuration with its variables "
            "filled in (secrets from .env included)"
        )
        return True
    if sub in _DOCKER_READ or (sub, verb) in _DOCKER_READ_PAIRS:
        f.note(f"{base} {sub} only reports")
        return True
    grouped = sub in (
        "container",
        "image",
        "volume",
        "network",
        "system",
        "compose",
        "builder",
        "buildx",
    )
    action = verb if grouped else sub
    label = f"{base} {sub} {verb}" if grouped else f"{base} {sub}"
    if action in _DOCKER_DELETE:
        what = _DOCKER_DELETE[action]
        if sub in ("image", "volume", "network") and action in ("rm", "prune"):
            what = f"deletes {'unused ' if action == 'prune' else ''}{sub}s" + (
                " and the data stored in them" if sub == "volume" else ""
            )
        f.raise_to("destructive", f"{label} {what}")
        return True
    if sub in _DOCKER_NETWORK:
        f.network = True
        f.raise_to("network", f"{base} {sub} {_DOCKER_NETWORK[sub]}")
        return True
    f.runs_code = True
    f.opaque(
        f"{label} runs or builds containers (code from images and Dockerfiles)"
        if sub
        else f"{base} without a known subcommand"
    )
    return True


# --------------------------------------------------------------------------- requests

_CURL_VALUES = frozenset(
    {
        "-m",
        "--max-time",
        "--connect-timeout",
        "-H",
        "--header",
        "-A",
        "--user-agent",
        "-w",
        "--write-out",
        "-o",
        "--output",
        "--retry",
        "--retry-delay",
        "-X",
        "--request",
    }
)
_CURL_FLAGS = frozenset(
    {
        "-I",
        "--head",
        "-s",
        "--silent",
        "-S",
        "--show-error",
        "-f",
        "--fail",
        "-v",
        "--verbose",
        "-i",
        "--include",
        "-k",
        "--insecure",
        "-4",
        "-6",
        "--http1.1",
        "--http2",
        "-N",
        "--no-buffer",
    }
)


def _curl(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    """`curl -I http://localhost:8000`: a HEAD request to this machine only reports whether
    something answers. GET may trigger actions on a local server: it still asks."""
    parsed = parse_options(args, _CURL_VALUES, _CURL_FLAGS)
    if parsed is None:
        return False
    opts, pos = parsed
    head = "-I" in opts or "--head" in opts
    method = [m.upper() for m in opts.get("-X", []) + opts.get("--request", [])]
    outputs = opts.get("-o", []) + opts.get("--output", [])
    formats = opts.get("-w", []) + opts.get("--write-out", [])
    if (
        not head
        or any(m != "HEAD" for m in method)
        or any(o != "/dev/null" for o in outputs)
        or (any("%output" in w or "%{stderr" in w or w.startswith("@") for w in formats))
    ):
        return False
    if not pos or not all(_local_url(w) for w in pos):
        return False
    f.network = True
    f.note("curl -I asks a server on this machine for headers only")
    return True


def _local_url(w: Word) -> bool:
    text = w.text if "://" in w.text else "http://" + w.text  # curl's default scheme
    if w.dynamic or w.glob or not text.lower().startswith(("http://", "https://")):
        return False
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return False
    return host is not None and (host in LOCAL_HOSTS or host.startswith("127."))


# --------------------------------------------------------------------------- dry runs

_RSYNC_WRITES_ANYWAY = (
    "--log-file",
    "--write-batch",
    "--only-write-batch",
    "-e",
    "--rsh",
    "--rsync-path",
    "--files-from",
    "--daemon",
)


def _rsync(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    """`rsync -n`: a dry run between local directories lists what would change."""
    texts = texts_of(args)
    for w in option_values(args, "--log-file", "--write-batch", "--only-write-batch"):
        f.raise_to("reversible_write", "rsync writes a log or batch file")  # even with -n
        note_write(f, w, cmd.cwd, ctx)
    if not has_flag(args, "-n", "--dry-run") or any(
        t.partition("=")[0] in _RSYNC_WRITES_ANYWAY or (t.startswith("-e") and len(t) > 2)
        for t in texts
    ):
        return False
    pos = positionals(args)
    if any(
        w.dynamic or re.match(r"^[\w.@-]+:", w.text) or w.text.startswith("rsync://") for w in pos
    ):
        return False  # a remote end: rsync connects to it even for a dry run
    for w in pos[:-1]:
        note_read(f, w, cmd.cwd, ctx)
    # The destination is only compared by name, size and time, like `stat`: not a read of
    # its contents, wherever it is (signoff's own state is still seen through `mentions`).
    dest = ctx.path(pos[-1], cmd.cwd) if pos else None
    if dest is not None:
        f.mentions.append(dest)
    f.note("rsync -n only lists what it would copy")
    return True


def _make(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    if not has_flag(args, "-n", "--dry-run", "--just-print", "--recon"):
        return False
    f.runs_code = True
    f.opaque(
        f"{base} -n still runs the Makefile's $(shell …) calls and its + and $(MAKE) "
        "lines: code from the project"
    )
    return True


def _npm(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    texts = texts_of(args)
    if _runner_query(base, args, f, cmd, ctx):
        return True
    if texts[:1] not in (["publish"], ["pack"]) or "--dry-run" not in texts:
        return False
    f.runs_code = True
    f.opaque(
        f"{base} {texts[0]} --dry-run uploads nothing but runs the package's "
        "prepack and prepare scripts (project code)"
    )
    return True


def _terraform(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    texts = texts_of(args)
    if texts[:1] != ["plan"]:
        return False
    f.network = True
    f.raise_to(
        "network",
        f"{base} plan runs the provider plugins and external data sources "
        "and reads the remote state",
    )
    return True


# Package managers' queries: they read the manifest and lock file (and the registry) and
# run no package scripts. Options that run programs or change the configuration do not pass.
_RUNNER_QUERIES = {
    "cargo": frozenset({"tree", "metadata", "locate-project", "pkgid", "verify-project"}),
    "go": frozenset({"list"}),
    "npm": frozenset({"outdated", "view", "info", "show", "explain", "why"}),
}  # not yarn or pnpm: yarnPath and .pnpmfile.cjs run project JavaScript on any command
_RUNNER_REFUSED = (
    "--config",
    "-Z",
    "-toolexec",
    "--toolexec",
    "-exec",
    "--exec",
    "-overlay",
    "-modfile",
    "--manifest-path",
    "-C",
    "-export",
    "-compiled",
)


def _runner_query(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    texts = texts_of(args)
    if (
        not texts
        or texts[0] not in _RUNNER_QUERIES.get(base, frozenset())
        or any(w.dynamic or w.text.partition("=")[0] in _RUNNER_REFUSED for w in args)
    ):
        return False
    why = loads_code(base, cmd, ctx, f) if base == "cargo" else ""
    if why:  # cargo runs rustc (or a wrapper, or a custom toolchain) to learn the target
        f.runs_code = True
        f.opaque(why)
        return True
    f.note(f"{base} {texts[0]} only reports on the project's dependencies")
    return True


def _rmdir(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    """rmdir removes only empty directories: nothing is lost. With -p, each parent named
    in the path goes too once it is empty."""
    f.raise_to("reversible_write", "rmdir removes empty directories (never one with files)")
    targets = positionals(args)
    if not targets:
        f.note("no directories named")
    parents = has_flag(args, "-p", "--parents")
    for w in targets:
        note_delete(f, w, cmd.cwd, ctx, recursive=False, verb="removes")
        text = w.text.rstrip("/")
        while parents and "/" in text.strip("/"):
            text = posixpath.dirname(text)
            note_delete(
                f,
                Word(text, w.dynamic, w.glob, w.quoted),
                cmd.cwd,
                ctx,
                recursive=False,
                verb="removes",
            )
    return True


Judge = Callable[[str, list[Word], Facts, Cmd, Context], bool]
_JUDGES: dict[str, Judge] = {
    **DATABASE_JUDGES,
    "kubectl": _kubectl,
    "helm": _kubectl,
    "docker": _docker,
    "podman": _docker,
    "curl": _curl,
    "rsync": _rsync,
    "make": _make,
    "gmake": _make,
    "npm": _npm,
    "pnpm": _npm,
    "yarn": _npm,
    "rmdir": _rmdir,
    "terraform": _terraform,
    "tofu": _terraform,
    "cargo": _runner_query,
    "go": _runner_query,
}


def local_programs() -> frozenset[str]:
    """Every program `judge_local` may judge: for any other it returns False at once
    (`judges.index.LOCAL_QUERIES` lists them for the dispatch, without importing this)."""
    return frozenset({*TOOL_PROGRAMS, *BINARY_INSPECTORS, "ldd", *_JUDGES})
