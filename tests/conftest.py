"""Every test gets its own signoff config directory (keys, anchors), never the real home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from store_helpers import Backend


@pytest.fixture(autouse=True)
def _private_config_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("SIGNOFF_CONFIG_DIR", str(tmp_path_factory.mktemp("signoff-config")))
    monkeypatch.delenv("SIGNOFF_KEY", raising=False)
    monkeypatch.delenv("SIGNOFF_KEY_FILE", raising=False)


@pytest.fixture(name="db", params=["sqlite", "postgres"])
def db_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A real database of each kind behind the store (SQLite file, PostgreSQL schema), for
    tests that also write it directly with SQL; `store_helpers.Backend` says how."""
    from store_helpers import Backend  # the store only for the tests that ask for it

    backend = Backend(request.param, tmp_path)
    try:
        yield backend
    finally:
        backend.close()


# Modules that drive real browsers, terminals, crashes, races or long property searches:
# `make test` runs them, `make test-fast` (-m "not slow") leaves them out.
SLOW_MODULES = frozenset(
    {
        "test_web_browser",
        "test_crash",
        "test_worker_race",
        "test_store_races",
        "test_postgres_slow",
        "test_demo",
        "test_chat",
        "test_terminal",
        "test_deny_property",
        "test_shell_properties",
        "test_web_api",
        "test_attack_keystrokes",
        "test_attack_impersonation",
        "test_attack_effects_property",
        "test_attack_runs_later",
        "test_attack_runs_later_differential",
        "test_attack_store",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
