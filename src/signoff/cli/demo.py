"""`signoff demo`: the whole mechanism, end to end, on a fresh machine.

A SCRIPTED model (no LLM, no network, no API key) works on a small sample project in a new
workspace. Its tool calls are real and go through the policy and the durable store:
silent reads; a notify write with its diff; an ask before `rm -rf build/`; a deny for
`rm -rf ~`, fed back to the model, which re-plans; an email that asks with the full
message shown; an `ask_human` question. In a terminal, each question is answered there.
Without one, the run pauses in the store and the demo prints the exact commands that
decide and resume it from other processes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..approvals import decide
from ..channels import Prompt
from ..channels.render import escape_untrusted
from ..channels.terminal import TerminalChannel
from ..exceptions import InvalidInput
from ..llm.scripted import ScriptedModel
from ..models import Request, ToolCall
from ..policy import Policy
from ..run_state import Run
from ..runs.agent import Agent
from ..runs.runner import Runner
from ..settings import load_settings
from ..store import Store, open_store
from ..workspace import Workspace

AGENT_REF = "signoff.demo:build_agent"
TASK = (
    "Prepare release 0.2 of invoice-tool: look around, write the changelog, clean the "
    "build artifacts, email the client, and ask me which version to tag."
)

SAMPLE = {
    "README.md": "# invoice-tool\n\nTurns CSV timesheets into invoices.\n",
    "CHANGELOG.md": "# Changelog\n\n## 0.1\n- first release\n",
    "src/invoice.py": (
        "def total(rows):\n"
        "    # TODO: round to cents\n"
        "    return sum(r['hours'] * r['rate'] for r in rows)\n"
    ),
    "build/invoice.o": "pretend object file\n",
    "build/cache.bin": "cache\n",
}

# (call id, tool, arguments, what the model says first). One model turn per group.
STEPS: list[tuple[str, list[tuple[str, str, dict[str, Any]]]]] = [
    (
        "I'll look at the project first.",
        [
            ("call_read", "read_file", {"path": "README.md"}),
            ("call_list", "list_dir", {"path": "."}),
            ("call_todo", "search_code", {"pattern": "TODO"}),
        ],
    ),
    (
        "Adding the 0.2 entry to the changelog.",
        [
            (
                "call_changelog",
                "edit_file",
                {
                    "path": "CHANGELOG.md",
                    "old": "# Changelog\n",
                    "new": "# Changelog\n\n## 0.2\n- totals per client\n",
                },
            ),
        ],
    ),
    (
        "Cleaning the build artifacts.",
        [
            ("call_clean", "execute_command", {"command": "rm -rf build/"}),
        ],
    ),
    (
        "Also clearing out old caches in the home directory.",
        [
            ("call_home", "execute_command", {"command": "rm -rf ~"}),
        ],
    ),
    ("", [("call_status", "execute_command", {"command": "ls -la"})]),
    (
        "Emailing the client the release notes.",
        [
            (
                "call_email",
                "send_email",
                {
                    "to": "client@example.com",
                    "subject": "invoice-tool 0.2 is ready",
                    "body": (
                        "Hello,\n\nRelease 0.2 adds totals per client.\n\n"
                        "Best regards,\nThe agent\n"
                    ),
                },
            ),
        ],
    ),
    (
        "One question before I tag the release.",
        [
            (
                "call_ask",
                "ask_human",
                {"question": "Which version should I tag?", "options": ["0.2.0", "1.0.0"]},
            ),
        ],
    ),
]


def _results(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {
        m["tool_call_id"]: str(m.get("content", "")) for m in messages if m.get("role") == "tool"
    }


def script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted model: the next step whose calls have no results yet (history-driven,
    so a model rebuilt in another process continues exactly where the run stopped)."""
    done = _results(messages)
    for text, calls in STEPS:
        if any(call_id not in done for call_id, _, _ in calls):
            if calls[0][0] == "call_status":
                refusal = done.get("call_home", "")
                text = (
                    "That was refused (" + refusal[:120] + "). I'll leave the home "
                    "directory alone and just check the project instead."
                )
            return {
                "content": text or None,
                "tool_calls": [
                    {"id": cid, "function": {"name": name, "arguments": args}}
                    for cid, name, args in calls
                ],
            }
    tag = done.get("call_ask", "?")
    return {
        "content": f"Done. Release notes written, build cleaned, client emailed; "
        f"you chose to tag {tag}."
    }


def build_agent(metadata: Mapping[str, Any]) -> Agent:
    """The demo's agent factory: any process rebuilds the agent from the run's metadata."""
    root = Path(metadata["workspace"])
    policy = Policy(load_settings(root, user=False), workspace=root)
    workspace = Workspace(root, hidden=policy.hidden)
    return Agent(
        model=ScriptedModel.history_driven(script),
        tools=workspace.as_mapping(),
        policy=policy,
        tool_specs=workspace.openai_tools(),
        previewer=workspace.preview,
        run_recorded=workspace.run_recorded,
    )


def make_workspace(path: str | None) -> Path:
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="signoff-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in SAMPLE.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_text(text)
    return root.resolve()


def answer_here(
    store: Store, run: Run, agent: Agent, channel: TerminalChannel, out: Console
) -> None:
    """Show each waiting request in the terminal and store the person's decision."""
    for request_id in run.waiting_on:
        request = store.get_request(request_id)
        while True:
            call = request.call

            def validate(args: Mapping[str, Any], call: ToolCall = call) -> str | None:
                return agent.policy.edit_problem(call, args)

            def judge(args: Mapping[str, Any], request: Request = request) -> Request:
                edited = agent.policy.validated_edit(request.call, args)
                spec = agent.policy.registry.get(edited.name)
                return replace(
                    request,
                    call=edited,
                    verdict=agent.policy.evaluate(edited),
                    preview=agent.previewer(edited, spec),
                    digest=edited.digest(),
                )

            prompt = Prompt(
                request=request,
                validate_edit=validate,
                always_rule=request.verdict.suggested_rule,
                always_scope="run",
                judge_edit=judge,
            )
            decision = channel.decide(prompt)
            try:
                decide(
                    store,
                    request_id,
                    decision,
                    actor=channel.actor,
                    workspace=agent.policy.workspace,
                )
                break
            except InvalidInput as exc:
                out.print(f"Not stored: {escape_untrusted(str(exc))}")


def command_name() -> str:
    """How the person can type this command: `signoff` if it is on PATH, else its path."""
    argv0 = os.path.abspath(sys.argv[0])
    if os.path.basename(argv0) == "signoff" and os.path.isfile(argv0):
        on_path = shutil.which("signoff")
        return (
            "signoff" if on_path and os.path.abspath(on_path) == argv0 else os.path.relpath(argv0)
        )
    return "signoff" if shutil.which("signoff") else f"{sys.executable} -m signoff"


def print_commands(run: Run, store: Store, root: Path, out: Console) -> None:
    ws = f"--workspace {root}"
    signoff = command_name()
    out.print()
    out.print(
        Text(f"Run {run.id} is paused and saved in {root}/.signoff/signoff.db.", style="bold")
    )
    for request_id in run.waiting_on:
        request = store.get_request(request_id)
        out.print(
            f"  waiting: {request_id}  {request.call.name}  "
            f"{escape_untrusted(str(dict(request.call.arguments)), newline=False)[:80]}"
        )
    first = run.waiting_on[0] if run.waiting_on else "ID"
    out.print("Decide and resume from any process:")
    out.print(f"  {signoff} inbox {ws}")
    out.print(f"  {signoff} show {first} {ws}")
    out.print(f"  {signoff} approve {first} {ws}")
    out.print("      (or: reject ID --reason TEXT, edit ID --args JSON, answer ID TEXT, skip ID)")
    out.print(f"  {signoff} resume {run.id} {ws}")


def run_demo(
    workspace: str | None, db: str | None = None, *, interactive: bool | None = None
) -> int:
    out = Console(highlight=False, markup=False, soft_wrap=True)
    root = make_workspace(workspace)
    interactive = sys.stdin.isatty() if interactive is None else interactive
    out.print(Text("signoff demo: a SCRIPTED model (no LLM, no network) at work", style="bold"))
    out.print(f"workspace: {root}")
    out.print(f"task: {TASK}")
    metadata = {"workspace": str(root)}
    agent = build_agent(metadata)
    agent.on_text = lambda text: out.print(Text(f"model: {escape_untrusted(text)}", style="italic"))
    with closing(open_store(db, workspace=root)) as store:
        runner = Runner(store, agent, agent_ref=AGENT_REF)
        run = runner.start(
            [
                {"role": "system", "content": "You are a careful release agent."},
                {"role": "user", "content": TASK},
            ],
            metadata=metadata,
        )
        if not interactive:
            print_commands(run, store, root, out)
            return 0
        channel = TerminalChannel()
        while run.status == "paused":
            answer_here(store, run, agent, channel, out)
            run = runner.resume(run.id)
        out.print(Text(f"run {run.id}: {run.status}", style="bold"))
        if run.note:
            out.print(escape_untrusted(run.note))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(args.workspace, args.db)


def register(sub: Any) -> None:
    from ._output import HelpFormatter  # keeps the examples line for line

    parser = sub.add_parser(
        "demo",
        help="run the scripted end-to-end demo in a new workspace",
        description="Watch the whole mechanism on a small project: a SCRIPTED model (no LLM, "
        "no network) reads, edits, runs commands and emails; you decide what asks. Without a "
        "terminal, the run pauses and is saved, with the commands that continue it.",
        epilog="examples:\n  signoff demo\n  signoff demo --workspace /tmp/try-signoff",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--workspace", help="use this directory instead of a new one (default: a new temp dir)"
    )
    parser.add_argument(
        "--db", default=None, help="store URL (default: .signoff/signoff.db in the workspace)"
    )
    parser.set_defaults(func=cmd_demo)


__all__ = ["build_agent", "register", "run_demo", "script"]
