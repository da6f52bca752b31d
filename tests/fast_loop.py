"""The working loop (`pytest --fast`, `make test-fast`): what it leaves out, and how much.

`make test` runs everything. `--fast` (see tests/conftest.py) leaves out the `slow` tests,
the PostgreSQL variants of tests run on several backends, and all but a stable sample of
each big table; property tests search fewer examples (`examples`).
"""

from __future__ import annotations

from typing import Any

# Set by tests/conftest.py from `--fast`, before any test module is imported.
FAST = False

# A parametrised test with more rows than this is a table, sampled in the fast loop.
TABLE_ROWS = 24
# Every this-many-th row of a table is kept (besides the rows that cover its values).
EVERY = 10


def examples(full: int) -> int:
    """How many examples a property test searches: `full`, or a tenth of it (at least 10)
    in the fast loop."""
    return max(10, full // 10) if FAST else full


def sample(rows: list[Any]) -> list[Any]:
    """A stable sample of a table's rows (pytest items of one parametrised test): every
    `EVERY`-th row, plus the first row with each value of each parameter that repeats
    (a parameter whose values are mostly distinct, like a command, is not covered value by
    value). So every class, form or place of a table keeps at least one row."""
    counts: dict[str, set[str]] = {}
    for row in rows:
        for name, value in row.callspec.params.items():
            counts.setdefault(name, set()).add(_key(value))
    covered = [name for name, values in counts.items() if len(values) * 4 <= len(rows)]
    seen: set[tuple[str, str]] = set()
    kept = []
    for index, row in enumerate(rows):
        keys = {(name, _key(row.callspec.params.get(name))) for name in covered}
        if index % EVERY == 0 or not keys <= seen:
            kept.append(row)
            seen |= keys
    return kept


def _key(value: Any) -> str:
    return repr(value)[:500]
