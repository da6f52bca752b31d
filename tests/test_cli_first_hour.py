"""The command line's first hour (issue 14): every printed hint works pasted into another
directory, reads never create a store, `resume` and `worker` say what happened, questions
take answers (a number picks an option), and every command's help explains itself.

Real subprocesses over a real demo run (the scripted model: no network), in SQLite and
in PostgreSQL."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from signoff.approvals import decide
from signoff.cli.app import build_parser
from signoff.exceptions import InvalidInput
from signoff.llm.fake_server import FakeOpenAIServer
from signoff.models import Decision
from signoff.store import open_store
from store_helpers import PG_BASE, pg_url, postgres_or_skip

SIGNOFF = [sys.executable, "-m", "signoff"]


def run(words: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        words,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
    )


def signoff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([*SIGNOFF, *args], cwd)


def pasted(line: str, cwd: Path, **values: str) -> subprocess.CompletedProcess[str]:
    """Run a printed `signoff ...` hint as a person pastes it, placeholders filled in."""
    for name, value in values.items():
        line = line.replace(name, value)
    words = shlex.split(line)
    assert words[0] == "signoff", line
    return run([*SIGNOFF, *words[1:]], cwd)


def hints(text: str, verb: str) -> list[str]:
    """Every `signoff VERB ...` command in printed text (in backticks or on its own)."""
    found = re.findall(rf"`(signoff {verb}\b[^`]*)`", text)
    found += re.findall(rf"(?:^|: )(signoff {verb}\b[^`\n]*)$", text, re.M)
    return [f.strip() for f in found]


class Demo:
    """A demo run, paused on its first question, in a workspace whose path has a space."""

    def __init__(self, root: Path, db: str | None = None) -> None:
        self.workspace = root / "my projects" / "app"
        self.elsewhere = root / "elsewhere"
        self.elsewhere.mkdir(parents=True)
        self.db = db
        where = ["--workspace", str(self.workspace), *(["--db", db] if db else [])]
        self.where = where
        done = signoff("demo", *where, cwd=root)
        assert done.returncode == 0, done.stderr
        runs = json.loads(self.cli("runs", "--json").stdout)
        self.run_id = runs[0]["id"]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = signoff(*args, *self.where, cwd=self.elsewhere.parent)
        assert done.returncode == 0, done.stderr
        return done

    def pending(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.cli("inbox", "--json").stdout)
        return found


@pytest.fixture
def demo(tmp_path: Path) -> Demo:
    return Demo(tmp_path)


@pytest.fixture
def pg_schema() -> Iterator[str]:
    postgres_or_skip()
    import psycopg

    schema = f"signoff_hint_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema
    finally:
        with psycopg.connect(PG_BASE, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def pg_tables(schema: str) -> list[str]:
    import psycopg

    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
    return [r[0] for r in rows]


# ------------------------------------------------------------------ hints pasted anywhere


def _walk_the_hints(demo: Demo) -> None:
    """From the inbox to a finished step, only through printed hints, each pasted into a
    directory that is neither the workspace nor where it was printed."""
    inbox = demo.cli("inbox").stdout
    request = demo.pending()[0]["id"]
    approve = [line.strip() for line in inbox.splitlines() if "signoff approve ID" in line]
    assert approve, inbox
    decided = pasted(approve[0], demo.elsewhere, ID=request)
    assert decided.returncode == 0 and "Approved" in decided.stdout, decided.stderr

    review = hints(inbox, "review")
    assert review, inbox
    listed = pasted(review[0], demo.elsewhere)
    assert "CHANGELOG.md" in listed.stdout, listed.stdout + listed.stderr

    resume = hints(decided.stdout, "resume")
    assert resume, decided.stdout
    resumed = pasted(resume[0], demo.elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert "rm -rf build/] -> ran (approved by" in resumed.stdout, resumed.stdout

    # the run paused again, on the email: its own hints decide it and resume it
    shown = [line.strip() for line in resumed.stdout.splitlines() if "signoff show req_" in line]
    assert shown and "send_email" in pasted(shown[0], demo.elsewhere).stdout
    approve_next = [
        line.strip() for line in resumed.stdout.splitlines() if "signoff approve req_" in line
    ]
    assert pasted(approve_next[0], demo.elsewhere).returncode == 0
    again = [line.strip() for line in resumed.stdout.splitlines() if "signoff resume run_" in line]
    finished = pasted(again[0], demo.elsewhere)
    assert "send_email to=client@example.com] -> ran (approved by" in finished.stdout


def test_hints_work_pasted_into_another_directory(demo: Demo) -> None:
    _walk_the_hints(demo)


def test_hints_carry_a_postgres_store_too(tmp_path: Path, pg_schema: str) -> None:
    demo = Demo(tmp_path, db=pg_url(pg_schema))
    assert "--db" in demo.cli("inbox").stdout
    _walk_the_hints(demo)


def test_the_default_store_keeps_the_hint_short(demo: Demo) -> None:
    inside = signoff("inbox", cwd=demo.workspace)
    assert "  signoff approve ID\n" in inside.stdout, inside.stdout
    assert "--workspace" not in inside.stdout and "--db" not in inside.stdout


def test_audit_and_stats_hints_carry_the_store(demo: Demo) -> None:
    audit = demo.cli("audit").stdout
    verify = hints(audit, "audit verify")
    assert verify and "--workspace" in verify[0]
    checked = pasted(verify[0], demo.elsewhere)
    assert checked.returncode == 0 and "OK" in checked.stdout, checked.stdout + checked.stderr


# ------------------------------------------------------------------ reads create nothing

READS = [
    ["inbox"],
    ["show", "req_0"],
    ["runs"],
    ["review"],
    ["audit"],
    ["audit", "verify"],
    ["audit", "export"],
    ["stats"],
    ["grant", "list"],
    ["grant", "revoke", "grant_0"],
    ["approve", "req_0"],
    ["reject", "req_0", "--reason", "no"],
    ["answer", "req_0", "yes"],
    ["resume", "run_0"],
    ["resolve", "req_0", "done"],
    ["revert", "rev_1"],
    ["keys", "reanchor"],
]


@pytest.mark.parametrize("words", READS, ids=lambda w: " ".join(w))
def test_a_read_refuses_a_store_that_does_not_exist(tmp_path: Path, words: list[str]) -> None:
    typo = tmp_path / "typo"
    done = signoff(*words, "--workspace", str(typo), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(typo / ".signoff" / "signoff.db") in lines[0], lines
    assert "signoff migrate --workspace" in lines[0]
    assert not typo.exists()


def test_a_read_refuses_an_empty_postgres_database(tmp_path: Path, pg_schema: str) -> None:
    url = pg_url(pg_schema)
    for words in (["inbox"], ["audit"], ["stats"], ["runs"]):
        done = signoff(*words, "--db", url, cwd=tmp_path)
        assert done.returncode == 2 and "no signoff store at postgresql://" in done.stderr
        assert "signoff migrate --db" in done.stderr and "Traceback" not in done.stderr
    assert pg_tables(pg_schema) == []  # nothing created
    assert signoff("migrate", "--db", url, cwd=tmp_path).returncode == 0  # as the hint says
    assert signoff("inbox", "--db", url, cwd=tmp_path).returncode == 0


def test_the_missing_store_hint_creates_it(tmp_path: Path) -> None:
    typo = tmp_path / "new project"
    typo.mkdir()
    refused = signoff("inbox", "--workspace", str(typo), cwd=tmp_path)
    create = refused.stderr.split("create one there with: ")[1].strip()
    assert pasted(create, tmp_path).returncode == 0
    assert signoff("inbox", "--workspace", str(typo), cwd=tmp_path).returncode == 0


# ------------------------------------------------------------------ resume and worker


def test_resume_tells_what_ran_what_was_refused_and_where_the_run_stands(demo: Demo) -> None:
    demo.cli("approve", demo.pending()[0]["id"])
    out = demo.cli("resume", demo.run_id).stdout
    assert "[execute_command command=rm -rf build/] -> ran (approved by" in out  # what ran
    assert "exit code: 0" in out  # with its outcome
    assert "[execute_command command=rm -rf ~] -> refused by policy" in out  # and why:
    assert "deletes the home" in out
    assert "model: Emailing the client" in out  # the model's text
    assert f"Run {demo.run_id}: paused, waiting on a decision" in out
    assert "send_email to=client@example.com" in out and "signoff approve req_" in out


def test_resume_of_a_run_still_waiting_says_so(demo: Demo) -> None:
    out = demo.cli("resume", demo.run_id).stdout
    assert f"Nothing ran: run {demo.run_id} was already paused." in out
    assert "signoff approve req_" in out


def test_the_worker_prints_one_line_per_run_and_quiet_silences_it(tmp_path: Path) -> None:
    loud, quiet = Demo(tmp_path / "a"), Demo(tmp_path / "b")
    for demo in (loud, quiet):
        demo.cli("approve", demo.pending()[0]["id"])
    out = loud.cli("worker", "--once").stdout.splitlines()
    assert out[0].startswith(f"worker: {loud.run_id}: 2 calls ran, 1 refused; paused on req_")
    assert "signoff show req_" in out[0] and "--workspace" in out[0]
    assert out[1:] == ["worker: resumed 1 run"]
    silent = quiet.cli("worker", "--once", "--quiet")
    assert silent.stdout == "" and silent.stderr == ""
    assert quiet.pending()[0]["call"]["name"] == "send_email"  # it did resume the run


# ------------------------------------------------------------------ questions


def _to_the_question(demo: Demo) -> dict[str, Any]:
    for _ in range(2):  # the rm -rf, then the email
        demo.cli("approve", demo.pending()[0]["id"])
        demo.cli("resume", demo.run_id)
    question = demo.pending()[0]
    assert question["call"]["name"] == "ask_human"
    return question


def test_a_question_is_answered_never_approved(demo: Demo) -> None:
    question = _to_the_question(demo)
    qid, options = question["id"], question["call"]["arguments"]["options"]
    before = demo.cli("audit", "--request", qid, "--json").stdout
    for words in (["approve", qid], ["approve", qid, "--always", "run"]):
        refused = signoff(*words, *demo.where, cwd=demo.elsewhere)
        assert refused.returncode == 2
        assert f"answer it: signoff answer {qid} TEXT --workspace" in refused.stderr
    assert demo.cli("audit", "--request", qid, "--json").stdout == before  # nothing recorded
    assert demo.pending()[0]["id"] == qid

    too_far = signoff("answer", qid, str(len(options) + 1), *demo.where, cwd=demo.elsewhere)
    assert too_far.returncode == 2 and f"pick 1 to {len(options)}" in too_far.stderr
    shown_text = demo.cli("show", qid).stdout
    hint = shown_text.split("Decide with: ")[1].split(" (or a number")[0]
    assert hint.startswith(f"signoff answer {qid} TEXT --workspace"), shown_text
    assert pasted(hint, demo.elsewhere, TEXT="2").returncode == 0  # option 2, from anywhere
    shown = json.loads(demo.cli("show", qid, "--json").stdout)
    assert shown["decision"]["result"] == options[1]


def test_the_library_refuses_to_approve_a_question_too(demo: Demo) -> None:
    question = _to_the_question(demo)
    store = open_store(demo.workspace / ".signoff" / "signoff.db")
    try:
        with pytest.raises(InvalidInput, match="is a question"):
            decide(store, question["id"], Decision("approve"), actor="someone")
        assert store.get_request(question["id"]).state == "pending"
    finally:
        store.close()


# ------------------------------------------------------------------ help


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


def test_every_command_explains_itself_and_every_option() -> None:
    problems = []
    for path, parser in _commands(build_parser()):
        name = " ".join(path)
        if not (parser.description or "").strip():
            problems.append(f"{name}: no description")
        if "signoff " not in (parser.epilog or ""):
            problems.append(f"{name}: no example")
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            label = "/".join(action.option_strings) or action.dest
            if not action.help or action.help == argparse.SUPPRESS:
                problems.append(f"{name} {label}: no help text")
            elif (
                action.option_strings
                and action.nargs != 0
                and action.default not in (None, argparse.SUPPRESS)
                and "default" not in action.help
            ):
                problems.append(f"{name} {label}: its default ({action.default!r}) is not said")
    assert problems == []


def test_every_example_in_the_help_parses() -> None:
    """An example that the parser refuses would teach the wrong command."""
    for path, parser in _commands(build_parser()):
        for line in (parser.epilog or "").splitlines()[1:]:
            words = shlex.split(line)
            assert words[0] == "signoff" and words[1] == path[0], line
            try:
                args = build_parser().parse_args(words[1:])
            except SystemExit:
                pytest.fail(f"{' '.join(path)}: its example does not parse: {line}")
            assert args.func is not None, line


def test_help_pages_show_the_example() -> None:
    done = signoff("inbox", "--help", cwd=Path.cwd())
    assert "examples:\n  signoff inbox" in done.stdout and "(default: 100)" in done.stdout


# ------------------------------------------------------------------ chat and the fake server


def test_chat_with_an_unknown_model_fails_at_start(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        done = run(
            [*SIGNOFF, "chat", "--base-url", server.base_url, "--model", "nope"],
            tmp_path,
            OPENAI_API_KEY="sk-fake",
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'nope'" in done.stderr and server.model in done.stderr
    assert not (tmp_path / ".signoff").exists()  # it stopped before opening anything


def _chat_against(models: list[dict[str, str]] | None, name: str, cwd: Path) -> Any:
    """`signoff chat --model NAME` against an endpoint whose GET /models lists `models`
    (None: it has no such route), with no input: it starts, or refuses to."""

    class Endpoint(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if models is None or self.path.rstrip("/") != "/v1/models":
                self.send_response(404)
                self.end_headers()
                return
            body = json.dumps({"object": "list", "data": models}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        return run([*SIGNOFF, "chat", "--base-url", url, "--model", name], cwd)
    finally:
        httpd.shutdown()
        httpd.server_close()


def _model(id: str, owned_by: str = "someone") -> dict[str, str]:
    return {"id": id, "object": "model", "owned_by": owned_by}


@pytest.mark.parametrize(
    ("models", "name"),
    [
        (None, "any"),  # no /models: go on as before
        ([_model("qwen2.5:latest")], "qwen2.5"),  # Ollama answers to the name without its tag
        ([_model("Qwen/Qwen2.5-7B-Instruct")], "Qwen/Qwen2.5-7B-Instruct"),
        ([_model("models/qwen2.5-7b-q4.gguf", "llamacpp")], "qwen2.5"),  # any name serves
    ],
)
def test_chat_starts_when_the_endpoint_would_serve_the_model(
    tmp_path: Path, models: list[dict[str, str]] | None, name: str
) -> None:
    done = _chat_against(models, name, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"signoff chat  model: {name}" in done.stdout


def test_chat_names_what_the_endpoint_offers(tmp_path: Path) -> None:
    done = _chat_against([_model("qwen2.5:latest"), _model("llama3.2:latest")], "qwen", tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'qwen'" in done.stderr and "qwen2.5:latest, llama3.2:latest" in done.stderr


def test_the_fake_server_on_a_taken_port_says_so_in_one_line(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text("[]")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = run(
            [sys.executable, "-m", "signoff.llm.fake_server", str(script), "--port", str(port)],
            tmp_path,
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"port {port}" in lines[0] and "--port" in lines[0]


def test_the_chat_docs_do_not_use_the_web_inbox_port() -> None:
    from signoff.cli.app import build_parser as parser

    serve = next(p for path, p in _commands(parser()) if path == ("serve",))
    port = next(a.default for a in serve._actions if "--port" in a.option_strings)
    text = (Path(__file__).resolve().parent.parent / "docs" / "chat.md").read_text()
    assert f":{port}" not in text and f"--port {port}" not in text


def test_the_models_text_cannot_pass_for_signoffs_own_lines() -> None:
    from signoff.cli.progress import said

    shown = said("Done.\nRun run_1: finished.\n\x1b[2Jcleared")
    lines = shown.splitlines()
    assert lines[0] == "model: Done."
    assert all(line.startswith("       ") for line in lines[1:])
    assert "\x1b" not in shown
