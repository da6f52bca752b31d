"""Issue 12: catastrophic payloads inside code, feeders and spellings, performed for real.

Every attack targets a stand-in home directory made under pytest's temporary directory
(its absolute path is written into the command, so no environment mix-up can widen it),
with the workspace inside it. The policy runs in `auto` mode, where an ask becomes an
allow: only a deny protects. Each attack goes through the real Gate and the real
`execute_command` tool; afterwards the stand-in home must be intact. The control runs the
same command without the gate and shows that it really destroys the stand-in home (so
"intact" proves something). Nothing here touches a path outside the temporary directory.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from signoff.gate import Gate
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.shell import analyze
from signoff.testing import ScriptedChannel
from signoff.workspace import Workspace

# {home}: the stand-in home (absolute path). Each needs the programs listed.
ATTACKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "python os.system": ("""python3 -c 'import os; os.system("rm -rf {home}")'""", ("python3",)),
    "python shutil.rmtree": (
        """python3 -c "import shutil; shutil.rmtree('{home}')" """,
        ("python3",),
    ),
    "python subprocess argv": (
        """python3 -c "import subprocess; subprocess.run(['rm', '-rf', '{home}'])" """,
        ("python3",),
    ),
    "python heredoc": (
        "python3 - <<'EOF'\nimport shutil\nshutil.rmtree('{home}')\nEOF",
        ("python3",),
    ),
    "python fed by echo": (
        """echo "import shutil; shutil.rmtree('{home}')" | python3""",
        ("python3",),
    ),
    "node fs.rmSync": (
        """node -e "require('fs').rmSync('{home}', {{recursive: true, force: true}})" """,
        ("node",),
    ),
    "node execSync": (
        """node -e "require('child_process').execSync('rm -rf {home}')" """,
        ("node",),
    ),
    # File::Path refuses to remove the directory it runs in: from the parent it does.
    "perl rmtree": ("""cd {home}/.. && perl -MFile::Path -e 'rmtree("{home}")'""", ("perl",)),
    "perl system": ("""perl -e 'system("rm -rf {home}")'""", ("perl",)),
    "awk system": ("""awk 'BEGIN{{system("rm -rf {home}")}}'""", ("awk",)),
    "sed e command": ("""echo x | sed -n '1e rm -rf {home}'""", ("sed",)),
    "sed s///e": ("""echo x | sed 's|x|rm -rf {home}|e'""", ("sed",)),
    "xargs from echo": ("echo {home} | xargs rm -rf", ("xargs",)),
    "xargs -I sh -c": ("echo 'rm -rf {home}' | xargs -I{{}} sh -c '{{}}'", ("xargs",)),
    "xargs here-string": ("xargs rm -rf <<< {home}", ("xargs",)),
    "sh fed by echo": ("echo 'rm -rf {home}' | sh", ("sh",)),
    "git alias": ("git -c alias.x='!rm -rf {home}' x", ("git",)),
    "IFS separators": ("rm$IFS-rf$IFS{home}", ("rm",)),
    "flag-named file meets a glob": ("touch ./-rf; rm *", ("rm",)),
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A stand-in home with a workspace inside; refuses any path outside the temp dir."""
    root = tmp_path.resolve()
    assert str(root).startswith(str(Path(tempfile.gettempdir()).resolve()) + "/")
    home = root / "home"
    (home / "proj" / "src").mkdir(parents=True)
    (home / "notes.txt").write_text("precious\n")
    (home / "proj" / "src" / "keep.txt").write_text("precious too\n")
    return home


def _command(name: str, home: Path) -> str:
    template, needs = ATTACKS[name]
    missing = [p for p in needs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    command = template.format(home=home)
    assert str(home) in command or "{" not in template  # the target is the stand-in home
    return command


def _intact(home: Path) -> bool:
    return (home / "notes.txt").is_file() and (home / "proj" / "src" / "keep.txt").is_file()


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_attack_is_denied_in_auto_mode_and_nothing_is_destroyed(
    name: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = _command(name, home)
    ws = home / "proj"
    monkeypatch.setenv("HOME", str(home))
    policy = Policy(Settings(), workspace=ws, home=str(home), mode="auto")
    gate = Gate(policy, ScriptedChannel())
    tool = dict(Workspace(ws).as_mapping())["execute_command"]
    result = gate.execute(ToolCall("execute_command", {"command": command}), tool)
    assert not result.ran
    assert result.verdict.effect == "deny", result.verdict.reasons
    assert _intact(home)


@pytest.mark.slow  # controls: really runs each attack
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_control_the_attack_really_destroys_the_stand_in_home(
    name: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = _command(name, home)
    ws = home / "proj"
    monkeypatch.setenv("HOME", str(home))
    Workspace(ws).execute_command(command, timeout=60)
    assert not _intact(home), f"{name}: the payload did nothing, so the attack proves nothing"


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_reason_names_what_the_payload_does(name: str, home: Path) -> None:
    command = ATTACKS[name][0].format(home=home)
    result = analyze(command, workspace=str(home / "proj"), home=str(home), resolver=lambda p: p)
    assert result.effect == "deny"
    assert any(("deletes" in r or "kills" in r) for r in result.reasons), result.reasons
