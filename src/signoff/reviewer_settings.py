"""`[reviewer]` in settings: a model that may settle what `auto` mode would have let run.

    [reviewer]
    model = "gpt-4.1-mini"               # any OpenAI-compatible chat model
    base_url = "http://127.0.0.1:8000/v1" # user or local file only (see PERSONAL_KEYS)
    api_key_env = "REVIEWER_API_KEY"     # the NAME of the variable; the key is never here
    filter_timeout = 10                  # seconds for the fast filter (stage 1)
    reason_timeout = 60                  # seconds for careful reasoning (stage 2)
    max_risk = "high"                    # asks riskier than this always go to a person
    tools = ["run_command", "fetch_url"] # only these tools' asks (default: every tool)
    classes = ["write", "external"]      # only asks that do these (default: DEFAULT_CLASSES)
    fast_max_risk = "medium"             # above this, a stage-1 "allow" needs stage 2 too

Tables merge key by key (the most local file wins). `base_url` and `api_key_env` decide
where requests and a key go, so only a person's own files (user, local) may set them.

Only asks reach the reviewer, and only in `auto` mode: a deny never does, nor an ask about
signoff's own state or a path a deny rule names, nor a tool that asks a person by design.
Its remit (`tools`, `max_risk`, `classes`) is decided by code from the policy's verdict,
never from the call's words: whatever an argument says, an ask outside it goes to a
person. The reviewer may let an ask inside it run (recorded for review after) or hand it
to a person. This module is pure: it reads the table and says what the reviewer may
settle; `reviewer` talks to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .exceptions import SettingsError
from .models import RISKS, Verdict
from .records import record, replace

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    from .models import Risk

# The rule a reviewer-allowed verdict names, and how an escalation's note starts: the
# note is information for the person, not a reason the policy asked (see targets).
REVIEWER_RULE = "reviewer"
ESCALATION_NOTE = "the reviewer model handed this to a person"
ALLOWED_NOTE = "the reviewer model allowed it"

AUTO_WITHOUT_REVIEWER = (
    "WARNING: auto mode without a reviewer: every call that would ask a person RUNS "
    "WITHOUT ASKING (only deny rules protect you). Configure [reviewer] in settings to "
    "have a model screen them (docs/reviewer.md)."
)

KEYS = (
    "model",
    "base_url",
    "api_key_env",
    "filter_timeout",
    "reason_timeout",
    "max_risk",
    "fast_max_risk",
    "tools",
    "classes",
)
# What an ask does, in the remit's words. The policy works them out from the call's
# effects (each asking shell part's class, a declared tool's tier, a boundary crossed),
# never from the text of its arguments.
CLASSES = (
    "read",
    "write",
    "destructive",
    "external",
    "privileged",
    "opaque",
    "unknown",
    "boundary",
)
# A crossed boundary (outside the workspace, a secret or sensitive path, code that runs
# later, an amount over its cap, a domain not allowed) and a privileged call go to a
# person unless the settings name them.
DEFAULT_CLASSES = ("read", "write", "destructive", "external", "opaque", "unknown")
_SHELL_CLASSES = {
    "read_only": "read",
    "reversible_write": "write",
    "destructive": "destructive",
    "network": "external",
    "privilege": "privileged",
    "opaque": "opaque",
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@record(frozen=True, slots=True)
class ReviewerSettings:
    """What the `[reviewer]` table says (see the module docstring)."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    filter_timeout: float = 10.0
    reason_timeout: float = 60.0
    max_risk: Risk = "high"
    fast_max_risk: Risk = "medium"
    tools: tuple[str, ...] = ()  # empty: every tool
    classes: tuple[str, ...] = DEFAULT_CLASSES
    source: str = "<code>"
    given: frozenset[str] = frozenset()  # the keys a settings file set (for merging)

    def merged_with(self, local: ReviewerSettings) -> ReviewerSettings:
        """Key by key: what the more local file set wins."""
        taken = {key: getattr(local, key) for key in local.given}
        return replace(self, **taken, given=self.given | local.given, source=local.source)

    def remit_problem(
        self, tools: tuple[str, ...], risk: Risk, classes: frozenset[str]
    ) -> str | None:
        """Why an ask about this tool (any of its names), at this risk, doing these
        classes of thing, is not the reviewer's to settle; None when it is."""
        if self.tools and not any(tool in self.tools for tool in tools):
            return f"{tools[0]} is not among the reviewer's tools"
        if RISKS.index(risk) > RISKS.index(self.max_risk):
            return f"its risk ({risk}) is above the reviewer's max_risk ({self.max_risk})"
        outside = [c for c in CLASSES if c in classes and c not in self.classes]
        if outside:
            return f"it is {' and '.join(outside)}: not among the reviewer's classes"
        return None

    def settles(self, tool: str, risk: Risk, classes: frozenset[str] = frozenset()) -> bool:
        """Whether an ask about this tool, at this risk, is the reviewer's to settle."""
        return self.remit_problem((tool,), risk, classes) is None

    def fast_path(self, risk: Risk) -> bool:
        """Whether the fast filter's "allow" settles an ask of this risk on its own."""
        return RISKS.index(risk) <= RISKS.index(self.fast_max_risk)


def parse_reviewer(
    table: Any, path: str, fail: Callable[[str, str | None], SettingsError]
) -> ReviewerSettings:
    """The `[reviewer]` table of one settings file; `fail(message, needle)` names the line."""
    if not isinstance(table, Mapping):
        raise fail("[reviewer] must be a table", "reviewer")
    if "api_key" in table:
        raise fail(
            "reviewer.api_key: the key is never written in a settings file; "
            "name the environment variable that holds it with api_key_env",
            "api_key",
        )
    for key in table:
        if key not in KEYS:
            raise fail(f"unknown key {key!r} in [reviewer] (known: {', '.join(KEYS)})", key)
    model = table.get("model", "")
    if not isinstance(model, str) or ("model" in table and not model.strip()):
        raise fail("reviewer.model must name a model (a non-empty string)", "model")
    base_url = table.get("base_url")
    if base_url is not None and (
        not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))
    ):
        raise fail("reviewer.base_url must be an http:// or https:// URL", "base_url")
    env = table.get("api_key_env", "OPENAI_API_KEY")
    if not isinstance(env, str) or not _ENV_NAME.match(env):
        raise fail(
            f"reviewer.api_key_env must be the name of an environment variable, not {env!r}",
            "api_key_env",
        )
    timeouts = {}
    for key, default in (("filter_timeout", 10.0), ("reason_timeout", 60.0)):
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 600:
            raise fail(f"reviewer.{key} must be a number of seconds in (0, 600]", key)
        timeouts[key] = float(value)
    risks: dict[str, Risk] = {}
    for key, fallback in (("max_risk", "high"), ("fast_max_risk", "medium")):
        risk = table.get(key, fallback)
        if risk not in RISKS:
            raise fail(f"reviewer.{key} {risk!r} is not one of {', '.join(RISKS)}", key)
        risks[key] = risk
    tools = table.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise fail("reviewer.tools must be a list of tool names", "tools")
    classes = table.get("classes", list(DEFAULT_CLASSES))
    if not isinstance(classes, list) or not all(c in CLASSES for c in classes):
        unknown = [c for c in classes if c not in CLASSES] if isinstance(classes, list) else []
        raise fail(
            f"reviewer.classes must be a list of {', '.join(CLASSES)}"
            + (f" (not {unknown[0]!r})" if unknown else ""),
            "classes",
        )
    return ReviewerSettings(
        model=model.strip(),
        base_url=base_url,
        api_key_env=env,
        filter_timeout=timeouts["filter_timeout"],
        reason_timeout=timeouts["reason_timeout"],
        max_risk=risks["max_risk"],
        fast_max_risk=risks["fast_max_risk"],
        tools=tuple(tools),
        classes=tuple(dict.fromkeys(classes)),
        source=path,
        given=frozenset(table),
    )


# Where the reviewer's requests go, and which secret they carry: a committed file (anyone's
# repository) must not choose these, or cloning a repository could send your key to it.
PERSONAL_KEYS = ("base_url", "api_key_env")


def committed_problem(reviewer: ReviewerSettings | None) -> tuple[str, str] | None:
    """(message, key) when the project file sets a key only a person's own file may set."""
    for key in PERSONAL_KEYS:
        if reviewer is not None and key in reviewer.given:
            return (
                f"reviewer.{key} may not be set in the committed project file: it decides "
                "where the reviewer's requests and your API key go. Set it in "
                ".signoff/settings.local.toml or in your user settings",
                key,
            )
    return None


def unfinished_problem(reviewer: ReviewerSettings | None) -> str | None:
    """Why the merged `[reviewer]` tables cannot be used, or None."""
    if reviewer is not None and not reviewer.model:
        return "[reviewer] names no model: set reviewer.model in one of the settings files"
    return None


def ask_classes(verdict: Verdict) -> frozenset[str]:
    """What an ask does, in the remit's words (see CLASSES), from the verdict alone."""
    asking = [p for p in verdict.parts if p.effect == "ask"]
    if asking:
        found = {_SHELL_CLASSES.get(p.cls, "unknown") for p in asking}
        crossed = any(p.rule == "boundary" for p in asking)
    else:
        found = {verdict.tier if verdict.tier in CLASSES else "unknown"}
        crossed = verdict.rule == "boundary"
    return frozenset(found | {"boundary"}) if crossed else frozenset(found)


def allowed_verdict(asked: Verdict, reasoning: str) -> Verdict:
    """An ask the reviewer let run: notify (it runs, and is kept for review after)."""
    note = f"{ALLOWED_NOTE}: {reasoning}" if reasoning else ALLOWED_NOTE
    return asked.with_effect("notify", note, REVIEWER_RULE)


def escalated_verdict(asked: Verdict, reasoning: str) -> Verdict:
    """An ask the reviewer handed to a person: the same ask, with the reviewer's note."""
    note = f"{ESCALATION_NOTE}: {reasoning}" if reasoning else ESCALATION_NOTE
    return replace(asked, reasons=(*asked.reasons, note))


def policy_reasons(verdict: Verdict) -> tuple[str, ...]:
    """The reasons the policy gave, without the reviewer's notes."""
    return tuple(r for r in verdict.reasons if not r.startswith((ESCALATION_NOTE, ALLOWED_NOTE)))


def still_covered(reviewed: Verdict | None, now: Verdict) -> bool:
    """Whether the reviewer's "allow" of an ask still covers the verdict `now` (judged
    again before the call runs): the same ask, for the same reasons, risk and parts."""
    return (
        reviewed is not None
        and reviewed.rule == REVIEWER_RULE
        and reviewed.effect == "notify"
        and now.effect == "ask"
        and policy_reasons(reviewed) == now.reasons
        and reviewed.risk == now.risk
        and reviewed.parts == now.parts
    )


__all__ = [
    "ALLOWED_NOTE",
    "AUTO_WITHOUT_REVIEWER",
    "CLASSES",
    "DEFAULT_CLASSES",
    "ESCALATION_NOTE",
    "KEYS",
    "PERSONAL_KEYS",
    "REVIEWER_RULE",
    "ReviewerSettings",
    "allowed_verdict",
    "ask_classes",
    "committed_problem",
    "escalated_verdict",
    "parse_reviewer",
    "policy_reasons",
    "still_covered",
    "unfinished_problem",
]
