"""A misspelt comparison in an argument rule is an error when the rule is loaded, naming
the rule and the operator; it is never accepted to then match something else (`a=>5` as
"a equals the text >5") or nothing at all. Errors from `Settings.from_rules` name the
list, the item and the caller's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import Policy, Settings
from signoff.exceptions import InvalidInput, SettingsError
from signoff.models import ToolCall
from signoff.settings import load_settings

MISSPELT = [
    ("deploy(amount>>5)", "'>>' is not an operator"),
    ("deploy(amount<<5)", "'<<' is not an operator"),
    ("deploy(amount=>5)", "write amount>=5"),
    ("deploy(amount=<5)", "write amount<=5"),
    ("deploy(amount<>5)", "'<>' is not an operator"),
    ("deploy(amount>=<5)", "'>=<' is not an operator"),
    ("deploy(env!=prod)", "'!=' is not an operator"),
    ("deploy(env!prod)", "'!' is not an operator"),
    ("deploy(amount=!5)", "'=!' is not an operator"),
    ("deploy(amount==<5)", "'==<' is not an operator"),
    ("deploy(env==prod)", "write env=prod"),
    ("deploy(amount===5)", "write amount=5"),
    ("deploy(=5)", "names no argument"),
    ("deploy(>5)", "names no argument"),
    ("deploy(env=prod, amount=>5)", "write amount>=5"),
]


@pytest.mark.parametrize(("rule", "message"), MISSPELT)
@pytest.mark.parametrize("kind", ["allow", "ask", "deny"])
def test_a_misspelt_operator_is_a_load_error(rule: str, message: str, kind: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Settings.from_rules(**{kind: [rule]})
    assert repr(rule) in str(caught.value) and message in str(caught.value)


@pytest.mark.parametrize(("rule", "message"), MISSPELT[:3])
def test_a_settings_file_names_the_file_the_line_and_the_operator(
    tmp_path: Path, rule: str, message: str
) -> None:
    (tmp_path / ".signoff").mkdir()
    (tmp_path / ".signoff" / "settings.toml").write_text(
        f"[permissions]\ndeny = [\n  {rule!r},\n]\n".replace("'", '"')
    )
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path, user=False)
    assert "settings.toml" in str(caught.value) and message in str(caught.value)


@pytest.mark.parametrize(
    ("rule", "call", "effect"),
    [
        ("deploy(amount>=5)", {"amount": 7}, "deny"),
        ("deploy(amount<5)", {"amount": 7}, "ask"),
        ("deploy(env=prod)", {"env": "prod"}, "deny"),
        ('deploy(title=">>> release")', {"title": ">>> release"}, "deny"),
        ("deploy(env=prod, amount<=5)", {"env": "prod", "amount": 5}, "deny"),
        # `=` then text that is no number: the text, as suggested rules write it
        ("deploy(to=<alice@example.com>)", {"to": "<alice@example.com>"}, "deny"),
        ("deploy(to=<alice@example.com>)", {"to": "alice@example.com"}, "ask"),
        ("deploy(note=>>> x)", {"note": ">>> x"}, "deny"),
    ],
)
def test_well_formed_comparisons_still_work(
    rule: str, call: dict[str, object], effect: str
) -> None:
    policy = Policy(Settings.from_rules(deny=[rule]), workspace="/nonexistent-ws")
    assert policy.evaluate(ToolCall("deploy", call)).effect == effect


def test_paths_that_start_with_tilde_or_bang_are_not_comparisons() -> None:
    settings = Settings.from_rules(deny=["read_secret(~/.ssh)", "keep(!notes.txt)"])
    assert [(r.tool, r.specifier) for r in settings.deny] == [
        ("read_secret", "~/.ssh"),
        ("keep", "!notes.txt"),
    ]


def test_from_rules_errors_name_the_list_the_item_and_the_caller() -> None:
    with pytest.raises(InvalidInput) as caught:
        Settings.from_rules(allow=["deploy(env=staging)"], deny=["ok", "deploy(env=staging"])
    text = str(caught.value)
    assert text.startswith("Settings.from_rules(deny[1]) at test_rule_operators.py:")
    assert "<code>" not in text
