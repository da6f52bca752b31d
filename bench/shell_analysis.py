"""Time the shell analyzer over the labelled corpus.

Run: .venv/bin/python bench/shell_analysis.py [--repeat N]
Prints verdict counts per labelled category, per-category timings and the slowest
commands, then one JSON line with median_us, p99_us, commands_per_s (and
cli_commands_per_s when `signoff check` has --shell-file) and the safety figures on the
corpus: unsafe_allows (rows labelled ask or deny that run silently; target 0),
catastrophic_denied (share of rows labelled deny that are denied; target >= 0.95) and
harmless_asked (share of rows labelled allow or notify that ask or deny; target <= 0.03).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from signoff.shell import analyze  # noqa: E402


def load_corpus() -> ModuleType:
    path = ROOT / "tests" / "data" / "shell_corpus.py"
    spec = importlib.util.spec_from_file_location("shell_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_cli(commands: list[str]) -> float | None:
    """Commands per second through `signoff check --json --shell-file`, if it exists."""
    exe = ROOT / ".venv" / "bin" / "signoff"
    try:
        helptext = subprocess.run(
            [str(exe), "check", "--help"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    if "--shell-file" not in helptext:
        return None
    lines = [json.dumps(c) for c in (commands * (1000 // len(commands) + 1))[:1000]]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cmds.jsonl")
        Path(path).write_text("\n".join(lines) + "\n")
        start = time.perf_counter()
        done = subprocess.run(
            [str(exe), "check", "--json", "--shell-file", path, "--workspace", tmp],
            capture_output=True,
            text=True,
            timeout=600,
        )
        elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 2):
        return None
    return len(lines) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    corpus = load_corpus()
    rows = corpus.corpus()
    kw = {"workspace": corpus.WORKSPACE, "home": corpus.HOME}
    verdicts: dict[str, dict[str, int]] = {}
    for category, _, command in rows:  # warm up, and count verdicts per labelled class
        effect = analyze(command, **kw).effect
        counts = verdicts.setdefault(category, dict.fromkeys(("allow", "notify", "ask", "deny"), 0))
        counts[effect] += 1
    print(f"{'category':16} {'n':>5} {'allow':>6} {'notify':>6} {'ask':>5} {'deny':>5}")
    for category, c in verdicts.items():
        print(
            f"{category:16} {sum(c.values()):5} {c['allow']:6} {c['notify']:6} {c['ask']:5} "
            f"{c['deny']:5}"
        )
    print()
    per_command: dict[str, list[float]] = {}
    all_times: list[float] = []
    start = time.perf_counter()
    for _ in range(args.repeat):
        for _, _, command in rows:
            t0 = time.perf_counter_ns()
            analyze(command, **kw)
            us = (time.perf_counter_ns() - t0) / 1000
            per_command.setdefault(command, []).append(us)
            all_times.append(us)
    total = time.perf_counter() - start
    medians = {c: statistics.median(v) for c, v in per_command.items()}
    by_cat: dict[str, list[float]] = {}
    for category, _, command in rows:
        by_cat.setdefault(category, []).append(medians[command])
    print(f"{'category':16} {'n':>5} {'median us':>10} {'p99 us':>9}")
    for category, values in by_cat.items():
        print(
            f"{category:16} {len(values):5} {statistics.median(values):10.1f} "
            f"{percentile(values, 0.99):9.1f}"
        )
    print("\nslowest commands (median us):")
    for command, us in sorted(medians.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {us:8.1f}  {command[:70]!r}")
    result: dict[str, float] = {
        "commands": len(rows),
        "repeat": args.repeat,
        "median_us": round(statistics.median(all_times), 1),
        "p99_us": round(percentile(all_times, 0.99), 1),
        "commands_per_s": round(len(all_times) / total),
    }
    figures = corpus.figures(lambda c: analyze(c, **kw).effect, rows)
    print(
        f"\nunsafe allows {figures['unsafe_allows']} (target 0), catastrophic denied "
        f"{figures['catastrophic_denied']:.1%} (>= 95%), harmless asked "
        f"{figures['harmless_asked']:.1%} (<= 3%)"
    )
    result.update(figures)
    cli = time_cli([c for _, _, c in rows])
    if cli is not None:
        result["cli_commands_per_s"] = round(cli)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
