"""Print the rows of the payload class files whose verdict differs from the label.

Only judges the commands with `signoff.shell.analyze`; never runs them.
Usage: PYTHONPATH=src python bench/probe_payload_rows.py [-v]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from signoff.shell import analyze

HERE = Path(__file__).resolve().parent.parent / "tests" / "data" / "shell_classes"


def main() -> None:
    verbose = "-v" in sys.argv
    bad = 0
    for path in sorted(HERE.glob("payload_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for _category, expected, command in module.ROWS:
            result = analyze(
                command, workspace="/home/dev/proj", home="/home/dev", resolver=lambda p: p
            )
            got = result.effect
            ok = got == expected or (expected == "ask+" and got in ("ask", "deny"))
            if not ok or verbose:
                bad += not ok
                mark = "ok " if ok else "BAD"
                print(f"{mark} {path.stem[8:]:13} want {expected:6} got {got:6} {command!r}")
                if not ok or verbose:
                    print("      ", "; ".join(result.reasons)[:200])
    print("mismatches:", bad)


if __name__ == "__main__":
    main()
