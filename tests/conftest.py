"""Every test gets its own signoff config directory (keys, anchors), never the real home."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_config_dir(monkeypatch: pytest.MonkeyPatch,
                        tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("SIGNOFF_CONFIG_DIR", str(tmp_path_factory.mktemp("signoff-config")))
    monkeypatch.delenv("SIGNOFF_KEY", raising=False)
    monkeypatch.delenv("SIGNOFF_KEY_FILE", raising=False)
