"""The terminal dialog: every key, the fail-safes, edits, "always", questions, languages."""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, cast

import pytest
from rich.cells import cell_len

from signoff.channels import Prompt, StopRequested
from signoff.channels.terminal import (
    INTERRUPTED_REASON,
    NO_REVIEWER,
    UNREADABLE_REASON,
    TerminalChannel,
)
from signoff.models import Decision, GrantScope, Request, ToolCall, Verdict

ACTOR = "alice"


def make_request(
    name: str = "write_file",
    arguments: Mapping[str, Any] | None = None,
    *,
    risk: Any = "high",
    suggested_rule: str | None = None,
) -> Request:
    return Request(
        id="req_1",
        call=ToolCall(name, dict(arguments) if arguments is not None else {"path": "a.txt"}),
        verdict=Verdict(
            "ask",
            risk,
            "ask: write_file(**)",
            ("outside the workspace",),
            tier="write",
            suggested_rule=suggested_rule,
        ),
        preview="+hello\n",
    )


def accept_all(arguments: Mapping[str, Any]) -> str | None:
    return None


def decide(
    answers: str,
    request: Request | None = None,
    *,
    validate: Any = accept_all,
    always_rule: str | None = "write_file(a.txt)",
    always_scope: GrantScope = "project",
    lang: str | None = "en",
    schema: Mapping[str, Any] | None = None,
) -> tuple[Decision, str]:
    out = io.StringIO()
    channel = TerminalChannel(io.StringIO(answers), out, lang=lang, actor=ACTOR, width=80)
    prompt = Prompt(
        request or make_request(),
        validate,
        always_rule=always_rule,
        always_scope=always_scope,
        schema=schema,
    )
    return channel.decide(prompt), out.getvalue()


# ----------------------------------------------------------------------------- keys

KEYS = [
    ("y\n", "approve"),
    ("\ny\n", "approve"),  # Enter alone decides nothing; the y after it does
    ("\n\n\ns\n", "skip"),
    ("Y\n", "approve"),
    ("yes\n", "approve"),
    ("ｙ\n", "approve"),  # full-width letter from a Chinese IME
    ("是\n", "approve"),
    ("s\n", "skip"),
    ("?\ny\n", "approve"),
    ("x\ny\n", "approve"),
    ("n\nnot this file\n", "reject"),
    ("a\ny\n", "approve_always"),
    ('e\n{"path": "b.txt"}\n\ny\n', "edit"),
]


@pytest.mark.parametrize(("answers", "kind"), KEYS)
def test_each_key_gives_its_decision(answers: str, kind: str) -> None:
    decision, _ = decide(answers)
    assert decision.kind == kind
    assert decision.actor == ACTOR
    assert decision.decided_at is not None


def test_reject_carries_the_reason() -> None:
    decision, out = decide("n\nwrong directory\n")
    assert decision == Decision(
        "reject", actor=ACTOR, reason="wrong directory", decided_at=decision.decided_at
    )
    assert "Reason (required" in out


def test_reject_requires_a_reason() -> None:
    decision, out = decide("n\n\n   \nbecause\n")
    assert decision.kind == "reject" and decision.reason == "because"
    assert out.count("A reason is required.") == 2


def test_help_lists_every_key() -> None:
    _, out = decide("?\ns\n")
    for key in ["y ", "a ", "n ", "s ", "e ", "?", "Enter alone decides nothing"]:
        assert key in out


# ----------------------------------------------------------------------------- always


def test_always_shows_the_exact_rule_and_scope_before_saving() -> None:
    decision, out = decide("a\ny\n", always_rule="write_file(src/**)", always_scope="project")
    assert decision.kind == "approve_always"
    assert decision.rule == "write_file(src/**)" and decision.scope == "project"
    assert "write_file(src/**)" in out and "this project" in out
    assert out.index("write_file(src/**)") < out.index("Save it and approve?")


def test_always_declined_goes_back_to_the_menu() -> None:
    decision, out = decide("a\nn\ns\n")
    assert decision.kind == "skip"
    assert "Cancelled" in out


def test_always_falls_back_to_the_suggested_rule() -> None:
    request = make_request(suggested_rule="write_file(docs/*)")
    decision, _ = decide("a\ny\n", request, always_rule=None, always_scope="session")
    assert decision.rule == "write_file(docs/*)" and decision.scope == "session"


def test_always_without_a_rule_is_refused() -> None:
    decision, out = decide("a\ny\n", always_rule=None)
    assert decision.kind == "approve"
    assert "No rule can be remembered" in out


def test_always_rule_is_escaped() -> None:
    _, out = decide("a\nn\ns\n", always_rule="x\x1b[2K(y)")
    assert "\x1b" not in out and "x\\x1b[2K(y)" in out


# ----------------------------------------------------------------------------- edit


def no_etc(arguments: Mapping[str, Any]) -> str | None:
    if str(arguments.get("path", "")).startswith("/etc"):
        return "path /etc/passwd is outside the workspace"
    return None


def test_edit_with_invalid_json_then_a_valid_retry() -> None:
    decision, out = decide('e\n{"path": \n oops\n\n{"path": "b.txt"}\n\ny\n')
    assert decision.kind == "edit" and decision.arguments == {"path": "b.txt"}
    assert "Not valid JSON" in out


def test_edit_with_validator_error_then_a_valid_retry() -> None:
    decision, out = decide(
        'e\n{"path": "/etc/passwd"}\n\n{"path": "ok.txt"}\n\ny\n', validate=no_etc
    )
    assert decision.kind == "edit" and decision.arguments == {"path": "ok.txt"}
    assert "outside the workspace" in out and "not accepted" in out


def test_edit_multi_line_object() -> None:
    decision, _ = decide('e\n{\n  "path": "b.txt",\n  "content": "中文"\n}\n\ny\n')
    assert decision.arguments == {"path": "b.txt", "content": "中文"}


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("[1, 2]\n", "must be a JSON object"),
        ('{"a": NaN}\n', "Not valid JSON"),
        ('"just a string"\n', "must be a JSON object"),
    ],
)
def test_edit_refusals_then_cancel_back_to_the_menu(block: str, message: str) -> None:
    decision, out = decide(f"e\n{block}\n\ns\n")
    assert decision.kind == "skip"
    # The blank line ends the block; the next one cancels; "s" is then read by the menu.
    assert message in out


def test_edit_cancel_with_a_blank_line() -> None:
    decision, out = decide("e\n\ns\n")
    assert decision.kind == "skip" and "Cancelled" in out


def test_edit_validator_that_crashes_never_approves() -> None:
    def broken(arguments: Mapping[str, Any]) -> str | None:
        raise RuntimeError("schema unavailable")

    decision, out = decide('e\n{"path": "b"}\n\n\ns\n', validate=broken)
    assert decision.kind == "skip" and "schema unavailable" in out


def test_edit_shows_current_arguments_and_schema_fields() -> None:
    schema = {"properties": {"path": {}, "content": {}}, "required": ["path"]}
    _, out = decide("e\n\ns\n", schema=schema)
    assert '"path": "a.txt"' in out and "path*, content" in out


# ----------------------------------------------------------------------------- fail-safes


def test_five_unreadable_answers_reject() -> None:
    decision, out = decide("x\n" * 5 + "y\n")
    assert decision.kind == "reject" and decision.reason == UNREADABLE_REASON
    assert decision.actor == "signoff"
    assert "Five unreadable answers" in out


def test_four_unreadable_answers_still_allow_a_decision() -> None:
    decision, _ = decide("x\n" * 4 + "s\n")
    assert decision.kind == "skip"


def test_five_empty_reasons_reject_rather_than_loop() -> None:
    decision, _ = decide("n\n" + "\n" * 10)
    assert decision.kind == "reject" and decision.reason == UNREADABLE_REASON


@pytest.mark.parametrize(
    "answers",
    ["", "x\n", "n\n", "n\n\n", "a\n", 'e\n{"path":', "e\n", "?\n"],
    ids=[
        "immediate",
        "after-bad",
        "in-reason",
        "in-empty-reason",
        "in-always",
        "in-edit",
        "edit-start",
        "after-help",
    ],
)
def test_end_of_input_rejects(answers: str) -> None:
    decision, out = decide(answers)
    assert decision.kind == "reject" and decision.reason == NO_REVIEWER
    assert "No reviewer available" in out


def test_stdin_that_is_not_a_terminal_never_approves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    out = io.StringIO()
    decision = TerminalChannel(output=out, lang="en").decide(Prompt(make_request(), accept_all))
    assert decision.kind == "reject" and decision.reason == NO_REVIEWER
    assert "write_file" in out.getvalue()  # what would have been asked is still shown


def test_no_stdin_at_all_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", None)
    decision = TerminalChannel(output=io.StringIO()).decide(Prompt(make_request(), accept_all))
    assert decision.reason == NO_REVIEWER


def test_require_tty_with_injected_pipe_rejects() -> None:
    channel = TerminalChannel(io.StringIO("y\n"), io.StringIO(), require_tty=True)
    assert channel.decide(Prompt(make_request(), accept_all)).reason == NO_REVIEWER


class Interrupting:
    """A reviewer who presses Ctrl-C (None) or types a line, in turn."""

    def __init__(self, *keys: str | None) -> None:
        self.keys = list(keys)

    def readline(self) -> str:
        key = self.keys.pop(0) if self.keys else ""
        if key is None:
            raise KeyboardInterrupt
        return key

    def isatty(self) -> bool:
        return True


def interrupted(*keys: str | None) -> tuple[Decision, str]:
    out = io.StringIO()
    channel = TerminalChannel(cast(TextIO, Interrupting(*keys)), out, actor=ACTOR, lang="en")
    return channel.decide(Prompt(make_request(), accept_all)), out.getvalue()


@pytest.mark.parametrize("after", ["\n", "", "x\n"])  # Enter, end of input, anything else
def test_ctrl_c_rejects_the_call_and_lets_the_agent_go_on(after: str) -> None:
    decision, out = interrupted(None, after)
    assert decision.kind == "reject" and decision.reason == INTERRUPTED_REASON
    assert "Ctrl-C or q] stop the agent" in out


@pytest.mark.parametrize("keys", [(None, None), (None, "q\n"), ("q\n",), ("stop\n",)])
def test_a_second_ctrl_c_or_the_stop_key_stops_the_agent(keys: tuple[str | None, ...]) -> None:
    out = io.StringIO()
    channel = TerminalChannel(cast(TextIO, Interrupting(*keys)), out, actor=ACTOR, lang="en")
    with pytest.raises(StopRequested):
        channel.decide(Prompt(make_request(), accept_all))
    assert "Stopping the agent; this call stays undecided." in out.getvalue()


def test_stop_is_a_keyboard_interrupt_that_no_except_exception_turns_into_a_decision() -> None:
    assert issubclass(StopRequested, KeyboardInterrupt)
    assert not issubclass(StopRequested, Exception)


def test_endless_help_is_bounded() -> None:
    decision, _ = decide("?\n" * 1000)
    assert decision.kind == "reject"


@pytest.mark.parametrize("risk", ["low", "medium", "high", "critical"])
def test_enter_alone_never_approves(risk: str) -> None:
    decision, out = decide("\n" * 5, make_request(risk=risk))
    assert decision.kind == "reject" and decision.reason == NO_REVIEWER  # input ran out
    assert out.count("Enter alone decides nothing") == 5
    decision, _ = decide("\n\r\n  \ny\n", make_request(risk=risk))
    assert decision.kind == "approve"


def test_endless_enter_is_bounded() -> None:
    decision, _ = decide("\n" * 1000)
    assert decision.kind == "reject" and decision.actor == "signoff"


def test_edit_shows_the_rejudged_call_and_needs_an_explicit_y() -> None:
    judged: list[Mapping[str, Any]] = []

    def judge(arguments: Mapping[str, Any]) -> Request:
        judged.append(arguments)
        return make_request(arguments=arguments, risk="critical", suggested_rule=None)

    out = io.StringIO()
    channel = TerminalChannel(
        io.StringIO('e\n{"path": "new.txt"}\n\n\ns\n'), out, lang="en", actor=ACTOR, width=80
    )
    decision = channel.decide(Prompt(make_request(), accept_all, judge_edit=judge))
    text = out.getvalue()
    # The blank line that ends the block is not the confirmation; the next Enter cancels.
    assert decision.kind == "skip" and judged == [{"path": "new.txt"}]
    assert "judged again" in text and "new.txt" in text and "CRITICAL" in text
    assert text.index("new.txt") > text.index("json>")
    assert "Cancelled" in text


def test_edit_whose_judge_fails_never_approves() -> None:
    def judge(arguments: Mapping[str, Any]) -> Request:
        raise RuntimeError("policy unavailable")

    out = io.StringIO()
    channel = TerminalChannel(
        io.StringIO('e\n{"path": "b"}\n\ny\ns\n'), out, lang="en", actor=ACTOR, width=80
    )
    decision = channel.decide(Prompt(make_request(), accept_all, judge_edit=judge))
    # "y" lands on the menu again after the refusal: it approves the ORIGINAL call, shown.
    assert decision.kind == "approve" and decision.arguments is None
    assert "policy unavailable" in out.getvalue()


# ----------------------------------------------------------------------------- output safety


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_terminal_output_carries_only_our_own_styling() -> None:
    request = make_request("evil\x1b[2K\r", {"v": "\x1b]0;title\x07 [red]x[/red] \x1b[2K\r"})
    out = FakeTTY()
    channel = TerminalChannel(io.StringIO("s\n"), out, lang="en", width=80)
    channel.decide(Prompt(request, accept_all))
    text = out.getvalue()
    assert "\r" not in text and "\x07" not in text and "\x1b]" not in text
    assert "\x1b[2K" not in text
    # Every escape left is an SGR colour sequence that rich wrote.
    assert re.sub(r"\x1b\[[0-9;]*m", "", text).count("\x1b") == 0
    assert "[red]x[/red]" in text


def test_box_in_the_dialog_is_aligned() -> None:
    request = make_request(arguments={"path": "/用户/项目/🚀.md"})
    _, out = decide("s\n", request)
    box_lines = [line for line in out.splitlines() if line and line[0] in "╭│├╰"]
    assert box_lines and {cell_len(line) for line in box_lines} == {80}


# ----------------------------------------------------------------------------- ask_human


def question(options: list[str] | None = None) -> Request:
    arguments: dict[str, Any] = {"question": "部署到哪个环境？ Which environment?"}
    if options is not None:
        arguments["options"] = options
    return Request(
        id="q1",
        call=ToolCall("ask_human", arguments),
        verdict=Verdict("ask", "low", None, ("the agent asks a question",), tier="read"),
    )


@pytest.mark.parametrize(
    ("answers", "options", "kind", "result"),
    [
        ("2\n", ["staging", "production"], "respond", "production"),
        ("use 中文 staging\n", ["staging", "production"], "respond", "use 中文 staging"),
        ("9\n1\n", ["staging", "production"], "respond", "staging"),
        ("42\n", None, "respond", "42"),
        ("n\n", None, "respond", "n"),  # a bare letter is an answer, not a command
        ("\n  \nok\n", None, "respond", "ok"),
        ("/s\n", ["a"], "skip", None),
        ("/?\n/s\n", ["a"], "skip", None),
    ],
)
def test_ask_human_answers(answers: str, options: list[str] | None, kind: str, result: Any) -> None:
    decision, out = decide(answers, question(options))
    assert decision.kind == kind and decision.result == result
    assert "部署到哪个环境？ Which environment?" in out


def test_ask_human_shows_numbered_options() -> None:
    _, out = decide("1\n", question(["staging", "production"]))
    assert "1. staging" in out and "2. production" in out
    assert "the agent asks you" in out


def test_ask_human_reject_needs_a_reason() -> None:
    decision, _ = decide("/n\n\nnot your business\n", question())
    assert decision.kind == "reject" and decision.reason == "not your business"


def test_ask_human_five_empty_answers_reject() -> None:
    decision, _ = decide("\n" * 5, question())
    assert decision.kind == "reject" and decision.reason == UNREADABLE_REASON


def test_ask_human_question_is_escaped() -> None:
    request = Request(
        id="q",
        call=ToolCall("ask_human", {"question": "ok?\x1b[2K\r", "options": ["\x1b]0;x\x07"]}),
        verdict=Verdict("ask", "low", None, ()),
    )
    _, out = decide("1\n", request)
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out


# ----------------------------------------------------------------------------- language


def test_chinese_with_lang_argument() -> None:
    decision, out = decide("x\nn\n不要写这个文件\n", lang="zh")
    assert decision.reason == "不要写这个文件"
    for text in ["需要审批", "[y] 批准", "无法识别的输入", "拒绝原因", "已拒绝"]:
        assert text in out


def test_chinese_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIGNOFF_LANG", "zh_CN")
    decision, out = decide("", lang=None)
    assert decision.reason == NO_REVIEWER  # reasons for the model stay English
    assert "需要审批" in out and "没有可用的审批人" in out


def test_english_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIGNOFF_LANG", raising=False)
    _, out = decide("s\n", lang=None)
    assert "approval needed" in out and "需要审批" not in out


def test_chinese_always_and_edit_dialogs() -> None:
    _, out = decide("a\nn\ne\n[1]\n\n\ns\n", lang="zh")
    for text in ["将保存规则", "本项目", "已取消", "当前参数", "参数必须是 JSON 对象", "已跳过"]:
        assert text in out


# ----------------------------------------------------------------------------- concurrency


def test_concurrent_prompts_are_not_interleaved() -> None:
    out = io.StringIO()
    decisions: list[Decision] = []

    def worker(name: str) -> None:
        channel = TerminalChannel(io.StringIO("s\n"), out, lang="en", width=60)
        request = make_request(name)
        decisions.append(channel.decide(Prompt(request, accept_all)))

    threads = [threading.Thread(target=worker, args=(f"tool_{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [d.kind for d in decisions] == ["skip"] * 4
    # Each dialog is one block: box top, box bottom, menu, "Skipped." before the next box.
    pattern = r"(╭[^╭]*╰[^╭]*Skipped\.\n)"
    assert len(re.findall(pattern, out.getvalue())) == 4


# ----------------------------------------------------------------------------- real terminal

REAL_TTY_SCRIPT = r"""
from signoff.channels import Prompt, StopRequested
from signoff.channels.terminal import TerminalChannel
from signoff.models import Request, ToolCall, Verdict

command = "echo \x1b[2K\r\x1b]0;pwned\x07 中文"
request = Request(
    id="r", call=ToolCall("execute_command", {"command": command}),
    verdict=Verdict("ask", "high", None, ("runs a command",)),
)
decision = TerminalChannel(lang="en").decide(Prompt(request, lambda a: None))
print("DECISION", decision.kind)
"""


def test_in_a_real_terminal_the_default_streams_work_and_escapes_stay_inert() -> None:
    import os
    import sys

    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_LANG", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    log = io.StringIO()
    child = pexpect.spawn(
        sys.executable,
        ["-c", REAL_TTY_SCRIPT],
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 100),
        env=env,
    )
    child.logfile_read = log
    child.expect("approve")
    child.sendline("y")
    child.expect("DECISION approve")
    child.expect(pexpect.EOF)
    text = log.getvalue()
    assert "\x1b[2K" not in text and "\x1b]0;" not in text and "\x07" not in text
    assert "\\x1b[2K\\r\\x1b]0;pwned\\x07" in re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_an_edit_judged_deny_cannot_be_confirmed() -> None:
    def judge(arguments: Mapping[str, Any]) -> Request:
        request = make_request(arguments=arguments)
        return Request(
            request.id,
            request.call,
            Verdict("deny", "critical", "deny: write_file(/etc/**)", ("denied",)),
        )

    out = io.StringIO()
    channel = TerminalChannel(
        io.StringIO('e\n{"path": "/etc/x"}\n\ny\ns\n'), out, lang="en", actor=ACTOR, width=80
    )
    decision = channel.decide(Prompt(make_request(), accept_all, judge_edit=judge))
    # The box shows the deny; the original call's box is drawn again (on a terminal, keys
    # typed before it are dropped) and the "y" read after it approves that call.
    text = out.getvalue()
    assert decision.kind == "approve" and decision.arguments is None
    assert "deny: write_file(/etc/**)" in text and "Cancelled" in text
    assert text.count("╭") == 3  # original, edited (denied), original again


# ----------------------------------------------------------------------------- always: scope


def decide_scoped(answers: str) -> tuple[Decision, str]:
    out = io.StringIO()
    channel = TerminalChannel(io.StringIO(answers), out, lang="en", actor=ACTOR, width=80)
    prompt = Prompt(
        make_request(),
        accept_all,
        always_rule="write_file(a.txt)",
        always_scope="run",
        always_scopes=("run", "project"),
    )
    return channel.decide(prompt), out.getvalue()


@pytest.mark.parametrize(
    ("answers", "scope"),
    [("a\n1\n", "run"), ("a\n2\n", "project"), ("a\nproject\n", "project"), ("a\nRUN\n", "run")],
)
def test_always_lets_the_person_choose_the_scope(answers: str, scope: str) -> None:
    decision, out = decide_scoped(answers)
    assert decision.kind == "approve_always" and decision.scope == scope
    assert decision.rule == "write_file(a.txt)"
    assert "[1] this run" in out and "[2] this project (.signoff/settings.local.toml)" in out


@pytest.mark.parametrize("pick", ["", "3", "0", "y", "session"])
def test_always_with_no_valid_scope_saves_nothing(pick: str) -> None:
    decision, out = decide_scoped(f"a\n{pick}\ns\n")
    assert decision.kind == "skip" and "Cancelled" in out


def test_the_gate_offers_the_session_and_the_project(tmp_path: Path) -> None:
    from signoff.gate import Gate
    from signoff.policy import Policy
    from signoff.settings import LOCAL_FILE, Settings, load_settings

    policy = Policy(Settings(), workspace=tmp_path)
    out = io.StringIO()
    channel = TerminalChannel(io.StringIO("a\n2\n"), out, lang="en", actor=ACTOR, width=80)
    gate = Gate(policy, channel)
    result = gate.execute(
        ToolCall("execute_command", {"command": "rm -rf build/"}), lambda **kw: "done"
    )
    assert result.outcome == "ran", result
    assert "[1] this session" in out.getvalue()
    assert "execute_command(rm -rf build/)" in (tmp_path / LOCAL_FILE).read_text()
    assert [r.text for r in load_settings(tmp_path, user=False).allow] == [
        "execute_command(rm -rf build/)"
    ]


# ----------------------------------------------------------------------------- edit: $EDITOR


def test_editor_is_not_used_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", "/nonexistent/editor")
    decision, out = decide('e\n{"path": "b.txt"}\n\ny\n')
    assert decision.kind == "edit" and decision.arguments == {"path": "b.txt"}
    assert "Opening" not in out


EDITOR_SCRIPT = """
import sys
from signoff.channels import Prompt
from signoff.channels.terminal import TerminalChannel
from signoff.models import Request, ToolCall, Verdict

def judge(arguments):
    return Request(id="r", call=ToolCall("write_file", dict(arguments)),
                   verdict=Verdict("ask", "high", "judged:" + arguments.get("path", "?"), ()))

request = Request(
    id="r", call=ToolCall("write_file", {"path": "a.txt", "content": "x"}),
    verdict=Verdict("ask", "high", None, ("writes a file",)),
)
def validate(arguments):
    return None if arguments.get("path") != "/etc/passwd" else "path is outside the workspace"

decision = TerminalChannel(lang="en").decide(Prompt(request, validate, judge_edit=judge))
print("DECISION", decision.kind, decision.arguments)
"""


def run_with_editor(tmp_path: Path, editor: str, keys: list[tuple[str, str]]) -> str:
    import os
    import sys

    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_LANG", "VISUAL")}
    env.update(TERM="xterm", EDITOR=editor)
    log = io.StringIO()
    child = pexpect.spawn(
        sys.executable,
        ["-c", EDITOR_SCRIPT],
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 100),
        env=env,
        cwd=str(tmp_path),
    )
    child.logfile_read = log
    for expected, line in keys:
        child.expect(expected)
        child.sendline(line)
    child.expect("DECISION")
    child.expect(pexpect.EOF)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", log.getvalue())


def editor_writing(tmp_path: Path, new_text: str) -> str:
    import shlex
    import sys

    script = tmp_path / "ed.py"
    script.write_text(
        "import sys, json\n"
        "path = sys.argv[1]\n"
        "shown = open(path).read()\n"
        "assert json.loads(shown) == {'path': 'a.txt', 'content': 'x'}\n"
        'assert shown.startswith(\'{\\n  "path": "a.txt",\\n\')\n'
        f"open(path, 'w').write({new_text!r})\n"
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def test_editor_edit_shows_the_rejudged_call_before_asking(tmp_path: Path) -> None:
    editor = editor_writing(tmp_path, '{"path": "b.txt", "content": "y"}\n')
    text = run_with_editor(
        tmp_path, editor, [("approve", "e"), (r"Approve the edited call\? \[y/N\]", "y")]
    )
    assert "Opening" in text and "judged:b.txt" in text
    assert "DECISION edit {'path': 'b.txt', 'content': 'y'}" in text


def test_editor_refused_edit_offers_another_try_or_the_menu(tmp_path: Path) -> None:
    editor = editor_writing(tmp_path, '{"path": "/etc/passwd", "content": "y"}\n')
    text = run_with_editor(
        tmp_path, editor, [("approve", "e"), (r"\[e\] edit again", ""), ("approve", "s")]
    )
    assert "path is outside the workspace" in text and "Cancelled" in text
    assert "DECISION skip None" in text


@pytest.mark.parametrize("content", ["", "{not json"])
def test_editor_empty_or_bad_json_never_approves(tmp_path: Path, content: str) -> None:
    editor = editor_writing(tmp_path, content)
    keys = [("approve", "e")]
    if content:
        keys.append((r"\[e\] edit again", ""))
    keys.append(("approve", "s"))
    text = run_with_editor(tmp_path, editor, keys)
    assert "DECISION skip None" in text


def test_an_editor_that_cannot_start_falls_back_to_the_prompt(tmp_path: Path) -> None:
    text = run_with_editor(
        tmp_path,
        "/nonexistent/editor --wait",
        [
            ("approve", "e"),
            ("json> ", '{"path": "c.txt", "content": "z"}'),
            ("> ", ""),
            (r"Approve the edited call\? \[y/N\]", "y"),
        ],
    )
    assert "The editor did not run" in text
    assert "DECISION edit {'path': 'c.txt', 'content': 'z'}" in text


def test_slash_q_at_a_question_stops_the_agent() -> None:
    out = io.StringIO()
    channel = TerminalChannel(io.StringIO("/q\n"), out, lang="en", actor=ACTOR, width=80)
    with pytest.raises(StopRequested):
        channel.decide(Prompt(question(["0.2.0", "1.0.0"]), accept_all))
    text = " ".join(out.getvalue().split())  # the key line wraps at 80 columns
    assert "/q stop" in text and "Stopping the agent" in text
