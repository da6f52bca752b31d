"""Statistics on a generated history with known answers, built through the real store API
with controlled timestamps, so that counts, rates, the median and p90 are exact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.audit import iter_events
from signoff.audit.stats import Stats, compute_stats, load_stats, median, p90
from signoff.cli.audit import main
from signoff.models import Decision, Grant, Request, ToolCall, Verdict
from signoff.store import Store, open_store

T0 = 1_800_000_000.0  # 2027-01-15 08:00 UTC
DAY = 86400.0


class History:
    """Builds the history; each request gets its own 1000-second slot after T0."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.slot = 0

    def verdict(
        self,
        run: str,
        name: str,
        args: dict[str, Any],
        effect: str,
        *,
        cid: str = "",
        suggested: str | None = None,
        at: float | None = None,
    ) -> None:
        v = Verdict(effect, "low", None, (), "read", suggested)  # type: ignore[arg-type]
        self.store.record(
            "verdict",
            {"call": ToolCall(name, args, cid).to_json(), "verdict": v.to_json()},
            run_id=run,
            now=T0 if at is None else at,
        )

    def ask(
        self,
        run: str,
        name: str,
        args: dict[str, Any],
        *,
        suggested: str | None,
        rule: str | None = None,
        tier: str = "destructive",
        at: float | None = None,
        verdict_event: bool = True,
        ttl: float | None = None,
    ) -> tuple[Request, float]:
        self.slot += 1
        t = T0 + 1000 * self.slot if at is None else at
        cid = f"call_{self.slot}"
        parts = (
            ({"command": args["command"], "class": "opaque", "effect": "ask"},)
            if "command" in args
            else ()
        )
        v = Verdict.from_json(
            {
                "effect": "ask",
                "risk": "high",
                "rule": rule,
                "reasons": ["?"],
                "tier": tier,
                "suggested_rule": suggested,
                "parts": parts,
            }
        )
        call = ToolCall(name, args, cid)
        if verdict_event:
            self.store.record(
                "verdict", {"call": call.to_json(), "verdict": v.to_json()}, run_id=run, now=t
            )
        request = self.store.create_request(
            Request("", call, v, run_id=run), now=t, ttl_seconds=ttl
        )
        return request, t

    def decided(
        self, run: str, name: str, args: dict[str, Any], kind: str, delay: float, **kw: Any
    ) -> Request:
        request, t = self.ask(run, name, args, **kw)
        extra: dict[str, Any] = {}
        new_verdict = None
        if kind == "reject":
            extra["reason"] = "no"
        if kind == "edit":
            extra["arguments"] = {**args, "env": "staging"}
            new_verdict = Verdict("ask", "high", None, ("edited",), "external")
        if kind == "respond":
            extra["result"] = "yes"
        return self.store.decide(
            request.id,
            Decision(kind, **extra),  # type: ignore[arg-type]
            actor="ann",
            now=t + delay,
            new_verdict=new_verdict,
        )


def build(store: Store) -> None:
    h = History(store)
    bash = "Bash"
    # before the window: one rejected `docker build`
    h.decided(
        "r0",
        bash,
        {"command": "docker build ."},
        "reject",
        50,
        suggested="Bash(docker build:*)",
        at=T0 - 10 * DAY,
    )
    # r1: 10 allows and 2 notifies, then `npm test` approved 6 times
    for i in range(10):
        h.verdict("r1", "read_file", {"path": f"f{i}"}, "allow", cid=f"read_{i}")
    for i in range(2):
        h.verdict("r1", "write_file", {"path": f"w{i}"}, "notify", cid=f"write_{i}")
    for delay in (10, 20, 30, 40, 50, 60):
        h.decided(
            "r1", bash, {"command": "npm test"}, "approve", delay, suggested="Bash(npm test:*)"
        )
    # r2: send_email approved 4 times, rejected once; `git push --force` rejected 5 times
    for delay in (5, 5, 5, 5):
        h.decided(
            "r2",
            "send_email",
            {"to": "boss@example.com"},
            "approve",
            delay,
            suggested="send_email(to=boss@example.com)",
            tier="external",
        )
    h.decided(
        "r2",
        "send_email",
        {"to": "boss@example.com"},
        "reject",
        100,
        suggested="send_email(to=boss@example.com)",
        tier="external",
    )
    for delay in (1, 2, 3, 4, 5):
        h.decided(
            "r2",
            bash,
            {"command": "git push --force"},
            "reject",
            delay,
            suggested="Bash(git push --force:*)",
        )
    # r3: an explicit ask rule approved 5 times; `make` approved 5 times but `make
    # clean-all` was denied once: never suggested
    for _ in range(5):
        h.decided(
            "r3",
            bash,
            {"command": "npm publish"},
            "approve",
            7,
            suggested="Bash(npm publish:*)",
            rule="Bash(npm publish:*)",
        )
    h.verdict("r3", bash, {"command": "make clean-all"}, "deny", cid="deny_1")
    for _ in range(5):
        h.decided("r3", bash, {"command": "make"}, "approve", 8, suggested="Bash(make:*)")
    # r4: an edit, a skip, an answer given without a verdict event; an expiry; two calls
    # in doubt, one of them resolved
    h.decided(
        "r4", "deploy", {"env": "prod"}, "edit", 30, suggested="deploy(env=prod)", tier="external"
    )
    h.decided(
        "r4", "deploy", {"env": "prod"}, "skip", 15, suggested="deploy(env=prod)", tier="external"
    )
    h.decided(
        "r4",
        "ask_human",
        {"question": "go?"},
        "respond",
        45,
        suggested=None,
        tier="read",
        verdict_event=False,
    )
    expiring, t = h.ask("r4", "deploy", {"env": "qa"}, suggested=None, tier="external", ttl=60)
    assert store.expire_stale(now=t + 61) == [expiring.id]
    for outcome in ("done", None):
        r = h.decided("r4", bash, {"command": "./migrate"}, "approve", 2, suggested=None)
        decided_at = r.decision.decided_at if r.decision else 0.0
        store.claim(r.id, worker="w", lease_seconds=30, now=decided_at + 1)
        assert store.sweep_leases(now=decided_at + 100) == [r.id]
        if outcome:
            store.resolve_in_doubt(r.id, "done", actor="ann", now=decided_at + 200)
    # r5: `docker build` approved 5 times in the window, but it was rejected before it
    for _ in range(5):
        h.decided(
            "r5",
            bash,
            {"command": "docker build ."},
            "approve",
            9,
            suggested="Bash(docker build:*)",
        )
    store.add_grant(Grant("Bash(ls)", "project", id="g_unrelated"), now=T0 + 90_000)


@pytest.fixture(name="store", params=["memory", "sqlite"])
def store_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = "memory:" if request.param == "memory" else str(tmp_path / "signoff.db")
    with open_store(url) as store:  # type: ignore[attr-defined]
        build(store)
        yield store


@pytest.fixture(name="stats")
def stats_fixture(store: Store) -> Stats:
    return load_stats(store, since=T0)


# ----------------------------------------------------------------------------- the figures


def test_calls_and_questions(stats: Stats) -> None:
    # 10 allow + 2 notify + 1 deny + 36 asked with a verdict + 1 answer without one
    assert stats.calls == 50
    assert dict(stats.effects) == {"allow": 10, "notify": 2, "deny": 1, "ask": 37}
    assert stats.asked == stats.questions == 37
    assert stats.ask_share == 0.74
    assert stats.runs == 5
    assert dict(stats.questions_per_run) == {"mean": 7.4, "median": 6.0, "max": 10}
    assert stats.per_run == (
        ("r2", 10, 10),
        ("r3", 11, 10),
        ("r1", 18, 6),
        ("r4", 6, 6),
        ("r5", 5, 5),
    )


def test_decisions_and_rates(stats: Stats) -> None:
    assert stats.decided == 36
    assert dict(stats.decisions) == {"approve": 27, "reject": 6, "edit": 1, "skip": 1, "answer": 1}
    assert stats.rate("approve") == 0.75 and stats.rate("reject") == round(6 / 36, 4)
    assert (stats.expired, stats.in_doubt, stats.in_doubt_unresolved, stats.pending) == (1, 2, 1, 0)
    tools = {r.key: r for r in stats.per_tool}
    assert set(tools) == {"Bash", "send_email", "deploy", "ask_human"}
    assert (tools["Bash"].asked, tools["Bash"].decided) == (28, 28)
    assert dict(tools["Bash"].counts) == {"approve": 23, "reject": 5}
    assert tools["send_email"].rate("approve") == 0.8 and tools["send_email"].rate("reject") == 0.2
    assert (tools["deploy"].asked, tools["deploy"].decided, tools["deploy"].expired) == (3, 2, 1)
    assert tools["deploy"].rate("edit") == 0.5 and tools["deploy"].rate("skip") == 0.5
    assert tools["ask_human"].rate("answer") == 1.0
    rules = {r.key: r for r in stats.per_rule}
    assert (
        rules["Bash(npm publish:*)"].asked == 5
        and rules["Bash(npm publish:*)"].rate("approve") == 1.0
    )
    assert rules["(default: external)"].asked == 8  # 5 emails, 3 deploys
    assert rules["(default: destructive)"].asked == 23
    assert rules["(default: read)"].asked == 1


def test_time_to_decision_is_exact(stats: Stats) -> None:
    # 36 waits, sorted: 1 2 2 2 3 4 | 5x5 | 7x5 | 8x5 | 9x5 | 10 15 20 30 30 40 45 50 60 100
    assert dict(stats.time_to_decision) == {"count": 36, "median": 8.0, "p90": 45.0}


def test_suggestions(stats: Stats) -> None:
    found = {(s.kind, s.rule): s for s in stats.suggestions}
    assert set(found) == {
        ("allow", "Bash(npm test:*)"),
        ("deny", "Bash(git push --force:*)"),
        ("remove_ask_rule", "Bash(npm publish:*)"),
    }
    allow = found[("allow", "Bash(npm test:*)")]
    assert allow.count == 6 and allow.tool == "Bash"
    assert allow.command == "signoff grant add 'Bash(npm test:*)' --scope project"
    deny = found[("deny", "Bash(git push --force:*)")]
    assert deny.count == 5 and deny.toml == '"Bash(git push --force:*)",' and deny.command is None
    assert found[("remove_ask_rule", "Bash(npm publish:*)")].command is None
    assert stats.suggestions[0].rule == "Bash(npm test:*)"  # most evidence first


def test_the_window(store: Store) -> None:
    everything = load_stats(store)
    assert (everything.questions, everything.runs, everything.decided) == (38, 6, 37)
    assert everything.decisions["reject"] == 7
    later = load_stats(store, since=T0 + 1000 * 31)  # the last 8 requests (slots 31..38)
    assert later.questions == 8 and later.calls == 8
    assert later.suggestions == ()  # `docker build` has 5, but was once rejected


def test_min_count(store: Store) -> None:
    rules = {s.rule for s in load_stats(store, since=T0, min_count=6).suggestions}
    assert rules == {"Bash(npm test:*)"}
    rules = {s.rule for s in load_stats(store, since=T0, min_count=4).suggestions}
    assert "send_email(to=boss@example.com)" not in rules  # 4 approvals, but one rejection
    assert "Bash(make:*)" not in rules and "Bash(docker build:*)" not in rules


def test_a_granted_rule_is_not_suggested_again(store: Store) -> None:
    grant = store.add_grant(Grant("Bash(npm test:*)", "project", id="g1"), now=T0 + 100_000)
    assert "Bash(npm test:*)" not in {s.rule for s in load_stats(store).suggestions}
    store.revoke_grant(grant.id, now=T0 + 100_001)
    assert "Bash(npm test:*)" in {s.rule for s in load_stats(store).suggestions}


def test_a_later_rejection_withdraws_the_suggestion(store: Store) -> None:
    History(store).decided(
        "r9",
        "Bash",
        {"command": "npm test -- --update"},
        "reject",
        1,
        suggested="Bash(npm test -- --update)",
        at=T0 + 200_000,
    )
    assert "Bash(npm test:*)" not in {s.rule for s in load_stats(store).suggestions}


def test_requests_alone_give_the_same_decisions(store: Store) -> None:
    from_events = load_stats(store)
    from_requests = compute_stats([], store.list_requests(limit=1000))
    assert from_requests.questions == from_events.questions
    assert dict(from_requests.decisions) == dict(from_events.decisions)
    assert dict(from_requests.time_to_decision) == dict(from_events.time_to_decision)
    # a request remembers only its state: the doubt that was resolved is not visible
    assert (from_requests.expired, from_requests.in_doubt) == (1, 1)
    # a request in both counts once
    both = compute_stats(list(iter_events(store)), store.list_requests(limit=1000))
    assert both.to_json() == from_events.to_json()


def test_to_json_and_by_day(stats: Stats) -> None:
    doc = json.loads(json.dumps(stats.to_json()))
    assert doc["calls"] == 50 and doc["ask_share"] == 0.74
    assert doc["rates"]["approve"] == 0.75
    assert doc["suggestions"][0]["command"].startswith("signoff grant add ")
    assert [d["date"] for d in doc["by_day"]] == ["2027-01-15"]
    assert sum(d["calls"] for d in doc["by_day"]) == 50
    assert sum(d["approve"] for d in doc["by_day"]) == 27


def test_empty() -> None:
    stats = compute_stats([])
    assert (stats.calls, stats.ask_share, stats.suggestions) == (0, None, ())
    assert dict(stats.time_to_decision) == {"count": 0, "median": None, "p90": None}


def test_median_and_p90() -> None:
    assert (median([]), p90([])) == (None, None)
    assert (median([3.0]), p90([3.0])) == (3.0, 3.0)
    assert median([1, 2, 3, 4]) == 2.5
    assert p90([float(i) for i in range(1, 11)]) == 9.0  # nearest rank: ceil(9) = 9th
    assert p90([float(i) for i in range(1, 12)]) == 10.0  # ceil(9.9) = 10th


# ----------------------------------------------------------------------------- the command


def test_stats_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "signoff.db")
    with open_store(db) as store:  # type: ignore[attr-defined]
        build(store)
    assert main(["stats", "--db", db, "--since", "2027-01-15T08:00", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["calls"] == 50 and doc["time_to_decision"]["p90"] == 45.0
    assert main(["stats", "--db", db, "--since", "2027-01-15T08:00"]) == 0
    out = capsys.readouterr().out
    assert "asked             37 of 50 calls (74%)" in out
    assert "median 8s, p90 45s (36 decisions)" in out
    assert "signoff grant add 'Bash(npm test:*)' --scope project" in out
    assert '"Bash(git push --force:*)",' in out
    # run the suggested command: the rule lands in the settings and is not suggested again
    assert (
        main(
            [
                "grant",
                "add",
                "Bash(npm test:*)",
                "--scope",
                "project",
                "--db",
                db,
                "--workspace",
                str(tmp_path),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["stats", "--db", db, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "Bash(npm test:*)" not in [s["rule"] for s in doc["suggestions"]]


def test_a_call_judged_again_in_its_run_counts_once() -> None:
    store = open_store("memory:")
    h = History(store)
    h.verdict("r1", "Bash", {"command": "ls"}, "allow", cid="c1")
    h.verdict("r1", "Bash", {"command": "ls"}, "allow", cid="c1")  # resumed after a crash
    h.verdict("", "Bash", {"command": "ls"}, "allow", cid="c1")  # no run: chat sessions
    h.verdict("", "Bash", {"command": "ls"}, "allow", cid="c1")  # may reuse call ids
    assert compute_stats(iter_events(store)).calls == 3


def test_a_test_command_is_suggested_as_a_recommended_project_rule(stats: Stats) -> None:
    """`npm test` asks (it runs project code); approved every time, the suggestion says it
    is one of the project rules docs/shell.md recommends. Other rules keep the plain reason."""
    found = {s.rule: s for s in stats.suggestions}
    assert "recommended project rule" in found["Bash(npm test:*)"].reason
    assert found["Bash(npm test:*)"].command == (
        "signoff grant add 'Bash(npm test:*)' --scope project"
    )
    assert all(
        "recommended" not in s.reason for s in stats.suggestions if s.rule != "Bash(npm test:*)"
    )


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("Bash(npm test:*)", True),
        ("execute_command(pytest:*)", True),
        ("Bash(cargo test:*)", True),
        ("Bash(npm publish:*)", False),
        ("Bash(pytest)", False),
        ("Bash(rm -rf build)", False),
        ("pytest:*", False),
        ("Bash(go test:*", False),
    ],
)
def test_recommended_project_rules(rule: str, expected: bool) -> None:
    from signoff.project_rules import recommended

    assert recommended(rule) is expected


def test_a_hooks_request_and_its_retries_are_one_call(tmp_path: Path) -> None:
    """A hook's verdict belongs to its session, its request to no run: matched by the call
    id, the asked call counts once; the verdicts of the same call made again (marked
    `retry`) do not count."""
    with open_store(str(tmp_path / "signoff.db")) as store:  # type: ignore[attr-defined]
        v = Verdict("ask", "high", None, ("?",), "destructive")
        call = ToolCall("files__write_file", {"path": "a"}, "d1#0")
        for retry in (False, True, True):
            data = {
                "call": call.to_json(),
                "verdict": v.to_json(),
                **({"retry": True} if retry else {}),
            }
            store.record("verdict", data, run_id="mcp-alice", now=T0)
        store.create_request(Request("", call, v), now=T0)
        stats = load_stats(store)
    assert (stats.calls, stats.asked, stats.questions) == (1, 1, 1)
