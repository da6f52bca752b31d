"""Start-up time: fresh processes, each beside a bare interpreter in the same run.

A coding-agent hook starts one process per tool call, so what a call costs is mostly what
starting signoff costs. Measured, in fresh processes, round-robin (the machine is shared;
interleaving keeps a slow moment from landing on one command only):

* bare:       python -c pass
* import:     python -c "import signoff"
* check:      signoff check --shell 'git status' --json   (the hook's path)
* check_text: signoff check --shell 'git status'          (the same, explained with rich)

Bytecode is cached, as for an installed package (pip compiles it): the processes run with
PYTHONPYCACHEPREFIX set to a fresh directory, filled by one unmeasured warm-up run, and
without PYTHONDONTWRITEBYTECODE (set in some sandboxes, it makes every process compile
every module it imports again; `--as-is` keeps the environment as it is).

Each is run --runs times and the median is reported, with its ratio to bare (targets from
issue 13: check <= 5x bare, import <= 3x bare), in wall time and in CPU time (user + system
of the process: on a shared machine under load, wall time also counts waiting for a core,
which weighs more on the longer command; the load average is in the JSON). `--importtime`
adds the modules that cost most on the check path (`python -X importtime`, cumulative,
self-inclusive).

Usage: python bench/startup.py [--runs 15] [--importtime] [--as-is]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECK_ARGS = ("check", "--shell", "git status")
IMPORT_TARGETS = {"check": 5.0, "import": 3.0}  # issue 13: at most this many times bare


def signoff_command() -> list[str]:
    """The `signoff` console script installed beside this interpreter, else `-m signoff`."""
    script = Path(sys.executable).with_name("signoff")
    if script.exists():
        return [sys.executable, str(script)]
    return [sys.executable, "-m", "signoff"]


def commands() -> dict[str, list[str]]:
    signoff = signoff_command()
    return {
        "bare": [sys.executable, "-c", "pass"],
        "import": [sys.executable, "-c", "import signoff"],
        "check": [*signoff, *CHECK_ARGS, "--json"],
        "check_text": [*signoff, *CHECK_ARGS],
    }


def environment(cache: str | None) -> dict[str, str]:
    """The measured processes' environment: bytecode cached under `cache` (None: as is)."""
    env = dict(os.environ)
    if cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def time_once(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh process, in milliseconds; a
    failure stops the bench. CPU time is what the process itself spent: on a shared,
    loaded machine it moves much less than wall time, which includes waiting for a core."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    child.returncode = os.waitstatus_to_exitcode(status)
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv)} failed ({child.returncode}):\n{errors.decode(errors='replace')}"
        )
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1000


def importtime(
    argv: list[str], cwd: str, env: dict[str, str], top: int = 15
) -> list[tuple[str, float]]:
    """The `top` imports by cumulative time (ms) when `argv` runs under -X importtime."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=True,
    )
    rows: list[tuple[str, float]] = []
    for line in done.stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        rows.append((name.rstrip(), int(cumulative) / 1000))
    return sorted(rows, key=lambda row: -row[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per command")
    parser.add_argument(
        "--importtime",
        action="store_true",
        help="also list the costliest imports of the check path",
    )
    parser.add_argument(
        "--as-is",
        action="store_true",
        help="keep the environment's bytecode settings (see the docstring)",
    )
    opts = parser.parse_args()
    argvs = commands()
    samples: dict[str, list[float]] = {name: [] for name in argvs}
    cpu: dict[str, list[float]] = {name: [] for name in argvs}
    # an empty workspace, so the project's own settings play no part; user settings do,
    # as they would for a hook
    workspace = tempfile.mkdtemp(prefix="signoff-startup-")
    cache = tempfile.mkdtemp(prefix="signoff-pycache-")
    env = environment(None if opts.as_is else cache)
    try:
        for argv in argvs.values():  # fill the file and bytecode caches, not measured
            time_once(argv, workspace, env)
        for _ in range(max(1, opts.runs)):
            for name, argv in argvs.items():
                wall, used = time_once(argv, workspace, env)
                samples[name].append(wall)
                cpu[name].append(used)
        profile = importtime(argvs["check"], workspace, env) if opts.importtime else []
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    median = {name: statistics.median(values) for name, values in samples.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
    bare = median["bare"]
    print(
        f"{'command':<12} {'median ms':>10} {'min ms':>8} {'x bare':>7} {'cpu ms':>7} "
        f"{'cpu x':>6}   (median of {opts.runs} fresh processes, round-robin)"
    )
    print("-" * 88)
    for name, argv in argvs.items():
        shown = " ".join(argv[1:]) if name != "bare" else "python -c pass"
        print(
            f"{name:<12} {median[name]:>10.1f} {min(samples[name]):>8.1f} "
            f"{median[name] / bare:>7.2f} {cpu_median[name]:>7.1f} "
            f"{cpu_median[name] / cpu_median['bare']:>6.2f}   {shown}"
        )
    if profile:
        print("\ncostliest imports on the check path (cumulative ms, -X importtime):")
        for module, ms in profile:
            depth = (len(module) - len(module.lstrip())) // 2
            print(f"  {ms:8.1f}  {'  ' * depth}{module.strip()}")
    ratios = {name: median[name] / bare for name in ("import", "check", "check_text")}
    print(
        json.dumps(
            {
                "bare_ms": round(bare, 1),
                "import_ms": round(median["import"], 1),
                "check_ms": round(median["check"], 1),
                "check_text_ms": round(median["check_text"], 1),
                "import_ratio": round(ratios["import"], 2),
                "check_ratio": round(ratios["check"], 2),
                "check_text_ratio": round(ratios["check_text"], 2),
                # the names issue 13 asks for (the same figures)
                "import_vs_bare": round(ratios["import"], 2),
                "check_vs_bare": round(ratios["check"], 2),
                "targets_met": all(ratios[name] <= limit for name, limit in IMPORT_TARGETS.items()),
                # the same ratios in CPU time (user + system), steadier on a loaded machine
                "import_cpu_vs_bare": round(cpu_median["import"] / cpu_median["bare"], 2),
                "check_cpu_vs_bare": round(cpu_median["check"] / cpu_median["bare"], 2),
                "check_text_cpu_vs_bare": round(cpu_median["check_text"] / cpu_median["bare"], 2),
                "load_average": round(os.getloadavg()[0], 1),
                "bytecode_cached": not opts.as_is,
                "runs": opts.runs,
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
