"""Review after action: a notify write is kept with what it replaced, and can be reverted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from signoff.cli.demo import run_demo

pytestmark = pytest.mark.slow  # runs the CLI in other processes


def signoff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    ws = tmp_path / "ws"
    assert run_demo(str(ws), interactive=False) == 0  # pauses at the first ask
    return ws


def test_notify_write_is_listed_and_reverted(workspace: Path) -> None:
    changelog = workspace / "CHANGELOG.md"
    assert "## 0.2" in changelog.read_text()  # the edit ran without asking
    inbox = signoff("inbox", "--workspace", str(workspace), cwd=workspace)
    assert "1 change ran without asking and waits for review" in inbox.stdout
    items = json.loads(
        signoff("review", "--json", "--workspace", str(workspace), cwd=workspace).stdout
    )
    assert [i["call"]["name"] for i in items] == ["edit_file"]
    done = signoff("revert", items[0]["id"], "--workspace", str(workspace), cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert changelog.read_text() == "# Changelog\n\n## 0.1\n- first release\n"
    again = signoff("revert", items[0]["id"], "--workspace", str(workspace), cwd=workspace)
    assert again.returncode == 2 and "already reverted" in again.stderr
    assert (
        json.loads(signoff("review", "--json", "--workspace", str(workspace), cwd=workspace).stdout)
        == []
    )


def test_revert_refuses_when_the_file_changed_since(workspace: Path) -> None:
    changelog = workspace / "CHANGELOG.md"
    changelog.write_text(changelog.read_text() + "- a person's later edit\n")
    items = json.loads(
        signoff("review", "--json", "--workspace", str(workspace), cwd=workspace).stdout
    )
    done = signoff("revert", items[0]["id"], "--workspace", str(workspace), cwd=workspace)
    assert done.returncode == 2
    assert "changed" in done.stderr
    assert "a person's later edit" in changelog.read_text()  # nothing lost


def test_bad_review_id(workspace: Path) -> None:
    done = signoff("revert", "banana", "--workspace", str(workspace), cwd=workspace)
    assert done.returncode == 2 and "not a review item id" in done.stderr
