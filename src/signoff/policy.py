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
    of_part,
    touches_protected,
)
from .exceptions import InvalidInput
from .hints import overload
from .models import ShellPartSummary, ToolCall, Verdict
from .normalize import canonical_host
from .protected import ProtectedPaths, default_protected
from .records import record
from .rules import PathContext, Rule, host_matches, parse_rule
from .runs_later import SENSITIVE_PATTERNS as _RUNS_LATER
from .settings import MODES, Settings
from .tools import Registry, ToolSpec

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    from . import shell
    from .models import Effect, Risk
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
_SHELL_RISK: dict[str, Risk] = {
    "read_only": "none",
    "reversible_write": "low",
    "destructive": "high",
    "network": "high",
    "privilege": "critical",
    "opaque": "medium",
}


@record(frozen=True, slots=True)
class _Candidates:
    """The rules that may apply to one tool, by list."""

    deny: tuple[Rule, ...]
    ask: tuple[Rule, ...]
    allow: tuple[Rule, ...]


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


class Policy:
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
    ) -> None:
        self.settings = settings or Settings()
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

    def with_mode(self, mode: Mode) -> Policy:
        clone = Policy(
            self.settings,
            workspace=self.workspace,
            registry=self.registry,
            mode=mode,
            home=self.home,
            resolver=self.resolve,
            protected=self.extra_protected,
        )
        return clone

    # ------------------------------------------------------------------ entry points

    def evaluate(self, call: ToolCall, *, grants: Sequence[Rule] = ()) -> Verdict:
        spec = self.registry.get(call.name)
        verdict = self._evaluate(call, spec, grants)
        if (
            self.mode == "auto"
            and verdict.effect == "ask"
            and not spec.always_ask
            and not (
                touches_protected(verdict)  # may reach signoff's own state: a person decides
            )
        ):
            if self.settings.reviewer is not None:
                return verdict  # the reviewer model settles it, or a person does (reviewer)
            return verdict.with_effect("allow", "auto mode: asks become allows")
        return verdict

    def for_reviewer(self, call: ToolCall, verdict: Verdict) -> bool:
        """Whether the reviewer model may settle this verdict: an ask in auto mode that
        `auto` alone would have allowed, within the reviewer's tools and risk. A deny, an
        ask about signoff's own state and a tool that asks by design never reach it."""
        reviewer = self.settings.reviewer
        if reviewer is None or self.mode != "auto" or verdict.effect != "ask":
            return False
        spec = self.registry.get(call.name)
        if spec.always_ask or touches_protected(verdict):
            return False
        return reviewer.settles(spec.name, verdict.risk) or reviewer.settles(
            call.name, verdict.risk
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
            spec.kind in ("file_read", "file_write") and spec.path_arguments()
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

    def _evaluate(self, call: ToolCall, spec: ToolSpec, grants: Sequence[Rule]) -> Verdict:
        if spec.kind == "shell":
            return self._shell(call, spec, grants)
        rules = self._rules_for(spec)
        grant_rules = tuple(g for g in grants if g.names_tool(spec, allowing=True))
        effects = of_call(call, spec, self.resolve_all)
        maybe = self._maybe_paths(spec, effects) if spec.other_strings else None
        if maybe is not None and maybe.effect == "deny":
            risk: Risk = "critical" if maybe.rule == PROTECTED else "high"
            return Verdict("deny", risk, maybe.rule, (maybe.reason,), spec.tier)
        if effects.problem:  # the argument we need is missing or malformed
            return Verdict("ask", "medium", None, (effects.problem,), spec.tier)
        off_limits = self.path_rules.protected_verdict(effects)
        if off_limits is not None and off_limits.effect == "deny":
            return Verdict("deny", "critical", off_limits.rule, (off_limits.reason,), spec.tier)
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
        asked = self._boundary_ask(spec, boundary, maybe)
        if asked is not None:
            return asked
        for rule in (*rules.allow, *grant_rules):
            if matcher(rule, True):
                return Verdict(
                    "allow", _risk(spec), rule.text, (f"allowed by rule {rule.text}",), spec.tier
                )
        return self._default(spec, suggestion)

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
        if spec.kind in ("file_read", "file_write") and spec.path_arg:
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

    def resolve_all(self, raw: str) -> tuple[str, ...]:
        """The path as `..` reads on paper and as the OS reads it (`link/..` is the link
        target's parent): both are judged, so neither spelling slips past a rule."""
        joined = self._joined(raw)
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

    def _shell(self, call: ToolCall, spec: ToolSpec, grants: Sequence[Rule]) -> Verdict:
        command = call.arguments.get(spec.command_arg or "command")
        if not isinstance(command, str):
            return Verdict(
                "ask",
                "medium",
                None,
                (f"argument {spec.command_arg!r} must be a command string",),
                spec.tier,
            )
        from . import shell  # loaded on first use: the grammar is not free to load

        rules = self._rules_for(spec)
        grant_rules = tuple(g for g in grants if g.names_tool(spec, allowing=True))
        analysis = shell.analyze(
            command, workspace=self.workspace, home=self.home, read_roots=self.roots[1:]
        )
        whole = " ".join(command.split())
        for rule in rules.deny:  # a deny on the whole text also holds
            if rule.specifier is not None and rule.matches_shell(whole):
                return self._deny(spec, f"denied by rule {rule.text}", rule)
        # `shopt -s dotglob` or GLOBIGNORE make `*` match dot names: judge globs so.
        dotglob = "dotglob" in command or "GLOBIGNORE" in command
        summaries: list[ShellPartSummary] = []
        for part in analysis.parts:
            part_effect, part_rule, reason = self._shell_part(part, rules, grant_rules, dotglob)
            summaries.append(
                ShellPartSummary(
                    part.text,
                    part.cls,
                    part_effect,
                    (reason, *part.reasons) if reason else part.reasons,
                    part_rule,
                )
            )
        effects = [s.effect for s in summaries]
        effect: Effect = shell.combine(effects) if effects else "allow"
        deciding = [s for s in summaries if s.effect == effect]
        risk = _shell_risk(analysis.parts, effect)
        reasons = tuple(dict.fromkeys(r for s in deciding for r in s.reasons)) or ("empty command",)
        rule_text = next((s.rule for s in deciding if s.rule), None)
        suggestion = None
        asking = [p for p, s in zip(analysis.parts, summaries, strict=True) if s.effect == "ask"]
        protected_ask = any(s.effect == "ask" and s.rule == PROTECTED for s in summaries)
        if (
            effect == "ask"
            and len(asking) == 1
            and not asking[0].catastrophic
            and not (
                protected_ask  # no rule can allow it: approve once, never "always"
            )
        ):
            try:
                suggestion = shell.suggest_rule(asking[0], call.name)
            except ValueError:
                suggestion = None  # nothing stable to name: approve once, never "always"
        return Verdict(effect, risk, rule_text, reasons, spec.tier, suggestion, tuple(summaries))

    def _shell_part(
        self, part: shell.CommandPart, rules: _Candidates, grants: Iterable[Rule], dotglob: bool
    ) -> tuple[Effect, str | None, str | None]:
        for rule in rules.deny:
            if rule.catches_shell(part.text, part.argv):
                return "deny", rule.text, f"denied by rule {rule.text}"
        if part.catastrophic:
            return "deny", "catastrophic", None
        # The part's file operands, redirects, trees and links meet the path rules.
        by_path = self.path_rules.verdict(of_part(part), dotglob=dotglob)
        if by_path is not None and by_path.effect == "deny":
            return "deny", by_path.rule, by_path.reason
        if self.mode == "plan" and part.cls != "read_only":
            return "deny", "mode", "plan mode is read-only"
        for rule in rules.ask:
            if rule.catches_shell(part.text, part.argv):
                return "ask", rule.text, f"rule {rule.text} asks"
        if by_path is not None:  # an ask rule on a path, a boundary: no allow rule lifts it
            return "ask", by_path.rule, by_path.reason
        if part.boundaries:  # code that runs later, targets unread: no allow rule lifts it
            return "ask", "boundary", part.boundaries[0]
        if part.writes and not part.inside_workspace:
            # A boundary: `Bash(echo:*)` must not allow `echo x > ~/.profile`.
            return (
                ("ask" if part.effect == "allow" else part.effect),
                "boundary",
                ("writes outside the workspace"),
            )
        for rule in (*rules.allow, *grants):
            # A bare `Bash` cannot vouch for what could not be parsed: it needs a specifier.
            if part.cls == "opaque" and rule.specifier is None:
                continue
            if rule.matches_shell(part.text):
                return "allow", rule.text, f"allowed by rule {rule.text}"
        if self.mode == "accept-edits" and part.cls == "reversible_write" and part.inside_workspace:
            return "allow", "mode", "accept-edits: workspace edit"
        return part.effect, None, None


def _none() -> None:
    return None


def _risk(spec: ToolSpec) -> Risk:
    return _TIER_RISK[spec.tier]


def _bump(risk: Risk) -> Risk:
    order: tuple[Risk, ...] = ("none", "low", "medium", "high", "critical")
    return order[min(order.index(risk) + 1, len(order) - 1)] if risk != "none" else "medium"


def _shell_risk(parts: Sequence[shell.CommandPart], effect: Effect) -> Risk:
    if effect == "deny" or any(p.catastrophic for p in parts):
        return "critical"
    risks = [_SHELL_RISK.get(p.cls, "medium") for p in parts] or ["none"]
    order: tuple[Risk, ...] = ("none", "low", "medium", "high", "critical")
    return max(risks, key=order.index)


def _escape_glob(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


__all__ = ["SECRET_READ", "SENSITIVE_WRITE", "Policy", "touches_protected"]
