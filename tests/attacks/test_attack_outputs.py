"""Attack: model text that drives the terminal through the CLI's output (issue 11, item 9).

The model controls tool names and arguments. It fills them with C1 controls (U+009B is a
one-byte CSI, U+009D an OSC), bidi overrides and isolates, zero-width and other invisible
characters. Every `--json` read command, every decision echo and every error message of
the real CLI (subprocesses) must print them escaped: no raw code point from those ranges
reaches stdout or stderr, and the JSON still parses back to the very same values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from signoff.channels.render import safe_json
from signoff.models import Request, ToolCall, Verdict
from signoff.runs.agent import Run
from signoff.store import open_store

# What the model writes: each piece is something a terminal acts on or hides.
EVIL = (
    "\u009b2K\u009b1G"  # C1 CSI: erase the line, cursor to column 1
    "\u009d0;pwned\u009c"  # C1 OSC ... ST: retitle the window
    "\u0085\u0090\u009f"  # NEL, DCS, APC
    "\u202egnp.exe\u202c"  # RLO ... PDF: the name reads backwards
    "\u202a\u202b\u202d\u2066\u2067\u2068\u2069\u061c\u200e\u200f"  # other bidi controls
    "\u200b\u200c\u200d\u2060\ufeff\u00ad"  # zero-width and invisible
    "\u2028\u2029"  # line and paragraph separators
    "\x1b[31m\x07\x7f"  # C0 ESC/BEL and DEL
    "\U000e0041"  # a tag character (beyond the BMP)
    "中文 ok"  # readable non-ASCII stays readable
)
NAME = "send_email" + EVIL[:12]
FORBIDDEN = (
    set(range(0x80, 0xA0))
    | set(range(0x202A, 0x202F))
    | set(range(0x2066, 0x206A))
    | set(range(0x200B, 0x2010))
    | {0x7F, 0x1B, 0x07, 0x061C, 0x2028, 0x2029, 0x2060, 0xFEFF, 0x00AD, 0xE0041}
)


def raw_controls(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if ord(c) in FORBIDDEN})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("outputs")
    with open_store(root / "signoff.db") as store:
        store.create_run(
            Run(id="run_evil", note="done " + EVIL), [{"role": "user", "content": "task " + EVIL}]
        )
        arguments = {"to": "team@example.com" + EVIL, "body" + EVIL: EVIL}
        for rid in ("req_a", "req_b", "req_c", "req_d", "req_e", "req_f"):
            store.create_request(
                Request(
                    id=rid,
                    call=ToolCall(NAME, arguments),
                    verdict=Verdict("ask", "high", "ask: " + EVIL, ("reason " + EVIL,)),
                    preview="preview " + EVIL,
                    run_id="run_evil",
                )
            )
        store.create_request(
            Request(
                id="req_q",
                call=ToolCall("ask_human" + EVIL[:8], {"question": "q " + EVIL}),
                verdict=Verdict("ask", "low", None, ("a question",)),
            )
        )
        store.record(
            "review",
            {"call": ToolCall(NAME, arguments).to_json(), "snapshot": {}},
            run_id="run_evil",
        )
    return root


def signoff(world: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_DB", "SIGNOFF_ACTOR")}
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff",
            *args,
            "--db",
            str(world / "signoff.db"),
            "--workspace",
            str(world),
        ],
        cwd=world,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def evil_strings(value: Any) -> int:
    """How many strings in a parsed value still carry the payload, intact."""
    if isinstance(value, str):
        return int(EVIL in value or EVIL[:12] in value)
    if isinstance(value, dict):
        return sum(evil_strings(k) + evil_strings(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(evil_strings(v) for v in value)
    return 0


JSON_READS = {
    "inbox": ["inbox", "--json"],
    "inbox-all": ["inbox", "--all", "--json"],
    "show": ["show", "req_a", "--json"],
    "runs": ["runs", "--json"],
    "review": ["review", "--json"],
    "audit": ["audit", "--json"],
    "audit-verify": ["audit", "verify", "--json"],
    "stats": ["stats", "--json", "--min-count", "1"],
    "grant-list": ["grant", "list", "--json"],
}


@pytest.mark.slow  # runs the CLI in other processes
@pytest.mark.parametrize("command", list(JSON_READS.values()), ids=list(JSON_READS))
def test_json_read_commands_print_no_raw_controls(world: Path, command: list[str]) -> None:
    done = signoff(world, *command)
    assert done.returncode in (0, 1), done.stderr
    assert raw_controls(done.stdout) == [] and raw_controls(done.stderr) == []
    parsed = json.loads(done.stdout)
    if command in (
        JSON_READS["inbox"],
        JSON_READS["show"],
        JSON_READS["runs"],
        JSON_READS["review"],
        JSON_READS["audit"],
    ):
        assert evil_strings(parsed) > 0  # escaped, not dropped: the values parse back whole


@pytest.mark.slow  # runs the CLI in other processes
def test_audit_export_to_stdout_is_escaped_and_still_verifies(world: Path) -> None:
    done = signoff(world, "audit", "export", "--output", "-")
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout) == []
    assert sum(evil_strings(json.loads(line)) for line in done.stdout.splitlines()) > 0
    exported = world / "export.jsonl"
    exported.write_text(done.stdout, encoding="utf-8")
    verified = signoff(world, "audit", "verify", "--file", str(exported), "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True


@pytest.mark.slow  # runs the CLI in other processes
def test_check_prints_no_raw_controls(world: Path, tmp_path: Path) -> None:
    env_free = ["--no-user-settings"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff",
            "check",
            "--tool",
            NAME,
            "--args",
            json.dumps({"to": EVIL}),
            "--json",
            "--workspace",
            str(tmp_path),
            *env_free,
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout) == []
    lines = tmp_path / "cmds.jsonl"
    lines.write_text(
        json.dumps({"cmd": "echo " + EVIL}) + "\nnot json " + EVIL + "\n", encoding="utf-8"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff",
            "check",
            "--shell-file",
            str(lines),
            "--workspace",
            str(tmp_path),
            *env_free,
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout) == [] and len(done.stdout.splitlines()) == 2


DECISIONS = {
    "approve": ["approve", "req_a"],
    "reject": ["reject", "req_b", "--reason", "no " + EVIL],
    "edit": ["edit", "req_c", "--args", json.dumps({"to": "x@example.com" + EVIL})],
    "skip": ["skip", "req_d"],
    "approve-always": ["approve", "req_e", "--always", "run"],
    "answer": ["answer", "req_q", "yes " + EVIL],
}


@pytest.mark.slow  # runs the CLI in other processes
@pytest.mark.parametrize("command", list(DECISIONS.values()), ids=list(DECISIONS))
def test_decision_echoes_print_no_raw_controls(world: Path, command: list[str]) -> None:
    done = signoff(world, *command)
    # approve-always has no narrow rule for this call: refused, the message escaped too.
    assert done.returncode in (0, 2), done.stderr
    assert raw_controls(done.stdout) == [] and raw_controls(done.stderr) == []
    assert "Traceback" not in done.stderr


@pytest.mark.slow  # runs the CLI in other processes
def test_error_messages_print_no_raw_controls(world: Path) -> None:
    for args in (
        ["show", "req_" + EVIL],
        ["approve", "req_" + EVIL],
        ["grant", "revoke", "g" + EVIL],
        ["audit", "--since", EVIL],
    ):
        done = signoff(world, *args)
        assert done.returncode == 2, (args, done.stdout)
        assert raw_controls(done.stdout) == [] and raw_controls(done.stderr) == [], args


@pytest.mark.slow  # runs the CLI in other processes
def test_plain_read_commands_print_no_raw_controls(world: Path) -> None:
    for args in (
        ["inbox", "--all"],
        ["show", "req_f"],
        ["runs"],
        ["review"],
        ["audit"],
        ["stats", "--min-count", "1"],
        ["grant", "list"],
    ):
        done = signoff(world, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert raw_controls(done.stdout) == [], args


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_safe_json_keeps_the_value_and_escapes_every_hiding_code_point(value: Any) -> None:
    text = safe_json(value)
    assert json.loads(text) == value
    assert raw_controls(text) == []
    assert not any(
        unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
        for c in text
        if ord(c) > 0x7E
    )
