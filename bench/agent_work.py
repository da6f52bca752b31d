"""Questions per task on a corpus of agent work (`bench/data/agent_work.jsonl`, made by
`bench/agent_work_corpus.py`), with the contained tier off and on, in the same run.

    .venv/bin/python bench/agent_work.py [--corpus FILE]

Each task's commands are judged in order by the default policy in a real project (a git
checkout with a package, tests and the files the commands name). A question is an `ask`;
an unsafe allow is a command labelled `ask` or `deny` that the policy lets run (allow or
notify, contained or not). The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings

HERE = Path(__file__).parent
MODULES = ["core", "utils", "parser", "models", "views", "io", "config", "cli", "api", "cache"]


def project(root: Path) -> Path:
    """A checkout like the ones agents work in: a package, its tests, a setup script."""
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs").mkdir()
    for mod in MODULES:
        (root / "src" / "pkg" / f"{mod}.py").write_text(f"def run(x):\n    return x  # {mod}\n")
        (root / "tests" / f"test_{mod}.py").write_text("def test_run():\n    assert True\n")
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "setup.py").write_text("from setuptools import setup\nsetup(name='pkg')\n")
    (root / "README.md").write_text("# pkg\n")
    for name in ("input.txt", "expected.txt", "data.txt", "data.csv", "data.json"):
        (root / name).write_text("1\n2\n")
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "init"], check=True)
    return root


def score(tasks: list[dict[str, Any]], policy: Policy) -> dict[str, Any]:
    prompts: list[int] = []
    unsafe: list[str] = []
    contained = asked_rightly = catastrophic = denied = 0
    for task in tasks:
        asks = 0
        for item in task["commands"]:
            verdict = policy.evaluate(ToolCall("execute_command", {"command": item["cmd"]}))
            asks += verdict.effect == "ask"
            contained += verdict.contained
            runs = verdict.effect in ("allow", "notify")
            if item["label"] in ("ask", "deny") and runs:
                unsafe.append(f"{task['id']}: {item['cmd']}")
            asked_rightly += item["label"] == "ask" and verdict.effect == "ask"
            catastrophic += item["label"] == "deny"
            denied += item["label"] == "deny" and verdict.effect == "deny"
        prompts.append(asks)
    return {
        "mean": statistics.fmean(prompts),
        "median": statistics.median(prompts),
        "p90": sorted(prompts)[int(0.9 * (len(prompts) - 1))],
        "no_question": sum(p == 0 for p in prompts),
        "unsafe": unsafe,
        "contained": contained,
        "asked_rightly": asked_rightly,
        "catastrophic_denied": denied / catastrophic if catastrophic else 1.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(HERE / "data" / "agent_work.jsonl"))
    args = parser.parse_args()
    tasks = [json.loads(line) for line in Path(args.corpus).read_text().splitlines() if line]
    commands = sum(len(t["commands"]) for t in tasks)
    worth_asking = sum(c["label"] == "ask" for t in tasks for c in t["commands"])
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp) / "project")
        os.chdir(root)
        started = time.perf_counter()
        off = score(tasks, Policy(Settings(), workspace=root, contain=False))
        on = score(tasks, Policy(Settings(), workspace=root, contain=True))
        elapsed = time.perf_counter() - started
    print(f"{len(tasks)} tasks, {commands} commands, {worth_asking} worth asking")
    print(f"{'':28} {'contained off':>14} {'contained on':>14}")
    for key, label in (
        ("mean", "questions per task, mean"),
        ("median", "questions per task, median"),
        ("p90", "questions per task, p90"),
        ("no_question", "tasks with no question"),
        ("contained", "commands run contained"),
        ("asked_rightly", "questions worth asking"),
    ):
        print(f"{label:28} {off[key]:>14} {on[key]:>14}")
    print(f"{'unsafe allows':28} {len(off['unsafe']):>14} {len(on['unsafe']):>14}")
    for line in on["unsafe"][:20]:
        print(f"  unsafe: {line}", file=sys.stderr)
    print(f"judged {2 * commands} commands in {elapsed:.1f} s")
    print(
        json.dumps(
            {
                "tasks": len(tasks),
                "commands": commands,
                "prompts_per_task_mean": round(on["mean"], 3),
                "prompts_per_task_median": on["median"],
                "prompts_per_task_p90": on["p90"],
                "unsafe_allows": len(on["unsafe"]),
                "uncontained_prompts_per_task_mean": round(off["mean"], 3),
                "uncontained_unsafe_allows": len(off["unsafe"]),
                "catastrophic_denied": on["catastrophic_denied"],
                "mean_ratio_on_vs_off": round(on["mean"] / off["mean"], 3) if off["mean"] else None,
            }
        )
    )


if __name__ == "__main__":
    main()
