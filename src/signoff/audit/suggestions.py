"""Policy suggestions from the decision history (pure; see `stats` for the rules)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from ..always import suggest_argument_rule
from ..exceptions import InvalidInput
from ..kinds import GRANT_ADDED, GRANT_REVOKED
from ..models import ToolCall
from ..project_rules import recommended
from ..rules import Rule, parse_rule
from ..store import Event
from ..tools import BUILTIN_SPECS, canonical_tool_name
from .history import JudgedCall, Question

_PSEUDO_RULES = ("boundary", "mode", "policy", "catastrophic", "protected", "tool_changed")
_PATH_KEYS = ("path", "file_path", "filename")

SuggestionKind = Literal["allow", "deny", "remove_ask_rule"]


@dataclass(frozen=True, slots=True)
class Suggestion:
    kind: SuggestionKind
    rule: str
    tool: str
    count: int  # decisions behind it, all the same
    reason: str
    command: str | None = None  # allow: the exact `signoff grant add` command
    toml: str | None = None  # deny: the line to add under [permissions] deny
    examples: tuple[str, ...] = ()  # request ids

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "examples": list(self.examples)}


def granted_rules(events: Sequence[Event]) -> set[str]:
    """Rules of grants added and not revoked: no need to suggest them again."""
    rules: dict[str, str] = {}
    for e in events:
        if e.kind == GRANT_ADDED:
            grant = e.data.get("grant") or {}
            rules[str(grant.get("id"))] = str(grant.get("rule"))
        elif e.kind == GRANT_REVOKED:
            rules.pop(str(e.data.get("grant_id")), None)
    return set(rules.values())


def suggest(
    window: Sequence[Question],
    every: Sequence[Question],
    calls: Sequence[JudgedCall],
    min_count: int,
    granted: set[str],
) -> tuple[Suggestion, ...]:
    out: list[Suggestion] = []
    # the whole log: what was ever refused (rejected, edited into a deny, or denied)
    refused: list[tuple[str, Mapping[str, Any], str | None, tuple[str, ...]]] = []
    for r in every:
        if r.refused:
            refused.append((r.name, r.arguments, r.suggested, ()))
            if r.edited_to is not None:
                refused.append((r.name, r.edited_to, None, ()))
    refused += [(c.name, c.arguments, c.suggested, c.parts) for c in calls if c.effect == "deny"]

    allow: dict[tuple[str, str], list[Question]] = defaultdict(list)
    deny: dict[str, list[Question]] = defaultdict(list)
    for r in every:
        if r.verdict.get("effect") == "ask" and r.rule and r.rule not in _PSEUDO_RULES:
            allow[("remove_ask_rule", r.rule)].append(r)
        elif r.verdict.get("effect") == "ask" and r.rule is None and r.suggested:
            allow[("allow", r.suggested)].append(r)
        pattern = r.suggested or _exact_rule(r)
        if pattern:
            deny[pattern].append(r)
    in_window = {r.id for r in window}

    for (kind, rule), items in sorted(allow.items()):
        decided = [r for r in items if r.decision]
        recent = [r for r in decided if r.id in in_window]
        if len(recent) < min_count or any(r.decision != "approve" for r in decided):
            continue
        if rule in granted or any(_could_match(rule, *item) for item in refused):
            continue
        if kind == "allow" and not all(_still_narrow(rule, r) for r in decided):
            continue  # recorded by an older signoff that keyed "always" too widely
        tool = items[0].name
        ids = tuple(r.id for r in recent[:3])
        if kind == "allow":
            why = f"approved all {len(recent)} times it was asked; never rejected or denied"
            if recommended(rule):
                why = (
                    f"a test or build command of this project, approved all {len(recent)} "
                    "times it was asked: a recommended project rule (docs/shell.md)"
                )
            out.append(
                Suggestion(
                    "allow",
                    rule,
                    tool,
                    len(recent),
                    why,
                    command=f"signoff grant add {_quote(rule)} --scope project",
                    examples=ids,
                )
            )
        else:
            out.append(
                Suggestion(
                    "remove_ask_rule",
                    rule,
                    tool,
                    len(recent),
                    f"the ask rule {rule} was approved all {len(recent)} times; an ask rule beats "
                    "every allow rule, so remove it from [permissions] ask to stop these questions",
                    examples=ids,
                )
            )
    for rule, items in sorted(deny.items()):
        decided = [r for r in items if r.decision]
        recent = [r for r in decided if r.id in in_window]
        if len(recent) < min_count or any(r.decision != "reject" for r in decided):
            continue
        out.append(
            Suggestion(
                "deny",
                rule,
                items[0].name,
                len(recent),
                f"rejected all {len(recent)} times it was asked",
                toml=f"{_toml_string(rule)},",
                examples=tuple(r.id for r in recent[:3]),
            )
        )
    return tuple(sorted(out, key=lambda s: (-s.count, s.kind, s.rule)))


def _exact_rule(r: Question) -> str | None:
    """`Tool(the exact command)` for a shell call without a suggested rule."""
    command = r.arguments.get("command")
    if not isinstance(command, str) or not r.verdict.get("parts"):
        return None
    text = " ".join(command.split())
    if not text or any(c in text for c in "*?[()\n") or text.endswith(":*"):
        return None
    try:
        return parse_rule(f"{r.name}({text})").text
    except Exception:
        return None


def _could_match(
    rule_text: str,
    name: str,
    arguments: Mapping[str, Any],
    suggested: str | None,
    parts: tuple[str, ...],
) -> bool:
    """Whether an allow rule could allow this refused call; when unsure, yes."""
    if suggested == rule_text:
        return True
    try:
        rule: Rule = parse_rule(rule_text)
    except Exception:
        return True
    if rule.tool != "*" and canonical_tool_name(rule.tool) != canonical_tool_name(name):
        return False
    if rule.specifier is None:
        return True
    try:
        command = arguments.get("command")
        if isinstance(command, str):
            return any(rule.catches_shell(c) for c in (command, *parts))
        url = arguments.get("url")
        if isinstance(url, str):
            return rule.matches_url(url, every=False)
        paths = [arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)]
        if paths:
            spec = rule.specifier.strip().removeprefix("./")
            return any(
                fnmatchcase(p.removeprefix("./"), spec)
                or p.removeprefix("./").startswith(spec.rstrip("*").rstrip("/") + "/")
                for p in paths
            )
        return rule.matches_arguments(arguments, every=False)
    except Exception:
        return True


def _still_narrow(rule: str, question: Question) -> bool:
    """Whether today's signoff would suggest this rule for this question: an argument
    rule keyed on every declared subject (built-in tools), never a prefix or a glob for a
    destructive, network or privileged shell command."""
    spec = BUILTIN_SPECS.get(canonical_tool_name(question.name))
    if spec is not None and spec.kind == "other":
        try:
            call = ToolCall(question.name, dict(question.arguments))
        except InvalidInput:
            return False
        return suggest_argument_rule(call, spec) == rule
    parts = question.verdict.get("parts") or ()
    risky = any(isinstance(p, Mapping) and p.get("class") in _EXACT_ONLY for p in parts)
    return not (risky and ("*" in rule or rule.endswith(":*)")))


_EXACT_ONLY = ("destructive", "network", "privilege")


def _quote(rule: str) -> str:
    """Single-quoted for a POSIX shell, exactly."""
    return "'" + rule.replace("'", "'\"'\"'") + "'"


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; ASCII-only keeps DEL escaped too)."""
    return json.dumps(text)


__all__ = ["Suggestion", "SuggestionKind", "granted_rules", "suggest"]
