"""`signoff chat`: slash commands in process, and the real thing through a pseudo-terminal
against the FAKE OpenAI-compatible server (scripted replies, no LLM)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from signoff.channels import Prompt
from signoff.cli.chat import ChatSession, FlushingChannel, StreamPrinter, build_session, main
from signoff.llm import ScriptedModel
from signoff.llm.fake_server import FakeOpenAIServer, fake_call, scripted_reply
from signoff.models import Decision, Request, ToolCall, Verdict
from signoff.testing import ScriptedChannel

# A home directory that does not exist and is not under a temp dir: `rm -rf ~` is then
# judged as deleting the home directory, and even a failure of the policy deletes nothing.
SAFE_HOME = "/nonexistent-signoff-test-home/user"
MENU = "[y] approve"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SIGNOFF_MODEL", "SIGNOFF_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", SAFE_HOME)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "app.o").write_text("object\n")
    (tmp_path / "README.md").write_text("# demo project\n")
    return tmp_path


def session(
    workspace: Path, replies: list[dict[str, Any]], *answers: Decision
) -> tuple[ChatSession, io.StringIO, ScriptedModel, ScriptedChannel]:
    out = io.StringIO()
    model = ScriptedModel(replies)
    channel = ScriptedChannel(answers)
    chat = build_session(
        model,
        workspace=str(workspace),
        out=out,
        channel=channel,
        model_label=model.label,
        user_settings=False,
    )
    return chat, out, model, channel


def rm(command: str, id: str) -> dict[str, Any]:
    return scripted_reply(None, fake_call("execute_command", {"command": command}, id))


# ------------------------------------------------------------------ in process


def test_help_and_unknown_commands(workspace: Path) -> None:
    chat, out, _, _ = session(workspace, [])
    assert chat.handle("/help")
    assert chat.handle("/frobnicate")
    text = out.getvalue()
    for command in ("/hitl on|off|status", "/mode", "/grants revoke ID", "/inbox", "/clear"):
        assert command in text
    assert "Unknown command /frobnicate" in text
    assert chat.handle("/exit") is False


def test_hitl_off_runs_asks_without_a_prompt_but_deny_stays(workspace: Path) -> None:
    replies = [
        rm("rm -rf build", "c1"),
        scripted_reply("cleaned"),
        rm("rm -rf ~", "c2"),
        scripted_reply("I will not do that."),
    ]
    chat, out, model, channel = session(workspace, replies)
    chat.handle("/hitl off")
    chat.handle("clean the build")
    assert not (workspace / "build").exists()
    chat.handle("now wipe my home")
    assert channel.prompts == []  # nothing was asked
    tool_results = [m for m in model.calls[-1] if m["role"] == "tool"]
    assert "denied by policy" in tool_results[-1]["content"]
    assert "home directory" in tool_results[-1]["content"]
    assert "approvals: off" in out.getvalue()


def test_mode_plan_refuses_writes(workspace: Path) -> None:
    write = fake_call("write_file", {"path": "NOTES.md", "content": "x"}, "w1")
    chat, out, model, _ = session(workspace, [scripted_reply(None, write), scripted_reply("ok")])
    chat.handle("/mode plan")
    assert "mode: plan" in out.getvalue()
    chat.handle("write notes")
    assert not (workspace / "NOTES.md").exists()
    assert "plan mode" in model.calls[-1][-1]["content"]
    chat.handle("/mode nonsense")
    assert "Unknown mode nonsense" in out.getvalue()
    assert chat.gate.policy.mode == "plan"


def test_grants_list_revoke_and_clear(workspace: Path) -> None:
    always = Decision("approve_always", scope="session", rule="execute_command(rm -rf build)")
    replies = [rm("rm -rf build", "c1"), scripted_reply("done")]
    chat, out, _, _ = session(workspace, replies, always)
    chat.handle("clean")
    chat.handle("/grants")
    grant = chat.gate.grants[0]
    assert f"{grant.id}  session  execute_command(rm -rf build)" in out.getvalue()
    chat.handle("/grants revoke nope")
    assert "No grant nope" in out.getvalue()
    chat.handle(f"/grants revoke {grant.id}")
    assert chat.gate.grants == []
    chat.gate.grants.append(grant)  # as if granted again
    chat.handle("/clear")
    assert chat.gate.grants == [] and [m["role"] for m in chat.messages] == ["system"]
    assert "Cleared the conversation and 1 grant." in out.getvalue()


def test_inbox_reads_the_sessions_own_store(workspace: Path) -> None:
    chat, out, _, _ = session(workspace, [])
    chat.handle("/inbox")
    assert "No pending requests." in out.getvalue()
    assert chat.record is not None and chat.store_url == str(workspace / ".signoff" / "signoff.db")
    call = ToolCall("send_email", {"to": "client@example.com", "subject": "hi", "body": "x"}, "c")
    verdict = Verdict("ask", "high", None, ("reaches the outside world",), "external")
    chat.record.create_request(Request(id="", call=call, verdict=verdict, preview="mail"))
    chat.handle("/inbox")
    assert "send_email" in out.getvalue() and "client@example.com" in out.getvalue()


def test_a_session_is_on_the_record(workspace: Path) -> None:
    # every verdict, question, answer and outcome of an interactive session is in the audit
    # log, and the statistics count its questions
    from signoff.audit import describe, read_log, verify_store
    from signoff.audit.stats import load_stats

    chat, _, _, _ = session(
        workspace,
        [
            scripted_reply(None, fake_call("read_file", {"path": "README.md"}, "c1")),
            rm("rm -rf build", "c2"),
            rm("rm -rf ~", "c3"),
            scripted_reply("done"),
        ],
        Decision("reject", reason="keep the build"),
    )
    chat.handle("clean up")
    assert chat.record is not None
    log = [e for e in read_log(chat.record) if e.run_id == chat.session_id]
    kinds = [e.kind for e in log]
    assert kinds.count("verdict") == 3
    effects = [e.data["verdict"]["effect"] for e in log if e.kind == "verdict"]
    assert effects == ["allow", "ask", "deny"]
    (decided,) = [e for e in log if e.kind == "session.decided"]
    assert decided.data["call"]["arguments"] == {"command": "rm -rf build"}
    assert decided.data["decision"]["kind"] == "reject"
    assert decided.data["decision"]["reason"] == "keep the build"
    assert describe(decided) == (
        'reject: execute_command {"command": "rm -rf build"}: keep the build'
    )
    outcomes = [e.data["outcome"] for e in log if e.kind == "session.outcome"]
    assert outcomes == ["ran", "rejected", "denied"]
    assert verify_store(chat.record).ok
    stats = load_stats(chat.record)
    assert (stats.questions, stats.decisions) == (1, {"reject": 1})
    assert (workspace / "build" / "app.o").exists()


def test_a_change_made_without_asking_can_be_reviewed_and_reverted(workspace: Path) -> None:
    from signoff.review import revert, review_items

    chat, _, _, _ = session(
        workspace,
        [
            scripted_reply(
                None,
                fake_call("write_file", {"path": "README.md", "content": "# rewritten\n"}, "c1"),
            ),
            scripted_reply("done"),
        ],
    )
    chat.handle("rewrite the readme")
    assert (workspace / "README.md").read_text() == "# rewritten\n"
    assert chat.record is not None
    (item,) = review_items(chat.record)
    assert item.event.run_id == chat.session_id and item.event.data["call"]["name"] == "write_file"
    revert(chat.record, item.event.seq, actor="ann", workspace=str(workspace))
    assert (workspace / "README.md").read_text() == "# demo project\n"


def test_a_project_always_from_chat_is_a_listed_revocable_grant(workspace: Path) -> None:
    from signoff.approvals import revoke_grant

    chat, _, _, _ = session(
        workspace,
        [rm("rm -rf build", "c1"), scripted_reply("done")],
        Decision(
            "approve_always", actor="ann", scope="project", rule="execute_command(rm -rf build)"
        ),
    )
    chat.handle("clean")
    assert chat.record is not None
    local = workspace / ".signoff" / "settings.local.toml"
    assert "rm -rf build" in local.read_text()
    (grant,) = chat.record.list_grants(scope="project")
    assert (grant.rule, grant.created_by) == ("execute_command(rm -rf build)", "ann")
    revoke_grant(chat.record, grant.id, actor="ann", workspace=str(workspace))
    assert "rm -rf build" not in local.read_text()


def test_stream_is_ended_before_the_approval_box() -> None:
    out = io.StringIO()
    printer = StreamPrinter(out)
    seen: list[str] = []

    class Inner:
        def decide(self, prompt: Prompt) -> Decision:
            seen.append(out.getvalue())
            return Decision("approve")

    printer.write("Let me clean up")
    FlushingChannel(Inner(), printer).decide(prompt=None)  # type: ignore[arg-type]
    assert seen == ["Let me clean up\n"]


def test_model_text_cannot_drive_the_terminal(workspace: Path) -> None:
    chat, out, _, _ = session(workspace, [scripted_reply("hi\x1b[2J\x1b]0;pwned\x07 there")])
    chat.handle("hello")
    assert "\x1b" not in out.getvalue() and "\\x1b[2J" in out.getvalue()


def test_stopped_session_says_so(workspace: Path) -> None:
    calls = [fake_call("execute_command", {"command": "rm -rf /"}, f"c{i}") for i in range(3)]
    chat, out, model, _ = session(workspace, [scripted_reply(None, *calls)])
    chat.handle("do it")
    chat.handle("again")
    assert out.getvalue().count("Session stopped") == 2 and len(model.calls) == 1
    chat.handle("/clear")
    assert chat.gate.stopped is None


def test_friendly_error_without_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", "."]) == 2
    err = capsys.readouterr().err
    assert "no model configured" in err and "SIGNOFF_MODEL" in err


def test_friendly_error_when_the_endpoint_is_down(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    env = dict(os.environ, SIGNOFF_MODEL="m", OPENAI_BASE_URL=url)
    done = subprocess.run(
        [sys.executable, "-c", "from signoff.cli.chat import main; raise SystemExit(main())"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "cannot reach the model endpoint" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------------ a real terminal


class Terminal:
    """`signoff chat` in a pseudo-terminal, talking to a FAKE server."""

    def __init__(self, server: FakeOpenAIServer, workspace: Path) -> None:
        pexpect = pytest.importorskip("pexpect")
        self.pexpect = pexpect
        env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_LANG", "NO_COLOR")}
        env.update(
            TERM="dumb",
            HOME=SAFE_HOME,
            SIGNOFF_MODEL=server.model,
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="sk-fake",
        )
        self.log = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable,
            [
                "-c",
                "from signoff.cli.chat import main; raise SystemExit(main())",
                "--workspace",
                str(workspace),
            ],
            env=env,
            cwd=str(workspace),
            encoding="utf-8",
            timeout=30,
            dimensions=(60, 120),
        )
        self.child.logfile_read = self.log
        self.expect("you> ")

    def expect(self, pattern: str) -> None:
        self.child.expect_exact(pattern)

    def say(self, line: str, then: str = "you> ") -> str:
        """Send a line; return what was printed until `then`."""
        start = len(self.log.getvalue())
        self.child.sendline(line)
        self.expect(then)
        return self.log.getvalue()[start:]

    def close(self) -> int:
        self.child.sendline("/exit")
        self.child.expect(self.pexpect.EOF)
        self.child.close()
        return int(self.child.exitstatus)


def test_terminal_approve_with_y(workspace: Path) -> None:
    replies = [
        scripted_reply(
            "Reading, then cleaning.",
            fake_call("read_file", {"path": "README.md"}, "r1"),
            fake_call("execute_command", {"command": "rm -rf build"}, "c1"),
        ),
        scripted_reply("The build directory is gone."),
    ]
    with FakeOpenAIServer(replies) as server:
        term = Terminal(server, workspace)
        shown = term.say("please clean the build", then=MENU)
        # streamed text was ended before the box, and the box shows the command
        assert "Reading, then cleaning.\n" in shown.replace("\r\n", "\n")
        assert "rm -rf build" in shown
        assert (workspace / "build").exists()  # nothing ran before the answer
        after = term.say("y")
        assert "The build directory is gone." in after
        assert term.close() == 0
        results = [m for m in server.messages() if m["role"] == "tool"]
    assert not (workspace / "build").exists()
    assert [m["tool_call_id"] for m in results] == ["r1", "c1"]
    assert results[0]["content"] == "# demo project\n"


def test_terminal_hitl_off_and_deny(workspace: Path) -> None:
    replies = [
        rm("rm -rf build", "c1"),
        scripted_reply("Cleaned."),
        rm("rm -rf ~", "c2"),
        scripted_reply("Refused, as it should be."),
    ]
    with FakeOpenAIServer(replies) as server:
        term = Terminal(server, workspace)
        assert "approvals: off" in term.say("/hitl off")
        out = term.say("clean the build")
        assert "Cleaned." in out and MENU not in out
        assert not (workspace / "build").exists()
        out = term.say("and wipe my home directory")
        assert MENU not in out and "denied" in out
        assert term.say("/hitl status").count("approvals: off") == 1
        assert term.close() == 0
        denied = server.messages()[-1]
    assert denied["tool_call_id"] == "c2" and "denied by policy" in denied["content"]


def test_terminal_mode_grants_clear_help(workspace: Path) -> None:
    write = fake_call("write_file", {"path": "NOTES.md", "content": "notes\n"}, "w1")
    replies = [
        scripted_reply(None, write),
        scripted_reply("Plan mode: I cannot write."),
        rm("rm -rf build", "c1"),
        scripted_reply("Cleaned."),
        scripted_reply("Hello again."),
    ]
    with FakeOpenAIServer(replies) as server:
        term = Terminal(server, workspace)
        assert "mode: plan" in term.say("/mode plan")
        out = term.say("write some notes")
        assert "Plan mode: I cannot write." in out and MENU not in out
        assert "mode: default" in term.say("/mode default")
        term.say("clean the build", then=MENU)
        assert "[1] this session" in term.say("a", then="Type 1-2")
        assert "Cleaned." in term.say("1")
        assert "execute_command(rm -rf build)" in term.say("/grants")
        assert "1 grant." in term.say("/clear")
        assert "No grants in this session." in term.say("/grants")
        assert "/hitl on|off|status" in term.say("/help")
        assert "Hello again." in term.say("hi")
        assert term.close() == 0
        fresh = server.messages()
    assert not (workspace / "NOTES.md").exists()
    assert not (workspace / "build").exists()
    assert [m["role"] for m in fresh] == ["system", "user"]  # /clear emptied the transcript
