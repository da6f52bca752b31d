"""The labelled corpus, table-driven: every command gets the verdict it is labelled with."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from signoff.shell import analyze


def _load() -> ModuleType:
    path = Path(__file__).parent / "data" / "shell_corpus.py"
    spec = importlib.util.spec_from_file_location("shell_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("shell_corpus", module)
    spec.loader.exec_module(module)
    return module


CORPUS = _load()
ROWS = CORPUS.corpus()
LABELLED = CORPUS.labelled()  # the same rows, each with its class file (or "corpus")


def _judge(command: str) -> str:
    return analyze(
        command, workspace=CORPUS.WORKSPACE, home=CORPUS.HOME, resolver=lambda p: p
    ).effect


@pytest.mark.parametrize(
    ("source", "category", "expected", "command"),
    LABELLED,
    ids=[f"{s}-{c}-{i}" for i, (s, c, _, _) in enumerate(LABELLED)],
)
def test_corpus(source: str, category: str, expected: str, command: str) -> None:
    got = _judge(command)
    if expected == "ask+":
        assert got in ("ask", "deny"), f"{command!r}: expected ask or deny, got {got}"
    elif category == "catastrophic" and expected == "deny":
        assert got == "deny", f"{command!r}: catastrophic judged {got}"
    else:
        assert got == expected, f"{command!r}: expected {expected}, got {got}"


def test_safety_targets() -> None:
    """Issue 12's targets on the whole corpus: no unsafe allow, at least 95% of the
    catastrophic denied, at most 3% of the harmless asked about."""
    figures = CORPUS.figures(_judge, ROWS)
    assert figures["unsafe_allows"] == 0
    assert figures["catastrophic_denied"] >= 0.95
    assert figures["harmless_asked"] <= 0.03


def test_every_row_is_labelled_with_its_class() -> None:
    assert [row[1:] for row in LABELLED] == ROWS
    assert {row[0] for row in LABELLED} >= {"corpus", "dry_runs", "reads_outside"}


def test_corpus_size() -> None:
    cats = Counter(c for c, _, _ in ROWS)
    assert len(ROWS) >= 400
    assert cats["bypass"] >= 100
    assert cats["scary_harmless"] >= 20
