"""Attack: a keystroke typed before a box is shown decides it (issue 11, item 7).

Each case runs a real agent process in a pty (pexpect): a gate with the terminal channel
guards a destructive tool that leaves a marker file when it runs. The "agent" announces it
is busy, the test types keys at once, and the process draws the box only once those keys
are in the terminal's input queue (it waits with select, without reading them), so the
keys are typed ahead for certain, whatever the machine's speed. Then the box must wait for
a key typed after it: the test answers `s` (skip) and checks that the tool never ran.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

MENU = r"\[y\] approve"

AGENT = r"""
import os, select, sys
from pathlib import Path
from signoff.gate import Gate
from signoff.exceptions import CallDenied
from signoff.policy import Policy
from signoff.tools import Registry, tool
from signoff.settings import Settings
from signoff.channels.terminal import TerminalChannel

marker_dir = Path(sys.argv[1])
calls = int(sys.argv[2])
read_first = sys.argv[3] == "read-first"

@tool(tier="destructive", kind="other")
def remove_tree(path: str) -> str:
    "Remove a directory tree."
    (marker_dir / ("ran-" + path)).write_text(path)
    return "removed " + path

gate = Gate(Policy(Settings.from_rules(), workspace=marker_dir, registry=Registry()),
            TerminalChannel(lang="en", width=90))
guarded = gate.wrap(remove_tree)
if read_first:  # a chat-like prompt read through Python's own sys.stdin first
    print("TASK?", flush=True)
    print("TASK =", sys.stdin.readline().strip(), flush=True)
for n in range(calls):
    print("WORKING", n, flush=True)
    select.select([sys.stdin.fileno()], [], [])  # the typed keys are queued: now the box
    try:
        print("RESULT", guarded(path="build%d" % n), flush=True)
    except CallDenied as exc:
        print("REFUSED", n, flush=True)
print("DONE", flush=True)
"""


def spawn(tmp_path: Path, calls: int = 1, *, read_first: bool = False) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_LANG", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(
        sys.executable,
        ["-c", AGENT, str(tmp_path), str(calls), "read-first" if read_first else "-"],
        encoding="utf-8",
        timeout=30,
        dimensions=(60, 110),
        env=env,
    )
    child.logfile_read = io.StringIO()
    return child


def ran(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran-"))


TYPED_AHEAD = {
    "enter": "\r",
    "y": "y\r",
    "Y-fullwidth": "ｙ\r",
    "yes": "yes\r",
    "many-y": "y\ry\ry\ry\r",
    "many-enter": "\r\r\r\r\r\r",
    "always-confirmed": "a\ry\r",
    "edit-confirmed": 'e\r{"path": "build0"}\r\ry\r',
    "arrow-up-enter": "\x1b[A\r",
    "ctrl-j": "y\n",
    "ctrl-d": "\x04",
    "approve-then-paste": "y\rsome pasted text\ry\r",
    "chinese-yes": "是\r",
}


@pytest.mark.parametrize("keys", list(TYPED_AHEAD.values()), ids=list(TYPED_AHEAD))
def test_keys_typed_before_the_box_do_not_decide_it(tmp_path: Path, keys: str) -> None:
    child = spawn(tmp_path)
    child.expect("WORKING 0")
    child.send(keys)
    child.expect(MENU)
    # The box waits for a key typed after it: skip, and the tool never ran.
    child.sendline("s")
    child.expect("Skipped")
    child.expect("REFUSED 0")
    child.expect("DONE")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == []
    assert "Approved" not in child.logfile_read.getvalue()


def test_a_key_typed_after_the_box_still_approves(tmp_path: Path) -> None:
    """The control: the same agent, a `y` typed once the box is shown, runs the tool."""
    child = spawn(tmp_path)
    child.expect("WORKING 0")
    child.sendline("")  # a stray Enter typed ahead: dropped
    child.expect(MENU)
    child.sendline("y")
    child.expect("RESULT removed build0")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == ["ran-build0"]


def test_enter_on_the_box_never_approves(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("WORKING 0")
    child.sendline("")
    child.expect(MENU)
    for _ in range(3):
        child.sendline("")
        child.expect("Enter alone decides nothing")
    child.sendline("n")
    child.expect("Reason")
    child.sendline("not now")
    child.expect("REFUSED 0")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == []


def test_the_edit_blank_line_does_not_approve_the_next_box(tmp_path: Path) -> None:
    child = spawn(tmp_path, calls=2)
    child.expect("WORKING 0")
    child.sendline("")
    child.expect(MENU)
    child.sendline("e")
    child.expect("json> ")
    child.sendline('{"path": "edited"}')
    child.sendline("")  # ends the block, as the prompt says
    child.expect("judged again")
    child.expect(r"Approve the edited call\? \[y/N\]")
    child.sendline("")  # Enter here is "no": back to the menu
    child.expect("Cancelled")
    child.expect(MENU)
    child.sendline("e")
    child.expect("json> ")
    # The edit, its blank line and a `y` typed in one go: the `y` came before the edited
    # call's box, so it is dropped and the confirmation waits.
    child.send('{"path": "edited"}\r\ry\r')
    child.expect(r"Approve the edited call\? \[y/N\]")
    child.sendline("y")
    child.send("\r\r")  # habitual extra Enters, before the next box
    child.expect("RESULT removed edited")
    child.expect("WORKING 1")
    child.expect(MENU)
    child.sendline("s")
    child.expect("REFUSED 1")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == ["ran-edited"]


def test_keys_left_in_pythons_stdin_buffer_do_not_decide(tmp_path: Path) -> None:
    """The task line and a `y` typed in one go: the task is read through sys.stdin, the
    `y` waits behind it and must not answer the box."""
    child = spawn(tmp_path, read_first=True)
    child.expect("TASK\\?")
    child.send("clean up\ry\r")
    child.expect("TASK = clean up")
    child.expect(MENU)
    child.sendline("s")
    child.expect("REFUSED 0")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == []


def test_a_double_tapped_y_does_not_approve_the_next_box(tmp_path: Path) -> None:
    child = spawn(tmp_path, calls=2)
    child.expect("WORKING 0")
    child.sendline("")
    child.expect(MENU)
    child.send("y\ry\r")  # the second y is typed before the second box exists
    child.expect("RESULT removed build0")
    child.expect("WORKING 1")
    child.expect(MENU)
    child.sendline("s")
    child.expect("REFUSED 1")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == ["ran-build0"]


def test_a_key_after_a_cancelled_edit_does_not_approve_the_original_unseen(tmp_path: Path) -> None:
    """`n` to the edited call and a quick `y` in one go: the `y` was meant for nothing shown
    yet; the original call's box is drawn again and waits."""
    child = spawn(tmp_path)
    child.expect("WORKING 0")
    child.sendline("")
    child.expect(MENU)
    child.sendline("e")
    child.expect("json> ")
    child.send('{"path": "other"}\r\r')
    child.expect(r"Approve the edited call\? \[y/N\]")
    child.send("n\ry\r")
    child.expect("Cancelled")
    child.expect(MENU)
    child.sendline("s")
    child.expect("REFUSED 0")
    child.expect(pexpect.EOF)
    assert ran(tmp_path) == []
