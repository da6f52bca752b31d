"""What containment costs (issue 27): the probe a hook asks, the sandbox's start and
landing, and staged writes on a workspace of 10,000 files and 1 GB.

Measured here, each beside the same work uncontained where there is one:

* probe: kept in the process, kept on disk (what each hook process pays), a trial run
  (what the first process after a change of bwrap, kernel or switches pays);
* `true` contained and uncontained in a small workspace (the fixed cost of a run);
* in the big workspace (`--files`, `--bytes`): `true`; reading every file; changing 100
  small files; appending a byte to the biggest file (the overlay copies a file whole on
  its first write); creating 10,000 files and a 100 MB one (they land in one rename of
  their new folder); deleting a folder of 100 files. Each contained figure is the whole
  run (stage, sandbox, command, landing), with the landing alone beside it.

The workspace is made under --dir (default: the system's temporary folder) and removed
after; the stage is under signoff's state folder (`~/.local/state/signoff/sandbox`). When
the two are on different file systems, landing copies instead of renaming: the JSON says
which (`same_file_system`).

Usage: python bench/sandbox.py [--files 10000] [--bytes 1000000000] [--runs 5] [--dir DIR]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from signoff.sandbox import detect, probe
from signoff.sandbox.launch import Outcome, run
from signoff.sandbox.stage import remove_tree, stage_root

READ_ALL = (
    "import os\nn = 0\nfor d, _, fs in os.walk('.'):\n    for f in fs:\n"
    "        with open(os.path.join(d, f), 'rb') as h:\n"
    "            while b := h.read(1 << 20):\n                n += len(b)\nprint(n)\n"
)
CHANGE_100 = (
    "import os\nfor i in range(100):\n"
    "    with open(os.path.join('d000', f'f{i:04d}.txt'), 'a') as h:\n        h.write('x')\n"
)
APPEND_BIG = "with open('big-0.bin', 'ab') as h:\n    h.write(b'x')\n"
CREATE = (
    "import os\nos.makedirs('made')\nfor i in range(100):\n    os.makedirs(f'made/d{i}')\n"
    "    for j in range(100):\n        with open(f'made/d{i}/f{j}.txt', 'w') as h:\n"
    "            h.write('y' * 1024)\nwith open('made/new.bin', 'wb') as h:\n"
    "    h.write(b'z' * (100 << 20))\n"
)
DELETE = "import shutil\nshutil.rmtree('victim')\n"


def build(root: Path, files: int, size: int) -> tuple[int, int]:
    """`files` files: 10 big ones holding 90% of `size`, the rest small, 100 a folder."""
    big, small = 10, files - 10
    big_size = int(size * 0.9) // big
    small_size = max((size - big_size * big) // max(small, 1), 1)
    block = (b"signoff-bench-" * 75000)[: 1 << 20]
    total = 0
    for i in range(big):
        with open(root / f"big-{i}.bin", "wb") as handle:
            left = big_size
            while left > 0:
                handle.write(block[: min(left, len(block))])
                left -= len(block)
        total += big_size
    chunk = b"s" * small_size
    for i in range(small):
        folder = root / f"d{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i % 100:04d}.txt").write_bytes(chunk)
        total += small_size
    return files, total


def timed(fn: Callable[[], object], runs: int) -> tuple[float, object]:
    times, last = [], None
    for _ in range(runs):
        start = time.perf_counter()
        last = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), last


def contained(ws: Path, code: str) -> Outcome:
    outcome = run(
        [sys.executable, "-c", code],
        workspace=str(ws),
        cwd=str(ws),
        stdout=subprocess.DEVNULL,
        stderr=io.BytesIO(),
    )
    if not (outcome.started and outcome.exit_code == 0):
        raise SystemExit(f"a contained run failed: {outcome}")
    return outcome


def uncontained(ws: Path, code: str) -> None:
    subprocess.run([sys.executable, "-c", code], cwd=ws, check=True, stdout=subprocess.DEVNULL)


def probe_costs(runs: int) -> dict[str, float]:
    probe()
    start = time.perf_counter()
    for _ in range(10000):
        probe()
    in_process = (time.perf_counter() - start) / 10000
    disk = []
    for _ in range(200):
        detect._known = None
        start = time.perf_counter()
        probe()
        disk.append(time.perf_counter() - start)
    trial, _ = timed(lambda: probe(refresh=True), runs)
    return {
        "probe_kept_in_process_us": round(in_process * 1e6, 2),
        "probe_kept_on_disk_ms": round(statistics.median(disk) * 1000, 3),
        "probe_trial_ms": round(trial * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--bytes", type=int, default=1_000_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where to make the workspaces")
    opts = parser.parse_args()
    found = probe(refresh=True)
    if not found.available:
        print(f"no sandbox here: {found.reason}")
        print(json.dumps({"available": False, "reason": found.reason}))
        return
    out: dict[str, object] = {"available": True, "mechanism": found.mechanism}
    out |= probe_costs(opts.runs)
    base = Path(tempfile.mkdtemp(prefix="signoff-bench-sandbox-", dir=opts.dir))
    try:
        small = base / "small"
        small.mkdir()
        bare, _ = timed(lambda: uncontained(small, "pass"), opts.runs)
        fixed, _ = timed(lambda: contained(small, "pass"), opts.runs)
        out |= {"python_pass_uncontained_ms": round(bare * 1000, 1)}
        out |= {"python_pass_contained_ms": round(fixed * 1000, 1)}
        big = base / "big"
        big.mkdir()
        start = time.perf_counter()
        files, size = build(big, opts.files, opts.bytes)
        out |= {"workspace_files": files, "workspace_bytes": size}
        out |= {"build_s": round(time.perf_counter() - start, 1)}
        os.makedirs(stage_root(), exist_ok=True)
        out["same_file_system"] = os.stat(stage_root()).st_dev == os.stat(big).st_dev
        rows: list[tuple[str, float, float, float]] = []

        def measure(name: str, code: str, runs: int, reset: Callable[[], None]) -> None:
            """Contained and uncontained runs alternate, so that a slow moment of the
            shared machine (or a cold cache) does not land on one side only."""
            took, landed, plain = [], [], []
            for _ in range(runs):
                reset()
                start = time.perf_counter()
                landed.append(contained(big, code).land_seconds)
                took.append(time.perf_counter() - start)
                reset()
                start = time.perf_counter()
                uncontained(big, code)
                plain.append(time.perf_counter() - start)
            median = statistics.median
            rows.append((name, median(took), median(landed), median(plain)))

        def nothing() -> None:
            pass

        def no_made() -> None:
            shutil.rmtree(big / "made", ignore_errors=True)

        def victim() -> None:
            if not (big / "victim").exists():
                shutil.copytree(big / "d000", big / "victim")

        uncontained(big, READ_ALL)  # the page cache warm for both sides
        measure("pass", "pass", opts.runs, nothing)
        measure("read every file", READ_ALL, max(opts.runs // 2, 1), nothing)
        measure("change 100 small files", CHANGE_100, opts.runs, nothing)
        measure("append 1 byte to a 90 MB file", APPEND_BIG, opts.runs, nothing)
        measure("create 10,000 files + 100 MB", CREATE, max(opts.runs // 2, 1), no_made)
        measure("delete a folder of 100 files", DELETE, opts.runs, victim)
        print(f"{'work':34} {'contained':>10} {'landing':>9} {'uncontained':>12}")
        for name, took, landing, plain in rows:
            print(f"{name:34} {took * 1000:8.1f}ms {landing * 1000:7.1f}ms {plain * 1000:10.1f}ms")
            key = name.replace(",", "").replace(" + ", "_").replace(" ", "_")
            out[f"{key}_contained_ms"] = round(took * 1000, 1)
            out[f"{key}_landing_ms"] = round(landing * 1000, 1)
            out[f"{key}_uncontained_ms"] = round(plain * 1000, 1)
    finally:
        remove_tree(str(base))
    out["load_average"] = round(os.getloadavg()[0], 1)
    out["cpus"] = os.cpu_count()
    out["runs"] = opts.runs
    print(json.dumps(out))


if __name__ == "__main__":
    main()
