"""What "always allow" may remember for a call of a declared tool: narrow, and never on
argument order.

The rule is keyed on ALL the tool's declared subject arguments (`ToolSpec.subject_args`:
the recipients of an e-mail, the account of a payment), each pinned to the value that was
approved (an absent or empty one must stay empty), and on the amount as an upper bound.
A tool that declared no subject gets no argument-keyed rule: it is approved once. So the
rule, applied, never allows another recipient, a larger amount or a wider list than the
approved call had (`tests/attacks/test_attack_always.py` checks this as a property).
"""

from __future__ import annotations

import math

from .exceptions import InvalidInput
from .models import ToolCall
from .normalize import addresses
from .rules import parse_rule
from .tools import ToolSpec

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

_MAX_VALUE = 200
_NEEDS_QUOTES = set(",()= ")


def suggest_argument_rule(call: ToolCall, spec: ToolSpec) -> str | None:
    """`send_email(to=bob@example.com, cc=)`, `pay(account=acme, amount<=50)`, or None
    when nothing narrow can be written (no declared subject, a value a rule cannot pin)."""
    if spec.subject_args is None:
        return None
    args = call.arguments
    pieces: list[str] = []
    for key in spec.subject_args:
        piece = _pin(key, args.get(key))
        if piece is None:
            return None
        pieces.append(piece)
    if spec.amount_arg:
        bound = _bound(args.get(spec.amount_arg))
        if bound is None:
            return None
        pieces.append(f"{spec.amount_arg}<={bound}")
    text = f"{call.name}({', '.join(pieces)})" if pieces else call.name
    try:
        rule = parse_rule(text)
    except InvalidInput:
        return None
    # Never offer a rule that would not even allow the call it was made for.
    return text if rule.matches_arguments(args, every=True) else None


def _pin(key: str, value: Any) -> str | None:
    if value is None or value == "" or value == [] or value == ():
        return f"{key}="  # absent or empty, and it must stay so
    if isinstance(value, list | tuple):
        distinct = {_canonical(v) for v in value}
        if len(distinct) != 1 or None in distinct:
            return None  # a rule can pin one value per argument, not a set of them
        (only,) = distinct
        return None if only is None else _matcher(key, only)
    canonical = _canonical(value)
    return None if canonical is None else _matcher(key, canonical)


def _canonical(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None  # a structure cannot be pinned by a glob
    if not isinstance(value, str):
        return str(value) if math.isfinite(value) else None
    if "@" in value:
        found = addresses(value)
        if found is None or len(set(found)) != 1:
            return None
        return found[0]
    return value


def _matcher(key: str, value: str) -> str | None:
    if not value or len(value) > _MAX_VALUE or any(c in value for c in "\"'\\\n\r\t"):
        return None
    if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in value):
        return None
    escaped = "".join(f"[{c}]" if c in "*?[" else c for c in value)
    if _NEEDS_QUOTES & set(escaped) or escaped != escaped.strip():
        escaped = f'"{escaped}"'
    return f"{key}={escaped}"


def _bound(amount: Any) -> str | None:
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        return None
    if not math.isfinite(amount) or amount < 0:
        return None
    return str(amount) if isinstance(amount, int) else repr(float(amount))


__all__ = ["suggest_argument_rule"]
