"""Reads outside the workspace, scratch space and ripgrep's hidden-file skip, judged in a
real workspace on disk (real links, a real `.signoff`, the policy on top). The
context-free rows live in tests/data/shell_classes/ (reads_outside, scratch_temp,
version_help)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.rules import Rule, parse_rule
from signoff.settings import Settings
from signoff.shell import analyze


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Path]:
    """A home with dotfiles, a workspace with signoff's own state, a sibling checkout."""
    home = tmp_path / "home"
    ws = home / "proj"
    (ws / ".signoff").mkdir(parents=True)
    (ws / ".signoff" / "settings.local.toml").write_text("[permissions]\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (home / ".bashrc").write_text("export TOKEN=s3cret\n")
    (home / "other").mkdir()
    (home / "other" / "README.md").write_text("# other\n")
    return {"home": home, "ws": ws}


def _shell(place: dict[str, Path], command: str, allow: tuple[Rule, ...] = ()) -> str:
    policy = Policy(Settings(allow=allow), workspace=place["ws"], home=str(place["home"]))
    return policy.evaluate(ToolCall("execute_command", {"command": command})).effect


def _analyze(place: dict[str, Path], command: str) -> tuple[str, tuple[str, ...]]:
    result = analyze(command, workspace=str(place["ws"]), home=str(place["home"]))
    return result.effect, result.reasons


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.bashrc",
        "ls ~",
        "cat ../other/README.md",
        "git -C ../other log",
        "cd .. && ls",
        "cd ~ && grep -r TOKEN .",
        "rg TOKEN ~",
    ],
)
def test_reads_outside_the_workspace_ask(place: dict[str, Path], command: str) -> None:
    assert _shell(place, command) == "ask"


def test_the_reason_names_the_place_read(place: dict[str, Path]) -> None:
    effect, reasons = _analyze(place, "cat ~/.bashrc")
    home = os.path.realpath(place["home"])
    assert effect == "ask"
    assert f"reads {home}/.bashrc in the home directory, outside the workspace" in reasons
    effect, reasons = _analyze(place, "cd .. && ls")
    assert f"reads the home directory ({home}), outside the workspace" in reasons


def test_an_allow_rule_does_not_lift_a_read_outside(place: dict[str, Path]) -> None:
    """Like a file tool's read outside the workspace: a boundary, not a default."""
    rule = parse_rule("Bash(cat:*)")
    assert rule.matches_shell("cat ~/.bashrc")  # the rule would match the text
    assert _shell(place, "cat ~/.bashrc", allow=(rule,)) == "ask"
    assert _shell(place, "cat src/app.py", allow=(rule,)) == "allow"


def test_additional_directories_are_readable_like_for_the_file_tools(
    place: dict[str, Path],
) -> None:
    settings = Settings(additional_directories=(str(place["home"] / "other"),))
    policy = Policy(settings, workspace=place["ws"], home=str(place["home"]))

    def effect(command: str) -> str:
        return policy.evaluate(ToolCall("execute_command", {"command": command})).effect

    assert effect("cat ../other/README.md") == "allow"
    assert effect("cd ../other && rg foo") == "allow"
    assert effect("cat ~/.bashrc") == "ask"
    assert effect("echo x > ../other/README.md") == "ask"  # writing there still asks


def test_auto_mode_turns_a_read_outside_into_an_allow(place: dict[str, Path]) -> None:
    policy = Policy(Settings(), workspace=place["ws"], home=str(place["home"]), mode="auto")
    verdict = policy.evaluate(ToolCall("execute_command", {"command": "cat ~/.bashrc"}))
    assert verdict.effect == "allow"


def test_a_link_in_the_workspace_is_judged_where_it_leads(place: dict[str, Path]) -> None:
    (place["ws"] / "notes").symlink_to(place["home"] / ".bashrc")
    (place["ws"] / "sibling").symlink_to(place["home"] / "other")
    assert _shell(place, "cat notes") == "ask"
    assert _shell(place, "ls sibling") == "ask"
    assert _shell(place, "cat src/app.py") == "allow"


def test_a_write_through_a_link_in_tmp_is_judged_where_it_leads(
    place: dict[str, Path], tmp_path: Path
) -> None:
    """/tmp is shared: a link planted there must not turn a home write into scratch."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "out").symlink_to(place["home"] / ".bashrc")
    (scratch / "plain").symlink_to(place["home"] / "notes.txt")
    assert _analyze(place, f"echo x > {scratch}/out")[0] == "deny"
    assert _analyze(place, f"echo x > {scratch}/plain")[0] == "ask"
    assert _analyze(place, f"echo x > {scratch}/fresh.txt")[0] == "notify"


def test_scratch_writes_notify_and_deletes_there_ask(place: dict[str, Path]) -> None:
    assert _shell(place, "mkdir -p /tmp/signoff-h1-work") == "notify"
    assert _shell(place, "cp src/app.py /tmp/") == "notify"
    assert _shell(place, "rm -rf /tmp/signoff-h1-work") == "ask"
    assert _shell(place, "chmod 700 /tmp") == "ask"


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("rg TOKEN", "allow"),
        ("rg -n TOKEN .", "allow"),
        ("rg -g '!*.min.js' TOKEN", "allow"),
        ("rg TOKEN src", "allow"),
        ("rg --hidden TOKEN", "ask"),
        ("rg -. TOKEN", "ask"),
        ("rg -uu TOKEN", "ask"),
        ("rg -u -u TOKEN", "ask"),
        ("rg -uuu TOKEN", "ask"),
        ("rg -L TOKEN", "ask"),
        ("rg --follow TOKEN", "ask"),
        ("rg -g '*' TOKEN", "ask"),
        ("rg -g '*.toml' TOKEN", "ask"),
        ("rg --iglob '**' TOKEN", "ask"),
        ("rg -nig'*' TOKEN", "ask"),
        ("rg -ng '*' TOKEN", "ask"),
        ("rg -ng '!*.lock' TOKEN", "allow"),
        ("rg -g '.*' TOKEN", "deny"),  # the glob itself names hidden state
        ("rg --ignore-file extra.ignore TOKEN", "ask"),
        ("echo '!.signoff' > .ignore; rg TOKEN", "ask"),
        ("printf '!.signoff\\n' >> .rgignore && rg TOKEN .", "ask"),
        ("git checkout other-branch && rg TOKEN", "ask"),
        ("grep -r TOKEN .", "ask"),
        ("grep -r TOKEN src", "allow"),
        ("grep -rn TOKEN . --exclude-dir=.signoff", "allow"),
        ("grep -rn TOKEN --exclude-dir .signoff", "allow"),
        ("grep -r TOKEN . --exclude-dir={.git,.signoff}", "allow"),
        ("grep -r TOKEN . --exclude-dir='.*'", "allow"),
        ("grep -r TOKEN . --exclude-dir=.git", "ask"),
        ("grep -R TOKEN . --exclude-dir=.signoff", "ask"),
        ("grep -r --dereference-recursive TOKEN . --exclude-dir=.signoff", "ask"),
        ("shopt -s dotglob; grep -r TOKEN . --exclude-dir=.signoff", "deny"),  # `*` is read
        ("grep -r TOKEN --exclude-dir .signoff .signoff", "deny"),
        ("cat .signoff/settings.local.toml", "deny"),
    ],
)
def test_ripgrep_skips_hidden_state_unless_told_otherwise(
    place: dict[str, Path], command: str, effect: str
) -> None:
    """`.signoff` holds the approvals and grants: no tool reads it. ripgrep leaves hidden
    entries out unless a flag, a glob or an ignore-file whitelist brings them back."""
    assert _shell(place, command) == effect


@pytest.mark.parametrize("ignore", [".ignore", ".rgignore", ".gitignore"])
def test_an_ignore_file_whitelist_on_disk_brings_hidden_state_back(
    place: dict[str, Path], ignore: str
) -> None:
    (place["ws"] / ignore).write_text("node_modules/\n!.signoff\n")
    assert _shell(place, "rg TOKEN") == "ask"


def test_grep_excluding_signoff_still_reads_every_other_hidden_name(place: dict[str, Path]) -> None:
    """The trees left after --exclude-dir=.signoff still meet the path rules: .env, .sig
    and .signoffx are read."""
    result = analyze(
        "grep -r TOKEN . --exclude-dir=.signoff",
        workspace=str(place["ws"]),
        home=str(place["home"]),
    )
    trees = result.parts[0].trees
    deny = Policy(
        Settings.from_rules(deny=["Read(./.env)"]), workspace=place["ws"], home=str(place["home"])
    )
    call = ToolCall("execute_command", {"command": "grep -r TOKEN . --exclude-dir=.signoff"})
    assert deny.evaluate(call).effect in ("ask", "deny")
    from signoff.protected import ProtectedPaths

    ws = os.path.realpath(place["ws"])
    state = ProtectedPaths((f"{ws}/.signoff",))
    assert not any(state.inside(t) or state.holds(t) for t in trees)
    for other in (".env", ".sig", ".signoffx", ".git", "src"):
        assert ProtectedPaths((f"{ws}/{other}",)).holds(ws) and any(
            ProtectedPaths((f"{ws}/{other}",)).inside(t) for t in trees
        ), other


def test_an_ignore_file_whitelist_above_the_workspace_counts(place: dict[str, Path]) -> None:
    (place["home"] / ".ignore").write_text("!.signoff/\n")
    assert _shell(place, "rg TOKEN") == "ask"


def test_a_ripgrep_config_file_may_show_hidden_files(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(place["home"] / ".ripgreprc"))
    assert _shell(place, "rg TOKEN") == "ask"


@pytest.mark.skipif(
    shutil.which("rg") is None and not os.environ.get("SIGNOFF_REQUIRE_CLIENTS"),
    reason="ripgrep is not installed (CI installs it)",
)
def test_ripgrep_allowed_over_the_workspace_does_not_print_signoff_state(
    place: dict[str, Path],
) -> None:
    """The attack, run for real: what `rg` is allowed to do never shows `.signoff`."""
    (place["ws"] / ".signoff" / "signoff.db").write_text("canary_4f1d\n")
    assert _shell(place, "rg -a canary_4f1d") == "allow"
    out = subprocess.run(
        ["rg", "-a", "canary_4f1d"], cwd=place["ws"], capture_output=True, text=True, check=False
    )
    assert "canary_4f1d" not in out.stdout
    shown = subprocess.run(
        ["rg", "-a", "-uu", "canary_4f1d"],
        cwd=place["ws"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "canary_4f1d" in shown.stdout  # the control: -uu shows it, and that asks
    assert _shell(place, "rg -a -uu canary_4f1d") == "ask"
