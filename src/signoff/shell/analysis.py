"""The analysis behind `signoff.shell` (whose docstring says what it does): parse, walk the
script with its data flow, judge each effective command, combine the parts into a verdict,
and suggest the narrowest rule for a part that asked."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Sequence

from ..lazyre import lazy
from ..records import record, replace
from . import knowledge as K
from .args import lookalike
from .content import judge_races
from .facts import Context, Facts, Reader
from .judges.feeds import judge_payloads
from .judges.option_programs import note_program_env
from .links import judge_link_writes
from .parse import Cmd, Redir, Walk, Walker, parse
from .paths import note_read, note_write
from .places import revoke_hidden_skip, within_bounds
from .programs import judge_words
from .reach import STDIN_ARGS, note_mentions, note_trees

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..models import Effect
    from .facts import ShellClass

__all__ = ["CommandPart", "ShellAnalysis", "ShellClass", "analyze", "combine", "suggest_rule"]


@record(frozen=True, slots=True)
class CommandPart:
    """One effective simple command of a command line and its verdict."""

    text: str
    argv: tuple[str, ...]
    cls: ShellClass
    effect: Effect
    catastrophic: bool
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    inside_workspace: bool
    reasons: tuple[str, ...]
    trees: tuple[str, ...] = ()  # directories read as a whole (grep -r, cp -r, tar c)
    tree_writes: tuple[str, ...] = ()  # directories whose contents something else defines
    links: tuple[str, ...] = ()  # targets of links this part makes
    mentions: tuple[str, ...] = ()  # every argument that names a path, resolved
    unknown_paths: bool = False  # a file operand is only known at run time
    # Why this part must ask whatever allow rules or grants say (code that runs later,
    # targets that could not be read): a boundary, like a file tool's sensitive path.
    boundaries: tuple[str, ...] = ()
    exact_rule: bool = False  # "always" may only save an exact rule (see Facts.exact_rule)
    # It asks only because what it runs is unknown (code, tests, builds, unknown programs)
    # or writes paths only known at run time: inside the OS sandbox (no network, writes
    # only in the workspace, no secrets) that is harmless. Never set for what a person
    # must see: network, installs, secrets, privilege, writes outside, boundaries.
    containable: bool = False


@record(frozen=True, slots=True)
class ShellAnalysis:
    """A whole command line's verdict: the worst of its parts, with the reasons."""

    command: str
    parts: tuple[CommandPart, ...]
    effect: Effect
    reasons: tuple[str, ...]


def combine(effects: Iterable[str]) -> Effect:
    """Deny if any part denies; ask if any asks; allow only if every part allows."""
    seen = set(effects)
    if "deny" in seen:
        return "deny"
    if "ask" in seen or not seen <= {"allow", "notify"}:
        return "ask"  # an unknown effect is never approval
    if "notify" in seen:
        return "notify"
    return "allow"


# --------------------------------------------------------------------------- unicode

_INVISIBLE = lazy(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad"
    "\u180e\u034f\u061c\u115f\u1160\u3164\uffa0]"
)
_CONTROL = lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def unicode_problem(text: str) -> str:
    if _INVISIBLE.search(text):
        return "contains invisible or bidirectional Unicode characters that hide what runs"
    if _CONTROL.search(text):
        return "contains control characters that the terminal would not show faithfully"
    return ""


# --------------------------------------------------------------------------- analysis


def analyze(
    command: str,
    *,
    workspace: str,
    home: str | None = None,
    cwd: str | None = None,
    resolver: Callable[[str], str] | None = None,
    reader: Reader | None = None,
    read_roots: Iterable[str] = (),
    also_in: Iterable[str | None] = (),
) -> ShellAnalysis:
    """Judge one shell command line; never raises (an internal error is opaque: ask).

    `cwd` is the directory the line starts in (default: the workspace); `also_in` names
    other directories it may start in, each judged as well (None: a directory nobody
    knows, so every relative path in it is unknown). `reader` reads the patches and
    archives whose content names what a command writes
    (default: regular files up to 1 MiB from the file system); `read_roots` are further
    directories the file tools may read (settings' `additional_directories`)."""
    try:
        return _analyze(
            command,
            workspace,
            home,
            cwd,
            resolver or os.path.realpath,
            reader,
            tuple(read_roots),
            tuple(also_in),
        )
    except Exception as exc:  # fail closed: an analyzer bug must never approve anything
        part = _opaque_part(command, f"could not be analyzed ({type(exc).__name__})")
        return ShellAnalysis(command, (part,), "ask", part.reasons)


def _opaque_part(
    text: str, reason: str, catastrophic: bool = False, extra: tuple[str, ...] = ()
) -> CommandPart:
    return CommandPart(
        text.strip(),
        (),
        "opaque",
        "deny" if catastrophic else "ask",
        catastrophic,
        (),
        (),
        False,
        (reason, *extra),
    )


def _analyze(
    command: str,
    workspace: str,
    home: str | None,
    cwd: str | None,
    resolver: Callable[[str], str],
    reader: Reader | None,
    read_roots: tuple[str, ...] = (),
    also_in: tuple[str | None, ...] = (),
) -> ShellAnalysis:
    if not command.strip():
        return ShellAnalysis(command, (), "allow", ())
    ctx = Context(workspace, home or os.path.expanduser("~"), resolver, lambda *a: [], reader)
    ctx.read_roots = tuple(ctx.resolve(r) for r in read_roots)
    ctx.script = lambda text, at, env: _nested_script(text, at, env, ctx)
    ctx.run_in = lambda text, at, env, other: run_script(text, at, env, other)[0]
    start_cwd = ctx.resolve(cwd) if cwd else ctx.workspace
    others = [None if d is None else ctx.resolve(d) for d in also_in]
    facts, problems, parse_error = run_script(command, start_cwd, {}, ctx, others)
    bad_unicode = unicode_problem(command)
    if parse_error or bad_unicode:
        reason = bad_unicode or "the command could not be parsed"
        deadly = tuple(r for f in facts if f.catastrophic for r in f.reasons)
        part = _opaque_part(command, reason, bool(deadly), deadly)
        return ShellAnalysis(command, (part,), part.effect, part.reasons)
    parts = [_to_part(f, ctx) for f in facts]
    parts.extend(_opaque_part(command, p) for p in problems)
    if not parts:
        parts.append(
            CommandPart(
                command.strip(),
                (),
                "read_only",
                "allow",
                False,
                (),
                (),
                True,
                ("nothing runs (comments only)",),
            )
        )
    effect = combine(p.effect for p in parts)
    reasons: list[str] = []
    for p in parts:
        if p.effect != "allow":
            reasons.extend(r for r in p.reasons if r not in reasons)
    return ShellAnalysis(command, tuple(parts), effect, tuple(reasons))


def _nested_script(
    text: str, cwd: str | None, variables: dict[str, str | None], ctx: Context
) -> list[Facts]:
    """A `bash -c '…'` literal: judged like the top level, one level deeper."""
    if ctx.depth >= 6:
        f = Facts([text])
        f.opaque("shell nesting too deep to analyze")
        return [f]
    ctx.depth += 1
    try:
        facts, problems, parse_error = run_script(text, cwd, variables, ctx)
    finally:
        ctx.depth -= 1
    if parse_error or problems:
        f = Facts(text.split())
        f.opaque("a nested script could not be parsed" if parse_error else problems[0])
        for inner in facts:
            if inner.catastrophic:
                f.deny(inner.reasons[-1])
        return [f]
    return facts


def run_script(
    source: str,
    cwd: str | None,
    variables: dict[str, str | None],
    ctx: Context,
    also_in: Sequence[str | None] = (),
) -> tuple[list[Facts], list[str], bool]:
    """Parse and judge a script (the top-level command or a `bash -c` literal), starting
    in `cwd` or in any of `also_in`."""
    tree, raw = parse(source)
    root = tree.root_node
    walker = Walker(ctx.home, cwd, variables, raw, depth=ctx.depth * 10, also_in=also_in)
    walker.walk(root)
    walk = walker.out
    ctx.functions |= walk.functions
    per_cmd: list[list[Facts]] = []
    for index, cmd in enumerate(walk.cmds):
        found = judge_command(cmd, ctx)
        for f in found:
            f.cmd = index
        per_cmd.append(found)
    data_flow(walk, per_cmd, ctx)
    judge_payloads(walk, per_cmd, ctx)  # catastrophic code, feeds and spellings: deny
    judge_link_writes(walk.cmds, per_cmd, ctx)
    facts = [f for group in per_cmd for f in group]
    revoke_hidden_skip(facts)
    judge_races(facts)
    return facts, list(walk.problems), root.has_error


def judge_command(cmd: Cmd, ctx: Context) -> list[Facts]:
    """The facts of one simple command, in every directory it may run in (an earlier
    `cd` that fails leaves the shell where it was: `cd x; cat y` may read ./y)."""
    facts = _judge_in(cmd, ctx)
    for alt in cmd.alt_cwds:
        _merge_alternative(facts, _judge_in(replace(cmd, cwd=alt, alt_cwds=()), ctx))
    return facts


def _merge_alternative(facts: list[Facts], other: list[Facts]) -> None:
    for f, g in zip(facts, other, strict=False):
        for mine, theirs in (
            (f.reads, g.reads),
            (f.writes, g.writes),
            (f.trees, g.trees),
            (f.tree_writes, g.tree_writes),
            (f.links, g.links),
            (f.mentions, g.mentions),
        ):
            mine.extend(x for x in theirs if x not in mine)
        f.unknown_paths |= g.unknown_paths
        f.unknown_reads |= g.unknown_reads
        f.secret |= g.secret
        f.force_ask |= g.force_ask
        f.exact_rule |= g.exact_rule
        f.catastrophic |= g.catastrophic
        f.raise_to(g.cls, "")
        for reason in g.reasons:
            f.note(reason)
    facts.extend(other[len(facts) :])


def _judge_in(cmd: Cmd, ctx: Context) -> list[Facts]:
    f = Facts([w.text for w in cmd.words])
    for name, value in cmd.assigns:
        if K.DANGEROUS_ENV.match(name):
            f.opaque(f"sets {name}, which changes what programs load or run")
            note_program_env(f, name)
        elif value.dynamic and not cmd.words:
            f.note(f"sets {name} from a value computed at run time")
    for problem in cmd.problems:
        f.opaque(problem)
    if not cmd.words:
        f.argv = [cmd.source.strip()] if cmd.assigns else []
        for r in cmd.redirects:
            _redirect(f, r, cmd, ctx)
        if cmd.stdin_text is not None:
            f.note("feeds text to a compound command")
        if not cmd.assigns and not cmd.redirects:
            f.note("nothing runs")
        return [f]
    out, target = judge_words(list(cmd.words), f, cmd, ctx)
    if f not in out and (f.cls != "read_only" or f.catastrophic or f.force_ask):
        out.insert(0, f)  # e.g. BASH_ENV=… bash -c 'ls': the prefix itself is the risk
    for r in cmd.redirects:
        _redirect(target, r, cmd, ctx)
    for facts in {id(x): x for x in (*out, target)}.values():
        note_trees(facts, cmd, ctx)
    note_mentions(target, cmd, ctx)
    if cmd.function is not None and cmd.words[0].text == cmd.function:
        target.deny("a function that calls itself (fork bomb pattern)")
    return out


def _redirect(f: Facts, r: Redir, cmd: Cmd, ctx: Context) -> None:
    if r.target is None:
        return
    if r.op in ("<", "<&"):
        note_read(f, r.target, cmd.cwd, ctx)
        return
    if r.target.text in K.PSEUDO_FILES:
        return
    if r.target.text.startswith(("/dev/tcp/", "/dev/udp/")) and (
        f.runs_stdin or f.runs_code or (f.argv and posixpath.basename(f.argv[0]) in K.SHELLS)
    ):
        f.deny("connects a shell to the network (reverse shell)")
    f.raise_to("reversible_write", f"redirects output into {r.target.text}")
    note_write(f, r.target, cmd.cwd, ctx)
    if r.op == "<>":
        note_read(f, r.target, cmd.cwd, ctx)


def data_flow(walk: Walk, per_cmd: list[list[Facts]], ctx: Context) -> None:
    """Judge what flows between commands: pipes, substitutions, download-then-run."""
    for stages in walk.pipes:
        flat = [[f for i in stage if i < len(per_cmd) for f in per_cmd[i]] for stage in stages]
        net = [f for stage in flat for f in stage if f.network]
        runner = [f for stage in flat for f in stage if f.runs_stdin]
        if net and runner:
            runner[0].deny("pipes network data into a program that runs it as code")
        for i, stage in enumerate(flat):
            if any(f.secret for f in stage):
                for later in flat[i + 1 :]:
                    for f in later:
                        if f.network:
                            f.deny("sends secrets or the environment over the network")
    for index, cmd in enumerate(walk.cmds):
        if cmd.owner is None or cmd.owner >= len(per_cmd):
            continue
        inner = per_cmd[index]
        for owner in per_cmd[cmd.owner]:
            if owner.runs_code and any(f.network for f in inner):
                owner.deny("runs code fetched from the network")
            if owner.network and any(f.secret for f in inner):
                owner.deny("sends secrets or the environment over the network")
    downloaded: set[str] = set()
    for group in per_cmd:
        for f in group:
            if f.executes and downloaded & set(f.executes):
                f.deny("runs a file downloaded from the network")
            downloaded.update(f.downloads)
            if f.secret and f.network:
                f.deny("sends secrets over the network")


def _to_part(f: Facts, ctx: Context) -> CommandPart:
    if f.catastrophic:
        effect: Effect = "deny"
    elif f.cls == "read_only":
        effect = "ask" if f.force_ask else "allow"
    elif f.cls == "reversible_write":
        effect = "ask" if f.force_ask or f.unknown_paths else "notify"
    else:
        effect = "ask"
    inside = not f.unknown_paths and within_bounds(f, ctx)  # scratch writes, free reads
    if effect == "ask" and K.serves(f.argv):
        f.note("starts a server")
    reasons = f.reasons or [_DEFAULT_REASON[f.cls]]
    return CommandPart(
        " ".join(f.argv),
        tuple(f.argv),
        f.cls,
        effect,
        f.catastrophic,
        tuple(dict.fromkeys(f.reads)),
        tuple(dict.fromkeys(f.writes)),
        inside,
        tuple(reasons),
        tuple(dict.fromkeys(f.trees)),
        tuple(dict.fromkeys(f.tree_writes)),
        tuple(dict.fromkeys(f.links)),
        tuple(dict.fromkeys(f.mentions)),
        f.unknown_paths or f.unknown_reads,
        tuple(dict.fromkeys(f.boundaries)),
        f.exact_rule,
        _containable(f, effect, ctx),
    )


def _containable(f: Facts, effect: Effect, ctx: Context) -> bool:
    """Whether the sandbox makes this part harmless: see CommandPart.containable. Its
    writes must land in the workspace itself (a scratch file in /tmp would vanish with
    the sandbox's private temp directory)."""
    base = (
        effect == "ask"
        and not (f.catastrophic or f.force_ask or f.network or f.fetch or f.secret)
        and not f.boundaries
        and all(ctx.inside(w) for w in (*f.writes, *f.tree_writes))
        and not K.serves(f.argv)
    )
    if base and f.cls == "destructive":
        # a deletion (rm, find -delete, git checkout over edits) inside the workspace: the
        # contained run keeps what it deletes, so it can be undone, when that fits the
        # record; a deletion with nothing named (kill) is not of files: it asks
        from .restorable import restorable

        paths = [*f.writes, *f.tree_writes]
        return bool(paths) and not f.unknown_paths and restorable(paths)
    return base and f.cls in ("opaque", "reversible_write")


_DEFAULT_REASON = {
    "read_only": "only reads",
    "reversible_write": "changes files",
    "destructive": "destroys data",
    "network": "uses the network",
    "privilege": "uses elevated privileges",
    "opaque": "effects unknown",
}


# --------------------------------------------------------------------------- rules

_RULE_UNSAFE = lazy(r"[\s*?\[\](){}:,;|&<>$`\"'\\!#~=]")
_EXACT_UNSAFE = lazy(r"[\s*?\[$`\x00-\x1f\x7f]")
_SUBCOMMAND_DEPTH = {
    "git": 1,
    "npm": 1,
    "pnpm": 1,
    "yarn": 1,
    "bun": 1,
    "cargo": 1,
    "go": 1,
    "docker": 2,
    "podman": 2,
    "kubectl": 1,
    "pip": 1,
    "pip3": 1,
    "uv": 1,
    "poetry": 1,
    "gh": 2,
    "aws": 2,
    "gcloud": 2,
    "az": 2,
    "terraform": 1,
    "helm": 1,
    "make": 1,
    "just": 1,
    "brew": 1,
    "apt": 1,
    "apt-get": 1,
    "dotnet": 1,
    "mvn": 1,
    "gradle": 1,
    "rustup": 1,
    "deno": 1,
    "npx": 1,
    "uvx": 1,
    "pnpx": 1,
    "conda": 1,
    "systemctl": 1,
    "docker-compose": 1,
}
_RUN_SCRIPT = {"run", "exec", "x", "dlx", "run-script"}


def suggest_rule(part: CommandPart, tool: str = "Bash") -> str:
    """The narrowest useful rule for a part that asked, e.g. `Bash(npm run test:*)`.

    Destructive, privileged and network parts, and parts that ran a program named in an
    option, get an exact rule (or none when a word holds a glob or a variable), even when a
    higher class (opaque) hides what they did; others a prefix rule of the program and its
    subcommands. Raises ValueError for catastrophic parts (nothing may allow them), for
    parts behind a boundary (code that runs later, unread content), for parts whose
    program is not a plain name, and when no such rule can be written.
    """
    if part.catastrophic or part.effect == "deny":
        raise ValueError("catastrophic commands can never be allowed by a rule")
    if part.boundaries:
        # A rule names the command, not the file its redirect or patch writes: "always"
        # for planting code would allow the next hook too. Approve once.
        raise ValueError("code that runs later is approved once, never always")
    argv = list(part.argv)
    if STDIN_ARGS in argv:  # `… | xargs rm -rf`: the same text runs on any input
        raise ValueError("its arguments come from another command's output: approve it once")
    if not argv or _RULE_UNSAFE.search(argv[0]) or lookalike(argv[0]):
        raise ValueError("this command has no stable program name to write a rule for")
    if part.cls in ("destructive", "privilege", "network") or part.exact_rule:
        # Exact or nothing: a prefix would allow other targets and extra flags, and a
        # glob or variable would let the same text hit other files later.
        if any(not a or _EXACT_UNSAFE.search(a) for a in argv):
            raise ValueError("a destructive command with globs or variables: approve it once")
        return f"{tool}({' '.join(argv)})"
    if any(_EXACT_UNSAFE.search(a) for a in argv):
        raise ValueError("a command with globs or variables gets no prefix rule")
    prog = argv[0]
    tokens = [prog]
    depth = _SUBCOMMAND_DEPTH.get(prog, 0)
    if prog in K.INTERPRETERS:
        depth = 2 if len(argv) > 1 and argv[1] == "-m" else 1
    for arg in argv[1:]:
        if depth <= 0 or _RULE_UNSAFE.search(arg):
            break
        if arg.startswith("-") and not (prog in K.INTERPRETERS and arg == "-m"):
            break
        tokens.append(arg)
        if not (arg in _RUN_SCRIPT or arg == "-m" or arg == "compose"):
            depth -= 1
    return f"{tool}({' '.join(tokens)}:*)"
