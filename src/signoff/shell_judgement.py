"""The policy's judgement of a shell command: where it starts, each part against the
rules, the path rules and the boundaries, and the contained tier (a part that asks only
for its unknown effects runs in the OS sandbox instead). A mixin of `Policy`, which holds
the rules, paths and modes it reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .effects import PROTECTED, PathRules, of_part
from .exceptions import InvalidInput
from .lazyre import lazy
from .models import ShellPartSummary, ToolCall, Verdict
from .records import record
from .rules import Rule
from .settings import Settings
from .tools import ToolSpec

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import TypeGuard

    from . import shell
    from .effects import PathVerdict
    from .models import Effect, Risk
    from .settings import Mode

_BACKGROUND = lazy(r"(?<![&>|<])&(?![&>])")  # `job &` (and, conservatively, a quoted one)
CONTAINED = "contained"  # the rule of a part that runs in the OS sandbox instead of asking
CONTAINED_REASON = (
    "runs contained: no network, writes only inside the workspace, secrets hidden; "
    "its changes are recorded for review"
)

_SHELL_RISK: dict[str, Risk] = {
    "read_only": "none",
    "reversible_write": "low",
    "destructive": "high",
    "network": "high",
    "privilege": "critical",
    "opaque": "medium",
}


@record(frozen=True, slots=True)
class _Where:
    """Where a call runs: the resolved directory (None: unknown), and why that alone
    asks (outside the workspace, or unknown)."""

    path: str | None
    boundary: str | None
    also: tuple[str, ...] = ()  # other directories it may mean (`dir_path` read two ways)


@record(frozen=True, slots=True)
class _Candidates:
    """The rules that may apply to one tool, by list."""

    deny: tuple[Rule, ...]
    ask: tuple[Rule, ...]
    allow: tuple[Rule, ...]


class ShellJudgement:
    """What `Policy` judges a shell command with; the attributes are `Policy`'s."""

    workspace: str
    home: str
    roots: tuple[str, ...]
    mode: Mode
    contain: bool
    settings: Settings
    path_rules: PathRules
    _deny_texts: frozenset[str]

    if TYPE_CHECKING:

        def _rules_for(self, spec: ToolSpec) -> _Candidates: ...
        def _deny(self, spec: ToolSpec, reason: str, rule: Rule | None = None) -> Verdict: ...
        def inside_workspace(self, path: str) -> bool: ...
        def resolve_all(self, raw: str, *, where: str | None = ...) -> tuple[str, ...]: ...

    def _shell_start(self, call: ToolCall, spec: ToolSpec, where: _Where) -> _Where | str:
        """Where the command starts: the client's directory, moved by the tool's own
        directory argument (Gemini's `dir_path`); or why that cannot be known."""
        if not spec.cwd_arg or call.arguments.get(spec.cwd_arg) is None:
            return where
        value = call.arguments[spec.cwd_arg]
        if not isinstance(value, str) or not value:
            return f"argument {spec.cwd_arg!r} must be a directory path"
        try:
            starts = self.resolve_all(value, where=where.path)
        except InvalidInput as exc:
            return str(exc)
        outside = [p for p in starts[1:] if not self.inside_workspace(p)]
        if outside:  # read from the client's directory and from the root: both must hold
            return f"{spec.cwd_arg} {value!r} may mean {outside[0]}, outside the workspace"
        start = starts[0]
        if not self.inside_workspace(start):
            return _Where(start, f"runs in {start}, outside the workspace {self.workspace}")
        return _Where(start, None, starts[1:])

    def _shell(
        self,
        call: ToolCall,
        spec: ToolSpec,
        grants: Sequence[Rule],
        where: _Where,
        *,
        contain: bool = True,
    ) -> Verdict:
        command = call.arguments.get(spec.command_arg or "command")
        if not isinstance(command, str):
            return Verdict(
                "ask",
                "medium",
                None,
                (f"argument {spec.command_arg!r} must be a command string",),
                spec.tier,
            )
        start = self._shell_start(call, spec, where)
        if isinstance(start, str):
            return Verdict("ask", "medium", "boundary", (start,), spec.tier)
        from . import shell  # loaded on first use: the grammar is not free to load

        rules = self._rules_for(spec)
        grant_rules = tuple(g for g in grants if g.names_tool(spec, allowing=True))
        analysis = shell.analyze(
            command,
            workspace=self.workspace,
            home=self.home,
            read_roots=self.roots[1:],
            cwd=start.path or self.workspace,
            # unknown: every relative path is judged as unknown (None), and as the root's
            also_in=(None,) if start.path is None else start.also,
        )
        whole = " ".join(command.split())
        for rule in rules.deny:  # a deny on the whole text also holds
            if rule.specifier is not None and rule.matches_shell(whole):
                return self._deny(spec, f"denied by rule {rule.text}", rule)
        # `shopt -s dotglob` or GLOBIGNORE make `*` match dot names: judge globs so.
        dotglob = "dotglob" in command or "GLOBIGNORE" in command
        summaries: list[ShellPartSummary] = []
        for part in analysis.parts:
            part_effect, part_rule, reason = self._shell_part(
                part, rules, grant_rules, dotglob, contain
            )
            if start.boundary and part_effect in ("allow", "notify"):
                # outside the workspace, a rule written for the project means something else
                part_effect, part_rule, reason = "ask", "boundary", start.boundary
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
        contained = effect in ("allow", "notify") and any(s.rule == CONTAINED for s in summaries)
        if contained and _BACKGROUND.search(command):
            # a job left running would die with the sandbox: a person decides instead
            return self._shell(call, spec, grants, where, contain=False)
        if contained:
            risk = "low"  # what could go wrong stays inside the sandbox and can be reverted
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
        return Verdict(
            effect, risk, rule_text, reasons, spec.tier, suggestion, tuple(summaries), contained
        )

    def _persons_doubt(self, found: PathVerdict | None) -> TypeGuard[PathVerdict]:
        """A path verdict that only a person settles: signoff's own state, or a deny's doubt."""
        return found is not None and (found.rule == PROTECTED or found.rule in self._deny_texts)

    def _shell_part(
        self,
        part: shell.CommandPart,
        rules: _Candidates,
        grants: Iterable[Rule],
        dotglob: bool,
        contain: bool = True,
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
        if self._persons_doubt(by_path):  # an ask rule must not hide it (person_only)
            if self._sandbox_settles(part, rules, contain):
                return "notify", CONTAINED, f"{CONTAINED_REASON} (and it hides {by_path.reason})"
            return "ask", by_path.rule, by_path.reason
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
        return self._shell_part_allowed(part, rules, grants, contain)

    def _sandbox_settles(self, part: shell.CommandPart, rules: _Candidates, contain: bool) -> bool:
        """Whether running the part contained settles a doubt about what it may reach
        (a tree that holds signoff's state or a denied path, a path known only at run
        time): the sandbox hides all of those. Ask rules and boundaries still ask."""
        if not (self.contain and contain) or part.boundaries or part.catastrophic:
            return False
        if any(rule.catches_shell(part.text, part.argv) for rule in rules.ask):
            return False
        if part.writes and not part.inside_workspace:
            return False
        if part.cls == "read_only":
            return part.effect == "allow"
        return part.containable

    def _shell_part_allowed(
        self, part: shell.CommandPart, rules: _Candidates, grants: Iterable[Rule], contain: bool
    ) -> tuple[Effect, str | None, str | None]:
        """A part no deny, ask or boundary stopped: an allow rule, the mode, containment,
        else what the analysis says."""
        allowing = _allowing_rule(part, (*rules.allow, *grants))
        if allowing is not None:
            return "allow", allowing.text, f"allowed by rule {allowing.text}"
        if self.mode == "accept-edits" and part.cls == "reversible_write" and part.inside_workspace:
            return "allow", "mode", "accept-edits: workspace edit"
        if self.contain and contain and part.containable:
            return "notify", CONTAINED, CONTAINED_REASON
        return part.effect, None, None


def _allowing_rule(part: shell.CommandPart, rules: Iterable[Rule]) -> Rule | None:
    for rule in rules:
        # A bare `Bash` cannot vouch for what could not be parsed: it needs a specifier.
        if part.cls == "opaque" and rule.specifier is None:
            continue
        if rule.matches_shell(part.text):
            return rule
    return None


def _shell_risk(parts: Sequence[shell.CommandPart], effect: Effect) -> Risk:
    if effect == "deny" or any(p.catastrophic for p in parts):
        return "critical"
    risks = [_SHELL_RISK.get(p.cls, "medium") for p in parts] or ["none"]
    order: tuple[Risk, ...] = ("none", "low", "medium", "high", "critical")
    return max(risks, key=order.index)
