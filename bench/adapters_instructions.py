"""`bench/adapters.py`'s workload counted in instructions (callgrind), not wall time.

    .venv/bin/python bench/adapters_instructions.py [--n 40] [--k 5] [--fw pydantic_ai,...]

Wall-clock ratios on a shared machine move by tens of percent between identical runs; the
number of instructions a run executes does not. Each framework and mode runs once under
`valgrind --tool=callgrind`, in its own process, through `bench/adapters.py`'s own `one`
(the same warm-up and collected heap): the counters are zeroed, the measured run is
driven, and the counters are dumped (`callgrind_control`). Disk waits are not
instructions: this measures the work done, `bench/adapters.py` the time taken; read them
together.

Ratios: `<fw>_never_vs_bare_instr` (signoff never asking / the framework without HITL;
LangGraph: / the checkpointer without HITL) and `<fw>_pauses_vs_native_instr` (signoff
asking every K-th call / the framework's own HITL, whole run). Needs valgrind.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _workload() -> Any:
    spec = importlib.util.spec_from_file_location("bench_adapters", HERE / "adapters.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _counted() -> Iterator[None]:
    """Callgrind's counters zeroed before the measured run and dumped after it."""
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    yield
    subprocess.run(["callgrind_control", "-d", "window", pid], check=True, capture_output=True)


def callgrind_count(child: list[str], out: Path, label: str) -> int:
    """Instructions of the window a child process counts (`_counted`), run as
    `python CHILD...` under callgrind with its dumps in `out`."""
    prefix = out / f"cg.{label}"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p"]
    done = subprocess.run(
        [*valgrind, sys.executable, *child],
        capture_output=True,
        text=True,
    )
    dumps = sorted(out.glob(f"cg.{label}.*.1"))
    if done.returncode != 0 or not dumps:
        raise SystemExit(f"{label} under callgrind failed ({done.returncode}): {done.stderr}")
    for line in dumps[-1].read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit(f"{label}: no summary in {dumps[-1]}")


def count(fw: str, mode: str, n: int, k: int, out: Path) -> int:
    """Instructions of one measured run, from the dump of its window."""
    child = [__file__, "--one", fw, mode, "--n", str(n), "--k", str(k)]
    return callgrind_count(child, out, f"{fw}.{mode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="tool calls per run (default 40)")
    parser.add_argument("--k", type=int, default=5, help="every K-th call asks (default 5)")
    parser.add_argument("--fw", default="pydantic_ai,langgraph,openai_agents")
    parser.add_argument("--one", nargs=2, metavar=("FW", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # the child, under callgrind: bench/adapters.py's run, counted
        _workload().one(args.one[0], args.one[1], args.n, args.k, around=_counted)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is needed: apt-get install valgrind")
    workload = _workload()
    figures: dict[str, Any] = {"n": args.n, "k": args.k}
    print(f"N={args.n} K={args.k} (instructions in the measured window, millions)\n")
    print(f"| {'framework':<13} | {'mode':<9} | {'instructions (M)':>16} |")
    print(f"|{'-' * 15}|{'-' * 11}|{'-' * 17}:|")
    with tempfile.TemporaryDirectory(prefix="instr-dumps-") as tmp:
        for fw in args.fw.split(","):
            counts = {
                mode: count(fw, mode, args.n, args.k, Path(tmp)) for mode in workload.MODES[fw]
            }
            for mode, value in counts.items():
                print(f"| {fw:<13} | {mode:<9} | {value / 1e6:>16.1f} |")
            base = counts["bare_ckpt"] if fw == "langgraph" else counts["bare"]
            figures[f"{fw}_never_vs_bare_instr"] = round(counts["never"] / base, 3)
            figures[f"{fw}_pauses_vs_native_instr"] = round(counts["signoff"] / counts["native"], 3)
    print()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
