"""Every test gets its own signoff config directory (keys, anchors), and its session its own
state and cache directories (the sandbox's stages and kept probe), never the real home."""

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
    # the sandbox's stages and its kept probe (signoff.sandbox), per test session
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
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
        "test_board_races",
        "test_postgres_slow",
        "test_demo",
        "test_chat",
        "test_terminal",
        "test_deny_property",
        "test_shell_properties",
        "test_web_api",
        "test_serve_worker",
        "test_attack_keystrokes",
        "test_attack_impersonation",
        "test_attack_effects_property",
        "test_attack_mcp_arguments_property",
        "test_attack_runs_later",
        "test_attack_runs_later_differential",
        "test_attack_store",
        # the CLI, hooks, proxies and agents in other processes; deadlines that pass; kill -9
        "test_cli_first_hour",
        "test_other_clients",
        "test_nested",
        "test_mcp_record",
        "test_claude_code_cli",
        # workers as processes with short leases, stopped and killed; PostgreSQL connections
        # dropped by the server (this test's own) and a private server restarted
        "test_worker_leases",
        "test_store_outage",
        "test_postgres_restart",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


# ------------------------------------------------------------------ the fast loop (--fast)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the working loop (make test-fast): no slow tests, no PostgreSQL variants, "
        "a stable sample of each big table, fewer property examples (see tests/fast_loop.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    import fast_loop

    fast_loop.FAST = bool(config.getoption("fast"))
    if fast_loop.FAST:
        from hypothesis import settings

        # property tests without their own example count (see fast_loop.examples for those)
        settings.register_profile("fast", max_examples=10, deadline=None)
        settings.load_profile("fast")


def _postgres_variant(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(
        isinstance(value, str) and value.startswith("postgres")
        for value in callspec.params.values()
    )


@pytest.hookimpl(specname="pytest_collection_modifyitems", trylast=True)
def pytest_fast_loop_selection(config: pytest.Config, items: list[pytest.Item]) -> None:
    import fast_loop

    if not fast_loop.FAST:
        return
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        slow = item.get_closest_marker("slow") is not None
        (left if slow or _postgres_variant(item) else kept).append(item)
    tables: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in kept:
        if isinstance(item, pytest.Function) and hasattr(item, "callspec"):
            tables.setdefault((str(item.path), item.originalname), []).append(item)
    unsampled: set[int] = set()
    for rows in tables.values():
        if len(rows) > fast_loop.TABLE_ROWS:
            chosen = {id(row) for row in fast_loop.sample(rows)}
            unsampled |= {id(row) for row in rows if id(row) not in chosen}
    left += [item for item in kept if id(item) in unsampled]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in kept if id(item) not in unsampled]
