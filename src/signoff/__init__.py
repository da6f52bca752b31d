"""signoff: a human in the loop of AI agents' tool calls.

    from signoff import Gate, Policy, Settings, tool

Declare tools with `tool`, judge calls with a `Policy`, and route every call through a
`Gate`, which runs what is allowed, asks a channel about the rest and refuses what is denied.

The names below are imported on first use (PEP 562 `__getattr__`), not by `import signoff`:
a coding-agent hook starts one process per tool call and judging a call needs only a small
part of the package.
"""

from __future__ import annotations

# not `from typing import TYPE_CHECKING`: importing typing (and re, enum) would be most of
# what `import signoff` costs; type checkers treat any name TYPE_CHECKING alike
TYPE_CHECKING = False

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "AlreadyClaimed": "exceptions",
    "AlreadyDecided": "exceptions",
    "ApprovalPending": "exceptions",
    "CallDenied": "exceptions",
    "InvalidInput": "exceptions",
    "NotAuthorized": "exceptions",
    "RequestExpired": "exceptions",
    "RunStopped": "exceptions",
    "SettingsError": "exceptions",
    "SignoffError": "exceptions",
    "SignoffSignal": "exceptions",
    "Gate": "gate",
    "ToolResult": "gate",
    "Decision": "models",
    "Grant": "models",
    "Request": "models",
    "ToolCall": "models",
    "Verdict": "models",
    "Policy": "policy",
    "Registry": "registry",
    "ToolSpec": "registry",
    "tool": "registry",
    "Settings": "settings",
    "load_settings": "settings",
}

if TYPE_CHECKING:  # what type checkers and IDEs see: the names, eagerly
    from typing import Any

    from .exceptions import (
        AlreadyClaimed,
        AlreadyDecided,
        ApprovalPending,
        CallDenied,
        InvalidInput,
        NotAuthorized,
        RequestExpired,
        RunStopped,
        SettingsError,
        SignoffError,
        SignoffSignal,
    )
    from .gate import Gate, ToolResult
    from .models import Decision, Grant, Request, ToolCall, Verdict
    from .policy import Policy
    from .registry import Registry, ToolSpec, tool
    from .settings import Settings, load_settings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'signoff' has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "AlreadyClaimed",
    "AlreadyDecided",
    "ApprovalPending",
    "CallDenied",
    "Decision",
    "Gate",
    "Grant",
    "InvalidInput",
    "NotAuthorized",
    "Policy",
    "Registry",
    "Request",
    "RequestExpired",
    "RunStopped",
    "Settings",
    "SettingsError",
    "SignoffError",
    "SignoffSignal",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Verdict",
    "__version__",
    "load_settings",
    "tool",
]
