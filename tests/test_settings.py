"""Settings files: merging (a deny anywhere wins), errors naming file and line, grants."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.exceptions import SettingsError
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import (
    LOCAL_FILE,
    PROJECT_FILE,
    add_local_allow_rule,
    load_settings,
    parse_duration,
    parse_settings,
)


def write(root: Path, rel: Path | str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config


def test_deny_in_any_file_wins(tmp_path: Path, user_home: Path) -> None:
    ws = tmp_path / "ws"
    write(user_home, "signoff/settings.toml", '[permissions]\ndeny = ["send_email"]\n')
    write(ws, PROJECT_FILE, '[permissions]\nallow = ["send_email"]\n')
    write(ws, LOCAL_FILE, '[permissions]\nallow = ["send_email(to=*)"]\n')
    settings = load_settings(ws)
    assert len(settings.sources) == 3
    verdict = Policy(settings, workspace=ws).evaluate(
        ToolCall("send_email", {"to": "a@b.c", "subject": "", "body": ""})
    )
    assert verdict.effect == "deny"
    assert verdict.rule == "send_email"


def test_local_scalars_win_and_caps_take_the_stricter(tmp_path: Path, user_home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, PROJECT_FILE, '[permissions]\ndefault_mode = "plan"\n[boundaries]\nmax_amount = 50\n')
    write(ws, LOCAL_FILE, '[permissions]\ndefault_mode = "auto"\n[boundaries]\nmax_amount = 500\n')
    settings = load_settings(ws)
    assert settings.mode == "auto"
    assert settings.max_amount == 50


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ('[permissions]\nallow = ["Bash(ls"]\n', 2, "Bash(ls"),
        ('[permissions]\n\ndeny = [\n  "ok",\n  "send_email(nope)",\n]\n', 5, "nope"),
        ('[permissions]\nallow = ["read_file()"]\n', 2, "empty specifier"),
        ('[permissions]\nallow = ["Bash(a:* b)"]\n', 2, "':*' may only end"),
        ('[permissions]\ndefault_mode = "yolo"\n', 2, "yolo"),
        ("[permisions]\nallow = []\n", 1, "unknown table [permisions]"),
        ("[permissions]\nalow = []\n", 2, "unknown key 'alow'"),
        ("[permissions]\nallow = [\n", None, "not valid TOML"),
        ('[permissions]\nallow = "read_file"\n', 2, "must be a list"),
        ('[boundaries]\nmax_amount = "ten"\n', 2, "must be a number"),
        ('[tools.send_email]\nexpires_after = "soon"\n', 2, "not a duration"),
    ],
)
def test_errors_name_file_line_and_rule(text: str, line: int | None, fragment: str) -> None:
    with pytest.raises(SettingsError) as info:
        parse_settings(text, "/p/.signoff/settings.toml")
    message = str(info.value)
    assert message.startswith("/p/.signoff/settings.toml")
    assert fragment in message
    if line is not None:
        assert info.value.line == line
        assert f"settings.toml:{line}:" in message


def test_rules_remember_where_they_were_written(tmp_path: Path) -> None:
    path = write(
        tmp_path, PROJECT_FILE, '# top\n[permissions]\nask = [\n  "Bash(git push:*)",\n]\n'
    )
    settings = parse_settings(path.read_text(), str(path))
    assert settings.ask[0].source == f"{path}:4"


def test_add_local_allow_rule_keeps_comments_and_is_idempotent(tmp_path: Path) -> None:
    original = (
        "# Grants saved by signoff.\n"
        "[permissions]\n"
        "allow = [\n"
        '    "read_file",  # always fine\n'
        "]\n"
        "\n"
        "[boundaries]\n"
        "max_amount = 10 # dollars\n"
    )
    path = write(tmp_path, LOCAL_FILE, original)
    add_local_allow_rule(tmp_path, "Bash(npm run test:*)")
    add_local_allow_rule(tmp_path, "Bash(npm run test:*)")
    text = path.read_text()
    for kept in ("# Grants saved by signoff.", "# always fine", "max_amount = 10 # dollars"):
        assert kept in text
    settings = load_settings(tmp_path, user=False)
    assert [r.text for r in settings.allow] == ["read_file", "Bash(npm run test:*)"]


def test_add_local_allow_rule_creates_the_file(tmp_path: Path) -> None:
    path = add_local_allow_rule(tmp_path, "fetch_url(domain:python.org)")
    assert path == tmp_path / LOCAL_FILE
    assert [r.text for r in load_settings(tmp_path, user=False).allow] == [
        "fetch_url(domain:python.org)"
    ]


def test_add_local_allow_rule_refuses_a_broken_file(tmp_path: Path) -> None:
    path = write(tmp_path, LOCAL_FILE, "[permissions\n")
    with pytest.raises(SettingsError):
        add_local_allow_rule(tmp_path, "read_file")
    assert path.read_text() == "[permissions\n"  # nothing lost


@pytest.mark.parametrize(
    ("value", "seconds"), [(90, 90.0), ("30m", 1800.0), ("2h", 7200.0), ("7d", 604800.0)]
)
def test_durations(value: object, seconds: float) -> None:
    assert parse_duration(value, "x") == seconds


def test_tool_expiry_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, PROJECT_FILE, '[tools.send_email]\nexpires_after = "2h"\n')
    assert parse_settings(path.read_text(), str(path)).tool_expiry == {"send_email": 7200.0}


def test_remove_local_allow_rule_keeps_the_rest(tmp_path: Path) -> None:
    from signoff.settings import remove_local_allow_rule

    path = write(
        tmp_path,
        LOCAL_FILE,
        '# mine\n[permissions]\nallow = [\n  "read_file",  # keep\n  "Bash(ls:*)",\n]\n',
    )
    assert remove_local_allow_rule(tmp_path, "Bash(ls:*)")
    assert not remove_local_allow_rule(tmp_path, "Bash(ls:*)")
    assert "# mine" in path.read_text() and "# keep" in path.read_text()
    assert [r.text for r in load_settings(tmp_path, user=False).allow] == ["read_file"]
