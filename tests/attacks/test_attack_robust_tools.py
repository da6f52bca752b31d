"""Attacks on the tools' and the driver's robustness (issue 11, item 9), performed for real.

- a FIFO (or socket) in the workspace must not hang `read_file`, `search_code`,
  `edit_file` or `write_file`: each tool runs in a thread joined with a timeout, so a
  regression fails the test instead of hanging the suite;
- invalid Unicode (lone surrogates) and 5,000-deep arguments from the model are refused to
  the model with a clear result, and the run never stays `running` with nobody driving it;
- after a crash in the middle of a turn of allowed calls, only the call in flight can run
  again (real processes killed with SIGKILL, executions counted).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import InvalidInput
from signoff.gate import Gate
from signoff.llm import ScriptedModel
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import open_store
from signoff.testing import ScriptedChannel
from signoff.workspace import Workspace

HARNESS = Path(__file__).resolve().parent.parent / "helpers" / "crash_turn_harness.py"
sys.path.insert(0, str(HARNESS.parent.parent))
from store_helpers import Backend  # noqa: E402

JOIN_SECONDS = 20.0  # a regression hangs for ever; the refusal comes in milliseconds


def in_thread(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """Run `fn` in a daemon thread: ("ok", value) or ("raised", exc); a hang fails."""
    box: list[tuple[str, Any]] = []

    def target() -> None:
        try:
            box.append(("ok", fn(*args, **kwargs)))
        except Exception as exc:
            box.append(("raised", exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(JOIN_SECONDS)
    assert not thread.is_alive(), f"{getattr(fn, '__name__', fn)} hung on a special file"
    return box[0]


# ---------------------------------------------------------------------- FIFOs and sockets


@pytest.fixture
def fifo_ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("needle = 1\n")
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "src" / "deep_pipe")
    os.symlink("pipe", root / "link_to_pipe")
    return root


@pytest.mark.parametrize(
    "call",
    [
        ("read_file", {"path": "pipe"}),
        ("read_file", {"path": "link_to_pipe"}),
        ("read_file", {"path": "src/deep_pipe"}),
        ("edit_file", {"path": "pipe", "old": "a", "new": "b"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("write_file", {"path": "link_to_pipe", "content": "x"}),
    ],
)
def test_file_tools_refuse_a_fifo_promptly(fifo_ws: Path, call: tuple[str, dict[str, Any]]) -> None:
    workspace = Workspace(fifo_ws)
    name, args = call
    kind, value = in_thread(getattr(workspace, name), **args)
    assert kind == "raised" and isinstance(value, InvalidInput), value
    assert "fifo, not a regular file" in str(value)
    assert os.path.exists(fifo_ws / "pipe") and not os.path.isfile(fifo_ws / "pipe")


@pytest.mark.parametrize("path", [None, ".", "src", "pipe", "link_to_pipe"])
def test_search_code_skips_fifos_and_says_so(fifo_ws: Path, path: str | None) -> None:
    kind, value = in_thread(Workspace(fifo_ws).search_code, "needle", path)
    assert kind == "ok", value
    assert "not searched, not regular files" in value
    if path in (None, ".", "src"):
        assert "src/a.py:1:needle = 1" in value


def test_read_file_refuses_a_socket(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(root / "sock"))
        kind, value = in_thread(Workspace(root).read_file, "sock")
        assert kind == "raised" and "socket, not a regular file" in str(value)
    finally:
        server.close()


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("delete_file", {"path": "pipe"}),
        ToolCall("write_file", {"path": "pipe", "content": "x"}),
        ToolCall("edit_file", {"path": "link_to_pipe", "old": "a", "new": "b"}),
    ],
)
def test_the_preview_of_a_call_on_a_fifo_returns_promptly(fifo_ws: Path, call: ToolCall) -> None:
    """The box a person sees is drawn from the file: a FIFO must not hang it."""
    workspace = Workspace(fifo_ws)
    spec = Policy(Settings(), workspace=fifo_ws).registry.get(call.name)
    kind, preview = in_thread(workspace.preview, call, spec)
    assert kind == "ok", preview
    assert "fifo" in preview


def test_deleting_a_fifo_asks_without_hanging(fifo_ws: Path) -> None:
    """delete_file always asks: the request's preview must be drawn without opening it."""
    workspace = Workspace(fifo_ws)
    channel = ScriptedChannel([Decision("reject", reason="no")])
    gate = Gate(Policy(Settings(), workspace=fifo_ws), channel, previewer=workspace.preview)
    kind, result = in_thread(
        gate.execute, ToolCall("delete_file", {"path": "pipe"}), workspace.delete_file
    )
    assert kind == "ok" and result.outcome == "rejected"
    assert "a fifo, not a regular file" in channel.prompts[0].request.preview
    assert os.path.exists(fifo_ws / "pipe")


def test_a_fifo_made_in_the_turn_does_not_hang_the_request(fifo_ws: Path) -> None:
    workspace = Workspace(fifo_ws)
    store = open_store(str(fifo_ws.parent / "s.db"))
    model = ScriptedModel(
        [
            {
                "content": "x",
                "tool_calls": [
                    {
                        "id": "a",
                        "function": {
                            "name": "execute_command",
                            "arguments": {"command": "mkfifo fresh"},
                        },
                    },
                    {
                        "id": "b",
                        "function": {"name": "delete_file", "arguments": {"path": "fresh"}},
                    },
                ],
            }
        ]
    )
    agent = Agent(
        model=model,
        tools=workspace.as_mapping(),
        policy=Policy(Settings(), workspace=fifo_ws),
        previewer=workspace.preview,
    )
    kind, run = in_thread(Runner(store, agent).start, [{"role": "user", "content": "go"}])
    assert kind == "ok", run
    assert run.status == "paused"
    (request,) = store.list_requests(state="pending")
    assert "fifo" in request.preview


def test_the_gate_reports_the_fifo_refusal_to_the_model(fifo_ws: Path) -> None:
    """read_file is allowed without asking: the refusal is the tool's result."""
    workspace = Workspace(fifo_ws)
    gate = Gate(Policy(Settings(), workspace=fifo_ws), previewer=workspace.preview)
    kind, result = in_thread(
        gate.execute, ToolCall("read_file", {"path": "pipe"}), workspace.read_file
    )
    assert kind == "ok"
    assert result.outcome == "failed" and "not a regular file" in result.content


def test_a_fifo_in_a_durable_run_does_not_hold_the_lease(fifo_ws: Path) -> None:
    workspace = Workspace(fifo_ws)
    store = open_store(str(fifo_ws.parent / "s.db"))
    model = ScriptedModel(
        [
            {
                "content": "x",
                "tool_calls": [
                    {"id": "a", "function": {"name": "read_file", "arguments": {"path": "pipe"}}},
                    {"id": "b", "function": {"name": "search_code", "arguments": {"pattern": "n"}}},
                ],
            },
            {"content": "done"},
        ]
    )
    agent = Agent(
        model=model,
        tools=workspace.as_mapping(),
        policy=Policy(Settings(), workspace=fifo_ws),
        previewer=workspace.preview,
    )
    kind, run = in_thread(Runner(store, agent).start, [{"role": "user", "content": "go"}])
    assert kind == "ok", run
    assert run.status == "finished"
    results = [m["content"] for m in store.load_messages(run.id) if m["role"] == "tool"]
    assert "not a regular file" in results[0] and "not searched" in results[1]


# ---------------------------------------------------------------------- invalid input


DEEP = '{"path": "a", "x": ' + "[" * 5000 + "]" * 5000 + "}"
BAD_CALLS: dict[str, dict[str, Any]] = {
    "surrogate in a command": {
        "name": "execute_command",
        "arguments": {"command": "touch pwned_\udc80"},
    },
    "escaped surrogate in the JSON text": {
        "name": "execute_command",
        "arguments": '{"command": "touch pwned_\\udc80"}',
    },
    "surrogate in the tool name": {
        "name": "execute_command\udc80",
        "arguments": {"command": "touch pwned_name"},
    },
    "surrogate in a key": {
        "name": "write_file",
        "arguments": {"path": "pwned_key", "content": "x", "\ud800": 1},
    },
    "high surrogate alone": {
        "name": "write_file",
        "arguments": {"path": "pwned_\ud83d", "content": "x"},
    },
    "5,000-deep arguments": {"name": "read_file", "arguments": DEEP},
    "65-deep arguments": {
        "name": "write_file",
        "arguments": '{"path": "pwned_deep", "content": "x", "n": ' + "[" * 65 + "]" * 65 + "}",
    },
}


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A real SQLite file, or a fresh schema on the real PostgreSQL server."""
    chosen = Backend(request.param, tmp_path)
    try:
        yield chosen
    finally:
        chosen.close()


def bad_run(
    backend: Backend, function: dict[str, Any], *, content: str = "working"
) -> tuple[Any, Any, Path]:
    root = backend.path.parent / "ws"
    root.mkdir()
    workspace = Workspace(root)
    store = backend.open()
    model = ScriptedModel(
        [
            {"content": content, "tool_calls": [{"id": "c1", "function": function}]},
            {"content": "done"},
        ]
    )
    agent = Agent(
        model=model,
        tools=workspace.as_mapping(),
        policy=Policy(Settings(), workspace=root),
        previewer=workspace.preview,
    )
    run = Runner(store, agent).start([{"role": "user", "content": "go"}])
    return store, run, root


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_invalid_model_input_is_refused_not_stuck(backend: Backend, case: str) -> None:
    store, run, root = bad_run(backend, BAD_CALLS[case])
    assert store.get_run(run.id).status == "finished"  # the model was told, and went on
    (result,) = [m["content"] for m in store.load_messages(run.id) if m["role"] == "tool"]
    assert "was not run" in result
    assert "invalid Unicode" in result or "nested" in result
    assert list(root.iterdir()) == []  # nothing was created: no call ran
    assert store.list_requests() == []  # and nobody was asked about garbage
    result.encode("utf-8")  # what the model reads back is valid text


def test_surrogates_in_the_model_text_are_kept_readable(backend: Backend) -> None:
    store, run, _ = bad_run(
        backend, {"name": "list_dir", "arguments": {}}, content="thinking \udc80 aloud"
    )
    assert store.get_run(run.id).status == "finished"
    (assistant, *_) = [m for m in store.load_messages(run.id) if m["role"] == "assistant"]
    assert assistant["content"] == "thinking \ufffd aloud"


def test_a_model_that_breaks_leaves_the_run_needing_attention(backend: Backend) -> None:
    """A driver error (here: the scripted model cannot even encode 5,000-deep arguments)
    must not leave the run `running` with nobody driving it."""
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    store, run_id, tmp_path = backend.open(), "run_broken", backend.path.parent
    model = ScriptedModel(
        [
            {
                "content": "x",
                "tool_calls": [
                    {
                        "id": "c1",
                        "function": {"name": "read_file", "arguments": {"path": "a", "x": deep}},
                    }
                ],
            }
        ]
    )
    root = tmp_path / "ws"
    root.mkdir()
    agent = Agent(
        model=model, tools=Workspace(root).as_mapping(), policy=Policy(Settings(), workspace=root)
    )
    with pytest.raises(RecursionError):
        Runner(store, agent).start([{"role": "user", "content": "go"}], run_id=run_id)
    run = store.get_run(run_id)
    assert run.status == "needs_attention"
    assert run.note is not None and "RecursionError" in run.note and "resume" in run.note


# ---------------------------------------------------------------------- crash mid-turn


def harness(
    db: Path | str, phase: str, boundary: str, effects: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HARNESS), str(db), phase, boundary, str(effects)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


BOUNDARIES = [f"{when}:{n}" for n in (1, 2, 3) for when in ("before", "after")]


@pytest.mark.slow  # crashes real processes
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_after_a_crash_only_the_call_in_flight_runs_again(backend: Backend, boundary: str) -> None:
    db, effects = backend.url, backend.path.parent / "effects.log"
    assert harness(db, "start", boundary, effects).returncode == -9  # SIGKILL
    time.sleep(0.6)  # the dead driver's lease (0.5 s) lapses; nothing is asserted on time
    resumed = harness(db, "resume", "none", effects)
    assert resumed.stdout.startswith("finished"), resumed.stderr
    counts = Counter(effects.read_text().splitlines())
    in_flight = int(boundary.split(":")[1])
    for n in (1, 2, 3):
        expected = 2 if boundary == f"after:{in_flight}" and n == in_flight else 1
        assert counts[f"call {n}"] == expected, (boundary, counts)
