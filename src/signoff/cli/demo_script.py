"""The demo's sample project and its SCRIPTED model (no LLM): what it asks for, and what it
says at the end, read from what really happened.

The model is history-driven: it picks its next step from the tool results already in the
transcript, so a model rebuilt in another process goes on exactly where the run stopped.
Its closing summary is built from those results too: a call that was rejected, skipped or
refused is reported as not done, with the reviewer's reason, never as done.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..policy import Policy
from ..runs.agent import Agent
from ..settings import load_settings
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

# (what the model says first, [(call id, tool, arguments)]). One model turn per group.
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

# How a result the model reads says that its call did not run (see gate.refusal_content and
# runs.settle): (start of the text, the word for it).
_NOT_RUN = (
    ("was rejected by the reviewer", "you rejected it"),
    ("was skipped by the reviewer", "you skipped it"),
    ("was denied by policy", "the policy refused it"),
    ("was not run", "it was not run"),
)


def outcome(content: str | None) -> tuple[bool, str]:
    """(did the call run, what happened in a few words) from the result the model read."""
    if content is None:
        return False, "no result yet"
    text = content.strip()
    if text.startswith("Tool call "):
        for marker, word in _NOT_RUN:
            if marker in text:
                detail = text.split(marker, 1)[1].lstrip(":; ").rstrip(".")
                return False, f"{word}: {detail}" if detail else word
        return False, text
    if text.startswith("Tool ") and " failed: " in text:
        return False, "it failed: " + text.split(" failed: ", 1)[1]
    return True, text


def _results(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {
        m["tool_call_id"]: str(m.get("content", "")) for m in messages if m.get("role") == "tool"
    }


def _exit_code(text: str) -> int | None:
    first = text.split("\n", 1)[0]
    if first.startswith("exit code: "):
        try:
            return int(first.removeprefix("exit code: ").split()[0])
        except (ValueError, IndexError):
            return None
    return None


def closing_words(done: Mapping[str, str]) -> str:
    """The model's last message: each part of the task, as its tool result says it went."""
    parts: list[str] = []
    ran, what = outcome(done.get("call_changelog"))
    parts.append("Changelog: 0.2 entry written" if ran else f"Changelog not written ({what})")
    ran, what = outcome(done.get("call_clean"))
    code = _exit_code(what) if ran else None
    if ran and code == 0:
        parts.append("build artifacts cleaned")
    elif ran:
        parts.append(f"cleaning the build did not succeed ({what.split(chr(10), 1)[0]})")
    else:
        parts.append(f"build not cleaned ({what})")
    ran, what = outcome(done.get("call_email"))
    if ran and what.startswith("sent to "):
        parts.append("release email " + what.split(":", 1)[0])
    elif ran:
        parts.append(f"release email: {what}")
    else:
        parts.append(f"client not emailed ({what})")
    ran, what = outcome(done.get("call_ask"))
    parts.append(f"you chose to tag {what}" if ran else f"no version chosen ({what})")
    return "Done. " + "; ".join(parts) + "."


def script(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted model: the next step whose calls have no results yet, then a summary
    of what really happened."""
    done = _results(messages)
    for text, calls in STEPS:
        if any(call_id not in done for call_id, _, _ in calls):
            if calls[0][0] == "call_status":
                ran, what = outcome(done.get("call_home"))
                why = what.split(": ", 1)[-1]
                text = (
                    f"That was refused ({why[:120]}). I'll leave the home directory alone "
                    "and just check the project instead."
                    if not ran
                    else "Now checking the project."
                )
            return {
                "content": text or None,
                "tool_calls": [
                    {"id": cid, "function": {"name": name, "arguments": args}}
                    for cid, name, args in calls
                ],
            }
    return {"content": closing_words(done)}


def make_agent(root: Path) -> tuple[Agent, Workspace]:
    """The demo's agent on `root`, and the workspace its tools act on."""
    from ..llm.scripted import ScriptedModel

    policy = Policy(load_settings(root, user=False), workspace=root)
    workspace = Workspace(root, hidden=policy.hidden)
    agent = Agent(
        model=ScriptedModel.history_driven(script),
        tools=workspace.as_mapping(),
        policy=policy,
        tool_specs=workspace.openai_tools(),
        previewer=workspace.preview,
        run_recorded=workspace.run_recorded,
    )
    return agent, workspace


def build_agent(metadata: Mapping[str, Any]) -> Agent:
    """The demo's agent factory: any process rebuilds the agent from the run's metadata."""
    return make_agent(Path(metadata["workspace"]))[0]


__all__ = ["AGENT_REF", "SAMPLE", "STEPS", "TASK", "build_agent", "make_agent", "outcome", "script"]
