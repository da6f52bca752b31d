"""`signoff demo`: the whole mechanism, end to end, on a fresh machine.

A SCRIPTED model (no LLM, no network, no API key) works on a small sample project in a new
workspace. Its tool calls are real and go through the policy and the durable store:
silent reads; a notify edit with its diff; an ask before `rm -rf build/`; a deny for
`rm -rf ~`, fed back to the model, which re-plans; an email that asks with the full
message shown; an `ask_human` question. Each call gets one line saying its verdict and what
became of it. In a terminal, each question is answered there; without one, the run pauses
in the store and the demo prints the exact commands that decide and resume it from any
other shell. The commands name the store, so they work pasted anywhere.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import uuid
from collections.abc import Mapping
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rich.console import Console
from rich.text import Text

from ..approvals import decide
from ..channels import Prompt, StopRequested
from ..channels.render import escape_untrusted
from ..channels.terminal import TerminalChannel
from ..exceptions import InvalidInput
from ..llm.base import Model, TextSink
from ..models import ALWAYS_SCOPES, Request, ToolCall
from ..run_state import Run
from ..runs.agent import Agent
from ..runs.runner import Runner
from ..store import DEFAULT_PATH, Store, default_url, open_store
from ..workspace import Workspace
from .demo_script import AGENT_REF, SAMPLE, TASK, build_agent, make_agent
from .demo_story import Story, diffstat, label


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
    """Show each waiting request in the terminal and store the person's decision.
    `StopRequested` (a second Ctrl-C, or the stop key) leaves the rest undecided."""
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
                always_scopes=ALWAYS_SCOPES,
                schema=agent.policy.registry.get(call.name).schema,
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


# ---------------------------------------------------------------------- commands to paste


def command_words() -> list[str]:
    """How any shell can run this signoff: `signoff` when that is what PATH finds, else its
    absolute path (a relative one breaks in another directory), else `python -m signoff`."""
    argv0 = os.path.abspath(sys.argv[0])
    on_path = shutil.which("signoff")
    if os.path.basename(argv0) == "signoff" and os.path.isfile(argv0):
        same = on_path is not None and os.path.realpath(on_path) == os.path.realpath(argv0)
        return ["signoff"] if same else [argv0]
    return ["signoff"] if on_path else [sys.executable, "-m", "signoff"]


MEMORY = ("memory:", "memory://", ":memory:")


def store_url(root: Path, db: str | None) -> str:
    """The store the demo uses, with a file named by its absolute path (a relative one
    would name another file once the command is pasted in another directory)."""
    url = db if db is not None else default_url(root)
    if url in MEMORY or url.startswith(("postgresql://", "postgres://")):
        return url
    if url.startswith("sqlite:///"):
        return "sqlite:///" + os.path.abspath(url.removeprefix("sqlite:///"))
    return url if "://" in url else os.path.abspath(url)


def store_words(root: Path, db: str | None) -> list[str]:
    """`--workspace ROOT`, plus `--db URL` when the store is not the workspace's own file."""
    words = ["--workspace", str(root)]
    url = store_url(root, db)
    if url != str(root / DEFAULT_PATH) and url != "sqlite:///" + str(root / DEFAULT_PATH):
        words += ["--db", url]
    return words


def describe_store(url: str) -> str:
    """Where the run is kept, in words (a password in a URL is not printed)."""
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}@" if parts.username else ""
        shown = urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, "", ""))
        return f"the PostgreSQL database {shown}"
    if url in MEMORY:
        return "memory (lost when the demo ends)"
    return f"the SQLite file {url.removeprefix('sqlite:///')}"


class Commands:
    """The commands the demo prints, quoted for a POSIX shell and naming the store."""

    def __init__(self, root: Path, db: str | None) -> None:
        self.signoff = command_words()
        self.store = store_words(root, db)
        self.usable = store_url(root, db) not in MEMORY  # no other process sees memory

    def __call__(self, *words: str, store: bool = True) -> str:
        return shlex.join([*self.signoff, *words, *(self.store if store else ())])


def print_waiting(run: Run, store: Store, cmd: Commands, where: str, out: Console) -> None:
    out.print()
    out.print(
        Text(
            f"Run {run.id} is paused until a person decides; what waits has not run. "
            f"It is saved in {where}.",
            style="bold",
        )
    )
    waiting = [store.get_request(request_id) for request_id in run.waiting_on]
    for request in waiting:
        out.print(f"  waiting: {request.id}  {label(request.call.to_json())}")
    first = waiting[0].id if waiting else "ID"
    if not cmd.usable:
        out.print("It ends with this process: run the demo with the default store, or --db, to")
        out.print("decide and resume it from other shells.")
        return
    out.print("Decide and resume it from any shell, in any directory:")
    out.print(f"  {cmd('inbox')}")
    out.print(f"  {cmd('show', first)}")
    if waiting and waiting[0].call.name == "ask_human":  # a question is answered
        options = waiting[0].call.arguments.get("options") or []
        answer = options[0] if options and isinstance(options[0], str) else "ANSWER"
        out.print(f"  {cmd('answer', first, answer)}")
    else:
        out.print(f"  {cmd('approve', first)}")
    out.print("      (or: reject ID --reason TEXT, edit ID --args JSON, answer ID TEXT, skip ID)")
    out.print(f"  {cmd('resume', run.id)}")


def print_next_steps(run: Run, cmd: Commands, out: Console) -> None:
    if not cmd.usable:
        return
    out.print(Text("Next steps (these work from any directory):", style="bold"))
    out.print(f"  {cmd('review')}")
    out.print("      what ran without asking; undo a change with: revert ID")
    out.print(f"  {cmd('audit', '--run', run.id)}")
    out.print("      every verdict and decision of this run, from the tamper-evident log")
    out.print(f"  {cmd('serve')}")
    out.print("      the web inbox (http://127.0.0.1:8765): decide the next run's questions there")


# ---------------------------------------------------------------------- the demo


def counting_diffs(agent: Agent, workspace: Workspace, diffs: dict[str, str]) -> None:
    """Remember "+3 -1" for each recorded change, from its diff just before it runs."""
    inner = agent.run_recorded
    if inner is None:
        return
    run_inner = inner

    def run(call: ToolCall, key: str | None) -> tuple[Any, Any]:
        try:
            stat = diffstat(workspace.preview(call, agent.policy.registry.get(call.name)))
        except Exception:  # a preview that fails only costs the demo its "+3 -1"
            stat = None
        if stat and call.id:
            diffs[call.id] = stat
        return run_inner(call, key)

    agent.run_recorded = run


class Narrated:
    """The model, with each call's line printed before the model reads its result (so the
    lines and the model's words come in the order things happened)."""

    def __init__(self, model: Model, story: Story) -> None:
        self.model = model
        self.story = story

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: TextSink | None = None,
    ) -> dict[str, Any]:
        self.story.catch_up(messages)
        return self.model.complete(messages, tools, on_text=on_text)


def run_demo(
    workspace: str | None, db: str | None = None, *, interactive: bool | None = None
) -> int:
    out = Console(highlight=False, markup=False, soft_wrap=True)
    root = make_workspace(workspace)
    interactive = sys.stdin.isatty() if interactive is None else interactive
    where = describe_store(store_url(root, db))
    cmd = Commands(root, db)
    out.print(Text("signoff demo: a SCRIPTED model (no LLM, no network) at work", style="bold"))
    out.print(f"workspace: {root}")
    out.print(f"store:     {where}")
    out.print(f"task: {TASK}")
    metadata = {"workspace": str(root)}
    agent, ws = make_agent(root)
    with closing(open_store(db, workspace=root)) as store:
        story = Story(store, out, after_seq=store.last_seq(), run_id=f"run_{uuid.uuid4().hex[:12]}")
        counting_diffs(agent, ws, story.diffs)

        agent.model = Narrated(agent.model, story)
        agent.on_text = lambda text: out.print(
            Text(f"model: {escape_untrusted(text)}", style="italic")
        )
        runner = Runner(store, agent, agent_ref=AGENT_REF)
        run = runner.start(
            [
                {"role": "system", "content": "You are a careful release agent."},
                {"role": "user", "content": TASK},
            ],
            metadata=metadata,
            run_id=story.run_id,
        )
        story.catch_up()
        if not interactive:
            print_waiting(run, store, cmd, where, out)
            return 0
        channel = TerminalChannel()
        try:
            while run.status == "paused":
                answer_here(store, run, agent, channel, out)
                run = runner.resume(run.id)
                story.catch_up()
        except StopRequested:
            run = store.get_run(run.id)
            out.print()
            out.print(Text("Stopped. Nothing waiting was run, and nothing is lost.", style="bold"))
            print_waiting(run, store, cmd, where, out)
            return 0
        out.print()
        story.summary(run.status, out.print)
        if run.status != "finished" and run.note:
            out.print(f"note: {escape_untrusted(run.note)}")
        out.print()
        print_next_steps(run, cmd, out)
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


__all__ = ["AGENT_REF", "build_agent", "register", "run_demo"]
