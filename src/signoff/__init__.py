"""signoff: a human in the loop of AI agents' tool calls.

    from signoff import Gate, Policy, Settings, tool

Declare tools with `tool`, judge calls with a `Policy`, and route every call through a
`Gate`, which runs what is allowed, asks a channel about the rest and refuses what is denied.
Durable runs (`Agent`, `Runner`, `open_store`, `decide`) pause on a question and resume in
any process. Test doubles are in `signoff.testing`.

Every name loads on first use, so that `import signoff` stays cheap for a process that
judges one tool call and exits (the coding-agent hooks start one per call).
"""

from __future__ import annotations

# not `from typing import TYPE_CHECKING`: importing typing (and re, enum) would be most of
# what `import signoff` costs; type checkers treat any name TYPE_CHECKING alike
TYPE_CHECKING = False

if TYPE_CHECKING:  # what type checkers and IDEs see: the names, eagerly
    from typing import Any

    from .approvals import decide
    from .channels import Channel
    from .channels.terminal import TerminalChannel
    from .exceptions import CallDenied, ConflictError, InvalidInput, RunStopped, SignoffError
    from .gate import Gate, ToolResult
    from .models import Decision, Request, ToolCall, Verdict
    from .policy import Policy
    from .run_state import Run
    from .runs import Agent, Runner
    from .settings import Settings
    from .store import Store, open_store
    from .tools import ToolSpec, tool
    from .workspace import Workspace

_PUBLIC = {
    # declare and judge
    "tool": ".tools",
    "ToolSpec": ".tools",
    "ToolCall": ".models",
    "Verdict": ".models",
    "Decision": ".models",
    "Request": ".models",
    "Run": ".run_state",
    "Policy": ".policy",
    "Settings": ".settings",
    # in process
    "Gate": ".gate",
    "ToolResult": ".gate",
    "Channel": ".channels",
    "TerminalChannel": ".channels.terminal",
    "Workspace": ".workspace",
    # durable
    "Agent": ".runs",
    "Runner": ".runs",
    "Store": ".store",
    "open_store": ".store",
    "decide": ".approvals",
    # what users catch
    "SignoffError": ".exceptions",
    "CallDenied": ".exceptions",
    "InvalidInput": ".exceptions",
    "RunStopped": ".exceptions",
    "ConflictError": ".exceptions",
}

# Exported here before the public API was narrowed; still served, with a warning that
# names where they live, for one release.
_MOVED = {
    "AlreadyClaimed": ".exceptions",
    "AlreadyDecided": ".exceptions",
    "NotAuthorized": ".exceptions",
    "RequestExpired": ".exceptions",
    "SettingsError": ".exceptions",
    "SignoffSignal": ".exceptions",
    "Grant": ".models",
    "Registry": ".tools",
    "load_settings": ".settings",
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("signoff")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = _version()
        globals()["__version__"] = value
        return value
    if name in _PUBLIC:
        value = getattr(__import__(f"signoff{_PUBLIC[name]}", fromlist=[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _MOVED:
        where = f"signoff{_MOVED[name]}"
        import warnings

        warnings.warn(
            f"import {name} from {where}; signoff no longer exports it",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(__import__(where, fromlist=[name]), name)
    raise AttributeError(f"module 'signoff' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC, "__version__"])


__all__ = [
    "Agent",
    "CallDenied",
    "Channel",
    "ConflictError",
    "Decision",
    "Gate",
    "InvalidInput",
    "Policy",
    "Request",
    "Run",
    "RunStopped",
    "Runner",
    "Settings",
    "SignoffError",
    "Store",
    "TerminalChannel",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Verdict",
    "Workspace",
    "__version__",
    "decide",
    "open_store",
    "tool",
]
