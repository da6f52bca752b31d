"""Issue 11, item 8: "always" is narrow.

The attack: the model orders the arguments so that the rule "always allow" would save is
keyed on a harmless one (`send_email(subject=weekly)`), or asks for a destructive command
with a glob so that the widest prefix is offered (`find:*`). Then one "always" from a
tired person allows every recipient or every `find … -delete`.

Here the suggestion is keyed on every declared subject argument and on the amount as a
bound, destructive commands get an exact rule or none, and Hypothesis checks the property:
a suggested rule, applied as an allow rule, never allows a call more dangerous than the
one approved (another recipient, a larger amount, another command or extra flags).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from email.utils import getaddresses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fast_loop import examples
from signoff.gate import Gate
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.testing import ScriptedChannel
from signoff.tools import Registry, spec_from_function

WORKSPACE = os.path.realpath(tempfile.mkdtemp(prefix="signoff-always-"))
os.makedirs(os.path.join(WORKSPACE, "build"), exist_ok=True)


def pay(account: str, amount: float, memo: str = "") -> str:
    return f"paid {amount} to {account}"


def post(channel: str, text: str) -> str:
    return f"posted to {channel}"


REGISTRY = Registry()
REGISTRY.add(
    spec_from_function(pay, tier="external", amount_arg="amount", subject_args=("account",))
)
REGISTRY.add(spec_from_function(post, tier="external"))  # no subject declared


def judge(call: ToolCall, allow: tuple[str, ...] = ()) -> Any:
    policy = Policy(
        Settings.from_rules(allow=list(allow)),
        workspace=WORKSPACE,
        home=os.path.join(WORKSPACE, "home"),
        registry=REGISTRY,
    )
    return policy.evaluate(call)


def allowed_by(rule: str, call: ToolCall) -> bool:
    verdict = judge(call, (rule,))
    return verdict.effect == "allow" and verdict.rule == rule


def mail(to: Any, cc: Any = None, subject: str = "weekly") -> ToolCall:
    args: dict[str, Any] = {"subject": subject, "to": to, "body": "hello"}
    if cc is not None:
        args["cc"] = cc
    return ToolCall("send_email", args)


# ------------------------------------------------------------------ the attacks, as found


def test_argument_order_does_not_pick_the_key() -> None:
    rule = judge(mail("attacker@evil.example")).suggested_rule
    assert rule == "send_email(to=attacker@evil.example, cc=)"
    for other in (
        mail("boss@corp.example"),
        mail("attacker@evil.example", ["x@y.example"]),
        mail("attacker@evil.example, boss@corp.example"),
    ):
        assert not allowed_by(rule, other), other.arguments
    assert allowed_by(rule, mail("Attacker <ATTACKER@evil.example>", subject="other"))


def test_the_cli_offers_the_narrow_rule(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    args = {"subject": "weekly", "to": "attacker@evil.example", "body": "x"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff",
            "check",
            "--tool",
            "send_email",
            "--args",
            json.dumps(args),
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout)["suggested_rule"] == (
        "send_email(to=attacker@evil.example, cc=)"
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("find . -name '*.pyc' -delete", None),
        ("rm -rf build/*", None),
        ("rm -rf $TARGET", None),
        ("rm -rf build", "Bash(rm -rf build)"),
        ("git push origin main", "Bash(git push origin main)"),
        ("git push -f origin feature", "Bash(git push -f origin feature)"),
        ("curl -s https://example.com/x", "Bash(curl -s https://example.com/x)"),
        ("npm run test", "Bash(npm run test:*)"),  # not destructive: a prefix is fine
    ],
)
def test_destructive_commands_get_an_exact_rule_or_none(command: str, expected: str | None) -> None:
    verdict = judge(ToolCall("Bash", {"command": command}))
    assert verdict.effect == "ask"
    assert verdict.suggested_rule == expected


def test_a_tool_without_declared_subjects_is_approved_once() -> None:
    verdict = judge(ToolCall("post", {"channel": "general", "text": "hi"}))
    assert verdict.effect == "ask" and verdict.suggested_rule is None


def test_the_amount_is_a_bound_and_every_subject_is_pinned() -> None:
    rule = judge(ToolCall("pay", {"memo": "rent", "account": "acme", "amount": 50})).suggested_rule
    assert rule == "pay(account=acme, amount<=50)"
    assert allowed_by(rule, ToolCall("pay", {"account": "acme", "amount": 20, "memo": "x"}))
    assert not allowed_by(rule, ToolCall("pay", {"account": "acme", "amount": 50.01}))
    assert not allowed_by(rule, ToolCall("pay", {"account": "evil", "amount": 1}))
    assert not allowed_by(rule, ToolCall("pay", {"account": "acme", "amount": "1e9"}))


def test_an_always_in_the_gate_grants_only_that_recipient(tmp_path: Path) -> None:
    channel = ScriptedChannel([Decision("approve_always", scope="session")])
    gate = Gate(Policy(Settings(), workspace=tmp_path), channel)
    sent: list[Any] = []

    def send_email(to: str, subject: str, body: str, cc: list[str] | None = None) -> str:
        sent.append((to, cc))
        return "sent"

    first = gate.execute(mail("team@corp.example"), send_email)
    assert first.ran and [g.rule for g in gate.grants] == ["send_email(to=team@corp.example, cc=)"]
    again = gate.execute(mail("Team <TEAM@corp.example>", subject="other"), send_email)
    assert again.ran and len(channel.prompts) == 1  # the grant covers the same recipient
    for other in (
        mail("attacker@evil.example"),
        mail("team@corp.example", ["x@evil.example"]),
        mail("team@corp.example, attacker@evil.example"),
    ):
        asked = len(channel.prompts)
        result = gate.execute(other, send_email)
        assert not result.ran, other.arguments  # asked again, and the script said no
        assert len(channel.prompts) == asked + 1
        assert gate.execute(mail("team@corp.example"), send_email).ran  # still granted
    assert [to for to, _ in sent] == [
        "team@corp.example",
        "Team <TEAM@corp.example>",
        *["team@corp.example"] * 3,
    ]


# ------------------------------------------------------------------ the property

ADDRESSES = ["bob@corp.example", "alice@corp.example", "eve@evil.example", "x@sub.corp.example"]


@st.composite
def spelled(draw: st.DrawFn) -> str:
    address = draw(st.sampled_from(ADDRESSES))
    form = draw(st.sampled_from(["plain", "upper", "angle", "named", "dot", "space"]))
    local, domain = address.split("@")
    return {
        "plain": address,
        "upper": address.upper(),
        "angle": f"<{address}>",
        "named": f"Some One <{address}>",
        "dot": f"{local}@{domain}.",
        "space": f" {address} ",
    }[form]


to_values = st.one_of(
    spelled(),
    st.lists(spelled(), min_size=2, max_size=3).map(", ".join),
)
cc_values = st.one_of(st.none(), st.just([]), st.lists(spelled(), min_size=1, max_size=3))


def recipients(call: ToolCall) -> set[str]:
    """An independent reading of who receives a mail (the stdlib's parser)."""
    values = [call.arguments.get("to")]
    values += list(call.arguments.get("cc") or [])
    found = getaddresses([v for v in values if isinstance(v, str)])
    return {addr.strip().lower().rstrip(".") for _, addr in found if addr}


@settings(max_examples=examples(150), deadline=None)
@given(
    approved_to=to_values,
    approved_cc=cc_values,
    subject=st.text(max_size=12),
    candidates=st.lists(st.tuples(to_values, cc_values), min_size=1, max_size=6),
)
def test_a_suggested_mail_rule_never_allows_another_recipient(
    approved_to: str, approved_cc: Any, subject: str, candidates: list[tuple[str, Any]]
) -> None:
    approved = mail(approved_to, approved_cc, subject)
    rule = judge(approved).suggested_rule
    if rule is None:
        return  # approve once: nothing remembered, nothing widened
    assert allowed_by(rule, approved)
    for to, cc in candidates:
        candidate = mail(to, cc, "anything")
        if allowed_by(rule, candidate):
            assert recipients(candidate) <= recipients(approved), (rule, candidate.arguments)


FINITE = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=examples(150), deadline=None)
@given(
    account=st.sampled_from(["acme", "Acme", "evil", "acme "]),
    amount=st.one_of(st.integers(0, 10**9), st.floats(0, 1e9, allow_nan=False)),
    others=st.lists(
        st.tuples(
            st.sampled_from(["acme", "evil", "ACME", "acme "]),
            st.one_of(st.integers(0, 10**9), FINITE, st.text(max_size=6)),
        ),
        max_size=6,
    ),
)
def test_a_suggested_payment_rule_never_allows_more(
    account: str, amount: float, others: list[tuple[str, Any]]
) -> None:
    rule = judge(ToolCall("pay", {"account": account, "amount": amount})).suggested_rule
    assert rule is not None
    for other_account, other_amount in others:
        candidate = ToolCall("pay", {"account": other_account, "amount": other_amount})
        if allowed_by(rule, candidate):
            assert other_account == account
            assert isinstance(other_amount, int | float) and other_amount <= amount


PROGRAMS = [
    ("rm", ["-r", "-f", "-rf", "-i", "--force"], ["build", "src", "build/x", "*.o"]),
    ("git push", ["-f", "--force", "-u", "--mirror", "--tags"], ["origin", "main", "+main", "dev"]),
    ("curl", ["-s", "-o", "-L", "-X"], ["https://a.example/x", "https://b.example/"]),
    ("find .", ["-delete", "-print"], ["-name", "'*.pyc'", "x"]),
    ("chmod", ["-R"], ["777", "go-w", "build"]),
    ("npm run", ["--force"], ["test", "build"]),
]


@st.composite
def command_of(draw: st.DrawFn, program: tuple[str, list[str], list[str]]) -> str:
    name, flags, operands = program
    words = draw(st.lists(st.sampled_from(flags + operands), max_size=4))
    return " ".join([name, *words])


@st.composite
def command_pair(draw: st.DrawFn) -> tuple[str, list[str]]:
    program = draw(st.sampled_from(PROGRAMS))
    approved = draw(command_of(program))
    others = draw(
        st.lists(
            st.one_of(command_of(program), command_of(draw(st.sampled_from(PROGRAMS)))),
            min_size=1,
            max_size=6,
        )
    )
    return approved, others


@settings(max_examples=examples(150), deadline=None)
@given(pair=command_pair())
def test_a_suggested_shell_rule_never_allows_another_or_a_wider_command(
    pair: tuple[str, list[str]],
) -> None:
    approved, others = pair
    verdict = judge(ToolCall("Bash", {"command": approved}))
    rule = verdict.suggested_rule
    if rule is None:
        return
    assert verdict.parts, verdict
    part = next(p for p in verdict.parts if p.effect == "ask")
    exact = not rule.endswith(":*)")
    if part.cls in ("destructive", "network", "privilege"):
        assert exact, rule  # never a prefix for what cannot be undone
    assert "*" not in rule[:-3] and "$" not in rule
    prefix = rule[len("Bash(") : -3 if not exact else -1]
    for other in others:
        if allowed_by(rule, ToolCall("Bash", {"command": other})):
            words = " ".join(other.split())
            if exact:
                assert words == prefix, (rule, other)
            else:
                assert words == prefix or words.startswith(prefix + " "), (rule, other)


# ------------------------------------------------------------------ paths

NAMES = [
    "a.txt",
    "b.txt",
    "out*.o",
    "out1.o",
    "[x].md",
    "x.md",
    "dir",
    "dir/in.txt",
    "dir2/in.txt",
    "a?.txt",
    "ab.txt",
]
for _name in NAMES:
    _target = Path(WORKSPACE, "tree", _name)
    _target.parent.mkdir(parents=True, exist_ok=True)
    if _name != "dir":
        _target.write_text("x")
os.symlink(os.path.join(WORKSPACE, "tree", "dir"), os.path.join(WORKSPACE, "tree", "link"))
SPELLINGS = [
    *(f"tree/{n}" for n in NAMES),
    "tree/link/in.txt",
    "tree/dir/../a.txt",
    "./tree/a.txt",
    "tree//b.txt",
    f"{WORKSPACE}/tree/ab.txt",
    "tree/link",
]


@settings(max_examples=examples(150), deadline=None)
@given(
    tool=st.sampled_from(["delete_file", "write_file", "read_file"]),
    approved=st.sampled_from(SPELLINGS),
    candidates=st.lists(st.sampled_from(SPELLINGS), min_size=1, max_size=6),
)
def test_a_suggested_path_rule_never_allows_another_path(
    tool: str, approved: str, candidates: list[str]
) -> None:
    args = {"content": "x"} if tool == "write_file" else {}
    rule = judge(ToolCall(tool, {"path": approved, **args})).suggested_rule
    if rule is None:
        return
    approved_real = os.path.realpath(os.path.join(WORKSPACE, approved))
    for other in candidates:
        if allowed_by(rule, ToolCall(tool, {"path": other, **args})):
            real = os.path.realpath(os.path.join(WORKSPACE, other))
            # the same file, or (for a directory) something inside what was approved
            assert real == approved_real or real.startswith(approved_real + "/"), (rule, other)


# ------------------------------------------------------------------ statistics


def _approved_five_times(
    name: str, args: dict[str, Any], suggested: str, parts: tuple[dict[str, str], ...] = ()
) -> Any:
    from signoff.audit.stats import load_stats
    from signoff.models import Request, Verdict
    from signoff.store import open_store

    store = open_store("memory:")
    for i in range(5):
        verdict = Verdict.from_json(
            {
                "effect": "ask",
                "risk": "high",
                "rule": None,
                "reasons": ["?"],
                "tier": "external",
                "suggested_rule": suggested,
                "parts": list(parts),
            }
        )
        call = ToolCall(name, args, f"c{i}")
        store.record("verdict", {"call": call.to_json(), "verdict": verdict.to_json()}, run_id="r")
        request = store.create_request(Request("", call, verdict, run_id="r"))
        store.decide(request.id, Decision("approve"), actor="ann")
    return {s.rule for s in load_stats(store).suggestions if s.kind == "allow"}


def test_statistics_drop_wide_rules_recorded_by_an_older_signoff() -> None:
    """History written before this change still carries the wide rules; the stats page and
    its one-click button must not offer them."""
    mail = {"subject": "weekly", "to": "attacker@evil.example", "body": "x"}
    assert _approved_five_times("send_email", mail, "send_email(subject=weekly)") == set()
    narrow = "send_email(to=attacker@evil.example, cc=)"
    assert _approved_five_times("send_email", mail, narrow) == {narrow}
    find = {"command": "find . -name '*.pyc' -delete"}
    part = ({"command": "find . -name *.pyc -delete", "class": "destructive", "effect": "ask"},)
    assert _approved_five_times("Bash", find, "Bash(find:*)", part) == set()
    npm = {"command": "npm run test"}
    part = ({"command": "npm run test", "class": "opaque", "effect": "ask"},)
    assert _approved_five_times("Bash", npm, "Bash(npm run test:*)", part) == {
        "Bash(npm run test:*)"
    }
