"""Every test gets its own signoff config directory (keys, anchors), never the real home."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_config_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("SIGNOFF_CONFIG_DIR", str(tmp_path_factory.mktemp("signoff-config")))
    monkeypatch.delenv("SIGNOFF_KEY", raising=False)
    monkeypatch.delenv("SIGNOFF_KEY_FILE", raising=False)


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
        "test_serve_worker",
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
