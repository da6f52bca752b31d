"""Everything signoff raises.

Errors (something is wrong) and signals (the system is working as meant: a call was
denied, a run paused) are kept apart, so `except SignoffError` never swallows a pause::

    SignoffError                      an error; always names what is wrong and where
    ├── InvalidInput (ValueError)     bad call, arguments, decision or document
    │   ├── SettingsError             a settings file: names the file, line and rule
    │   ├── SchemaVersionError        a stored document newer than this signoff
    │   └── OutsideWorkspace          a path that resolves outside the workspace root
    ├── NotFound (KeyError)           no such request, run or grant
    ├── ConflictError                 a compare-and-set lost a race
    │   ├── AlreadyDecided            names who decided and how
    │   ├── AlreadyClaimed            another worker holds or finished the call
    │   ├── LeaseLost                 a run or claim this worker held was taken over
    │   └── RevertConflict            a file changed since the call it would revert
    ├── RequestExpired                past its expiry: cannot be decided or claimed
    ├── NotAuthorized                 this actor may not decide this request
    ├── IntegrityError                a stored payload or binding does not verify
    ├── ConfigurationError            missing model, unreachable store, bad URL
    │   └── SandboxUnavailable        no sandbox can be made here: says why
    │   └── StoreUnavailable          the store went away (a restart): try again later
    └── ToolError                     a tool could not do its work (network, no bash)

    SignoffSignal                     not an error
    ├── CallDenied                    the policy or a person refused the call
    └── RunStopped                    denial limits reached: a person must look
"""

from __future__ import annotations


class SignoffError(Exception):
    """Base of every signoff error."""


class InvalidInput(SignoffError, ValueError):
    """Input that signoff refuses; the message names what and where."""


class SettingsError(InvalidInput):
    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = path or "<settings>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class SchemaVersionError(InvalidInput):
    """A stored document written by a newer signoff."""


class OutsideWorkspace(InvalidInput):
    """A path that resolves outside the workspace root."""


class NotFound(SignoffError, KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; we don't want that
        return str(self.args[0]) if self.args else "not found"


class ConflictError(SignoffError):
    """A state transition lost a race."""


class AlreadyDecided(ConflictError):
    pass


class AlreadyClaimed(ConflictError):
    pass


class LeaseLost(ConflictError):
    """A run or approved call this worker was driving is no longer its own: its lease
    lapsed and another worker took it, or a person settled the call. The worker stops
    driving that run and goes on with others."""


class RevertConflict(ConflictError):
    """A file changed after the call it would revert: reverting would lose that change."""


class RequestExpired(SignoffError):
    pass


class NotAuthorized(SignoffError):
    pass


class IntegrityError(SignoffError):
    """A stored payload, digest or binding does not verify."""


class ConfigurationError(SignoffError):
    pass


class SandboxUnavailable(ConfigurationError):
    """No sandbox can be made here (no bubblewrap, user namespaces off, another OS); the
    message says why. A contained command is then never run uncontained."""


class StoreUnavailable(ConfigurationError):
    """The store cannot be reached now (its server restarting, the network down): nothing
    was written by the call that failed, or its outcome is unknown. A long-running
    process waits and tries again (see `signoff.outage`); a command fails with one line."""


class ToolError(SignoffError):
    """A tool could not do its work (network down, command could not start)."""


class SignoffSignal(Exception):
    """Base of the signals: outcomes that are not errors."""


class CallDenied(SignoffSignal):
    def __init__(self, tool: str, reason: str, *, rule: str | None = None):
        super().__init__(f"{tool}: denied: {reason}")
        self.tool = tool
        self.reason = reason
        self.rule = rule


class RunStopped(SignoffSignal):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
