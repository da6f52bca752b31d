"""signoff in front of the real Codex CLI (0.171.0) and Gemini CLI (0.61.0), end to end.

Each test installs signoff's hooks with `signoff install codex|gemini` into a scratch HOME
and project, scripts the FAKE model API of its client (`signoff.llm.fake_agents_api`) to
call the shell tool, and runs the client headless: the client really runs (or does not
run) the command, and starts `signoff hook ...` as a process of its own. Every destructive
command here acts only inside the test's tmp_path.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents_harness import (
    CODEX_EXEC,
    Agent,
    client_binary,
    codex_config,
    gemini_config,
    gemini_env,
    pending,
    run_codex,
    run_gemini,
    start,
)

from signoff.llm.fake_agents_api import Call, FakeGeminiServer, FakeResponsesServer, Say

RM_RF_BUILD = "rm -rf build"
RM_R_BUILD = "rm -r build"  # Codex 0.171 refuses "rm -f style" commands itself; not this
RM_ONE_FILE = "rm build/out.txt"
DENY_RM = (
    '[permissions]\ndeny = ["Bash(rm -rf:*)", "Bash(rm -r:*)"]\nask = ["Bash(rm build/out.txt)"]\n'
    '[hooks]\nwait = "90s"\n'
)


def _project(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (project / "build" / "out.txt").write_text("built\n")
    (project / ".signoff").mkdir()
    (project / ".signoff" / "settings.toml").write_text(DENY_RM)
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, project


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return client_binary("codex")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return client_binary("gemini-cli")


@pytest.fixture
def codex(codex_bin: Path, tmp_path: Path) -> Iterator[Agent]:
    home, project = _project(tmp_path)
    yield Agent("codex", codex_bin, home, project)


@pytest.fixture
def gemini(gemini_bin: Path, tmp_path: Path) -> Iterator[Agent]:
    home, project = _project(tmp_path)
    gemini_config(Agent("gemini", gemini_bin, home, project))
    yield Agent("gemini", gemini_bin, home, project)


def verdicts(agent: Agent) -> list[tuple[str, str]]:
    done = agent.signoff("audit", "--json", check=False)
    if done.returncode != 0 and "no signoff store" in done.stderr:
        return []  # no hook has run yet
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    return [
        (e["data"]["call"]["arguments"].get("command", ""), e["data"]["verdict"]["effect"])
        for e in entries
        if e["kind"] == "verdict"
    ]


def crash_env(tmp_path: Path) -> str:
    """A PYTHONPATH under which `import signoff` raises: the hook process crashes."""
    broken = tmp_path / "broken" / "signoff"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('the hook crashed')\n")
    return str(broken.parent)


# ------------------------------------------------------------------ Codex


def codex_shell(command: str) -> Call:
    return Call("exec_command", {"cmd": command})


def codex_install(agent: Agent, base_url: str) -> None:
    codex_config(agent, base_url)
    done = agent.signoff("install", "codex", "--user", "--program", str(agent.binary))
    assert "Codex lists each as trusted" in done.stdout


def test_codex_without_signoff_the_same_call_deletes_build(codex: Agent) -> None:
    with FakeResponsesServer([codex_shell(RM_R_BUILD)]) as api:
        codex_config(codex, api.base_url)
        done = run_codex(codex, "clean up")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (codex.project / "build").exists()  # the control: this call really runs


def test_codex_denied_call_never_runs_and_the_model_reads_why(codex: Agent) -> None:
    script: list[Any] = [codex_shell(RM_RF_BUILD), codex_shell("git status"), Say("ok")]
    with FakeResponsesServer(script) as api:
        codex_install(codex, api.base_url)
        done = run_codex(codex, "clean up, then show the status")
        outputs = api.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (codex.project / "build" / "out.txt").read_text() == "built\n"
    assert "signoff denied this call (rule Bash(rm -rf:*))" in outputs[0]
    assert "On branch" in outputs[1] or "No commits yet" in outputs[1]  # git status ran
    assert ("rm -rf build", "deny") in verdicts(codex)


def test_codex_call_only_signoff_denies_never_runs(codex: Agent) -> None:
    with FakeResponsesServer([codex_shell(RM_R_BUILD)]) as api:
        codex_install(codex, api.base_url)
        done = run_codex(codex, "clean up")
        outputs = api.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (codex.project / "build" / "out.txt").read_text() == "built\n"
    assert "signoff denied this call (rule Bash(rm -r:*))" in outputs[0]


def test_codex_crashing_hook_blocks(codex: Agent, tmp_path: Path) -> None:
    with FakeResponsesServer([codex_shell(RM_R_BUILD)]) as api:
        codex_install(codex, api.base_url)
        argv = ["exec", "--skip-git-repo-check", "--json", "-s", "danger-full-access", "go"]
        done = codex.run(argv, {"FAKE_API_KEY": "k", "PYTHONPATH": crash_env(tmp_path)})
        outputs = api.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (codex.project / "build" / "out.txt").exists()
    assert "the hook failed" in outputs[0] and "blocked" in outputs[0]


def test_codex_an_inbox_approval_from_another_process_lets_the_call_run(codex: Agent) -> None:
    with FakeResponsesServer([codex_shell(RM_ONE_FILE)]) as api:
        codex_install(codex, api.base_url)
        process = start(codex, [*CODEX_EXEC, "clean up"], {"FAKE_API_KEY": "k"})
        request = pending(codex, process)
        assert request["call"]["arguments"]["command"] == RM_ONE_FILE
        assert (codex.project / "build" / "out.txt").exists()  # Codex waits on the person
        codex.signoff("approve", request["id"], "--reason", "old output")
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr[-2000:]
    assert not (codex.project / "build" / "out.txt").exists()
    shown = json.loads(codex.signoff("show", request["id"], "--json").stdout)
    assert shown["state"] == "finished"  # claimed by the hook, finished by PostToolUse


def test_codex_an_inbox_rejection_reaches_the_model(codex: Agent) -> None:
    with FakeResponsesServer([codex_shell(RM_ONE_FILE)]) as api:
        codex_install(codex, api.base_url)
        process = start(codex, [*CODEX_EXEC, "clean up"], {"FAKE_API_KEY": "k"})
        request = pending(codex, process)
        codex.signoff("reject", request["id"], "--reason", "keep the build")
        process.communicate(timeout=120)
        outputs = api.outputs()
    assert (codex.project / "build" / "out.txt").exists()
    assert "keep the build" in outputs[0]


def test_codex_install_then_uninstall_leaves_no_hook(codex: Agent) -> None:
    with FakeResponsesServer([]) as api:
        codex_install(codex, api.base_url)
    hooks = codex.home / ".codex" / "hooks.json"
    assert "signoff" in hooks.read_text()
    codex.signoff("uninstall", "codex", "--user")
    assert json.loads(hooks.read_text()) == {}
    assert "trusted_hash" not in (codex.home / ".codex" / "config.toml").read_text()


# ------------------------------------------------------------------ Gemini


def gemini_shell(command: str) -> Call:
    return Call("run_shell_command", {"command": command})


def test_gemini_without_signoff_the_same_call_deletes_build(gemini: Agent) -> None:
    with FakeGeminiServer([gemini_shell(RM_RF_BUILD)]) as api:
        done = run_gemini(gemini, api.base_url, "clean up")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (gemini.project / "build").exists()


def _gemini_install(agent: Agent, *args: str) -> None:
    agent.signoff("install", "gemini", "--program", str(agent.binary), *args)


def test_gemini_denied_call_never_runs_and_the_model_reads_why(gemini: Agent) -> None:
    script: list[Any] = [gemini_shell(RM_RF_BUILD), gemini_shell("git status"), Say("ok")]
    _gemini_install(gemini)
    with FakeGeminiServer(script) as api:
        done = run_gemini(gemini, api.base_url, "clean up, then show the status")
        outputs = api.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (gemini.project / "build" / "out.txt").read_text() == "built\n"
    assert "signoff denied this call (rule Bash(rm -rf:*))" in outputs[0]
    assert "On branch" in outputs[1] or "No commits yet" in outputs[1]
    assert ("rm -rf build", "deny") in verdicts(gemini)


def test_gemini_dir_path_is_where_the_command_is_judged(gemini: Agent) -> None:
    # `rm out.txt` in dir_path "build" deletes build/out.txt: judged there, it meets the
    # deny on build/** that the same words from the project root would not.
    settings = gemini.project / ".signoff" / "settings.toml"
    settings.write_text(
        DENY_RM.replace("deny = [", 'deny = ["Bash(rm build/*)", "Edit(build/**)", ')
    )
    script: list[Any] = [
        Call("run_shell_command", {"command": "rm out.txt", "dir_path": "build"}),
        Call("run_shell_command", {"command": "ls", "dir_path": "build"}),
        Say("ok"),
    ]
    _gemini_install(gemini)
    with FakeGeminiServer(script) as api:
        done = run_gemini(gemini, api.base_url, "clean up in build")
        outputs = api.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (gemini.project / "build" / "out.txt").read_text() == "built\n"
    assert "signoff denied this call" in outputs[0]
    assert "out.txt" in outputs[1]  # the control: the client ran the listing in build
    assert ("rm out.txt", "deny") in verdicts(gemini)


def test_gemini_an_inbox_approval_from_another_process_lets_the_call_run(gemini: Agent) -> None:
    _gemini_install(gemini, "--ask", "inbox")
    with FakeGeminiServer([gemini_shell(RM_ONE_FILE)]) as api:
        argv = ["-p", "clean up", "--output-format", "json", "--yolo"]
        process = start(gemini, argv, gemini_env(api.base_url))
        request = pending(gemini, process)
        assert (gemini.project / "build" / "out.txt").exists()
        gemini.signoff("approve", request["id"])
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr[-2000:]
    assert not (gemini.project / "build" / "out.txt").exists()
    shown = json.loads(gemini.signoff("show", request["id"], "--json").stdout)
    assert shown["state"] == "finished"  # AfterTool finds the claim by the call's digest


def test_gemini_native_ask_in_a_headless_run_waits_and_never_runs_the_call(
    gemini: Agent,
) -> None:
    # Gemini 0.61 shows its own confirmation for a hook's "ask" even with --yolo; a
    # headless -p run has nobody to answer it and waits for ever (hence inbox by default)
    _gemini_install(gemini, "--ask", "native")
    with FakeGeminiServer([gemini_shell(RM_ONE_FILE)]) as api:
        argv = ["-p", "clean up", "--output-format", "json", "--yolo"]
        process = start(gemini, argv, gemini_env(api.base_url))
        try:
            end = time.monotonic() + 90
            while not any(v == (RM_ONE_FILE, "ask") for v in verdicts(gemini)):
                assert process.poll() is None and time.monotonic() < end, process.communicate()
                time.sleep(0.3)
            assert process.poll() is None  # waiting on a dialog nobody can answer
            assert (gemini.project / "build" / "out.txt").exists()
        finally:
            process.kill()
            process.communicate()


def test_gemini_crashing_hook_blocks(gemini: Agent, tmp_path: Path) -> None:
    _gemini_install(gemini)
    with FakeGeminiServer([gemini_shell(RM_RF_BUILD)]) as api:
        env = {
            "GEMINI_API_KEY": "k",
            "GOOGLE_GEMINI_BASE_URL": api.base_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "PYTHONPATH": crash_env(tmp_path),
        }
        done = gemini.run(["-p", "go", "--output-format", "json", "--yolo"], env)
        outputs = api.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert (gemini.project / "build" / "out.txt").exists()
    assert "the hook failed" in outputs[0] and "blocked" in outputs[0]
