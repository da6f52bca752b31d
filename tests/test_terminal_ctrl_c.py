"""Ctrl-C at a terminal box, whenever it lands: while the box is drawn, between the prompt
and the read, during the read (on the reading thread, or handled by another thread, which
leaves the read itself uninterrupted), twice at once, after the decision.

The dialog runs here in the main thread (Python runs signal handlers there only) and reads
a real pseudo-terminal; SIGINT is raised at chosen points of what it prints."""

from __future__ import annotations

import io
import os
import pty
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import pytest

from signoff.channels import Prompt, StopRequested
from signoff.channels.terminal import INTERRUPTED_REASON, TerminalChannel
from signoff.models import Decision
from test_terminal import ACTOR, accept_all, make_request

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")

BOX = "╭"  # the box's first character: it is being drawn
MENU_PROMPT = "> "
GO_ON_PROMPT = "[Enter] let it go on without this call: "
HANG_BOUND = 30.0  # seconds before a read that ignored a Ctrl-C is woken by a typed line


def ctrl_c_here() -> None:
    """A Ctrl-C that lands now, on this thread."""
    signal.raise_signal(signal.SIGINT)


class Screen(io.StringIO):
    """What the dialog prints; `when(text, action)` runs `action` once, in the dialog's
    thread, as soon as `text` has been written (inside the print that writes it)."""

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[tuple[str, Callable[[], object]]] = []
        self.shown = threading.Condition()

    def when(self, text: str, action: Callable[[], object]) -> None:
        self.actions.append((text, action))

    def write(self, text: str) -> int:
        written = super().write(text)
        with self.shown:
            self.shown.notify_all()
        for pending in list(self.actions):
            if pending[0] in self.getvalue():
                self.actions.remove(pending)
                pending[1]()
        return written

    def isatty(self) -> bool:
        return False

    def wait_for(self, text: str, start: int = 0) -> bool:
        with self.shown:
            return self.shown.wait_for(lambda: text in self.getvalue()[start:], HANG_BOUND)


@pytest.fixture
def terminal() -> Iterator[tuple[int, TextIO]]:
    """The two ends of a pseudo-terminal: the keyboard's, and the dialog's input."""
    keyboard, reviewer = pty.openpty()
    stream = os.fdopen(reviewer, "r", encoding="utf-8", closefd=True)
    try:
        yield keyboard, stream
    finally:
        stream.close()
        os.close(keyboard)


def decide(stream: TextIO, screen: Screen) -> Decision | type[KeyboardInterrupt]:
    """The decision, or the kind of `KeyboardInterrupt` the dialog raised (caught here: one
    escaping a test would end the whole test session)."""
    assert threading.current_thread() is threading.main_thread()
    channel = TerminalChannel(stream, screen, actor=ACTOR, lang="en", width=80)
    try:
        return channel.decide(Prompt(make_request(), accept_all))
    except KeyboardInterrupt as interrupt:
        return type(interrupt)
    finally:  # the dialog gives Ctrl-C back as it found it
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.set_wakeup_fd(-1) == -1


def rejected(outcome: Decision | type[KeyboardInterrupt]) -> bool:
    return isinstance(outcome, Decision) and (outcome.kind, outcome.reason) == (
        "reject",
        INTERRUPTED_REASON,
    )


def blocked_in_the_kernel(thread: threading.Thread) -> bool:
    """The thread sleeps in a system call other than a lock's (the GIL's) wait; True where
    /proc cannot say."""
    task = Path(f"/proc/self/task/{thread.native_id}")
    try:
        state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        wchan = (task / "wchan").read_text()
    except OSError:
        return True
    return state == "S" and "futex" not in wchan


class Keyboard(threading.Thread):
    """A person at the keyboard: at each prompt, once the dialog waits in its read, press
    Ctrl-C (with `press`); a read that does not answer within HANG_BOUND is woken with a
    typed Enter and noted in `ignored`."""

    def __init__(self, fd: int, screen: Screen, press: Callable[[], None], prompts: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.screen, self.press, self.prompts = fd, screen, press, prompts
        self.reader = threading.main_thread()
        self.ignored: list[str] = []
        self.finished = threading.Event()  # the dialog is over: stop waiting for it

    def __enter__(self) -> Keyboard:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.finished.set()
        self.join()

    def run(self) -> None:
        answers = [("Interrupted", MENU_PROMPT), ("Stopping", GO_ON_PROMPT)]
        seen = 0
        for reply, prompt in answers[: self.prompts]:
            if not self.screen.wait_for(prompt, seen):
                return
            seen = len(self.screen.getvalue())
            while not blocked_in_the_kernel(self.reader):
                if self.finished.wait(0.001):
                    return
            self.press()
            if not self.screen.wait_for(reply, seen):
                self.ignored.append(prompt)
                os.write(self.fd, b"\n")
                if not self.screen.wait_for(reply, seen):
                    return
            seen = self.screen.getvalue().index(reply, seen)  # the next prompt comes after


def ctrl_c_from_here() -> None:
    """From the keyboard thread: the signal goes to the dialog's own thread."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def ctrl_c_handled_here() -> None:
    """From the keyboard thread: its handler runs on this thread, so the dialog's read is
    not interrupted (the state a signal leaves when it lands just before the read)."""
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)


@pytest.mark.parametrize("press", [ctrl_c_from_here, ctrl_c_handled_here])
def test_ctrl_c_during_the_read_rejects_and_a_second_stops(
    terminal: tuple[int, TextIO], press: Callable[[], None]
) -> None:
    keyboard, stream = terminal
    screen = Screen()
    with Keyboard(keyboard, screen, press, prompts=2) as person:
        assert decide(stream, screen) is StopRequested
    assert person.ignored == []
    assert "Interrupted: the call is rejected." in screen.getvalue()


@pytest.mark.parametrize("press", [ctrl_c_from_here, ctrl_c_handled_here])
def test_ctrl_c_during_the_read_then_enter_rejects_the_call(
    terminal: tuple[int, TextIO], press: Callable[[], None]
) -> None:
    keyboard, stream = terminal
    screen = Screen()
    screen.when(GO_ON_PROMPT, lambda: os.write(keyboard, b"\n"))
    with Keyboard(keyboard, screen, press, prompts=1) as person:
        outcome = decide(stream, screen)
    assert person.ignored == []
    assert rejected(outcome)


@pytest.mark.parametrize(
    "first", [BOX, MENU_PROMPT], ids=["while-the-box-is-drawn", "before-the-read"]
)
def test_ctrl_c_before_the_read_rejects_the_call(terminal: tuple[int, TextIO], first: str) -> None:
    keyboard, stream = terminal
    screen = Screen()
    screen.when(first, ctrl_c_here)
    screen.when(GO_ON_PROMPT, lambda: os.write(keyboard, b"\n"))
    assert rejected(decide(stream, screen))
    assert screen.getvalue().count("Interrupted: the call is rejected.") == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [(BOX, BOX), (BOX, "Interrupted"), (MENU_PROMPT, "Interrupted"), (MENU_PROMPT, GO_ON_PROMPT)],
    ids=["twice-while-drawn", "drawn-then-message", "prompt-then-message", "both-prompts"],
)
def test_two_ctrl_c_before_their_reads_stop_the_agent(
    terminal: tuple[int, TextIO], first: str, second: str
) -> None:
    _, stream = terminal
    screen = Screen()
    screen.when(first, ctrl_c_here)
    screen.when(second, ctrl_c_here)
    assert decide(stream, screen) is StopRequested
    assert "Stopping the agent; this call stays undecided." in screen.getvalue()


def test_ctrl_c_after_the_answer_is_the_callers_ctrl_c(terminal: tuple[int, TextIO]) -> None:
    keyboard, stream = terminal
    screen = Screen()
    screen.when(MENU_PROMPT, lambda: os.write(keyboard, b"y\n"))
    screen.when("Approved", ctrl_c_here)
    screen.when(GO_ON_PROMPT, lambda: os.write(keyboard, b"\n"))  # if taken for the prompt's
    assert decide(stream, screen) is KeyboardInterrupt  # not lost, and not taken for a stop


def test_without_ctrl_c_the_answer_is_read(terminal: tuple[int, TextIO]) -> None:
    keyboard, stream = terminal
    screen = Screen()
    screen.when(MENU_PROMPT, lambda: os.write(keyboard, b"y\n"))
    outcome = decide(stream, screen)
    assert isinstance(outcome, Decision) and outcome.kind == "approve"
