"""Every way a hook can end is a blocking answer its client documents (issue 26, item 5).

A 5,000-deep tool input killed every hook with exit 1 and a traceback (a RecursionError in
the JSON parser): Claude Code reads exit 1 as a non-blocking error. Here the hooks run as
the client runs them, `signoff hook <client>` in a process of its own, and over HTTP, fed
deep, huge, badly typed and badly encoded input; a Hypothesis fuzz drives the same
entries in process with many more inputs. What each client reads as blocked:

- Claude Code: exit 2 with the reason on stderr (a `PermissionRequest`: a JSON deny);
  over HTTP, a 200 whose JSON denies.
- Codex CLI: exit 2 with the reason on stderr (a `PermissionRequest`: a JSON deny).
- Gemini CLI: exit 2 with the reason on stderr.
- Cursor: `{"permission": "deny", ...}` on stdout and exit 2.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from signoff.adapters import claude_code, codex, cursor, gemini, shells

SRC = str(Path(__file__).resolve().parents[1] / "src")
CLIENTS = ("claude-code", "codex", "gemini", "cursor")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    root = tmp_path / "project"
    (root / ".signoff").mkdir(parents=True)
    (root / ".signoff" / "settings.toml").write_text('[hooks]\nwait = "1s"\n')
    return Path(os.path.realpath(root))


def pre_event(client: str, project: Path, tool_input: Any) -> dict[str, Any]:
    """A pre-call event of each client, with `tool_input` as given."""
    if client == "cursor":
        return {
            "hook_event_name": "beforeMCPExecution",
            "conversation_id": "c1",
            "generation_id": "g1",
            "cwd": str(project),
            "tool_name": "x",
            "tool_input": json.dumps(tool_input) if not isinstance(tool_input, str) else "",
        }
    return {
        "hook_event_name": "BeforeTool" if client == "gemini" else "PreToolUse",
        "session_id": "s1",
        "tool_use_id": "t1",
        "timestamp": "2026-12-01T13:00:00Z",
        "cwd": str(project),
        "tool_name": "Bash" if client != "gemini" else "run_shell_command",
        "tool_input": tool_input,
    }


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def deep_text(levels: int) -> str:
    """`levels` nested objects as JSON text (json.dumps itself recurses)."""
    return '{"a":' * levels + '"x"' + "}" * levels


def run_hook(
    client: str, data: bytes, project: Path, *more: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "signoff", "hook", client, "--workspace", str(project), *more],
        input=data,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": SRC},
        check=False,
    )


def assert_blocked(client: str, code: int, stdout: bytes, stderr: bytes) -> None:
    """The client's documented block (exit 2 with a reason, or a JSON deny), never a
    traceback, never an allow."""
    assert b"Traceback" not in stderr and b"Traceback" not in stdout, stderr.decode()[-2000:]
    text = stdout.decode("ascii").strip()
    out = json.loads(text) if text else None
    if client == "cursor":
        assert code == 2 and out is not None and out["permission"] == "deny", (code, text)
        return
    if code == 0:  # a JSON deny
        assert out is not None, "exit 0 without an answer lets the call through"
        assert _denies(out), out
        return
    assert code == 2, (code, text, stderr.decode()[-2000:])
    assert out is None, "exit 2 blocks; no answer on stdout to be read instead"
    assert stderr.decode().strip(), "the reason is on stderr (Codex and Gemini need it)"


def _denies(out: dict[str, Any]) -> bool:
    if out.get("decision") == "deny":  # Gemini
        return True
    answer = out.get("hookSpecificOutput") or {}
    if answer.get("hookEventName") == "PreToolUse":
        return bool(answer.get("permissionDecision") == "deny")
    return bool((answer.get("decision") or {}).get("behavior") == "deny")


# ------------------------------------------------------------------ real processes


@pytest.mark.slow  # a process per case
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("levels", [100, 990, 5000, 100_000])
def test_a_deeply_nested_input_is_a_blocking_answer(
    project: Path, client: str, levels: int
) -> None:
    doc = json.dumps(pre_event(client, project, "DEEP"))
    if client == "cursor":
        data = doc.replace('"tool_input": ""', f'"tool_input": {json.dumps(deep_text(levels))}')
    else:
        data = doc.replace('"DEEP"', deep_text(levels))
    done = run_hook(client, data.encode(), project)
    assert_blocked(client, done.returncode, done.stdout, done.stderr)
    assert b"nested" in done.stderr or b"deep" in done.stderr, done.stderr


@pytest.mark.slow  # a process per case
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    "data",
    [
        b"[" * 200_000,  # deep and unterminated
        b'{"hook_event_name": "PreToolUse", "tool_input": {"x": "\xff\xfe"}}',  # not UTF-8
        b"\x00\x01garbage",
        b"",
        b"null",
        b'{"hook_event_name": ["PreToolUse"]}',
        b'{"hook_event_name": "PreToolUse", "session_id": 1, "tool_input": NaN}',
    ],
    ids=["deep-open", "bad-utf8", "binary", "empty", "null", "wrong-type", "nan"],
)
def test_malformed_input_is_a_blocking_answer(project: Path, client: str, data: bytes) -> None:
    done = run_hook(client, data, project)
    assert_blocked(client, done.returncode, done.stdout, done.stderr)


@pytest.mark.slow  # a process per case
@pytest.mark.parametrize("client", CLIENTS)
def test_a_huge_string_is_judged_not_a_crash(project: Path, client: str) -> None:
    command = "rm -rf /" + "x" * 300_000
    data = json.dumps(pre_event(client, project, {"command": command}))
    done = run_hook(client, data.encode(), project)
    assert b"Traceback" not in done.stderr, done.stderr.decode()[-2000:]
    text = done.stdout.decode("ascii").strip()
    out = json.loads(text) if text else {}
    if client in ("claude-code", "gemini"):  # asked in the client's own dialog
        decision = out.get("decision") or out["hookSpecificOutput"]["permissionDecision"]
        assert decision == "ask", out
    else:  # the inbox waited, nobody decided
        assert_blocked(client, done.returncode, done.stdout, done.stderr)


@pytest.mark.slow  # a process per case
def test_a_permission_request_that_cannot_be_judged_is_a_json_deny(project: Path) -> None:
    for client in ("claude-code", "codex"):
        doc = {
            "hook_event_name": "PermissionRequest",
            "session_id": "s1",
            "cwd": str(project),
            "tool_name": "Bash",
            "tool_input": "DEEP",
        }
        data = json.dumps(doc).replace('"DEEP"', deep_text(300))
        done = run_hook(client, data.encode(), project, "--ask", "inbox")  # native: the dialog
        assert done.returncode == 0, done.stderr
        assert_blocked(client, done.returncode, done.stdout, done.stderr)


@pytest.mark.slow  # a real server
def test_the_http_hook_answers_deep_and_broken_input_with_a_deny(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web_helpers import LiveServer

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SIGNOFF_HOOK_TOKEN", "hook-token")
    with LiveServer(tmp_path) as live, live.client("hook-token") as client:
        ws = Path(os.path.realpath(live.workspace))
        bodies = [
            json.dumps(pre_event("claude-code", ws, "DEEP")).replace('"DEEP"', deep_text(5000)),
            "[" * 100_000,
            b'{"tool_input": "\xff"}',
        ]
        for body in bodies:
            response = client.post("/hooks/claude-code", content=body)
            assert response.status_code == 200, response.text[:300]
            answer = response.json()["hookSpecificOutput"]
            assert answer["permissionDecision"] == "deny", answer
            assert "Traceback" not in answer["permissionDecisionReason"]


# ------------------------------------------------------------------ in process: a fuzz

_MAINS = {
    "claude-code": lambda stdin, out, err, ws: claude_code.main(
        workspace=ws, stdin=stdin, stdout=out, stderr=err
    ),
    "codex": lambda stdin, out, err, ws: shells.main(
        codex.SHELL, workspace=ws, stdin=stdin, stdout=out, stderr=err
    ),
    "gemini": lambda stdin, out, err, ws: shells.main(
        gemini.SHELL, workspace=ws, stdin=stdin, stdout=out, stderr=err
    ),
    "cursor": lambda stdin, out, err, ws: shells.main(
        cursor.SHELL, workspace=ws, stdin=stdin, stdout=out, stderr=err
    ),
}


def run_in_process(client: str, data: bytes, project: Path) -> tuple[int, bytes, bytes]:
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = _MAINS[client](stdin, out, err, str(project))
    return code, out.getvalue().encode("ascii"), err.getvalue().encode()


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fast_loop import examples  # noqa: E402

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
WRONG = st.one_of(
    json_values,
    st.integers(min_value=10_000, max_value=2_000_000).map(lambda n: "\u00e9" * n),  # huge
    st.integers(min_value=60, max_value=3000).map(deep),
)


@st.composite
def broken_events(draw: st.DrawFn, client: str, project: Path) -> bytes:
    """A pre-call event with something wrong, or no event at all: every one must block."""
    kind = draw(st.sampled_from(["bytes", "json", "field", "deep"]))
    if kind == "bytes":  # invalid UTF-8 and anything else
        return draw(st.binary(max_size=200))
    if kind == "json":
        value = draw(json_values)
        return json.dumps(value).encode()
    event = pre_event(client, project, {"command": "git status"})
    if kind == "deep":
        levels = draw(st.integers(min_value=65, max_value=50_000))
        text = json.dumps(event)
        if client == "cursor":
            return text.replace('"command', '"DEEP": ' + deep_text(levels) + ', "command').encode()
        return text.replace('"git status"', deep_text(levels)).encode()
    required = {
        "claude-code": ["hook_event_name", "session_id", "tool_use_id", "tool_name", "tool_input"],
        "codex": ["hook_event_name", "session_id", "tool_name", "tool_input"],
        "gemini": ["hook_event_name", "session_id", "tool_name", "tool_input"],
        "cursor": ["hook_event_name", "conversation_id", "tool_name", "tool_input"],
    }[client]
    key = draw(st.sampled_from(required))
    # a non-empty string is a valid name or id: what is wrong is its type, or that it is empty
    wrong = draw(WRONG.filter(lambda v: key == "tool_input" or not (isinstance(v, str) and v)))
    if key == "tool_input" and isinstance(wrong, dict):
        wrong = [wrong]
    if key == "tool_input" and client == "cursor" and isinstance(wrong, str):
        wrong = wrong + "{"  # never JSON text of an object
    event[key] = wrong
    try:
        return json.dumps(event).encode()
    except (ValueError, RecursionError):
        return b"{" + b'"a":{' * 3000


@pytest.mark.parametrize("client", CLIENTS)
def test_fuzzed_hook_input_always_blocks(project: Path, client: str) -> None:
    @settings(
        max_examples=examples(300),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=broken_events(client, project))
    def check(data: bytes) -> None:
        code, out, err = run_in_process(client, data, project)
        assert_blocked(client, code, out, err)

    check()


@pytest.mark.slow  # a process per example
@pytest.mark.parametrize("client", CLIENTS)
def test_fuzzed_hook_input_always_blocks_in_a_real_process(project: Path, client: str) -> None:
    @settings(
        max_examples=examples(30),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=broken_events(client, project))
    def check(data: bytes) -> None:
        done = run_hook(client, data, project)
        assert_blocked(client, done.returncode, done.stdout, done.stderr)

    check()
