"""What the gate adds to a tool call, measured in one run beside a direct call.

    .venv/bin/python bench/gate_overhead.py

Rows: a direct call; the gate's allow path for a tool matched by name with 100 rules
loaded; the same for a file tool whose path must be resolved; the disabled gate
(`/hitl off`). Figures are per call, the median of several timed rounds.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff.gate import Gate
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.tools import Registry, ToolSpec

ROUNDS = 7


def per_call_us(fn: Callable[[], Any], number: int) -> float:
    times = timeit.repeat(fn, number=number, repeat=ROUNDS)
    return statistics.median(times) / number * 1e6


def hundred_rules() -> Settings:
    allow = [f"tool_{i}" for i in range(40)] + [f"write_file(gen/{i}/**)" for i in range(20)]
    allow += ["lookup"]
    ask = [f"Bash(deploy {i}:*)" for i in range(15)] + [
        f"send_email(to=*@x{i}.com)" for i in range(5)
    ]
    deny = [f"read_file(secret{i}/**)" for i in range(10)] + [
        f"pay(amount>={i}000)" for i in range(9)
    ]
    assert len(allow) + len(ask) + len(deny) == 100
    return Settings.from_rules(allow=allow, ask=ask, deny=deny)


def main() -> None:
    workspace = Path(tempfile.mkdtemp(prefix="signoff-bench-"))
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    registry = Registry()
    registry.add(ToolSpec("lookup", "external", "other"))  # would ask without its rule
    gate = Gate(Policy(hundred_rules(), workspace=workspace, registry=registry))

    def lookup(key: str) -> str:
        return key

    def read_file(path: str) -> str:
        return path

    guarded_lookup = gate.wrap(lookup, registry.get("lookup"))
    guarded_read = gate.wrap(read_file, registry.get("read_file"))
    assert gate.check(ToolCall("lookup", {"key": "k"})).effect == "allow"
    assert gate.check(ToolCall("read_file", {"path": "src/app.py"})).effect == "allow"

    n = 20000
    direct = per_call_us(lambda: lookup(key="k"), n * 5)
    allow_path = per_call_us(lambda: guarded_lookup(key="k"), n)
    file_allow = per_call_us(lambda: guarded_read(path="src/app.py"), n)
    gate.set_enabled(False)
    disabled = per_call_us(lambda: guarded_lookup(key="k"), n * 5)
    gate.set_enabled(True)

    rows = [
        ("direct call (no gate)", direct, "-"),
        ("gate, name-matched allow, 100 rules", allow_path, "<= 10"),
        ("gate, file tool (path resolved), 100 rules", file_allow, "-"),
        ("gate disabled (/hitl off)", disabled, "<= 1 (added)"),
    ]
    print(f"{'path':<46} {'us/call':>9} {'added us':>9}  target")
    for label, value, target in rows:
        added = value - direct if label != rows[0][0] else 0.0
        print(f"{label:<46} {value:>9.3f} {added:>9.3f}  {target}")
    print(
        json.dumps(
            {
                "allow_path_us": round(allow_path, 3),
                "file_allow_path_us": round(file_allow, 3),
                "disabled_us": round(disabled, 3),
                "direct_us": round(direct, 3),
                "disabled_added_us": round(disabled - direct, 3),
                "rules_loaded": 100,
            }
        )
    )


if __name__ == "__main__":
    main()
