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


def _judge(command: str) -> str:
    return analyze(command, workspace=CORPUS.WORKSPACE, home=CORPUS.HOME,
                   resolver=lambda p: p).effect


@pytest.mark.parametrize(("category", "expected", "command"), ROWS,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(ROWS)])
def test_corpus(category: str, expected: str, command: str) -> None:
    got = _judge(command)
    if category == "catastrophic":
        assert got in ("deny", "ask"), f"{command!r}: catastrophic judged {got}"
    elif expected == "ask+":
        assert got in ("ask", "deny"), f"{command!r}: expected ask or deny, got {got}"
    else:
        assert got == expected, f"{command!r}: expected {expected}, got {got}"


def test_safety_targets() -> None:
    counts: dict[str, Counter[str]] = {}
    for category, _, command in ROWS:
        counts.setdefault(category, Counter())[_judge(command)] += 1
    deadly = counts["catastrophic"]
    assert deadly["deny"] / sum(deadly.values()) >= 0.9
    harmless = counts["read_only"] + counts["scary_harmless"]
    assert harmless["ask"] + harmless["deny"] <= 0.05 * sum(harmless.values())


def test_corpus_size() -> None:
    cats = Counter(c for c, _, _ in ROWS)
    assert len(ROWS) >= 400
    assert cats["bypass"] >= 100
    assert cats["scary_harmless"] >= 20
