"""Issue 11, item 4: a deny rule names an action, not a spelling.

Every row is an attack: another spelling of a denied action, judged by the real policy
with the attack review's settings (deny `git push --force`, `rm -rf`, `curl`,
`npm publish`, mail to the competitor, fetching localhost; broad allows beside them). Each
must be deny. The controls show the allows still allow what they allowed, and a real
`fetch_url` through the Gate shows a denied host is never contacted by any spelling.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fast_loop import examples
from signoff.gate import Gate
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.testing import ScriptedChannel
from signoff.tools import Registry
from signoff.workspace import Workspace

DENY = [
    "Bash(git push --force:*)",
    "Bash(rm -rf:*)",
    "Bash(curl:*)",
    "Bash(npm publish:*)",
    "send_email(to=*@competitor.com)",
    "send_email(cc=*@competitor.com)",
    "fetch_url(domain:localhost)",
]
ALLOW = [
    "Bash(git push:*)",
    "Bash(git:*)",
    "Bash(rm:*)",
    "Bash(npm:*)",
    "Bash(npx:*)",
    "Bash(pnpm:*)",
    "Bash(yarn:*)",
    "Bash(busybox:*)",
    "Bash(toybox:*)",
    "Bash(parallel:*)",
    "Bash(script:*)",
    "Bash(gdb:*)",
    "Bash(chronic:*)",
    "send_email",
    "fetch_url",
]


@pytest.fixture(scope="module")
def policy_for_properties(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    root = tmp_path_factory.mktemp("ws")
    (root / "build").mkdir()
    return Policy(
        Settings.from_rules(deny=DENY, allow=ALLOW),
        workspace=root,
        home=str(root / "home"),
        registry=Registry(),
    )


@pytest.fixture
def policy(tmp_path: Path) -> Policy:
    (tmp_path / "build").mkdir()
    return Policy(
        Settings.from_rules(deny=DENY, allow=ALLOW),
        workspace=tmp_path,
        home=str(tmp_path / "home"),
        registry=Registry(),
    )


SHELL_SPELLINGS = [
    # git push --force
    "git push -f origin main",
    "git push origin main --force",
    "git push origin main -f",
    "git push origin +main",
    "git push origin +main:main",
    "git push origin +HEAD:refs/heads/main",
    "git push --force-with-lease",
    "git push --force-with-lease=main origin main",
    "git push --force-if-includes --force-with-lease origin main",
    "git push --mirror",
    "git push --delete origin old",
    "git push -d origin old",
    "git push origin :old",
    "git push --prune origin",
    "git -C . push --force",
    "git -C . -c color.ui=never push origin main --force",
    "git --git-dir=.git push -f",
    "git --no-pager push -fu origin main",
    "git push -uf origin main",
    "git push --forc origin main",  # git takes unambiguous abbreviations
    "git push --mirr",
    "git -c alias.p='push --force' p origin main",
    "/usr/bin/git push -f",
    "git push -- origin +main",
    "sudo git push -f",
    "env GIT_TRACE=0 git push -f",
    "git push --force origin main && echo done",
    "echo start; git push origin +main",
    "git push origin '+refs/heads/*:refs/heads/*'",
    "git -C. push -f",
    "git -c remote.origin.mirror=true push",
    "git -c remote.origin.push=+refs/heads/main push",
    "git --config-env=remote.origin.mirror=FORCE push",
    "git -c alias.p='!git push -f' p",
    "git -c alias.p='!git status && git push --force' p",
    "git submodule foreach git push -f",
    "git push $(printf %s -f) origin main",
    "git $(echo push) -f",
    "git push origin `echo +main`",
    "git submodule foreach --recursive 'git push --force'",
    # rm -rf
    "rm -fr build",
    "rm -r -f build",
    "rm -f -r build",
    "rm --recursive --force build",
    "rm --force --recursive build",
    "rm -R -f build",
    "rm -Rf build",
    "rm -rfv build",
    "rm -vfr build",
    "rm build -rf",
    "rm build -r -f",
    "rm --recur --forc build",
    "rm -r --force build",
    "/bin/rm -rf build",
    "/usr/bin/rm -fr build",
    "./../../bin/rm -rf build",
    "command rm -fr build",
    "nice rm -r -f build",
    "timeout 5 rm -fr build",
    "xargs rm -fr < list.txt",
    "sh -c 'rm -fr build'",
    "find . -name x -exec rm -fr {} +",
    "busybox rm -rf build",
    "rm -\\rf build",
    'r"m" -fr build',
    "eval 'rm -fr build'",
    "exec rm -fr build",
    "rm -r --interactive=never build",
    "rm -r {-f,build}",  # brace expansion makes -f a word of its own
    "rm {-r,-f} build",
    "rm -r $(printf %s -f) build",  # a word known only at run time may be the flag
    "F=$(printf %s -f); rm -r $F build",
    "git rebase --exec 'rm -rf build' HEAD~1",
    "git rebase -x 'make && rm -fr build' HEAD~1",
    "git bisect run rm -rf build",
    "parallel rm -rf ::: build",
    "parallel -j 2 rm -rf ::: build",
    "script -c 'rm -rf build'",
    "script -qc 'rm -rf build' /dev/null",
    "gdb -batch -ex run --args rm -rf build",
    "chronic rm -rf build",
    "toybox rm -rf build",
    # curl
    "/usr/bin/curl https://example.com",
    "/usr/local/bin/curl -s https://example.com",
    "env curl https://example.com",
    '"cu"rl https://example.com',
    "c\\url https://example.com",
    # npm publish
    "npm pub",
    "npm publ",
    "npm --registry https://r.example publish",
    "npm publish --registry https://r.example",
    "npm --tag beta pub",
    "npm -g publish",
    "/usr/local/bin/npm publish",
    "npm --loglevel silent publish",
    "npm --unknown-flag publish",
    "npx npm publish",
    "npx -y npm publish",
    "npx -p npm npm publish",
    "npx -c 'npm publish'",
    "npm exec -- npm publish",
    "npm exec npm publish",
    "npm x -- npm pub",
    "pnpm dlx npm publish",
    "yarn dlx npm publish",
    "npm $(echo publish)",
]


@pytest.mark.parametrize("command", SHELL_SPELLINGS)
def test_every_spelling_of_a_denied_command_is_denied(policy: Policy, command: str) -> None:
    verdict = policy.evaluate(ToolCall("Bash", {"command": command}))
    assert verdict.effect == "deny", (command, verdict.reasons)
    assert verdict.rule in DENY, verdict.rule


SHELL_CONTROLS = [  # allowed before, allowed now: the allow rules kept their meaning
    ("git push origin main", "allow"),
    ("git push -u origin main", "allow"),
    ("git push --tags", "allow"),
    ("git status", "allow"),
    ("git log --oneline", "allow"),
    ("rm -r build", "allow"),
    ("rm -f build/x", "allow"),
    ("npm install", "allow"),
    ("npm run build", "allow"),
    ("npm view left-pad", "allow"),
    ("npm exec -- eslint .", "allow"),
    ("git -c color.ui=never push origin main", "allow"),
    ("git submodule foreach git status", "allow"),
    ("parallel echo ::: a b", "allow"),
    ("git commit -m 'never rm -rf build'", "allow"),  # a message is not a command
    ("echo git push -f", "allow"),
    ("echo {a,b}", "allow"),
    ("git status $X", "allow"),
]


@pytest.mark.parametrize(("command", "effect"), SHELL_CONTROLS)
def test_what_the_allow_rules_allowed_stays_allowed(
    policy: Policy, command: str, effect: str
) -> None:
    assert policy.evaluate(ToolCall("Bash", {"command": command})).effect == effect


def _email(to: Any, cc: Any = None) -> ToolCall:
    args: dict[str, Any] = {"to": to, "subject": "hi", "body": "x"}
    if cc is not None:
        args["cc"] = cc
    return ToolCall("send_email", args)


RECIPIENTS: list[tuple[str, Any, Any]] = [
    ("case", "CEO@Competitor.com", None),
    ("all caps", "X@COMPETITOR.COM", None),
    ("trailing space", "x@competitor.com ", None),
    ("leading space", "  x@competitor.com", None),
    ("trailing dot", "x@competitor.com.", None),
    ("angle brackets", "<x@competitor.com>", None),
    ("display name", "Boss <x@competitor.com>", None),
    ("quoted display name with comma", '"Doe, John" <x@competitor.com>', None),
    ("display name that looks like a friend", '"ok@friend.org" <x@competitor.com>', None),
    ("comma list", "a@friend.org, x@competitor.com", None),
    ("semicolon list", "a@friend.org; x@competitor.com", None),
    ("subdomain", "x@mail.competitor.com", None),
    ("zero-width space", "x@compet\u200bitor.com", None),
    ("soft hyphen", "x@compet\u00aditor.com", None),
    ("fullwidth at and letters", "x\uff20competitor.com", None),
    ("cc list", "a@friend.org", ["x@competitor.com"]),
    ("cc list, second", "a@friend.org", ["b@friend.org", "X@Competitor.COM."]),
    ("cc as tuple (Python API)", "a@friend.org", ("x@competitor.com",)),
    ("to as tuple (Python API)", ("x@competitor.com",), None),
    ("to as nested list", [["x@competitor.com"]], None),
    ("to wrapped in a dict (Python API)", {"address": "x@competitor.com"}, None),
    ("cc wrapped in dicts", "a@friend.org", [{"email": "x@competitor.com"}]),
    ("header injection", "a@friend.org\nBcc: x@competitor.com", None),
    ("quoted local part", '"x"@competitor.com', None),
    ("tab and newline", "\tx@competitor.com\n", None),
    ("space separated", "x@competitor.com a@friend.org", None),
    ("newline separated", "x@competitor.com\na@friend.org", None),
    ("unbalanced bracket", "x@competitor.com>", None),
    ("mailto", "MAILTO:x@competitor.com", None),
    ("comment", "x@competitor.com (the boss)", None),
    ("plus tag", "x+news@competitor.com", None),
]


@pytest.mark.parametrize(("name", "to", "cc"), RECIPIENTS, ids=[r[0] for r in RECIPIENTS])
def test_every_spelling_of_a_denied_recipient_is_denied(
    policy: Policy, name: str, to: Any, cc: Any
) -> None:
    verdict = policy.evaluate(_email(to, cc))
    assert verdict.effect == "deny", (name, verdict.reasons)


def test_other_recipients_are_still_allowed(policy: Policy) -> None:
    for to in ("a@friend.org", "Friend <a@friend.org>", "x@notcompetitor.com"):
        assert policy.evaluate(_email(to)).effect == "allow", to


URLS = [
    "http://localhost/",
    "http://LOCALHOST/",
    "http://localhost./",
    "http://local\u00adhost/",
    "http://local\u200bhost/",
    "http://127.0.0.1/",
    "http://127.1/",
    "http://127.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://0/",
    "http://0.0.0.0/",
    "http://127.2.3.4/",
    "http://api.localhost/",
    "http://user@localhost:8080/x",
    "http://friend.org@127.1/",
    "HTTP://LocalHost:80/",
    "http://evil.example\\@localhost/",
    "http://127.000.000.001/",
    "http://\u2460\u2461\u2466.0.0.1/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://localhost\u3002/",
]


@pytest.mark.parametrize("url", URLS)
def test_every_spelling_of_a_denied_host_is_denied(policy: Policy, url: str) -> None:
    verdict = policy.evaluate(ToolCall("fetch_url", {"url": url}))
    assert verdict.effect == "deny", (url, verdict.reasons)


def test_other_hosts_are_still_allowed(policy: Policy) -> None:
    for url in ("https://example.com/", "http://10.0.0.1/", "http://localhost.example.com/"):
        assert policy.evaluate(ToolCall("fetch_url", {"url": url})).effect == "allow", url


@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("fetch_url(domain:127.0.0.1)", "http://2130706433/"),
        ("fetch_url(domain:127.0.0.1)", "http://localhost/"),
        ("fetch_url(domain:evil.example)", "http://EVIL.example./x"),
        ("fetch_url(domain:evil.example)", "http://ev\u00adil.example/x"),
        ("fetch_url(domain:xn--bcher-kva.example)", "http://b\u00fccher.example/"),
        ("fetch_url(domain:b\u00fccher.example)", "http://xn--bcher-kva.example/"),
        ("fetch_url(https://evil.example/*)", "https://EVIL.example/x"),
        ("fetch_url(https://evil.example/*)", "https://me@evil.example/x"),
        ("fetch_url(https://evil.example/*)", "https://ev\u200bil.example/x"),
        ("fetch_url(http://127.0.0.1:*)", "http://127.1:8080/"),
        ("WebFetch(domain:169.254.169.254)", "http://2852039166/latest/meta-data"),
    ],
)
def test_url_and_ip_rules_compare_canonically(tmp_path: Path, rule: str, url: str) -> None:
    policy = Policy(Settings.from_rules(deny=[rule], allow=["fetch_url"]), workspace=tmp_path)
    assert policy.evaluate(ToolCall("fetch_url", {"url": url})).effect == "deny"


def test_allowed_domains_compare_canonically(tmp_path: Path) -> None:
    policy = Policy(
        Settings.from_rules(allow=["fetch_url"], allowed_domains=("docs.python.org",)),
        workspace=tmp_path,
    )
    for url, effect in [
        ("https://DOCS.python.org./3/", "allow"),
        ("https://docs.py\u00adthon.org/", "allow"),  # the same host, spelled with a hyphen
        ("https://127.1/", "ask"),
        ("https://docs.python.org.evil.com/", "ask"),
    ]:
        assert policy.evaluate(ToolCall("fetch_url", {"url": url})).effect == effect, url


def test_allow_rules_do_not_widen_by_normalisation(tmp_path: Path) -> None:
    """An allow rule still needs its text to match: normalising only ever catches more
    for deny and ask rules."""
    policy = Policy(
        Settings.from_rules(
            allow=[
                "send_email(to=*@us.example)",
                "Bash(rm build)",
                "fetch_url(https://docs.example/*)",
            ]
        ),
        workspace=tmp_path,
    )
    asks = [
        _email("evil@x.example, a@us.example"),  # a list is every address, not its end
        _email('"a@us.example" <evil@x.example>'),
        _email({"to": "a@us.example"}),  # a structure never satisfies an allow matcher
        ToolCall("Bash", {"command": "rm -rf build"}),
        ToolCall("fetch_url", {"url": "https://docs.example@evil.example/"}),
    ]
    for call in asks:
        assert policy.evaluate(call).effect == "ask", call.arguments


@pytest.mark.parametrize(
    ("rule", "amount"),
    [
        ("pay(amount>1000)", "5000"),
        ("pay(amount>1000)", "1e9"),
        ("pay(amount>1000)", "inf"),
        ("pay(amount>1000)", "nan"),
        ("pay(amount>1000)", "lots"),
        ("pay(amount>1000)", True),
        ("pay(amount>1000)", {"value": 5000}),
        ("pay(amount>1000)", [5000]),
    ],
)
def test_an_amount_that_is_not_a_plain_number_is_caught_by_a_deny_bound(
    tmp_path: Path, rule: str, amount: Any
) -> None:
    policy = Policy(Settings.from_rules(deny=[rule], allow=["pay"]), workspace=tmp_path)
    assert policy.evaluate(ToolCall("pay", {"amount": amount, "to": "bob"})).effect == "deny"


# ------------------------------------------------------------------ a real fetch


class _Counter(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"secret from localhost")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[int, list[str]]]:
    handler = type("Handler", (_Counter,), {"hits": []})
    httpd = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], handler.hits
    finally:
        httpd.shutdown()
        httpd.server_close()


# Spellings of 127.0.0.1 that urllib really connects to (the control proves it).
REACHABLE = [
    "127.1",
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    "127.0.0.1",
    "localhost",
    "LOCALHOST",
    "0",
]


def test_real_fetch_no_spelling_of_localhost_is_fetched(
    tmp_path: Path, server: tuple[int, list[str]]
) -> None:
    port, hits = server
    ws = Workspace(tmp_path, fetch_timeout=5)
    urls = [f"http://{host}:{port}/{i}" for i, host in enumerate(REACHABLE)]

    # Control: with only the allow rule, every spelling reaches the server.
    open_gate = Gate(
        Policy(Settings.from_rules(allow=["fetch_url"]), workspace=tmp_path), ScriptedChannel()
    )
    for url in urls:
        result = open_gate.execute(ToolCall("fetch_url", {"url": url}), ws.fetch_url)
        assert result.ran and "secret from localhost" in result.content, url
    assert len(hits) == len(urls)
    hits.clear()

    policy = Policy(
        Settings.from_rules(deny=["fetch_url(domain:localhost)"], allow=["fetch_url"]),
        workspace=tmp_path,
    )
    for url in [*urls, f"http://[::ffff:127.0.0.1]:{port}/x", f"http://local\u00adhost:{port}/"]:
        channel = ScriptedChannel()  # a gate per call: three refusals in a row stop a run
        result = Gate(policy, channel).execute(ToolCall("fetch_url", {"url": url}), ws.fetch_url)
        assert not result.ran and result.verdict.effect == "deny", url
        assert "secret" not in result.content
        assert channel.prompts == []  # denied outright, nobody was asked
    assert hits == []  # nothing reached the server


# ------------------------------------------------------------------ spellings, generated

RECURSIVE = ["-r", "-R", "--recursive", "--recur", "--rec"]
FORCE = ["-f", "--force", "--forc", "--interactive=never"]
HARMLESS = ["-v", "--verbose", "-d", "--one-file-system", "-i", "--inter", "--interactive"]
PROGRAM = [
    "rm",
    "/bin/rm",
    "/usr/bin/rm",
    "command rm",
    "sudo rm",
    "env rm",
    "nice rm",
    "timeout 5 rm",
    "busybox rm",
]


@st.composite
def rm_spelling(draw: st.DrawFn, force: bool) -> str:
    """`rm` with -r and (if `force`) -f, spelled any way: bundled or not, short or long,
    before, between or after the operands, with harmless options and a program path."""
    flags = [draw(st.sampled_from(RECURSIVE))]
    if force:
        flags.append(draw(st.sampled_from(FORCE)))
    flags += draw(st.lists(st.sampled_from(HARMLESS), max_size=2))
    flags = draw(st.permutations(flags))
    shorts = [f for f in flags if len(f) == 2]
    if len(shorts) > 1 and draw(st.booleans()):  # bundle them: -rf, -fRv
        flags = [f for f in flags if len(f) != 2] + ["-" + "".join(f[1] for f in shorts)]
    operands = draw(st.lists(st.sampled_from(["build", "dist", "out/x"]), min_size=1, max_size=2))
    words = list(operands)
    for flag in flags:
        words.insert(draw(st.integers(0, len(words))), flag)
    return " ".join([draw(st.sampled_from(PROGRAM)), *words])


@settings(max_examples=examples(300), deadline=None)
@given(command=rm_spelling(force=True))
def test_any_spelling_of_rm_rf_is_denied(policy_for_properties: Policy, command: str) -> None:
    verdict = policy_for_properties.evaluate(ToolCall("Bash", {"command": command}))
    assert verdict.effect == "deny", (command, verdict.reasons)


@settings(max_examples=examples(200), deadline=None)
@given(command=rm_spelling(force=False))
def test_rm_without_force_is_not_caught_by_the_rm_rf_rule(
    policy_for_properties: Policy, command: str
) -> None:
    verdict = policy_for_properties.evaluate(ToolCall("Bash", {"command": command}))
    assert verdict.rule != "Bash(rm -rf:*)", command  # the rule is precise, not "any rm"


FORCED_PUSH = [
    "-f",
    "--force",
    "--forc",
    "--force-with-lease",
    "--force-with-lease=main",
    "--force-if-includes",
    "--mirror",
    "--delete",
    "-d",
    "--prune",
]
PUSH_OPTS = ["-u", "--tags", "-q", "--no-verify", "-o ci.skip", "--repo origin"]
GIT_GLOBALS = [
    "-C .",
    "-c color.ui=never",
    "--no-pager",
    "--git-dir=.git",
    "-P",
    "--work-tree .",
    "-c push.default=current",
]


@st.composite
def push_spelling(draw: st.DrawFn, force: bool) -> str:
    head = ["git", *draw(st.lists(st.sampled_from(GIT_GLOBALS), max_size=2)), "push"]
    options = draw(st.lists(st.sampled_from(PUSH_OPTS), max_size=2))
    refs = draw(st.lists(st.sampled_from(["origin", "main", "HEAD:main", "dev"]), max_size=2))
    if force:
        how = draw(st.sampled_from(["flag", "plus", "colon"]))
        if how == "flag" or not refs:
            options.append(draw(st.sampled_from(FORCED_PUSH)))
        else:
            index = draw(st.integers(0, len(refs) - 1))
            refs[index] = ("+" if how == "plus" else ":") + refs[index].split(":")[-1]
    words = list(refs)
    for option in options:
        words.insert(draw(st.integers(0, len(words))), option)
    return " ".join([*head, *words])


@settings(max_examples=examples(300), deadline=None)
@given(command=push_spelling(force=True))
def test_any_spelling_of_a_forced_push_is_denied(
    policy_for_properties: Policy, command: str
) -> None:
    verdict = policy_for_properties.evaluate(ToolCall("Bash", {"command": command}))
    assert verdict.effect == "deny", (command, verdict.reasons)


@settings(max_examples=examples(200), deadline=None)
@given(command=push_spelling(force=False))
def test_a_plain_push_is_still_allowed(policy_for_properties: Policy, command: str) -> None:
    verdict = policy_for_properties.evaluate(ToolCall("Bash", {"command": command}))
    assert verdict.effect == "allow", (command, verdict.reasons)


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("command rm -rf -v ~", "deny"),  # was allow: "command only reads"
        ("command rm -rvf ~", "deny"),
        ("command rm -v -rf build", "deny"),  # the rm -rf rule, not "only reads"
        ("command -v rm", "allow"),  # the lookup itself still only reads
        ("command -p -v rm", "allow"),
    ],
)
def test_options_after_the_wrapped_program_are_the_programs(
    policy: Policy, command: str, effect: str
) -> None:
    assert policy.evaluate(ToolCall("Bash", {"command": command})).effect == effect


# ------------------------------------------------------------------ values, generated

INVISIBLE = ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


@st.composite
def competitor_address(draw: st.DrawFn) -> str:
    local = draw(st.sampled_from(["x", "ceo", "sales.team", "a+b"]))
    domain = draw(st.sampled_from(["competitor.com", "mail.competitor.com"]))
    text = "".join(c.upper() if draw(st.booleans()) else c for c in f"{local}@{domain}")
    for _ in range(draw(st.integers(0, 2))):  # characters nobody sees
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(INVISIBLE)) + text[at:]
    if draw(st.booleans()):
        text += "."
    form = draw(
        st.sampled_from(
            ["{}", "<{}>", "Boss <{}>", '"Doe, J" <{}>', " {} ", "mailto:{}", "{} (boss)"]
        )
    )
    return form.format(text)


@st.composite
def recipient_value(draw: st.DrawFn) -> Any:
    """The address alone, in a list with friends, or wrapped the Python API's ways."""
    address = draw(competitor_address())
    friends = draw(st.lists(st.sampled_from(["a@friend.org", "B <b@friend.org>"]), max_size=2))
    together = draw(st.permutations([address, *friends]))
    shape = draw(st.sampled_from(["string", "joined", "list", "tuple", "dict", "nested"]))
    if shape == "string":
        return address
    if shape == "joined":
        return draw(st.sampled_from([", ", "; ", "\n", " "])).join(together)
    if shape == "list":
        return list(together)
    if shape == "tuple":
        return tuple(together)
    if shape == "dict":
        return {"recipients": list(together)}
    return [list(together)]


@settings(max_examples=examples(300), deadline=None)
@given(value=recipient_value(), field=st.sampled_from(["to", "cc"]))
def test_any_spelling_of_a_competitor_address_is_denied(
    policy_for_properties: Policy, value: Any, field: str
) -> None:
    call = _email(value) if field == "to" else _email("a@friend.org", value)
    verdict = policy_for_properties.evaluate(call)
    assert verdict.effect == "deny", (value, verdict.reasons)


@st.composite
def loopback_spelling(draw: st.DrawFn) -> str:
    """127.a.b.c in any of the forms inet_aton accepts: 1 to 4 parts, each decimal, octal
    (leading 0) or hex (0x), the last part filling the remaining bytes."""
    value = (127 << 24) | draw(st.integers(0, (1 << 24) - 1))
    count = draw(st.integers(1, 4))
    sizes = [1] * (count - 1) + [4 - (count - 1)]
    parts, shift = [], 32
    for size in sizes:
        shift -= 8 * size
        parts.append((value >> shift) & ((1 << (8 * size)) - 1))
    spelled = []
    for part in parts:
        base = draw(st.sampled_from(["dec", "oct", "hex", "HEX"]))
        spelled.append(
            {
                "dec": str(part),
                "oct": "0" + format(part, "o"),
                "hex": hex(part),
                "HEX": "0X" + format(part, "X"),
            }[base]
        )
    host = ".".join(spelled)
    if draw(st.booleans()):
        host = f"[::ffff:{(value >> 16):x}:{(value & 0xFFFF):x}]"
    return host


@settings(max_examples=examples(300), deadline=None)
@given(host=loopback_spelling(), port=st.sampled_from(["", ":80", ":8080"]))
def test_any_spelling_of_a_loopback_address_is_denied(
    policy_for_properties: Policy, host: str, port: str
) -> None:
    verdict = policy_for_properties.evaluate(
        ToolCall("fetch_url", {"url": f"http://{host}{port}/x"})
    )
    assert verdict.effect == "deny", (host, verdict.reasons)


@pytest.mark.slow  # runs the CLI in other processes
def test_the_cli_denies_the_spellings(tmp_path: Path) -> None:
    settings_file = tmp_path / ".signoff" / "settings.toml"
    settings_file.parent.mkdir()
    settings_file.write_text(
        "[permissions]\n"
        'deny = ["Bash(git push --force:*)", "Bash(rm -rf:*)", "fetch_url(domain:localhost)"]\n'
        'allow = ["Bash(git:*)", "Bash(rm:*)", "fetch_url"]\n'
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    checks = [
        ["--shell", "git push -f origin main"],
        ["--shell", "git push origin +main"],
        ["--shell", "/bin/rm -fr build"],
        ["--tool", "fetch_url", "--args", '{"url": "http://0x7f000001/"}'],
    ]
    for argv in checks:
        done = subprocess.run(
            [sys.executable, "-m", "signoff", "check", *argv, "--json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert json.loads(done.stdout)["verdict"] == "deny", (argv, done.stdout, done.stderr)


OTHER_DENY = [
    "Bash(kubectl delete:*)",
    "Bash(docker system prune:*)",
    "Bash(terraform destroy:*)",
    "Bash(git reset --hard:*)",
    "Bash(git clean -f:*)",
    "Bash(chmod -R 777:*)",
    "Bash(gh repo delete:*)",
    "Bash(curl -X DELETE:*)",
]
OTHER_ALLOW = [
    "Bash(kubectl:*)",
    "Bash(docker:*)",
    "Bash(terraform:*)",
    "Bash(git:*)",
    "Bash(chmod:*)",
    "Bash(gh:*)",
    "Bash(curl:*)",
]


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("kubectl -n prod delete pod x", "deny"),  # options of programs we do not know
        ("kubectl --namespace=prod delete pod x", "deny"),
        ("kubectl --namespace prod delete pod x", "deny"),
        ("docker --context x system prune -af", "deny"),
        ("docker -H tcp://x system prune", "deny"),
        ("terraform -chdir=infra destroy -auto-approve", "deny"),
        ("git reset HEAD~3 --hard", "deny"),
        ("git -C . clean -fdx", "deny"),
        ("git clean -xdf", "deny"),
        ("git clean --force -d", "deny"),
        ("chmod 777 -R .", "deny"),
        ("chmod --recursive 777 .", "deny"),
        ("gh repo delete x --yes", "deny"),
        ("curl -XDELETE https://x.example", "deny"),
        ("curl --request DELETE https://x.example", "deny"),
        ("curl https://x.example -X DELETE", "deny"),
        ("kubectl get pods", "allow"),
        ("docker system df", "allow"),
        ("git reset --soft HEAD~1", "allow"),
        ("chmod 644 x", "allow"),
        ("curl -X GET https://x.example", "allow"),
    ],
)
def test_rules_for_other_programs_match_their_spellings(
    tmp_path: Path, command: str, effect: str
) -> None:
    policy = Policy(Settings.from_rules(deny=OTHER_DENY, allow=OTHER_ALLOW), workspace=tmp_path)
    assert policy.evaluate(ToolCall("Bash", {"command": command})).effect == effect
