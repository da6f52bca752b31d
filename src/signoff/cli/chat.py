"""`signoff chat`: an interactive coding assistant whose every tool call goes through the gate.

Point it at any OpenAI-compatible endpoint (`--model`, `--base-url`, or SIGNOFF_MODEL,
OPENAI_BASE_URL, OPENAI_API_KEY). The tools are the built-in workspace tools; the policy
decides which calls run silently, which ask, and which are refused. Slash commands switch
approvals on and off, change the mode, list and revoke grants, show the inbox and clear the
session (see HELP).

The model's text streams as it arrives; the approval channel is wrapped so that the
streamed line is ended before any approval box is drawn, and the two never mix.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from ..audit import session_recorder
from ..channels import Channel, Prompt
from ..channels.render import escape_untrusted
from ..channels.terminal import TerminalChannel
from ..exceptions import ConfigurationError, SignoffError
from ..gate import Gate, ToolResult
from ..i18n import plural
from ..llm.base import Model
from ..llm.openai import OpenAIModel
from ..llm.session import run_session
from ..models import Decision, ToolCall
from ..policy import Policy
from ..protected import store_files
from ..review import record_review
from ..reviewer_settings import AUTO_WITHOUT_REVIEWER, REVIEWER_RULE
from ..run_state import storable
from ..settings import MODES, load_settings
from ..store import Store, default_url, open_store
from ..workspace.snapshots import Snapshot
from ._output import HelpFormatter, where_flags

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..settings import Mode

HELP = """\
Commands:
  /hitl on|off|status   approvals on or off (off: asks run without asking; denies still apply)
  /mode [MODE]          show or set the mode: default, accept-edits, plan (read-only), auto
  /grants               list the "always allow" grants of this session
  /grants revoke ID     revoke one grant
  /inbox                pending approval requests in the store
  /clear                forget the conversation and this session's grants
  /help                 this help
  /exit                 leave (Ctrl-D works too)
Anything else is sent to the model."""

SYSTEM_PROMPT = """\
You are a coding assistant working in the directory {root}. Use the tools to read, search, \
write and run commands there; paths are relative to that directory. A person reviews risky \
tool calls: some are approved, some are rejected with a reason, some are refused by policy. \
When a call is refused, read the reason and change your plan; never retry the same call \
unchanged. Keep answers short."""

ToolFn = Callable[..., Any]
_DECIDED = {"approve": "approved", "approve_always": "approved always", "edit": "edited"}


class StreamPrinter:
    """Writes streamed model text (escaped: the model must not drive the terminal) and
    remembers whether a line is left open."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.open = False

    def write(self, text: str) -> None:
        safe = escape_untrusted(storable(text))  # a lone surrogate cannot reach the terminal
        if not safe:
            return
        self.out.write(safe)
        self.out.flush()
        self.open = not safe.endswith("\n")

    def end_line(self) -> None:
        if self.open:
            self.out.write("\n")
            self.out.flush()
            self.open = False

    def line(self, text: str) -> None:
        """A line of our own (already safe), after ending any streamed line."""
        self.end_line()
        self.out.write(text + "\n")
        self.out.flush()


class FlushingChannel:
    """Ends the streamed line before the inner channel draws its approval box."""

    def __init__(self, inner: Channel, printer: StreamPrinter) -> None:
        self.inner = inner
        self.printer = printer

    def decide(self, prompt: Prompt) -> Decision:
        self.printer.end_line()
        return self.inner.decide(prompt)


def _short(text: str, limit: int = 100) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = escape_untrusted(storable(first), newline=False)
    return first if len(first) <= limit else first[: limit - 1] + "…"


class ChatSession:
    """One interactive session: the transcript, the gate, the tools and the commands."""

    def __init__(
        self,
        model: Model,
        gate: Gate,
        tools: Mapping[str, ToolFn],
        tool_specs: list[dict[str, Any]],
        *,
        workspace: str,
        printer: StreamPrinter,
        model_label: str = "",
        store_url: str | None = None,
        system_prompt: str | None = None,
        record: Store | None = None,
        session_id: str | None = None,
        snapshots: dict[str, Snapshot] | None = None,
    ) -> None:
        self.model = model
        self.gate = gate
        self.tools = tools
        self.tool_specs = tool_specs
        self.workspace = workspace
        self.printer = printer
        self.model_label = model_label or repr(model)
        self.store_url = store_url
        self.record = record  # the store the gate records this session into (see audit)
        self.session_id = session_id
        # what each file change replaced, by call digest, until the call's outcome is known
        self.snapshots = snapshots if snapshots is not None else {}
        self.system = (system_prompt or SYSTEM_PROMPT).format(root=workspace)
        self.messages: list[dict[str, Any]] = []
        # the reviewer model (auto mode) reads the conversation as reviewer_input allows
        self.gate.transcript = lambda: self.messages
        self.reset()

    def reset(self) -> None:
        self.messages[:] = [{"role": "system", "content": self.system}]

    def say(self, text: str) -> None:
        self.printer.line(text)

    # ------------------------------------------------------------------ the loop

    def banner(self) -> None:
        self.say(f"signoff chat  model: {escape_untrusted(self.model_label, newline=False)}")
        self.say(f"workspace: {self.workspace}   {self._status()}")
        if self.record is not None:
            self.say(
                f"on the record: every call, question and answer goes to {self.store_url} "
                f"(session {self.session_id}; see `signoff audit --run {self.session_id}"
                f"{where_flags(None, str(self.workspace))}`)"
            )
        self._auto_notice()
        self.say("Type /help for commands, /exit to leave.")

    def _auto_notice(self) -> None:
        """In auto mode, say loudly who settles what would have asked."""
        if self.gate.policy.mode != "auto" or not self.gate.enabled:
            return
        reviewer = self.gate.policy.settings.reviewer
        if reviewer is None:
            self.say(AUTO_WITHOUT_REVIEWER)
        else:
            self.say(
                f"auto mode: the reviewer model {escape_untrusted(reviewer.model, newline=False)}"
                " settles what would ask (it never sees tool results); it hands the rest to you."
            )

    def repl(self, read_line: Callable[[str], str] = input) -> int:
        self.banner()
        while True:
            try:
                line = read_line("you> ")
            except EOFError:
                self.say("")
                return 0
            except KeyboardInterrupt:
                self.say("")
                continue
            if not self.handle(line):
                return 0

    def handle(self, line: str) -> bool:
        """One line from the person; False means leave."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("/"):
            return self.command(text)
        self.turn(text)
        return True

    def turn(self, text: str) -> None:
        if self.gate.stopped:
            self.say(f"Session stopped: {self.gate.stopped}. Type /clear to start over.")
            return
        self.messages.append({"role": "user", "content": text})
        try:
            run_session(
                self.model,
                self.messages,
                gate=self.gate,
                tools=self.tools,
                tool_specs=self.tool_specs,
                on_text=self.printer.write,
                on_tool=self._on_tool,
            )
        except KeyboardInterrupt:
            self.say("(interrupted)")
        except SignoffError as exc:
            self.say(f"error: {escape_untrusted(str(exc), newline=False)}")
        self.printer.end_line()
        if self.gate.stopped:
            self.say(f"Session stopped: {self.gate.stopped}. Type /clear to start over.")

    def _record_review(self, result: ToolResult) -> None:
        """A change that ran without asking goes on the record for review after (`signoff
        review`, `signoff revert`, the web), as a durable run's do."""
        snapshot = self.snapshots.pop(result.call.digest(), None)
        self.snapshots.clear()
        if (
            snapshot is not None
            and self.record is not None
            and self.session_id is not None
            and result.outcome == "ran"
            and result.verdict.effect == "notify"
        ):
            record_review(self.record, result.call, snapshot, run_id=self.session_id)

    def _on_tool(self, raw: Mapping[str, Any], content: str, result: ToolResult | None) -> None:
        if result is not None:
            self._record_review(result)
        function = raw.get("function") or {}
        name = escape_untrusted(storable(str(function.get("name") or "?")), newline=False)
        args = _short(str(function.get("arguments") or ""), 80)
        if result is None:
            outcome = "refused"
        elif result.outcome == "ran":
            how = _DECIDED.get(result.decision.kind, "") if result.decision else ""
            if not how and result.verdict.rule == REVIEWER_RULE:
                how = "allowed by the reviewer model"
            outcome = f"ran ({how or result.verdict.effect})"
            if result.verdict.effect == "notify":
                outcome += ", recorded for review"
        else:
            outcome = result.outcome
        self.say(f"  [{name}] {args} -> {outcome}: {_short(content)}")

    # ------------------------------------------------------------------ commands

    def command(self, text: str) -> bool:
        head, _, rest = text.partition(" ")
        arg = rest.strip()
        head = head.lower()
        if head in ("/exit", "/quit", "/q"):
            return False
        handlers: dict[str, Callable[[str], None]] = {
            "/help": lambda _: self.say(HELP),
            "/hitl": self.cmd_hitl,
            "/mode": self.cmd_mode,
            "/grants": self.cmd_grants,
            "/inbox": self.cmd_inbox,
            "/clear": self.cmd_clear,
        }
        handler = handlers.get(head)
        if handler is None:
            shown = escape_untrusted(head, newline=False)
            self.say(f"Unknown command {shown}. Type /help for the list.")
        else:
            handler(arg)
        return True

    def _status(self) -> str:
        hitl = "on" if self.gate.enabled else "off"
        return f"approvals: {hitl}   mode: {self.gate.policy.mode}"

    def cmd_hitl(self, arg: str) -> None:
        if arg in ("on", "off"):
            self.gate.set_enabled(arg == "on")
            if arg == "off":
                self.say(
                    "Approvals off: calls that would ask now run without asking. "
                    "Denied calls are still refused."
                )
            else:
                self.say("Approvals on: risky calls ask first.")
        elif arg not in ("", "status"):
            self.say("Usage: /hitl on|off|status")
            return
        self.say(self._status())

    def cmd_mode(self, arg: str) -> None:
        if arg:
            if arg not in MODES:
                self.say(
                    f"Unknown mode {escape_untrusted(arg, newline=False)}; "
                    f"choose one of {', '.join(MODES)}."
                )
                return
            self.gate.set_mode(arg)  # narrowed to Mode by the check above
        self.say(self._status())
        if arg:
            self._auto_notice()

    def cmd_grants(self, arg: str) -> None:
        words = arg.split()
        if words[:1] == ["revoke"]:
            if len(words) != 2:
                self.say("Usage: /grants revoke ID")
            elif self.gate.revoke(words[1]):
                self.say(f"Revoked {words[1]}.")
            else:
                self.say(f"No grant {escape_untrusted(words[1], newline=False)} in this session.")
            return
        if words:
            self.say("Usage: /grants  or  /grants revoke ID")
            return
        if not self.gate.grants:
            self.say("No grants in this session.")
            return
        for grant in self.gate.grants:
            rule = escape_untrusted(grant.rule, newline=False)
            self.say(f"  {grant.id}  {grant.scope:<8} {rule}")

    def cmd_inbox(self, arg: str) -> None:
        if self.record is None:
            self.say("No store configured (set SIGNOFF_DB): no pending requests.")
            return
        try:
            pending = self.record.list_requests(state="pending")
        except (SignoffError, OSError) as exc:
            self.say(f"Cannot read the store: {escape_untrusted(str(exc), newline=False)}")
            return
        if not pending:
            self.say("No pending requests.")
            return
        for request in pending:
            args = _short(json.dumps(dict(request.call.arguments), ensure_ascii=False), 60)
            name = escape_untrusted(request.call.name, newline=False)
            self.say(f"  {request.id}  {name}  {args}")

    def cmd_clear(self, arg: str) -> None:
        grants = len(self.gate.grants)
        self.gate.clear()  # grants, review items and refusal counters go together
        self.reset()
        self.say(f"Cleared the conversation and {plural(grants, 'grant')}.")


# ------------------------------------------------------------------ wiring


def _workspace_tools(
    root: str,
    on_snapshot: Callable[[ToolCall, Snapshot], None] | None = None,
    hidden: Callable[[str], bool] | None = None,
) -> tuple[dict[str, ToolFn], list[dict[str, Any]], Any]:
    from ..workspace import Workspace

    workspace = Workspace(root, hidden=hidden)
    return (
        dict(workspace.as_mapping(on_snapshot=on_snapshot)),
        workspace.openai_tools(),
        workspace.preview,
    )


def build_session(
    model: Model,
    *,
    workspace: str,
    mode: Mode | None = None,
    out: TextIO | None = None,
    channel: Channel | None = None,
    model_label: str = "",
    store_url: str | None = None,
    user_settings: bool = True,
) -> ChatSession:
    """A session on the built-in workspace tools; `channel` defaults to the terminal."""
    root = os.path.realpath(workspace)
    printer = StreamPrinter(out or sys.stdout)
    snapshots: dict[str, Snapshot] = {}  # what each file change replaced, by call digest
    url = store_url if store_url is not None else default_url(root)
    policy = Policy(
        load_settings(root, user=user_settings),
        workspace=root,
        mode=mode,
        protected=store_files(url),
    )  # the store, wherever it is, is off limits
    tools, specs, previewer = _workspace_tools(
        root,
        lambda call, snapshot: snapshots.__setitem__(call.digest(), snapshot),
        hidden=policy.hidden,
    )
    record = open_store(url)  # invariant 8: the session is on the record, or it does not start
    session_id = f"chat_{uuid.uuid4().hex[:12]}"
    gate = Gate(
        policy,
        FlushingChannel(channel or TerminalChannel(output=out), printer),
        previewer=previewer,
        listener=session_recorder(record, session_id),
    )
    return ChatSession(
        model,
        gate,
        tools,
        specs,
        workspace=root,
        printer=printer,
        model_label=model_label,
        store_url=url,
        record=record,
        session_id=session_id,
        snapshots=snapshots,
    )


def _line_editing() -> None:
    """Arrow keys and history for the prompt when a person is typing."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (importing it is what enables line editing)


def cmd_chat(args: argparse.Namespace) -> int:
    try:
        model = OpenAIModel(args.model, args.base_url, stream=not getattr(args, "no_stream", False))
        model.check()
    except ConfigurationError as exc:
        sys.stderr.write(f"signoff chat: {exc}\n")
        return 2
    try:
        session = build_session(
            model,
            workspace=args.workspace,
            mode=args.mode,
            model_label=f"{model.model} at {model.endpoint}",
        )
    except SignoffError as exc:
        sys.stderr.write(f"signoff chat: {exc}\n")
        return 2
    _line_editing()
    try:
        return session.repl()
    finally:
        if session.record is not None:
            session.record.close()


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "chat",
        help="an interactive assistant whose tool calls need your approval",
        description="Chat with a model from any OpenAI-compatible endpoint, in the "
        "workspace: its tool calls go through the policy, so risky ones ask you first and "
        "catastrophic ones are refused. Type /help inside for its commands.",
        epilog="examples:\n"
        "  signoff chat --model gpt-4o-mini\n"
        "  signoff chat --base-url http://localhost:11434/v1 --model qwen2.5-coder",
        formatter_class=HelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=cmd_chat)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="model name (default: $SIGNOFF_MODEL)")
    parser.add_argument(
        "--base-url",
        help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
        "(default: $OPENAI_BASE_URL, else OpenAI)",
    )
    parser.add_argument(
        "--workspace",
        default=".",
        help="the directory the assistant works in; its settings and store apply (default: .)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="starting mode, switchable with /mode: accept-edits lets workspace file "
        "writes run, plan denies every write, auto turns asks into allows (default: the "
        "settings' mode, else default)",
    )
    parser.add_argument(
        "--no-stream",
        action="store_true",
        help="ask for whole replies instead of a stream (default: stream)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """`signoff chat` on its own: `python -c "from signoff.cli.chat import main; main()"`."""
    parser = argparse.ArgumentParser(prog="signoff chat", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return cmd_chat(parser.parse_args(argv))


__all__ = [
    "HELP",
    "ChatSession",
    "FlushingChannel",
    "StreamPrinter",
    "build_session",
    "cmd_chat",
    "main",
    "register",
]
