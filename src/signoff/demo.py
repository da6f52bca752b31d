"""`signoff demo`: a scripted sequence of tool calls through the gate (no model, no network).

Every call is real: files are read and written in a new temporary workspace, commands run
there, and the email lands in a local outbox file. The sequence is fixed (a script, not an
LLM) so that one run shows each verdict: allow, notify, ask and deny.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .channels.render import escape_untrusted
from .channels.terminal import TerminalChannel
from .gate import Gate, ToolResult
from .models import ToolCall
from .policy import Policy
from .settings import load_settings

SAMPLE = {
    "README.md": "# invoice-tool\n\nTurns CSV timesheets into invoices.\n",
    "src/invoice.py": "def total(rows):\n    return sum(r['hours'] * r['rate'] for r in rows)\n",
    "build/invoice.o": "\x7fELF (pretend object file)\n",
    "build/cache.bin": "cache\n",
}


@dataclass(frozen=True)
class Step:
    say: str
    call: ToolCall


def script() -> list[Step]:
    return [
        Step(
            "Read the project (read-only: runs silently)",
            ToolCall("read_file", {"path": "README.md"}, "call_1"),
        ),
        Step(
            "Write release notes (reversible, inside the workspace: runs, kept for review)",
            ToolCall("write_file", {"path": "NOTES.md", "content": "## 0.2\n- totals\n"}, "call_2"),
        ),
        Step(
            "Clean build artifacts (deletes files: asks first)",
            ToolCall("execute_command", {"command": "rm -rf build/"}, "call_3"),
        ),
        Step(
            "Try a catastrophic command (denied, whatever anyone says)",
            ToolCall("execute_command", {"command": "rm -rf ~"}, "call_4"),
        ),
        Step(
            "Email the client (reaches the outside world: asks first)",
            ToolCall(
                "send_email",
                {
                    "to": "client@example.com",
                    "subject": "Invoice 0.2",
                    "body": "Hello,\n\nThe new totals are ready.\n",
                },
                "call_5",
            ),
        ),
    ]


def make_workspace(path: str | None) -> Path:
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="signoff-demo-"))
    for rel, text in SAMPLE.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_text(text)
    return root


def implementations(root: Path) -> dict[str, Callable[..., Any]]:
    def read_file(path: str) -> str:
        return (root / path).read_text()

    def write_file(path: str, content: str) -> str:
        (root / path).write_text(content)
        return f"wrote {len(content)} characters to {path}"

    def execute_command(command: str, timeout: float = 30) -> str:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return f"exit {done.returncode}\n{done.stdout}{done.stderr}"

    def send_email(to: str, subject: str, body: str, cc: list[str] | None = None) -> str:
        outbox = root / ".signoff" / "outbox.txt"
        outbox.parent.mkdir(exist_ok=True)
        with outbox.open("a") as f:
            f.write(f"To: {to}\nSubject: {subject}\n\n{body}\n.\n")
        return f"queued for {to} in {outbox}"

    return {
        "read_file": read_file,
        "write_file": write_file,
        "execute_command": execute_command,
        "send_email": send_email,
    }


def run_demo(workspace: str | None, *, stdin_is_tty: bool | None = None) -> int:
    out = Console(highlight=False, markup=False)
    root = make_workspace(workspace)
    interactive = sys.stdin.isatty() if stdin_is_tty is None else stdin_is_tty
    out.print(Text("signoff demo  (scripted tool calls: no model, no network)", style="bold"))
    out.print(f"workspace: {root}")
    if not interactive:
        out.print("No terminal on stdin: every question is refused (no reviewer available).")
    policy = Policy(load_settings(root, user=False), workspace=root)
    gate = Gate(policy, TerminalChannel())
    tools = implementations(root)
    results: list[tuple[Step, ToolResult]] = []
    for number, step in enumerate(script(), start=1):
        out.print()
        out.print(Text(f"[{number}] {step.say}", style="bold cyan"))
        result = gate.execute(step.call, tools[step.call.name])
        results.append((step, result))
        first_line = escape_untrusted(
            result.content.strip().splitlines()[0] if result.content.strip() else "", newline=False
        )
        out.print(f"    -> {result.verdict.effect} / {result.outcome}: {first_line[:100]}")
    out.print()
    summary = Table(title="What happened", show_lines=False)
    for column in ("#", "tool", "verdict", "outcome", "why"):
        summary.add_column(column)
    for number, (step, result) in enumerate(results, start=1):
        summary.add_row(
            str(number),
            step.call.name,
            result.verdict.effect,
            result.outcome,
            escape_untrusted(result.verdict.reason, newline=False)[:70],
        )
    out.print(summary)
    if gate.review:
        out.print(
            "Ran without asking, kept for review: "
            + ", ".join(str(item.call.arguments.get("path")) for item in gate.review)
        )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(args.workspace)


def register(sub: Any) -> None:
    parser = sub.add_parser("demo", help="run the scripted demo in a new workspace")
    parser.add_argument("--workspace", help="use this directory instead of a new one")
    parser.set_defaults(func=cmd_demo)


__all__ = ["register", "run_demo", "script"]
