"""The policy: one tool call in, one `Verdict` out. Deterministic; no clock, no network.

Order of evaluation (the first that decides wins):

1. a `deny` rule, a catastrophic shell command, or plan mode refusing a write -> deny
2. an `ask` rule, or a boundary (outside the workspace, a sensitive path, an amount over
   its cap, a domain not allowed, a tool not declared) -> ask
3. an `allow` rule or a grant -> allow
4. the default of the tool's tier (read -> allow; write inside the workspace -> notify;
   everything else -> ask), adjusted by the mode

Every call is first turned into its effects (`effects.py`: paths read and written,
trees, link targets, URL and host, arguments), and rules and boundaries are matched
against those effects: a path rule means the same for a declared tool and for every file
operand and redirect of a shell command. signoff's own state (`protected.py`) is denied
to every tool, whatever the rules say.

`auto` mode then turns ask into allow (with a `[reviewer]` configured, the ask stays and
the reviewer model settles it or hands it to a person); deny never changes. The only I/O
is resolving paths (symlinks), done by an injectable resolver.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from .always import suggest_argument_rule
from .effects import (
    PROTECTED,
    Effects,
    PathRules,
    PathVerdict,
    by_access,
    of_call,
    touches_protected,
)
from .exceptions import InvalidInput
from .hints import overload
from .models import ToolCall, Verdict
from .normalize import canonical_host
from .protected import ProtectedPaths, default_protected, store_files
from .records import replace
from .rules import PathContext, Rule, host_matches, parse_rule
from .runs_later import SENSITIVE_PATTERNS as _RUNS_LATER
from .settings import MODES, Settings
from .shell_judgement import ShellJudgement, _Candidates, _Where
from .tools import Registry, ToolSpec

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    from .effects import PathVerdict
    from .models import Risk
    from .settings import Mode

Resolver = Callable[[str], str]

# Keys and credentials: reading them sends secrets to the model (and its provider), and
# writing them changes who can do what. Either way, ask first.
_CREDENTIALS = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.netrc",
)
SECRET_READ = (
    *_CREDENTIALS,
    "~/.kube/config",
    "~/.docker/config.json",
    "//etc/shadow",
    "//etc/sudoers",
)
# Writes here ask even in accept-edits (`/x` patterns are relative to the project root).
SENSITIVE_WRITE = (
    *_CREDENTIALS,
    ".git",
    ".signoff",
    "~/.kube",
    "~/.docker",
    "~/.config",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.zshrc",
    "~/.profile",
    "~/.gitconfig",
    "//etc",
    "//usr",
    "//bin",
    "//sbin",
    "//boot",
    "//var",
    "//System",
    *_RUNS_LATER,  # code that git, a shell or CI runs later (runs_later.py says why)
)
_SAFE_ENV_SUFFIXES = (".example", ".sample", ".template")

_TIER_RISK: dict[str, Risk] = {
    "read": "none",
    "write": "low",
    "destructive": "high",
    "external": "high",
    "privileged": "critical",
    "unknown": "medium",
}


class _Unset:
    """No working directory given: paths are the workspace's."""


_UNSET = _Unset()


class LazyRules(Sequence[Rule]):
    """A tuple of rules made on first use (the same rules, later: nothing is skipped)."""

    __slots__ = ("_make", "_rules")

    def __init__(self, make: Callable[[], tuple[Rule, ...]]) -> None:
        self._make = make
        self._rules: tuple[Rule, ...] | None = None

    def _get(self) -> tuple[Rule, ...]:
        if self._rules is None:
            self._rules = self._make()
        return self._rules

    def __len__(self) -> int:
        return len(self._get())

    @overload
    def __getitem__(self, index: int) -> Rule: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Rule, ...]: ...
    def __getitem__(self, index: int | slice) -> Rule | tuple[Rule, ...]:
        return self._get()[index]

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._get())


@functools.lru_cache(maxsize=32)
def _path_rules(patterns: tuple[str, ...]) -> tuple[Rule, ...]:
    """The path patterns as rules, parsed once per process (~120 of them: a policy built
    in each resuming process, or for each framework adapter, would parse them every time).
    A rule is immutable; its compiled patterns are cached per path context."""
    return tuple(parse_rule(f"x({p})") for p in patterns)


class Policy(ShellJudgement):
    """Settings + workspace + registry -> verdicts. Cheap to call; caches per tool name."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        workspace: str | os.PathLike[str] = ".",
        registry: Registry | None = None,
        mode: Mode | None = None,
        home: str | None = None,
        resolver: Resolver = os.path.realpath,
        protected: Iterable[str | os.PathLike[str]] = (),
        contain: bool = False,
    ) -> None:
        """`contain`: the caller runs a contained verdict in the OS sandbox
        (`signoff.sandbox`): a shell command that asks only because what it runs is
        unknown then runs contained instead (unless `[sandbox] enabled = false`)."""
        self.settings = settings or Settings()
        self.contain = contain and self.settings.sandbox
        self.registry = registry or Registry()
        self.resolve = resolver
        self.workspace = resolver(os.path.abspath(os.fspath(workspace)))
        self.home = resolver(home or os.path.expanduser("~"))
        self.mode: Mode = mode or self.settings.mode
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r} (expected one of {', '.join(MODES)})")
        self.ctx = PathContext(self.workspace, self.home, self.workspace)
        self.roots = (self.workspace, *(resolver(d) for d in self.settings.additional_directories))
        sensitive = _path_rules((*SENSITIVE_WRITE, *self.settings.sensitive))
        workspace, ctx = self.workspace, self.ctx
        # A project that lives under /var or ~/.config is still the project: a sensitive
        # place that contains the workspace itself does not make every file in it sensitive.
        # Worked out on first use: it compiles every pattern (~80), and judging a call
        # that writes no path (`git status`, in a process started for it) never needs it.
        self._sensitive: Sequence[Rule] = LazyRules(
            lambda: tuple(r for r in sensitive if not r.matches_path(workspace, ctx))
        )
        self._secret = _path_rules(SECRET_READ)
        self._candidates: dict[str, _Candidates] = {}
        self._deny_texts = frozenset(rule.text for rule in self.settings.deny)
        self._plain: Policy | None = None  # without_ask_rules
        self._uncontained: Policy | None = None  # without_containment
        # Told extras (e.g. the store's files) plus what is always signoff's own state.
        self.extra_protected = tuple(os.fspath(p) for p in protected)
        self.protected = ProtectedPaths.of(
            (*default_protected(self.roots), *self.extra_protected), resolver=resolver
        )
        registry = self.registry
        self.path_rules = PathRules(
            self.protected,
            self.ctx,
            deny=by_access(self.settings.deny, lambda rule: registry.get(rule.tool).kind),
            ask=by_access(self.settings.ask, lambda rule: registry.get(rule.tool).kind),
            secret=self._secret,
            sensitive=self._sensitive,
        )

    def hidden(self, path: str) -> bool:
        """Whether a tree walk (search_code) skips this path: see `PathRules.hidden`."""
        return self.path_rules.hidden(path)

    def protecting(self, paths: Iterable[str | os.PathLike[str]]) -> Policy:
        """This policy with `paths` among signoff's own state too (a copy; `self` is kept)."""
        return self._copy(protected=(*self.extra_protected, *(os.fspath(p) for p in paths)))

    def protecting_store(self, store: object) -> Policy:
        """This policy with the files of `store` (a SQLite store's) protected too: the store
        holds every run's transcript and decisions, wherever it lives. `self` when they
        already are."""
        files = store_files(getattr(store, "file", None))
        return self if all(self.protected.inside(f) for f in files) else self.protecting(files)

    def without_containment(self) -> Policy:
        """This policy for an executor that cannot contain (made once, then kept)."""
        if not self.contain:
            return self
        if self._uncontained is None:
            self._uncontained = self._copy(contain=False)
        return self._uncontained

    def with_mode(self, mode: Mode) -> Policy:
        return self._copy(mode=mode)

    def _copy(
        self,
        *,
        settings: Settings | None = None,
        mode: Mode | None = None,
        protected: Iterable[str] | None = None,
        contain: bool | None = None,
    ) -> Policy:
        """This policy with some of what it was made from changed (a new one)."""
        return Policy(
            self.settings if settings is None else settings,
            workspace=self.workspace,
            registry=self.registry,
            mode=self.mode if mode is None else mode,
            home=self.home,
            resolver=self.resolve,
            protected=self.extra_protected if protected is None else protected,
            contain=self.contain if contain is None else contain,
        )

    # ------------------------------------------------------------------ entry points

    def evaluate(
        self, call: ToolCall, *, grants: Sequence[Rule] = (), cwd: str | None = None
    ) -> Verdict:
        """The verdict on one call. `cwd` is the directory the client runs it in (a coding
        agent's shell keeps the one its last `cd` chose): what its relative paths mean.
        None: the workspace root (signoff's own tools and the frameworks run there); a
        value that is not an absolute path (the client did not say) is unknown, and every
        relative path is judged as unknown."""
        spec = self.registry.get(call.name)
        verdict = self._evaluate(call, spec, grants, self._where(cwd))
        if (
            self.mode == "auto"
            and verdict.effect == "ask"
            and not spec.always_ask
            and not self.person_only(verdict)
        ):
            if self.settings.reviewer is not None:
                return verdict  # the reviewer model settles it, or a person does (reviewer)
            return verdict.with_effect("allow", "auto mode: asks become allows")
        return verdict

    def for_reviewer(self, call: ToolCall, verdict: Verdict) -> bool:
        """Whether the reviewer model may settle this verdict: an ask in auto mode that
        `auto` alone would have allowed, within the reviewer's remit (`reviewer_remit`).
        A deny, an ask only a person settles and a tool that asks by design never reach it."""
        if self.settings.reviewer is None or self.mode != "auto" or verdict.effect != "ask":
            return False
        from .reviewer_remit import remit_problem  # only with a reviewer, in auto mode

        return remit_problem(self, call, verdict) is None

    def without_ask_rules(self) -> Policy:
        """This policy without its ask rules (made once): what else a call asks for."""
        if self._plain is None:
            self._plain = self._copy(settings=replace(self.settings, ask=()), contain=False)
        return self._plain

    def person_only(self, verdict: Verdict) -> bool:
        """An ask no mode, switch or model may settle: the call may reach signoff's own
        state, or a path a deny rule names (a tree that holds one, a glob that may expand
        to one). Deny is absolute, so its doubt is a person's to settle."""
        if verdict.effect != "ask":
            return False
        if touches_protected(verdict):
            return True
        denied = self._deny_texts
        return verdict.rule in denied or any(
            p.effect == "ask" and p.rule in denied for p in verdict.parts
        )

    def validated_edit(self, call: ToolCall, arguments: Mapping[str, Any]) -> ToolCall:
        """The call with a person's new arguments, checked against the tool's schema."""
        return call.with_arguments(self.registry.get(call.name).validate(arguments))

    def edit_problem(
        self, call: ToolCall, arguments: Mapping[str, Any], *, grants: Sequence[Rule] = ()
    ) -> str | None:
        """Why an edit cannot run (schema, or the policy denies it), or None if it can."""
        try:
            edited = self.validated_edit(call, arguments)
        except InvalidInput as exc:
            return str(exc)
        verdict = self.evaluate(edited, grants=grants)
        return f"the edited call is denied: {verdict.reason}" if verdict.effect == "deny" else None

    def may_deny(self, name: str) -> bool:
        """Whether any call of this tool could be denied; False lets a disabled gate skip
        evaluation entirely (asks become allows anyway, and no deny is possible)."""
        spec = self.registry.get(name)
        if spec.kind == "shell" or (self.mode == "plan" and spec.tier != "read"):
            return True
        if spec.other_strings or (
            spec.kind in ("file_read", "file_write") and (spec.path_arguments() or spec.walks)
        ):
            return True  # any path may be signoff's own state, which is always denied
        return bool(self._rules_for(spec).deny)

    # ------------------------------------------------------------------ dispatch

    def _rules_for(self, spec: ToolSpec) -> _Candidates:
        cached = self._candidates.get(spec.name)
        if cached is None:
            s = self.settings
            cached = _Candidates(
                deny=tuple(r for r in s.deny if r.names_tool(spec)),
                ask=tuple(r for r in s.ask if r.names_tool(spec)),
                allow=tuple(r for r in s.allow if r.names_tool(spec, allowing=True)),
            )
            self._candidates[spec.name] = cached
        return cached

    def _where(self, cwd: str | None) -> _Where:
        if cwd is None:
            return _Where(self.workspace, None)
        if not os.path.isabs(cwd):
            return _Where(None, "the client did not say which directory the call runs in")
        where = self.resolve(os.path.normpath(cwd))
        if self.inside_workspace(where):
            return _Where(where, None)
        return _Where(where, f"runs in {where}, outside the workspace {self.workspace}")

    def _evaluate(
        self, call: ToolCall, spec: ToolSpec, grants: Sequence[Rule], where: _Where
    ) -> Verdict:
        if spec.kind == "shell":
            return self._shell(call, spec, grants, where)
        rules = self._rules_for(spec)
        grant_rules = tuple(g for g in grants if g.names_tool(spec, allowing=True))
        effects = self._effects(call, spec, where)
        maybe = self._maybe_paths(spec, effects) if spec.other_strings else None
        if maybe is not None and maybe.effect == "deny":
            risk: Risk = "critical" if maybe.rule == PROTECTED else "high"
            return Verdict("deny", risk, maybe.rule, (maybe.reason,), spec.tier)
        if effects.problem:  # the argument we need is missing or malformed
            return self._problem(call, spec, grants, where, effects.problem)
        off_limits = self.path_rules.protected_verdict(effects)
        if off_limits is not None and off_limits.effect == "deny":
            return Verdict("deny", "critical", off_limits.rule, (off_limits.reason,), spec.tier)
        reach = self._reach(spec, effects)
        if reach is not None and reach.effect == "deny":
            return reach
        matcher, boundary, suggestion = self._inspect(call, spec, effects)

        for rule in rules.deny:
            if matcher(rule, False):
                return self._deny(spec, f"denied by rule {rule.text}", rule)
        if self.mode == "plan" and spec.tier != "read":
            return self._deny(spec, "plan mode is read-only: this call would change something")
        for rule in rules.ask:
            if matcher(rule, False):
                return Verdict(
                    "ask",
                    _risk(spec),
                    rule.text,
                    (f"rule {rule.text} asks",),
                    spec.tier,
                    suggestion(),
                )
        if reach is not None and not spec.always_ask:  # a denied path or signoff's state
            return reach  # in reach: no allow lifts it
        asked = self._boundary_ask(spec, boundary, maybe)
        if asked is not None:
            return asked
        for rule in (*rules.allow, *grant_rules):
            if matcher(rule, True):
                return Verdict(
                    "allow", _risk(spec), rule.text, (f"allowed by rule {rule.text}",), spec.tier
                )
        return self._default(spec, suggestion)

    def _problem(
        self, call: ToolCall, spec: ToolSpec, grants: Sequence[Rule], where: _Where, problem: str
    ) -> Verdict:
        """A call signoff cannot read whole asks; from a directory nobody knows, a deny
        read from the root still holds (deny is absolute)."""
        if where.path is None:
            from_root = self._evaluate(call, spec, grants, _Where(self.workspace, None))
            if from_root.effect == "deny":
                return from_root
        return Verdict("ask", "medium", None, (problem,), spec.tier)

    def _effects(self, call: ToolCall, spec: ToolSpec, where: _Where) -> Effects:
        """The call's effects, its relative paths read from where it runs."""
        resolve: Callable[[str], tuple[str, ...]] = self.resolve_all
        if where.path != self.workspace:
            resolve = functools.partial(self.resolve_all, where=where.path)
        if spec.walks and not spec.skips_hidden:  # a listing or search the client runs
            from .walks import effects_of

            try:
                return effects_of(call.arguments, spec, resolve)
            except InvalidInput as exc:  # relative to a directory nobody knows
                return Effects(problem=str(exc), arguments=call.arguments)
        return of_call(call, spec, resolve)

    def _reach(self, spec: ToolSpec, effects: Effects) -> Verdict | None:
        """A listing or search the client runs: what it can reach meets the path rules as
        a shell command's folders and trees do (`walks.py`); deny, ask or nothing."""
        if not spec.walks or spec.skips_hidden:
            return None
        from .walks import verdict

        found = verdict(self.path_rules, effects)
        if found is None:
            return None
        if found.effect == "deny":
            risk: Risk = "critical" if found.rule == PROTECTED else "high"
            return Verdict("deny", risk, found.rule, (found.reason,), spec.tier)
        return Verdict("ask", _bump(_risk(spec)), found.rule, (found.reason,), spec.tier)

    def _default(self, spec: ToolSpec, suggestion: Callable[[], str | None]) -> Verdict:
        tier = spec.tier
        if tier == "read":
            return Verdict("allow", "none", None, ("read-only tool",), tier)
        if tier == "write":
            if self.mode == "accept-edits":
                return Verdict("allow", "low", "mode", ("accept-edits: workspace edit",), tier)
            return Verdict(
                "notify",
                "low",
                None,
                ("reversible change inside the workspace: runs, recorded for review",),
                tier,
                suggestion(),
            )
        reason = {
            "destructive": "irreversible change",
            "external": "reaches the outside world",
            "privileged": "needs elevated privileges",
            "unknown": f"{spec.name} is not a declared tool",
        }[tier]
        return Verdict("ask", _risk(spec), None, (reason,), tier, suggestion())

    def _boundary_ask(
        self, spec: ToolSpec, boundary: str | None, maybe: PathVerdict | None
    ) -> Verdict | None:
        """The ask no allow rule lifts: a string that may be signoff's own state (which
        approvals off does not lift either), a tool that asks by design, the tool's own
        boundary, a string that may be a path a rule or boundary names."""
        risk = _bump(_risk(spec))
        if maybe is not None and maybe.rule == PROTECTED:
            return Verdict("ask", risk, maybe.rule, (maybe.reason,), spec.tier)
        if spec.always_ask:
            return Verdict("ask", "none", None, ("this tool asks a person by design",), spec.tier)
        if boundary:
            return Verdict("ask", risk, "boundary", (boundary,), spec.tier)
        if maybe is not None:
            return Verdict("ask", risk, maybe.rule, (maybe.reason,), spec.tier)
        return None

    def _maybe_paths(self, spec: ToolSpec, effects: Effects) -> PathVerdict | None:
        """What the strings no declared role accounts for say, read as the paths they
        would name (`Effects.maybe_paths`): signoff's own state and a deny rule's path are
        denied, an ask rule's path, a secret or sensitive file ask, and so does a path
        outside the workspace, when the call may write it or it exists to be read (a
        string with a line break in it is text, not a path, for that)."""
        if effects.unknown_paths:
            return PathVerdict(
                "ask",
                PROTECTED,
                "its arguments are too deep or too many to read every string as a path: "
                "one could be signoff's own state or a path a rule denies",
            )
        write = spec.other_strings == "write"
        found = self.path_rules.maybe_verdict(effects.maybe_paths, write=write)
        if found is not None:
            return found
        for path in effects.maybe_paths:
            if self.inside_workspace(path) or any(c < " " or c == "\x7f" for c in path):
                continue
            if write or os.path.lexists(path):
                verb = "write" if write else "read"
                return PathVerdict(
                    "ask",
                    "boundary",
                    f"{path} is outside the workspace {self.workspace}: an argument names "
                    f"it, and {spec.name} may {verb} it",
                )
        return None

    def _deny(self, spec: ToolSpec, reason: str, rule: Rule | None = None) -> Verdict:
        return Verdict(
            "deny",
            "critical" if rule is None else "high",
            rule.text if rule else "policy",
            (reason,),
            spec.tier,
        )

    # ------------------------------------------------------------------ per kind

    def _inspect(
        self, call: ToolCall, spec: ToolSpec, effects: Effects
    ) -> tuple[Callable[[Rule, bool], bool], str | None, Callable[[], str | None]]:
        """A rule matcher over the call's effects, the boundary it crosses (if any), and
        how to build the rule that "always allow" would save (lazily: the allow path
        skips it). Deny and ask rules match when any path matches, allow rules only when
        every path does."""
        if spec.kind in ("file_read", "file_write") and (spec.path_arg or spec.walks):
            paths = effects.paths
            boundary = next(
                filter(
                    None, (self._path_boundary(p, write=spec.kind == "file_write") for p in paths)
                ),
                None,
            )

            def suggest_path() -> str | None:
                if boundary or not paths:  # (an empty list of paths names none)
                    return None
                return f"{call.name}(./{_escape_glob(os.path.relpath(paths[0], self.workspace))})"

            def match_paths(rule: Rule, every: bool) -> bool:
                hits = (rule.matches_path(p, self.ctx) for p in paths)
                return bool(paths) and (all(hits) if every else any(hits))

            if len(paths) == 1:  # the common case, without a generator per rule
                only = paths[0]
                return (
                    (lambda rule, every: rule.matches_path(only, self.ctx)),
                    boundary,
                    (suggest_path),
                )
            return match_paths, boundary, suggest_path
        if spec.kind == "network" and effects.url is not None:
            from urllib.parse import urlsplit  # a URL tool's call only (slow to import)

            url, host = effects.url, canonical_host(effects.host or "")
            parts = urlsplit(url)
            boundary = None
            if parts.scheme not in ("http", "https") or not host:
                boundary = f"{url!r} is not an http(s) URL"
            elif self.settings.allowed_domains and not any(
                host_matches(host, d) for d in self.settings.allowed_domains
            ):
                boundary = f"{host} is not an allowed domain"
            domain_rule = f"{call.name}(domain:{host})" if host and not boundary else None
            matcher = lambda rule, every: rule.matches_url(url, every=every)  # noqa: E731
            return matcher, boundary, lambda: domain_rule
        args = effects.arguments
        boundary = self._amount_boundary(spec, args)
        return (
            (lambda rule, every: rule.matches_arguments(args, every=every)),
            boundary,
            _none if boundary else lambda: suggest_argument_rule(call, spec),
        )

    def resolve_path(self, raw: str) -> str:
        # `~` is this policy's home (which tests and servers may set), not the process's.
        return self.resolve(os.path.normpath(self._joined(raw)))

    def resolve_all(self, raw: str, *, where: str | _Unset | None = _UNSET) -> tuple[str, ...]:
        """The path as `..` reads on paper and as the OS reads it (`link/..` is the link
        target's parent): both are judged, so neither spelling slips past a rule. A
        relative path in a client's working directory (`where`) is judged from there and
        from the workspace root (clients differ in which they mean); in a directory nobody
        knows (`where=None`) it is unknown: the tool's path problem, which asks."""
        expanded = self.home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
        if os.path.isabs(expanded) or where is _UNSET or where == self.workspace:
            return self._spellings(self._joined(raw))
        if where is None:
            raise InvalidInput(
                f"{raw!r} is relative, and the directory it is relative to is unknown"
            )
        assert isinstance(where, str)
        return tuple(
            dict.fromkeys(
                (
                    *self._spellings(os.path.join(where, expanded)),
                    *self._spellings(self._joined(raw)),
                )
            )
        )

    def _spellings(self, joined: str) -> tuple[str, ...]:
        normal = os.path.normpath(joined)
        if normal == joined:
            return (self.resolve(normal),)
        return tuple(dict.fromkeys((self.resolve(normal), self.resolve(joined))))

    def _joined(self, raw: str) -> str:
        expanded = self.home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
        return expanded if os.path.isabs(expanded) else os.path.join(self.workspace, expanded)

    def inside_workspace(self, path: str) -> bool:
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in self.roots)

    def _path_boundary(self, path: str, *, write: bool) -> str | None:
        if not self.inside_workspace(path):
            return f"{path} is outside the workspace {self.workspace}"
        for rule in self._sensitive if write else self._secret:
            if rule.matches_path(path, self.ctx):
                if path.endswith(_SAFE_ENV_SUFFIXES):
                    continue
                return f"{path} is a sensitive path ({rule.specifier})"
        return None

    def _amount_boundary(self, spec: ToolSpec, args: Any) -> str | None:
        if not spec.amount_arg:
            return None
        cap = self.settings.amount_caps.get(spec.name, self.settings.max_amount)
        amount = args.get(spec.amount_arg)
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            return f"argument {spec.amount_arg!r} is not a number"
        if cap is not None and amount > cap:
            return f"amount {amount:g} is over the cap of {cap:g}"
        if amount < 0:
            return f"amount {amount:g} is negative"
        return None


def _none() -> None:
    return None


def _risk(spec: ToolSpec) -> Risk:
    return _TIER_RISK[spec.tier]


def _bump(risk: Risk) -> Risk:
    order: tuple[Risk, ...] = ("none", "low", "medium", "high", "critical")
    return order[min(order.index(risk) + 1, len(order) - 1)] if risk != "none" else "medium"


def _escape_glob(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


__all__ = ["SECRET_READ", "SENSITIVE_WRITE", "Policy", "touches_protected"]
