"""`signoff demo` end to end: in a real pseudo-terminal, and across processes without one,
with the commands it prints pasted into another directory and run there."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from signoff.cli.demo_script import closing_words, outcome, script
from signoff.store import open_store
from store_helpers import Backend

MENU = r"\[y\] approve"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), SIGNOFF_LANG="en", COLUMNS="120", TERM="xterm")
    for name in ("SIGNOFF_DB", "EDITOR", "VISUAL"):
        env.pop(name, None)
    env.update(extra)
    return env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious.txt").write_text("must survive")
    return home


def transcript(workspace: Path) -> list[dict[str, Any]]:
    store = open_store(str(workspace / ".signoff" / "signoff.db"))
    try:
        (run,) = store.list_runs()
        return store.load_messages(run.id)
    finally:
        store.close()


def tool_results(workspace: Path) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in transcript(workspace) if m["role"] == "tool"}


class Demo:
    """`signoff demo` in a pseudo-terminal; `text` is everything it printed, plain."""

    def __init__(self, workspace: Path, home: Path, *args: str, **env: str) -> None:
        self.log = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "signoff", "demo", "--workspace", str(workspace), *args],
            env=env_for(home, **env),
            encoding="utf-8",
            timeout=60,
            dimensions=(50, 120),
        )
        self.child.logfile_read = self.log

    def expect(self, pattern: Any) -> None:
        self.child.expect(pattern)

    def sendline(self, line: str) -> None:
        self.child.sendline(line)

    def finish(self) -> str:
        self.child.expect(pexpect.EOF)
        self.child.close()
        assert self.child.exitstatus == 0
        return self.text

    @property
    def text(self) -> str:
        return ANSI.sub("", self.log.getvalue()).replace("\r\n", "\n")


def verdict_line(text: str, word: str, what: str) -> str:
    """The one line the demo prints for a call: its verdict word, then the call."""
    found = re.search(rf"^  {word} +{re.escape(what)}.*$", text, re.MULTILINE)
    assert found, f"no `{word}` line for {what!r} in:\n{text}"
    return found.group(0)


def test_interactive_shows_all_four_verdicts_a_summary_and_next_steps(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    demo = Demo(ws, home)
    demo.expect("rm -rf build/")
    demo.expect(MENU)
    demo.sendline("a")  # always: the exact rule is shown, then the scope is chosen
    demo.expect(r"This will save the rule (.+?)\. Remember it for:")
    assert demo.child.match.group(1) == "execute_command(rm -rf build/)"
    demo.expect(r"\[2\] this project")
    demo.expect("Type 1-2")
    demo.sendline("2")
    demo.expect("client@example.com")
    demo.expect(MENU)
    demo.sendline("e")  # no $EDITOR here: the JSON is typed at the prompt
    demo.expect("json> ")
    demo.sendline('{"to": "boss@example.com", "subject": "0.2 done", "body": "Shipped."}')
    demo.sendline("")  # the blank line that ends the block, as the prompt says
    demo.expect("judged again")  # the edited call is shown as it will run
    demo.expect(r"Approve the edited call\? \[y/N\]")
    demo.sendline("y")
    demo.expect("Which version should I tag")
    demo.sendline("2")
    text = demo.finish()

    # the four verdicts, one line each, in the order things happened
    lines = [
        verdict_line(text, "allow", "read_file README.md"),
        verdict_line(text, "notify", "edit_file CHANGELOG.md (+3 -0)"),
        verdict_line(text, "ask", "execute_command rm -rf build/"),
        verdict_line(text, "deny", "execute_command rm -rf ~"),
    ]
    assert [text.index(line) for line in lines] == sorted(text.index(line) for line in lines)
    assert "ran, kept for review" in lines[1]
    assert "deletes the home directory" in lines[3]
    assert "after your decision: exit code: 0" in verdict_line(text, "ran", "execute_command rm")

    # the summary, then next steps that name the workspace
    summary = text[text.index("What happened in run") :]
    assert re.search(r"ran without asking +read_file README\.md, list_dir \.", summary)
    assert re.search(r"ran, to review +edit_file CHANGELOG\.md \(\+3 -0\)", summary)
    assert re.search(r"asked a person +execute_command rm -rf build/ \(ran\)", summary)
    assert re.search(r"refused by policy +execute_command rm -rf ~", summary)
    for command in ("review", "audit --run run_", "serve"):
        assert re.search(rf"signoff {command}.* --workspace {re.escape(str(ws))}", summary)

    # the model's last message once, and true
    closing = "Done. Changelog: 0.2 entry written; build artifacts cleaned; release email sent"
    assert text.count(closing) == 1
    assert "sent to boss@example.com" in text and "you chose to tag 1.0.0" in text

    assert not (ws / "build").exists()
    assert (home / "precious.txt").read_text() == "must survive"  # rm -rf ~ never ran
    outbox = (ws / ".signoff" / "outbox.mbox").read_text()
    assert "boss@example.com" in outbox and "client@example.com" not in outbox  # the edit ran
    assert "execute_command(rm -rf build/)" in (ws / ".signoff" / "settings.local.toml").read_text()
    results = tool_results(ws)
    assert "denied by policy" in results["call_home"]
    assert results["call_ask"] == "1.0.0"


def test_a_rejected_email_is_not_reported_as_sent(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    demo = Demo(ws, home)
    demo.expect("rm -rf build/")
    demo.expect(MENU)
    demo.sendline("s")
    demo.expect("client@example.com")
    demo.expect(MENU)
    demo.sendline("n")
    demo.expect("[Rr]eason")
    demo.sendline("the client is on holiday")
    demo.expect("Which version should I tag")
    demo.sendline("/s")
    text = demo.finish()
    closing = text[text.index("model: Done.") :].split("\n", 1)[0]
    assert "emailed" not in closing.replace("not emailed", "")
    assert "client not emailed (you rejected it: the client is on holiday)" in closing
    assert "build not cleaned (you skipped it" in closing
    assert "no version chosen (you skipped it" in closing
    assert ".." not in closing
    assert text.count(closing.removeprefix("model: ")) == 1
    assert "the client is on holiday" in verdict_line(text, "not run", "send_email client@")
    assert not (ws / ".signoff" / "outbox.mbox").exists()
    assert (ws / "build").exists()
    assert "the client is on holiday" in tool_results(ws)["call_email"]


def test_script_reads_what_happened() -> None:
    """The closing message is built from the tool results only: nothing claimed unseen."""
    done = {
        "call_changelog": "edited CHANGELOG.md",
        "call_clean": "exit code: 1\nrm: cannot remove",
        "call_email": "Tool call send_email was skipped by the reviewer; continue without it.",
        "call_ask": "Tool call ask_human was rejected by the reviewer: I will tag it myself.",
    }
    words = closing_words(done)
    assert "cleaning the build did not succeed (exit code: 1)" in words
    assert "client not emailed (you skipped it: continue without it)" in words
    assert "no version chosen (you rejected it: I will tag it myself)" in words
    assert ".." not in words
    messages = [{"role": "tool", "tool_call_id": k, "content": v} for k, v in done.items()]
    assert script(messages)["content"] != words  # steps without results come first
    assert outcome(None) == (False, "no result yet")


def test_an_editor_edits_the_arguments_and_the_new_call_is_judged_before_approval(
    tmp_path: Path, home: Path
) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\n"
        "path = sys.argv[1]\n"
        "text = open(path).read()\n"
        "assert text.startswith('{\\n  ')  # pretty-printed, one argument a line\n"
        "open(path, 'w').write(text.replace('client@example.com', 'boss@example.com'))\n"
    )
    ws = tmp_path / "ws"
    demo = Demo(ws, home, EDITOR=f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}")
    demo.expect("rm -rf build/")
    demo.expect(MENU)
    demo.sendline("e")  # the editor finds no address in the command: nothing changes
    demo.expect("Opening")
    demo.expect(MENU)  # the editor left the command as it was: back to the menu
    demo.sendline("y")
    demo.expect("client@example.com")
    demo.expect(MENU)
    demo.sendline("e")
    demo.expect("judged again")
    demo.expect(r'"boss@example\.com"')  # the new box, with the new arguments
    demo.expect(r"To: boss@example\.com")  # and the new preview
    demo.expect(r"Approve the edited call\? \[y/N\]")
    demo.sendline("y")
    demo.expect("Which version should I tag")
    demo.sendline("1")
    text = demo.finish()
    assert "The arguments are unchanged" in text
    outbox = (ws / ".signoff" / "outbox.mbox").read_text()
    assert "boss@example.com" in outbox and "client@example.com" not in outbox
    assert "release email sent to boss@example.com" in text


def signoff(
    *args: str, cwd: Path, home: Path, words: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        words if words is not None else [sys.executable, "-m", "signoff", *args],
        cwd=cwd,
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def printed_commands(text: str) -> dict[str, list[str]]:
    """The commands the demo printed, by subcommand, as a shell would split them."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.startswith("  ") or "signoff" not in line or " --workspace " not in line:
            continue
        words = shlex.split(line)
        start = next(i for i, w in enumerate(words) if os.path.basename(w) == "signoff")
        sub = next(w for w in words[start + 1 :] if not w.startswith("-"))
        found[sub] = words
    return found


def test_ctrl_c_twice_stops_the_run_durably_and_the_printed_commands_resume_it(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    demo = Demo(ws, home)
    demo.expect("rm -rf build/")
    demo.expect(MENU)
    demo.child.sendintr()
    demo.expect(r"Interrupted: the call is rejected\.")
    demo.expect(r"stop the agent")
    demo.child.sendintr()
    demo.expect("Stopping the agent")
    text = demo.finish()
    assert "Stopped. Nothing waiting was run, and nothing is lost." in text
    assert (ws / "build").exists()
    commands = printed_commands(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    approve = signoff(cwd=elsewhere, home=home, words=commands["approve"])
    assert approve.returncode == 0, approve.stderr
    resumed = signoff(cwd=elsewhere, home=home, words=commands["resume"])
    assert resumed.returncode == 0, resumed.stderr
    assert not (ws / "build").exists()  # the stopped request was still there, undecided
    assert not (elsewhere / ".signoff").exists()


def pasted_until_finished(
    text: str, tmp_path: Path, home: Path
) -> tuple[dict[str, list[str]], Path]:
    """Decide every request and resume the run with the printed commands, run in another
    directory: approve the asks, answer the question."""
    commands = printed_commands(text)
    assert {"inbox", "show", "approve", "resume"} <= set(commands)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for _ in range(6):
        inbox = signoff(cwd=elsewhere, home=home, words=[*commands["inbox"], "--json"])
        assert inbox.returncode == 0, inbox.stderr
        pending = [r for r in json.loads(inbox.stdout) if r["state"] == "pending"]
        if not pending:
            break
        for request in pending:
            words = list(commands["approve"])
            verb = words.index("approve")
            if request["call"]["name"] == "ask_human":
                words[verb : verb + 2] = ["answer", request["id"], "0.2.0"]
            else:
                words[verb + 1] = request["id"]
            done = signoff(cwd=elsewhere, home=home, words=words)
            assert done.returncode == 0, done.stderr
        resumed = signoff(cwd=elsewhere, home=home, words=commands["resume"])
        assert resumed.returncode == 0, resumed.stderr
    return commands, elsewhere


def test_without_a_terminal_the_printed_commands_finish_the_run_from_another_directory(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "my ws's $HOME"  # quoted for the shell, or the commands break
    first = signoff("demo", "--workspace", str(ws), cwd=tmp_path, home=home)
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "SCRIPTED" in out and f"the SQLite file {ws}/.signoff/signoff.db" in out
    assert "{'" not in out  # no Python repr
    assert "waiting: req_" in out and "execute_command rm -rf build/" in out
    verdict_line(out, "notify", "edit_file CHANGELOG.md (+3 -0)")
    assert (ws / "build").exists()  # nothing asked has run
    commands, elsewhere = pasted_until_finished(out, tmp_path, home)
    show = signoff(cwd=elsewhere, home=home, words=commands["show"])
    assert show.returncode == 0 and "rm -rf build/" in show.stdout
    assert not (elsewhere / ".signoff").exists()  # no store was made where they were pasted
    run_id = commands["resume"][commands["resume"].index("resume") + 1]
    store = open_store(str(ws / ".signoff" / "signoff.db"))
    try:
        run = store.get_run(run_id)
        assert run.status == "finished"
        assert run.note is not None and "release email sent to client@example.com" in run.note
    finally:
        store.close()
    assert not (ws / "build").exists()
    assert (home / "precious.txt").exists()
    results = tool_results(ws)
    assert "denied by policy" in results["call_home"]
    again = signoff("resume", run_id, "--workspace", str(ws), cwd=tmp_path, home=home)
    assert again.returncode == 2 and "finished" in again.stderr


def test_the_printed_commands_name_a_postgresql_store(tmp_path: Path, home: Path) -> None:
    backend = Backend("postgres", tmp_path)
    try:
        ws = tmp_path / "ws"
        first = signoff(
            "demo", "--workspace", str(ws), "--db", backend.url, cwd=tmp_path, home=home
        )
        assert first.returncode == 0, first.stderr
        out = first.stdout
        assert "signoff.db" not in out  # the run is not in the workspace's SQLite file
        assert "It is saved in the PostgreSQL database postgresql://postgres@127.0.0.1" in out
        assert shlex.quote(backend.url) in out  # quoted: the URL has a ? in it
        assert not (ws / ".signoff" / "signoff.db").exists()
        commands, _ = pasted_until_finished(out, tmp_path, home)
        run_id = commands["resume"][commands["resume"].index("resume") + 1]
        store = backend.open()
        assert store.get_run(run_id).status == "finished"
        assert not (ws / ".signoff" / "signoff.db").exists()
    finally:
        backend.close()


@pytest.mark.parametrize("db", ["elsewhere.db", "sqlite:///elsewhere.db"])
def test_a_relative_store_path_is_printed_absolute(tmp_path: Path, home: Path, db: str) -> None:
    ws = tmp_path / "ws"
    first = signoff("demo", "--workspace", str(ws), "--db", db, cwd=tmp_path, home=home)
    assert first.returncode == 0, first.stderr
    assert f"saved in the SQLite file {tmp_path}/elsewhere.db" in first.stdout
    commands = printed_commands(first.stdout)
    assert str(tmp_path / "elsewhere.db") in commands["inbox"][-1]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    inbox = signoff(cwd=elsewhere, home=home, words=commands["inbox"])
    assert inbox.returncode == 0 and "rm -rf build/" in inbox.stdout, inbox.stderr


def test_a_memory_store_prints_no_commands_that_cannot_work(tmp_path: Path, home: Path) -> None:
    first = signoff(
        "demo", "--workspace", str(tmp_path / "ws"), "--db", "memory:", cwd=tmp_path, home=home
    )
    assert first.returncode == 0, first.stderr
    assert "memory (lost when the demo ends)" in first.stdout
    assert printed_commands(first.stdout) == {}


def test_the_finished_demo_next_steps_run_from_another_directory(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    demo = Demo(ws, home)
    for _ in range(2):
        demo.expect(MENU)
        demo.sendline("y")
    demo.expect("Which version")
    demo.sendline("1")
    text = demo.finish()
    steps = printed_commands(text[text.index("Next steps") :])
    assert set(steps) == {"review", "audit", "serve"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    review = signoff(cwd=elsewhere, home=home, words=steps["review"])
    assert review.returncode == 0, review.stderr
    assert "CHANGELOG.md" in review.stdout
    audit = signoff(cwd=elsewhere, home=home, words=steps["audit"])
    assert audit.returncode == 0, audit.stderr
    assert "execute_command" in audit.stdout and "entries" in audit.stdout
    assert not (elsewhere / ".signoff").exists()


def test_the_signoff_it_names_is_absolute_when_not_on_path(tmp_path: Path, home: Path) -> None:
    """Run as .venv/bin/signoff from its own directory: the printed path works anywhere."""
    venv_bin = Path(sys.executable).parent
    script_path = venv_bin / "signoff"
    if not script_path.exists() or not os.access(script_path, os.X_OK):
        pytest.skip("no signoff script next to the interpreter")
    assert stat.S_ISREG(script_path.stat().st_mode)
    env = env_for(home, PATH="/usr/bin:/bin")
    done = subprocess.run(
        [
            os.path.relpath(script_path, venv_bin.parent),
            "demo",
            "--workspace",
            str(tmp_path / "ws"),
        ],
        cwd=venv_bin.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    inbox = printed_commands(done.stdout)["inbox"]
    assert os.path.isabs(inbox[0]) and os.path.samefile(inbox[0], script_path)
    pasted = subprocess.run(
        inbox, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert pasted.returncode == 0 and "rm -rf build/" in pasted.stdout, pasted.stderr


def test_stopped_at_the_question_the_printed_answer_finishes_the_run(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    demo = Demo(ws, home)
    for _ in range(2):
        demo.expect(MENU)
        demo.sendline("y")
    demo.expect("Which version")
    demo.expect("/q stop")
    demo.sendline("/q")
    text = demo.finish()
    assert "Stopped." in text and "until a person decides" in text
    commands = printed_commands(text)
    assert "approve" not in commands  # a question is answered, not approved
    assert "0.2.0" in commands["answer"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for step in ("answer", "resume"):
        done = signoff(cwd=elsewhere, home=home, words=commands[step])
        assert done.returncode == 0, done.stderr
    assert tool_results(ws)["call_ask"] == "0.2.0"
