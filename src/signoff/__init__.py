"""signoff: a human in the loop of AI agents' tool calls.

    from signoff import Gate, Policy, Settings, tool

Declare tools with `tool`, judge calls with a `Policy`, and route every call through a
`Gate`, which runs what is allowed, asks a channel about the rest and refuses what is denied.
"""

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
from .settings import Settings, load_settings
from .tools import Registry, ToolSpec, tool

__version__ = "0.1.0"

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
