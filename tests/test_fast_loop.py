"""The fast loop's sample of a big table (tests/fast_loop.py) is stable, small, and keeps
at least one row of every class file, category and form: what it leaves out only `make
test` checks, so what it keeps must still reach every kind of row."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fast_loop import EVERY, sample

DATA = Path(__file__).parent / "data"


def _rows(table: list[dict[str, Any]]) -> list[Any]:
    return [SimpleNamespace(callspec=SimpleNamespace(params=params)) for params in table]


def _corpus() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("shell_corpus_sample", DATA / "shell_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = ("source", "category", "expected", "command")
    return [dict(zip(names, row, strict=True)) for row in module.labelled()]


def test_the_corpus_sample_keeps_every_class_file_and_category() -> None:
    table = _corpus()
    kept = [row.callspec.params for row in sample(_rows(table))]
    for name in ("source", "category", "expected"):
        assert {r[name] for r in kept} == {r[name] for r in table}, name
    classes = {p.stem for p in (DATA / "shell_classes").glob("*.py")}
    assert classes <= {r["source"] for r in kept}
    assert len(kept) < len(table) / 5  # the commands themselves are not covered one by one


def test_a_cross_product_keeps_every_value_of_each_axis() -> None:
    table = [{"form": f, "place": p} for f in range(17) for p in range(225)]
    kept = [row.callspec.params for row in sample(_rows(table))]
    assert {r["form"] for r in kept} == set(range(17))
    assert {r["place"] for r in kept} == set(range(225))
    assert len(kept) < len(table) / 4


def test_the_sample_is_stable_and_keeps_every_nth_row() -> None:
    rows = _rows([{"command": f"cmd {i}"} for i in range(100)])
    first, second = sample(rows), sample(rows)
    assert first == second
    assert first == rows[::EVERY]
