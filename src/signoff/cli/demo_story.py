"""What the demo prints about each call: one line per verdict as the run goes, and a
summary at the end.

The lines come from the record, not from the script: the verdicts in the audit log of this
run (allow, notify, ask, deny, with the policy's reason) and the tool results in its
transcript (what really ran, was rejected, skipped or answered).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

from ..channels.render import escape_untrusted
from ..store import Store
from .demo_script import outcome

_SUBJECT_KEYS = ("path", "command", "pattern", "to", "question", "url")
_LABEL_LIMIT = 60
_DETAIL_LIMIT = 100

STYLE = {"allow": "green", "notify": "cyan", "ask": "yellow", "deny": "bold red"}


def label(call: Mapping[str, Any]) -> str:
    """`read_file README.md`: the tool and the argument that says what it acts on."""
    name = str(call.get("name", "?"))
    arguments = call.get("arguments") or {}
    subject = next((arguments[k] for k in _SUBJECT_KEYS if k in arguments), None)
    text = name if subject is None else f"{name} {subject}"
    text = escape_untrusted(text, newline=False, tab=False)
    return text if len(text) <= _LABEL_LIMIT else text[: _LABEL_LIMIT - 1] + "…"


def diffstat(diff: str) -> str | None:
    """ "+3 -1" for a unified diff (None if the text is not one)."""
    lines = diff.splitlines()
    if not any(line.startswith("@@") for line in lines):
        return None
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return f"+{added} -{removed}"


def _first_line(text: str) -> str:
    line = escape_untrusted(text.strip().split("\n", 1)[0], newline=False, tab=False)
    return line if len(line) <= _DETAIL_LIMIT else line[: _DETAIL_LIMIT - 1] + "…"


@dataclass
class Story:
    """Follows one run in the store and prints each call once, in the order it settled."""

    store: Store
    out: Console
    after_seq: int  # the log's last entry before the run started
    run_id: str = ""
    diffs: dict[str, str] = field(default_factory=dict)  # call id -> "+3 -1"
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    announced: set[str] = field(default_factory=set)
    settled: dict[str, tuple[str, bool, str]] = field(default_factory=dict)  # effect, ran, what

    # ------------------------------------------------------------------ as the run goes

    def line(self, word: str, style: str, call_id: str, detail: str) -> None:
        text = Text("  ")
        text.append(f"{word:<9}", style=style)
        what = label(self.calls[call_id])
        diff = self.diffs.get(call_id)
        if diff:
            what += f" ({diff})"
        text.append(f"{what:<34}")
        text.append(f"  {detail}", style="dim")
        self.out.print(text)

    def catch_up(self, messages: list[dict[str, Any]] | None = None) -> None:
        """Print what happened since the last call: new verdicts and new results.
        `messages`: the transcript as the model is about to read it (default: as stored)."""
        if not self.run_id:
            return
        self._read_log()
        if messages is None:
            messages = self.store.load_messages(self.run_id)
        for message in messages:
            call_id = message.get("tool_call_id")
            if message.get("role") != "tool" or call_id in self.settled:
                continue
            if call_id not in self.verdicts:
                continue  # judged before this process watched (cannot happen in the demo)
            self._settle(str(call_id), str(message.get("content", "")))

    def _read_log(self) -> None:
        while True:
            events = self.store.events_after(self.after_seq, 200)
            if not events:
                return
            for event in events:
                self.after_seq = event.seq
                if event.run_id != self.run_id or event.kind != "verdict":
                    continue
                call = dict(event.data.get("call") or {})
                call_id = str(call.get("id", ""))
                self.calls[call_id] = call
                self.verdicts[call_id] = dict(event.data.get("verdict") or {})
                self._announce(call_id)

    def _announce(self, call_id: str) -> None:
        """An ask or a deny is shown when it is judged: nothing runs before the line."""
        verdict = self.verdicts[call_id]
        effect = verdict.get("effect")
        if call_id in self.announced or effect not in ("ask", "deny"):
            return
        self.announced.add(call_id)
        reasons = "; ".join(str(r) for r in verdict.get("reasons") or ())
        if effect == "ask":
            self.line("ask", STYLE["ask"], call_id, "waits for a person to decide")
        else:
            self.line("deny", STYLE["deny"], call_id, f"refused, never ran: {reasons}")

    def _settle(self, call_id: str, content: str) -> None:
        effect = str(self.verdicts[call_id].get("effect"))
        ran, what = outcome(content)
        self.settled[call_id] = (effect, ran, what)
        if effect == "deny":
            return  # said when it was judged
        if effect in ("allow", "notify"):
            if not ran:
                self.line(effect, "bold red", call_id, f"did not run: {_first_line(what)}")
            elif effect == "allow":
                self.line("allow", STYLE["allow"], call_id, "ran without asking")
            else:
                self.line("notify", STYLE["notify"], call_id, "ran, kept for review")
            return
        name = str(self.calls[call_id].get("name"))
        if name == "ask_human" and ran:
            self.line("answered", STYLE["allow"], call_id, f"your answer: {_first_line(what)}")
        elif ran:
            self.line("ran", STYLE["allow"], call_id, f"after your decision: {_first_line(what)}")
        else:
            self.line("not run", "bold", call_id, _first_line(what))

    # ------------------------------------------------------------------ at the end

    def summary(self, status: str, write: Callable[[Text], None]) -> None:
        """What ran, what was asked, what was refused, and what waits for review."""
        silent = [c for c, (e, ran, _) in self.settled.items() if e == "allow" and ran]
        review = [c for c, (e, ran, _) in self.settled.items() if e == "notify" and ran]
        denied = [c for c, (e, _, _) in self.settled.items() if e == "deny"]
        asked = [c for c, v in self.verdicts.items() if v.get("effect") == "ask"]
        write(Text(f"What happened in run {self.run_id} ({status}):", style="bold"))

        def row(title: str, ids: list[str], note: Callable[[str], str] | None = None) -> None:
            head = Text(f"  {title:<20}", style="bold")
            if not ids:
                write(head + Text("none", style="dim"))
                return
            items = []
            for call_id in ids:
                item = label(self.calls[call_id])
                if call_id in self.diffs:
                    item += f" ({self.diffs[call_id]})"
                if note is not None:
                    item += f" ({note(call_id)})"
                items.append(item)
            write(head + Text(", ".join(items)))

        def decided(call_id: str) -> str:
            if call_id not in self.settled:
                return "waiting"
            _, ran, what = self.settled[call_id]
            if self.calls[call_id].get("name") == "ask_human" and ran:
                return "answered"
            return "ran" if ran else what.split(":", 1)[0]

        row("ran without asking", silent)
        row("ran, to review", review)
        row("asked a person", asked, decided)
        row("refused by policy", denied)


__all__ = ["Story", "diffstat", "label"]
