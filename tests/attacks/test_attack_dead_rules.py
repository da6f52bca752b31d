"""Issue 11, item 4: a rule that can never match is an error at load, naming file and line.

A deny rule that matches nothing fails open in silence: the person believes a guard is in
place. Each row writes a real settings file with a good rule, then the dead one on a known
line, and loads it (the library, then the real CLI): the error names the file, the line
and what is wrong, and nothing is judged with the broken settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from signoff.exceptions import SettingsError
from signoff.rules import parse_rule
from signoff.settings import load_settings

DEAD_RULES = [
    ("BASH(rm:*)", "case-sensitive"),
    ("bAsh(rm -rf:*)", "case-sensitive"),
    ("READ_FILE(./.env)", "case-sensitive"),
    ("Send_Email(to=*@competitor.com)", "case-sensitive"),
    ("webfetch(domain:evil.example)", "case-sensitive"),
    ("execute_*", "glob"),
    ("send_*(to=*@competitor.com)", "glob"),
    ("*_file(secrets/**)", "glob"),
    ("pay(amount>=abc)", "not a number"),
    ("pay(amount<=nan)", "finite"),
    ("pay(amount>inf)", "finite"),
    ("pay(amount>-Infinity)", "finite"),
    ("pay(amount>1,000)", "not an argument matcher"),
    ("fetch_url(domain:evil.*)", "not a domain"),
    ("fetch_url(domain:evil.example/path)", "not a domain"),
    ("fetch_url(domain:evil.example:8080)", "not a domain"),
    ("fetch_url(domain:ev*l.example)", "not a domain"),
    ("WebFetch(domain:-evil.example)", "not a domain name"),
    ("fetch_url(evil.example)", "neither domain:NAME nor a URL"),
    ("WebFetch(evil.example/*)", "neither domain:NAME nor a URL"),
    ("x(customer==y)", "'==' is not an operator"),
    ("send_email(to==boss@example.com)", "'==' is not an operator"),
]


@pytest.mark.parametrize(("rule", "why"), DEAD_RULES, ids=[r[0] for r in DEAD_RULES])
@pytest.mark.parametrize("where", ["deny", "ask", "allow"])
def test_a_rule_that_can_never_match_is_refused_with_file_and_line(
    tmp_path: Path, rule: str, why: str, where: str
) -> None:
    settings = tmp_path / ".signoff" / "settings.toml"
    settings.parent.mkdir()
    toml_rule = rule.replace("\\", "\\\\").replace('"', '\\"')
    settings.write_text(f'[permissions]\n{where} = [\n  "Bash(git status)",\n  "{toml_rule}",\n]\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path, user=False)
    assert caught.value.path == str(settings)
    assert caught.value.line == 4
    message = str(caught.value)
    assert f"{settings}:4" in message and why in message and rule in message


def test_the_cli_refuses_to_judge_with_a_dead_deny_rule(tmp_path: Path) -> None:
    settings = tmp_path / ".signoff" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('[permissions]\ndeny = [\n  "BASH(rm:*)",\n]\nallow = ["Bash"]\n')
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "signoff", "check", "--shell", "rm -rf build"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert f"{settings}:3" in done.stderr and "case-sensitive" in done.stderr
    assert "allow" not in done.stdout  # no verdict was given with the broken settings


@pytest.mark.parametrize(
    "rule",
    [
        "Bash(rm:*)",
        "bash(rm:*)",
        "shell(rm:*)",
        "Read(./.env)",
        "read_file(./.env)",
        "WebFetch(domain:evil.example)",
        "fetch_url(domain:*.evil.example)",
        "fetch_url(domain:127.0.0.1)",
        "fetch_url(domain:b\u00fccher.example)",
        "fetch_url(https://evil.example/*)",
        "pay(amount<=100.5)",
        "pay(amount>-5)",
        "my_tool(customer=y)",
        "my_tool(src/**)",
        "MyTool",
        "*",
        "send_email(to=*@competitor.com, cc=)",
    ],
)
def test_rules_that_can_match_still_load(rule: str) -> None:
    assert parse_rule(rule).text == rule


@pytest.mark.parametrize(
    "domain",
    [
        "evil.*",
        "https://docs.python.org",
        "docs.python.org/3",
        "docs.python.org:443",
        "*docs.python.org",
        "",
    ],
)
def test_an_allowed_domain_that_is_not_a_domain_is_refused(tmp_path: Path, domain: str) -> None:
    settings = tmp_path / ".signoff" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text(f'[boundaries]\nallowed_domains = [\n  "python.org",\n  "{domain}",\n]\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path, user=False)
    assert caught.value.path == str(settings) and "allowed_domains" in str(caught.value)
    if domain:
        assert caught.value.line == 4
