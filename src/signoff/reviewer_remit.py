"""What the reviewer model may settle, decided by code from the policy's verdict and never
from what the call's text says.

    an ask, in auto mode, with a [reviewer]        else: not the reviewer's
    not a tool that asks by design (ask_human)      else: a person
    not signoff's own state, not a deny's doubt     else: a person (Policy.person_only)
    its tool among `tools`, its risk <= `max_risk`, and every class of what it does
    (CLASSES: each asking shell part's class, a declared tool's tier, a boundary
    crossed) among `classes`                        else: a person

An ask rule names the rule as the verdict's reason, which would hide a boundary the call
also crosses (`ask = ["write_file"]` and a write to ~/.bashrc): the call is judged once
more without the ask rules, and what that judgement asks for counts too.
"""

from __future__ import annotations

from .models import RISKS, ToolCall, Verdict
from .reviewer_settings import ask_classes

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from .models import Risk
    from .policy import Policy


def remit_problem(policy: Policy, call: ToolCall, verdict: Verdict) -> str | None:
    """Why the reviewer model may not settle `verdict` (a person decides), or None."""
    reviewer = policy.settings.reviewer
    if reviewer is None:
        return "no reviewer model is configured"
    if policy.mode != "auto":
        return f"in {policy.mode} mode a person decides"
    if verdict.effect != "ask":
        return f"the policy's verdict is {verdict.effect}, not ask"
    spec = policy.registry.get(call.name)
    if spec.always_ask:
        return f"{call.name} asks a person by design"
    if policy.person_only(verdict):
        return "the call may reach signoff's own state or a path a deny rule names"
    risk, classes = verdict.risk, ask_classes(verdict)
    if policy.settings.ask:
        plain = policy.without_ask_rules().evaluate(call)
        if plain.effect == "ask":
            risk = _higher(risk, plain.risk)
            classes |= ask_classes(plain)
    return reviewer.remit_problem((spec.name, call.name), risk, classes)


def _higher(a: Risk, b: Risk) -> Risk:
    return a if RISKS.index(a) >= RISKS.index(b) else b


__all__ = ["remit_problem"]
