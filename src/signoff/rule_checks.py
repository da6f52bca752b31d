"""Rules that can never match are refused when they are loaded.

A deny rule that matches nothing fails open without a word: `BASH(rm:*)` (tool names are
case-sensitive), `execute_*` (no globs in tool names), `pay(amount>=abc)`,
`fetch_url(domain:evil.*)`, `fetch_url(evil.example)` (neither a domain nor a URL) and
`x(customer==y)` all looked like rules and guarded nothing. Each is an error that says
what is wrong; the settings loader adds the file and line.
"""

from __future__ import annotations

import math

from .lazyre import lazy
from .normalize import domain_pattern_problem
from .tools import ALIASES, BUILTIN_SPECS, RULE_GROUPS, canonical_tool_name

_KNOWN_NAMES = {*BUILTIN_SPECS, *ALIASES, *RULE_GROUPS}
_BY_FOLDED: dict[str, list[str]] = {}
for _name in sorted(_KNOWN_NAMES):
    _BY_FOLDED.setdefault(_name.casefold(), []).append(_name)
# Anything that starts like `name OP` (or a bare operator) is meant as argument matchers,
# whatever the operator's spelling: a misspelt one (`=>`, `>>`, `!=`) must be an error
# when the rule is loaded, not a rule that is accepted and then never matches as meant.
# (`~` and a leading `!` stay out: `~/.ssh` and `!keep.txt` are paths.)
_MATCHER = lazy(r"^\s*(?:[A-Za-z_][\w.\-]*\s*[<>=!]|[<>=])")
OPERATORS = ("<=", ">=", "<", ">", "=")
_SCHEME = lazy(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def tool_name_problem(tool: str) -> str | None:
    """Why a rule's tool name can never name a tool, or None."""
    if "*" in tool and tool != "*":
        return (
            f"the tool name {tool!r} holds a glob; tool names are matched exactly: "
            "name each tool, or write * for every tool"
        )
    if tool in _KNOWN_NAMES or tool == "*":
        return None
    same = _BY_FOLDED.get(tool.casefold())
    if same:
        return (
            f"no tool is called {tool!r}; tool names are case-sensitive "
            f"(did you mean {' or '.join(same)}?)"
        )
    return None


def specifier_problem(tool: str, specifier: str) -> str | None:
    """Why a specifier can never match a call of `tool`, or None."""
    if _is_network(tool):
        spec = specifier.strip()
        if spec.startswith("domain:"):
            domain = spec[len("domain:") :].strip()
            problem = domain_pattern_problem(domain)
            return f"domain:{domain} {problem}" if problem else None
        if not _SCHEME.match(spec):
            return (
                f"{spec!r} is neither domain:NAME nor a URL pattern with a scheme "
                f"(write domain:{spec.split('/')[0]} or https://{spec}*)"
            )
    return None


def looks_like_argument_matchers(specifier: str) -> bool:
    return _MATCHER.match(specifier) is not None


def split_operator(key: str, run: str, rest: str) -> tuple[str, str] | str:
    """The operator and value of one argument matcher, from the run of operator characters
    (`<>=!`) that follows `key`; or why it is not one. Only `=`, `<`, `<=`, `>`, `>=` are
    operators. A run that reads as a misspelt comparison (`>>`, `=>`, `<>`, `!=`) is an
    error, never a rule that matches something else; `=` followed by `<`, `>` or `!` and
    text that is not a number is that text (`to=<alice@example.com>`)."""
    raw, rest = rest, rest.lstrip()  # spaces after an operator are not part of the value
    written = f"'{key}{run}{rest}'"
    if not key:
        return f"'{run}{rest}' names no argument; write name{run}{rest}"
    if run in OPERATORS:
        return run, rest
    if run.strip("=") == "":  # `==`, `===`
        return f"{written}: '{run}' is not an operator; write {key}={rest}"
    if run.startswith("=") and not run.startswith("=="):
        try:
            float(rest)
        except ValueError:
            return "=", run[1:] + raw  # text that starts with <, > or !
    meant = {"=>": ">=", "=<": "<=", "=>=": ">=", "=<=": "<=", "<<": "<", ">>": ">"}.get(run)
    fix = f"; write {key}{meant}{rest}" if meant else ""
    return (
        f"{written}: '{run}' is not an operator (use =, <, <=, > or >=; quote a text "
        f"value that starts with one of <>=!){fix}"
    )


def matcher_value_problem(key: str, op: str, value: str) -> str | None:
    """Why one argument matcher can never be satisfied as meant, or None."""
    if op == "=" and value.startswith("="):
        return f"'{key}=={value[1:]}': '==' is not an operator; write {key}={value[1:]}"
    if op != "=":
        try:
            number = float(value)
        except ValueError:
            return f"'{key}{op}{value}': {value!r} is not a number"
        if not math.isfinite(number):
            return f"'{key}{op}{value}': the bound must be a finite number"
    return None


def _is_network(tool: str) -> bool:
    if RULE_GROUPS.get(tool) == "network":
        return True
    spec = BUILTIN_SPECS.get(canonical_tool_name(tool))
    return spec is not None and spec.kind == "network"


__all__ = [
    "OPERATORS",
    "looks_like_argument_matchers",
    "matcher_value_problem",
    "specifier_problem",
    "split_operator",
    "tool_name_problem",
]
