"""Where a command runs, through the real Claude Code client: its Bash tool keeps the
directory of the last `cd` between calls, and sends it to the hook as `cwd`. A relative
path is judged from there, so one `cd` cannot carry a read into a denied folder, a write
under an `Edit` deny, or a write into `.git/hooks` past the question it needs.

Claude Code's own check is opened (`--allowedTools`) so that only signoff stands in the
way; an ask waits in the inbox for a few seconds and then expires (a deny), so an ask can
never turn into a run here. Everything happens inside the test's tmp_path.
"""

from __future__ import annotations

import pytest
from claude_code_harness import Claude
from test_claude_code_e2e import assert_ok, audit, echo_last_result, install

from signoff.llm.fake_anthropic import FakeAnthropicServer, ToolUse

OPEN = ("--allowedTools", "Bash,Read,Write,Edit")
SECRET = "password: hunter2-from-prod"


def guarded(claude: Claude) -> None:
    install(
        claude,
        "--ask",
        "inbox",
        hooks={"wait": "2s"},
        permissions={"deny": ["Read(config/prod/*.yml)", "Edit(src/**)"]},
    )


def bash(command: str, ident: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": "scripted"}, id=ident)


def verdicts_with_cwd(claude: Claude) -> list[tuple[str, str, str]]:
    """(command, cwd, effect) of every Bash verdict on the record, in order."""
    found = []
    for entry in audit(claude):
        data = entry["data"]
        if entry["kind"] == "verdict" and data["call"]["name"] == "Bash":
            found.append(
                (data["call"]["arguments"]["command"], data["cwd"], data["verdict"]["effect"])
            )
    return found


def test_a_cd_then_a_read_of_a_denied_file_is_denied(claude: Claude) -> None:
    prod = claude.project / "config" / "prod"
    prod.mkdir(parents=True)
    (prod / "db.yml").write_text(SECRET + "\n")
    guarded(claude)
    script = [
        bash("cd config", "toolu_cd1"),
        bash("cd prod", "toolu_cd2"),
        bash("cat db.yml", "toolu_cat"),
        echo_last_result,
    ]
    with FakeAnthropicServer(script) as api:
        run = claude.run(api, "look around", *OPEN)
    assert_ok(run)
    results = {r.tool_use_id: r for r in api.tool_results()}
    assert results["toolu_cd2"].is_error is False  # the control: the client really moved
    assert results["toolu_cat"].is_error is True
    assert "signoff denied this call" in results["toolu_cat"].text
    assert SECRET not in "".join(r.text for r in results.values())
    real = str(claude.project.resolve())
    assert verdicts_with_cwd(claude)[-1] == ("cat db.yml", f"{real}/config/prod", "deny")


def test_a_cd_then_a_write_under_an_edit_deny_is_denied(claude: Claude) -> None:
    src = claude.project / "src"
    src.mkdir()
    (src / "main.py").write_text("print('mine')\n")
    guarded(claude)
    script = [bash("cd src", "toolu_cd"), bash("echo gone > main.py", "toolu_w"), echo_last_result]
    with FakeAnthropicServer(script) as api:
        run = claude.run(api, "edit", *OPEN)
    assert_ok(run)
    assert (src / "main.py").read_text() == "print('mine')\n"
    results = {r.tool_use_id: r for r in api.tool_results()}
    assert results["toolu_w"].is_error is True
    assert "signoff denied this call" in results["toolu_w"].text


@pytest.mark.parametrize("folder", [".git/hooks", ".github/workflows"])
def test_a_cd_into_code_that_runs_later_still_asks(claude: Claude, folder: str) -> None:
    where = claude.project / folder
    where.mkdir(parents=True)
    guarded(claude)
    script = [
        bash(f"cd {folder}", "toolu_cd"),
        bash("echo 'echo pwned' > pre-commit", "toolu_w"),
        echo_last_result,
    ]
    with FakeAnthropicServer(script) as api:
        run = claude.run(api, "hook it", *OPEN)
    assert_ok(run)
    assert not (where / "pre-commit").exists()  # asked, nobody answered: expired, a deny
    results = {r.tool_use_id: r for r in api.tool_results()}
    assert results["toolu_w"].is_error is True
    real = str(claude.project.resolve())
    assert verdicts_with_cwd(claude)[-1] == (
        "echo 'echo pwned' > pre-commit",
        f"{real}/{folder}",
        "ask",
    )
