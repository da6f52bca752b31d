"""Effects: what one call touches, worked out before any rule is matched.

Every call, a declared tool's or a shell command part's, becomes an `Effects`: the paths it
reads and writes (each resolved), the directory trees it reads or fills as a whole, the
targets of links it makes, every argument that names a path, the programs it runs, the URL
and host it reaches, and its arguments (for argument rules and amounts). The policy then
matches rules and boundaries against these effects once (`judge_paths` for the path
facets), so a `Read(secrets/**)` deny means the same for `read_file`, `search_code` and
`cat`.

A path may be a shell glob pattern (`/ws/.signof?/x`): it is judged by what it *can*
match, never by listing the disk.
"""

from __future__ import annotations

import itertools
import os
import posixpath
from collections.abc import Callable, Mapping, Sequence

from .exceptions import InvalidInput
from .hints import literal_type
from .models import ToolCall, Verdict
from .protected import ProtectedPaths, glob_relation, is_pattern, name_may_match, spellings
from .records import field, record, replace
from .rules import PathContext, Rule
from .tools import ToolSpec

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    import re
    from typing import Any, Literal

    from .models import ToolKind
    from .shell import CommandPart

    Access = Literal["read", "write"]

Resolve = Callable[[str], tuple[str, ...]]
ACCESSES: tuple[Access, ...] = ("read", "write")
_LITERALS: dict[str, tuple[str, ...]] = {"Access": ACCESSES}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


SAFE_ENV_SUFFIXES = (".example", ".sample", ".template")  # `.env.example`: no secret
PROTECTED = "protected"  # the rule named by verdicts about signoff's own state
MAX_GLOBS = 64  # strings with glob characters judged as paths in one call (see maybe_verdict)


@record(frozen=True, slots=True)
class Effects:
    """What one call touches (paths read and written, trees, links, programs, URL, host,
    arguments), worked out once before any rule or boundary is matched."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    trees: tuple[str, ...] = ()  # directories read as a whole
    tree_writes: tuple[str, ...] = ()  # directories whose contents something else defines
    links: tuple[str, ...] = ()  # what links made by the call point to: read and write
    mentions: tuple[str, ...] = ()  # every argument naming a path (programs we do not know)
    names: tuple[str, ...] = ()  # names a search keeps in its trees (`*.py`; `walks.py`)
    programs: tuple[str, ...] = ()
    unknown_paths: bool = False  # some path is only known at run time
    code: tuple[str, ...] = ()  # arguments of a part whose effects are unknown (inline code)
    url: str | None = None
    host: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    problem: str | None = None  # the call cannot be judged (a bad or missing argument)
    # Where the strings no declared role accounts for would lead, read as paths (see
    # `ToolSpec.other_strings`): what the tool may read, or read and write, for all we know.
    maybe_paths: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return (*self.reads, *self.writes)


def of_call(call: ToolCall, spec: ToolSpec, resolve: Resolve) -> Effects:
    """The effects of a declared (non-shell) tool's call (a client's listing or search
    tool: `walks.effects_of`); with `spec.other_strings`, also where every other string
    it carries would lead as a path (`maybe_paths`)."""
    if spec.other_strings is None:
        return _of_declared(call, spec, resolve)
    from .stringpaths import argument_strings, path_spellings

    resolved: dict[str, tuple[str, ...]] = {}  # a path argument is a string too: once

    def resolve_once(raw: str) -> tuple[str, ...]:
        found = resolved.get(raw)
        if found is None:
            found = resolved[raw] = resolve(raw)
        return found

    effects = _of_declared(call, spec, resolve_once)

    # the path arguments too: the tool may decode JSON in one (a list sent as a string)
    texts, unwalked = argument_strings(call.arguments, spec.string_args)
    maybe: dict[str, None] = {}
    for text in dict.fromkeys(texts):
        for spelling in path_spellings(text):
            try:
                maybe.update(dict.fromkeys(resolve_once(spelling)))
            except (InvalidInput, ValueError, OSError):  # where it leads cannot be known
                unwalked = unwalked or f"{spelling!r} cannot be resolved"
    return replace(
        effects,
        maybe_paths=tuple(maybe),
        unknown_paths=effects.unknown_paths or unwalked is not None,
    )


def _of_declared(call: ToolCall, spec: ToolSpec, resolve: Resolve) -> Effects:
    args = call.arguments
    if spec.kind in ("file_read", "file_write") and spec.path_arg:
        raws, problem = declared_paths(args, spec)
        if problem:
            return Effects(problem=problem, arguments=args)
        paths, problem = _resolved(raws, resolve)
        if problem:
            return Effects(problem=problem, arguments=args)
        if spec.kind == "file_read":
            return Effects(reads=paths, arguments=args)
        return Effects(writes=paths, arguments=args)
    if spec.kind == "network" and spec.url_arg:
        url = args.get(spec.url_arg)
        if not isinstance(url, str):
            problem = f"argument {spec.url_arg!r} must be a URL string"
            return Effects(problem=problem, arguments=args)
        from urllib.parse import urlsplit  # a URL tool's call only (with ipaddress: slow)

        parts = urlsplit(url)
        local: tuple[str, ...] = ()
        if parts.scheme.lower() == "file" and parts.path:
            local, problem = _resolved([parts.path], resolve)
            if problem:
                return Effects(problem=problem, arguments=args)
        return Effects(reads=local, url=url, host=parts.hostname or "", arguments=args)
    if spec.path_arguments():
        # Another kind of tool that names files (`upload(path=...)`): its paths meet
        # protected state, though its rules match on arguments.
        raws, problem = declared_paths(args, spec)
        if problem:
            return Effects(problem=problem, arguments=args)
        paths, problem = _resolved(raws, resolve)
        if problem:
            return Effects(problem=problem, arguments=args)
        return Effects(reads=paths, writes=paths, arguments=args)
    return Effects(arguments=args)


def _resolved(raws: list[str], resolve: Resolve) -> tuple[tuple[str, ...], str | None]:
    """Every resolved spelling of the paths, or why one cannot be resolved (a relative
    path in a working directory nobody knows)."""
    try:
        return tuple(dict.fromkeys(p for raw in raws for p in resolve(raw))), None
    except InvalidInput as exc:
        return (), str(exc)


def declared_paths(args: Mapping[str, Any], spec: ToolSpec) -> tuple[list[str], str | None]:
    """Every path argument's value: `path_arg` (default `spec.default_path`), `path_args`
    (a string or a list of strings each) and the keys of `files_arg` joined to `path_arg`."""
    raws: list[str] = []
    for key in spec.path_arguments():
        main = key == spec.path_arg
        value = args.get(key, spec.default_path if main else None)
        if value is None and not main:
            continue
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str) or "\x00" in item:
                return [], f"argument {key!r} must be a path string"
            raws.append(item)
    if spec.files_arg and spec.files_arg in args:
        files = args[spec.files_arg]
        if not isinstance(files, Mapping):
            return [], f"argument {spec.files_arg!r} must map file names to contents"
        base = raws[0] if raws else "."
        for name in files:
            if not isinstance(name, str) or not name or "\x00" in name:
                return [], f"argument {spec.files_arg!r} holds a file name that is not a path"
            raws.append(os.path.join(base, name))
    return raws, None


def of_part(part: CommandPart) -> Effects:
    """The effects of one shell command part, as `shell.analyze` found them."""
    return Effects(
        reads=part.reads,
        writes=part.writes,
        trees=part.trees,
        tree_writes=part.tree_writes,
        links=part.links,
        mentions=part.mentions,
        programs=_programs(part.argv),
        unknown_paths=part.unknown_paths,
        code=tuple(part.argv[1:]) if part.cls == "opaque" else (),
    )


# Programs that run another program named among their arguments (`uvx signoff`).
_PACKAGE_RUNNERS = frozenset(
    {
        "uv",
        "uvx",
        "pipx",
        "poetry",
        "pdm",
        "hatch",
        "rye",
        "conda",
        "mamba",
        "micromamba",
        "pixi",
        "npx",
        "pnpx",
        "bunx",
    }
)


def _programs(argv: Sequence[str]) -> tuple[str, ...]:
    """The program a part runs, and the ones it names to be run (`python -m x`, `uvx x`)."""
    if not argv:
        return ()
    first = posixpath.basename(argv[0])
    names = [first]
    for flag, value in itertools.pairwise(argv):
        if flag == "-m":  # python -m signoff
            names.append(value.split(".")[0])
    if first in _PACKAGE_RUNNERS:
        names.extend(posixpath.basename(word).split("==")[0].split("@")[0] for word in argv[1:])
    return tuple(names)


# ------------------------------------------------------------------ judging path effects


@record(frozen=True, slots=True)
class PathVerdict:
    """A path boundary's verdict on a call: deny or ask, the rule that decided and why."""

    effect: Literal["deny", "ask"]
    rule: str | None
    reason: str


@record(frozen=True)
class PathRules:
    """What paths are judged by: protected state, path rules by access, and the secret
    (read) and sensitive (write) boundary lists."""

    protected: ProtectedPaths
    ctx: PathContext
    deny: Mapping[Access, tuple[Rule, ...]]
    ask: Mapping[Access, tuple[Rule, ...]]
    secret: Sequence[Rule] = ()
    sensitive: Sequence[Rule] = ()  # Policy passes them made on first use
    # one regex per access for `maybe_verdict`: made on first use, kept (see `_screen`)
    _screens: dict[bool, Any] = field(default_factory=dict, compare=False, repr=False)

    def protected_verdict(self, effects: Effects, *, dotglob: bool = False) -> PathVerdict | None:
        """Deny anything inside signoff's own state; ask for trees that hold it."""
        if "signoff" in effects.programs:
            return PathVerdict(
                "deny",
                PROTECTED,
                "runs signoff itself, which holds the approvals and keys: only a person runs it",
            )
        for text in effects.code:  # `python3 -c "open('.signoff/x','w')"`, `awk '{print > …}'`
            named = next((n for n in self.protected.names if n in text), None)
            if named:
                return PathVerdict(
                    "deny",
                    PROTECTED,
                    f"code that names signoff's own state ({named}): no tool may read or change it",
                )
        touched = (
            *effects.paths,
            *effects.links,
            *effects.mentions,
            *effects.trees,
            *effects.tree_writes,
        )
        for path in touched:
            where = self.protected.inside(path, dotglob=dotglob)
            if where:
                return PathVerdict(
                    "deny",
                    PROTECTED,
                    f"{path} is signoff's own state ({where}): no tool may read or change it",
                )
        for path in (*effects.trees, *effects.tree_writes):
            where = self.protected.holds(path, dotglob=dotglob)
            if where:
                verb = "reads" if path in effects.trees else "writes"
                return PathVerdict(
                    "ask",
                    PROTECTED,
                    f"{verb} the whole of {path}, which holds signoff's own state ({where})",
                )
        return None

    def verdict(self, effects: Effects, *, dotglob: bool = False) -> PathVerdict | None:
        """The strongest thing the path rules and boundaries say about these effects
        (deny before ask); None when they say nothing. Allow rules are not consulted:
        a path allow never allows a shell command by itself."""
        found = self.protected_verdict(effects, dotglob=dotglob)
        if found and found.effect == "deny":
            return found
        uses: tuple[tuple[Access, tuple[str, ...], tuple[str, ...]], ...] = (
            ("read", (*effects.reads, *effects.links), effects.trees),
            ("write", (*effects.writes, *effects.links), effects.tree_writes),
        )
        passes: tuple[tuple[Literal["deny", "ask"], Mapping[Access, tuple[Rule, ...]]], ...] = (
            ("deny", self.deny),
            ("ask", self.ask),
        )
        for kind, lists in passes:
            for access, paths, trees in uses:
                for rule in lists.get(access, ()):
                    for path in paths:
                        if rule_may_match(
                            rule, path, self.ctx, dotglob=dotglob, strict=kind == "deny"
                        ):
                            return PathVerdict(
                                kind, rule.text, f"{path}: {_VERB[kind]} by rule {rule.text}"
                            )
                        if (
                            kind == "deny"
                            and found is None
                            and rule_may_match(rule, path, self.ctx, dotglob=dotglob)
                        ):
                            found = PathVerdict(
                                "ask",
                                rule.text,
                                f"{path} may expand to a path denied by rule {rule.text}",
                            )
                    for tree in trees:
                        hit = rule_in_tree(rule, tree, self.ctx)
                        if hit == "inside":
                            return PathVerdict(
                                kind, rule.text, f"{tree}: {_VERB[kind]} by rule {rule.text}"
                            )
                        if hit == "holds" and found is None:
                            found = PathVerdict(
                                "ask",
                                rule.text,
                                f"{_TREE_VERB[access]} the "
                                f"whole of {tree}, where rule {rule.text} "
                                "names paths",
                            )
        if found:
            return found
        if effects.unknown_paths:
            return PathVerdict(
                "ask",
                PROTECTED,
                "names a file only known at run time: it could be "
                "signoff's own state or a path a rule denies",
            )
        for tree in effects.trees:  # `grep -r x ~`: a secret folder in it is read too
            for boundary in self.secret:
                if boundary.specifier is None or rule_anchor(boundary.specifier, self.ctx) is None:
                    continue  # a bare name (`.env`, `*.pem`) may be in any tree: not asked
                if rule_in_tree(boundary, tree, self.ctx) is not None:
                    return PathVerdict(
                        "ask",
                        "boundary",
                        f"reads the whole of {tree}, which holds a secret path "
                        f"({boundary.specifier})",
                    )
        for access, paths, _ in uses:
            if not paths:
                continue  # nothing to test; the boundary lists are made on first use
            for boundary in self.secret if access == "read" else self.sensitive:
                for path in paths:
                    if path.endswith(SAFE_ENV_SUFFIXES):
                        continue
                    if rule_may_match(boundary, path, self.ctx, dotglob=dotglob, strict=True):
                        what = "secret" if access == "read" else "sensitive"
                        return PathVerdict(
                            "ask", "boundary", f"{path} is a {what} path ({boundary.specifier})"
                        )
        return None

    def maybe_verdict(self, paths: Sequence[str], *, write: bool) -> PathVerdict | None:
        """What the path rules and boundaries say about strings that may be paths (see
        `Effects.maybe_paths`), each read as one the call reads, and writes if `write`. A
        literal is judged as any path is; a glob is a guess twice over (the tool may not
        expand it), so what it may reach asks rather than denies."""
        literal = tuple(p for p in paths if not is_pattern(p) and "{" not in p)
        globs = tuple(p for p in paths if is_pattern(p) or "{" in p)
        named = literal
        screen = self._screen(write)
        if screen is not None:  # only what some rule, boundary or protected path names
            named = tuple(p for p in literal if screen.match(p) or self.protected.inside(p))
        found = self.verdict(Effects(reads=named, writes=named if write else ()))
        if found is not None and found.effect == "deny":
            return found
        if len(globs) > MAX_GLOBS:  # each is judged by what it may match: bounded
            return PathVerdict(
                "ask",
                PROTECTED,
                f"more than {MAX_GLOBS} strings with glob characters: what they may match "
                "cannot all be judged, and could be signoff's own state",
            )
        for path in globs:
            said = self.verdict(Effects(reads=(path,), writes=(path,) if write else ()))
            if said is not None and said.effect == "deny":
                said = PathVerdict("ask", said.rule, f"{said.reason} (if read as a pattern)")
            found = found or said
        return found

    def _screen(self, write: bool) -> re.Pattern[str] | None:
        """One regex matching every plain path that some path rule or boundary of these
        accesses matches (the rules' own regexes, joined): most strings of a call name
        nothing, and one match for them is much cheaper than a hundred rules each.
        None when a rule has no path (it matches everything)."""
        if write not in self._screens:
            import re

            from .rules import compile_path_pattern

            accesses: tuple[Access, ...] = ("read", "write") if write else ("read",)
            rules = [
                *(r for a in accesses for r in (*self.deny.get(a, ()), *self.ask.get(a, ()))),
                *self.secret,
                *(self.sensitive if write else ()),
            ]
            if any(r.specifier is None for r in rules):
                self._screens[write] = None
            else:
                joined = "|".join(
                    f"(?:{compile_path_pattern(r.specifier or '', self.ctx).pattern})"
                    for r in rules
                )
                self._screens[write] = re.compile(joined or r"(?!)", re.DOTALL)
        screen: re.Pattern[str] | None = self._screens[write]
        return screen

    def hidden(self, path: str) -> bool:
        """Whether a tool that walks a tree (search_code) must skip this resolved path:
        signoff's own state, a path a read rule denies or asks for, a secret. Reading one
        of those on purpose (read_file) is judged and asked; a search never returns it."""
        if self.protected.inside(path):
            return True
        rules = (*self.deny.get("read", ()), *self.ask.get("read", ()), *self.secret)
        return not path.endswith(SAFE_ENV_SUFFIXES) and any(
            rule.matches_path(path, self.ctx) for rule in rules
        )


def by_access(
    rules: Sequence[Rule], kind_of: Callable[[Rule], ToolKind]
) -> dict[Access, tuple[Rule, ...]]:
    """Rules with a path that name a file tool (`Read(...)`, `Edit(...)`,
    `write_file(...)`), by the access they govern: shell operands meet them too."""
    out: dict[Access, list[Rule]] = {"read": [], "write": []}
    for rule in rules:
        access = _FILE_ACCESS.get(kind_of(rule))
        if access and rule.specifier is not None:
            out[access].append(rule)
    return {access: tuple(found) for access, found in out.items()}


def touches_protected(verdict: Verdict) -> bool:
    """An ask because the call may reach signoff's own state (a tree that holds it, a
    path known only at run time): no mode or switch turns it into an allow."""
    return verdict.rule == PROTECTED or any(
        p.effect == "ask" and p.rule == PROTECTED for p in verdict.parts
    )


_FILE_ACCESS: dict[str, Access] = {"file_read": "read", "file_write": "write"}
_VERB = {"deny": "denied", "ask": "asks"}
_TREE_VERB: dict[Access, str] = {"read": "reads", "write": "writes"}


def rule_may_match(
    rule: Rule, path: str, ctx: PathContext, *, dotglob: bool = False, strict: bool = False
) -> bool:
    """Whether a path rule matches `path`, or could match a name the glob `path` expands
    to (over-approximated: when in doubt, it may). `strict` leaves out the doubtful case
    of two globs that may overlap (`*.txt` and a rule's `id_rsa*`)."""
    if "{" not in path and not is_pattern(path):  # a plain path: the common case
        return rule.matches_path(path, ctx)
    return any(
        _may_match(rule, spelling, ctx, dotglob or any_dot, strict)
        for spelling, any_dot in spellings(path)
    )


def _may_match(rule: Rule, path: str, ctx: PathContext, dotglob: bool, strict: bool) -> bool:
    if rule.matches_path(path, ctx) or not is_pattern(path) or rule.specifier is None:
        # A glob whose own text the rule matches (`id_rsa*` for `id_rsa*`) is certain.
        return rule.matches_path(path, ctx)
    anchor = rule_anchor(rule.specifier, ctx)
    if anchor is None:  # a bare name (`*.pem`, `.env`): any component may be it
        name = rule.specifier.strip().rstrip("/")
        return any(
            name_may_match(part, name, dotglob)
            and not (strict and is_pattern(part) and is_pattern(name))
            for part in path.split("/")
            if part
        )
    return glob_relation(path, anchor, dotglob) == "inside"


def rule_in_tree(rule: Rule, tree: str, ctx: PathContext) -> Literal["inside", "holds"] | None:
    """Does a rule name `tree` itself ("inside"), or possibly something in it ("holds")?"""
    found: Literal["inside", "holds"] | None = None
    for spelling, _ in spellings(tree):
        hit = _in_tree(rule, spelling, ctx)
        if hit == "inside":
            return hit
        found = found or hit
    return found


def _in_tree(rule: Rule, tree: str, ctx: PathContext) -> Literal["inside", "holds"] | None:
    if not is_pattern(tree) and rule.matches_path(tree, ctx):
        return "inside"
    if rule.specifier is None:
        return "inside"
    anchor = rule_anchor(rule.specifier, ctx)
    if anchor is None:
        return "holds"
    return "holds" if glob_relation(tree, anchor, True) is not None else None


def rule_anchor(specifier: str, ctx: PathContext) -> str | None:
    """The literal directory a path rule is anchored at (up to its first glob), or None
    for a bare name that matches at any depth. Mirrors `rules.compile_path_pattern`."""
    spec = specifier.strip()
    if spec.startswith("//"):
        base, rest = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, rest = ctx.home, spec[2:]
    elif spec.startswith("/"):
        base, rest = ctx.project_root, spec[1:]
    elif spec.startswith("./"):
        base, rest = ctx.workspace, spec[2:]
    elif "/" in spec.rstrip("/"):
        base, rest = ctx.workspace, spec
    else:
        return None
    literal: list[str] = []
    for part in rest.rstrip("/").split("/"):
        if not part or is_pattern(part):
            break
        literal.append(part)
    return posixpath.join(base, *literal) if literal else base


__all__ = [
    "PROTECTED",
    "Effects",
    "PathRules",
    "PathVerdict",
    "by_access",
    "of_call",
    "of_part",
    "rule_may_match",
    "touches_protected",
]
