"""Containment: run a command so that it cannot reach outside its workspace.

- `probe()`: whether a sandbox can be made here (`Containment`: available, mechanism, and
  why not); kept for the process and on disk, so a hook pays for it once.
- `command_line(argv, workspace=...)`: the command line that runs `argv` contained, for a
  coding client to run in place of `argv` (`signoff sandbox --workspace WS -- argv`).
- `run(argv, workspace=...)`: run it contained here and land its changes (`Outcome`: the
  exit code, every change, what the sandbox blocked).

On Linux: bubblewrap over an overlay of the workspace (see `bwrap.py`, `land.py` and
docs/containment.md). Elsewhere `probe()` says it is unavailable, and nothing runs.
`probe` and `command_line` are cheap to import (a hook loads them); `run` loads the rest.
"""

from __future__ import annotations

import os
import sys

from .detect import Containment, probe

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..models import ToolCall, Verdict
    from ..policy import Policy
    from .land import Change
    from .launch import Blocked, Outcome, run

# Run by `command_line`: the very signoff that made the command line, from where it was
# loaded, in isolated mode (-I: neither PYTHON* variables nor the current folder, which
# is the agent's workspace, can put other code in its place).
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from signoff.cli import main; sys.exit(main(sys.argv[1:]))"
)


def command_line(
    argv: Sequence[str],
    *,
    workspace: str,
    home: str | None = None,
    cwd: str | None = None,
    python: str | None = None,
    report: str | None = None,
    backup: str | None = None,
) -> list[str]:
    """The command line that runs `argv` contained in `workspace` (then lands what it
    changed and exits with its exit code): `signoff sandbox --workspace WS -- argv`, run
    by this same signoff."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../signoff
    source = os.path.dirname(package)
    words = [python or sys.executable, "-I", "-c", _BOOT, source, "sandbox"]
    words += ["--workspace", os.path.abspath(workspace)]
    if home is not None:
        words += ["--home", home]
    if cwd is not None:
        words += ["--cwd", cwd]
    if report is not None:  # what landed, for the change set a person reviews
        words += ["--report", report]
    if backup is not None:  # what the changes replaced, for a revert
        words += ["--backup", backup]
    return [*words, "--", *argv]


def settle(policy: Policy, call: ToolCall, *, cwd: str | None = None) -> tuple[Verdict, str]:
    """The verdict of a policy that contains: a contained one holds where a sandbox can
    be made here (asked of the system only then); else the verdict without containment,
    and one line saying why."""
    verdict = policy.evaluate(call, cwd=cwd)
    if not verdict.contained:
        return verdict, ""
    found = probe()
    if found.available:
        return verdict, ""
    note = (
        f"containment is unavailable here ({found.reason}): this asks instead of running "
        "contained (see signoff doctor)"
    )
    return policy.without_containment().evaluate(call, cwd=cwd), note


def __getattr__(name: str) -> object:
    if name in ("run", "Outcome", "Blocked"):
        from . import launch as module

        return getattr(module, name)
    if name == "Change":
        from .land import Change

        return Change
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Blocked",
    "Change",
    "Containment",
    "Outcome",
    "command_line",
    "probe",
    "run",
    "settle",
]
