"""Fixtures for the tests that drive real coding-agent clients (all marked slow)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_code_harness import Claude, claude_code_binary


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    return claude_code_binary()


@pytest.fixture
def claude(claude_binary: Path, tmp_path: Path) -> Iterator[Claude]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    yield Claude(claude_binary, home, project)
