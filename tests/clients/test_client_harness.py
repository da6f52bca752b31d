"""The real-client harness skips only when npm or its registry is out of reach, and fails
instead when SIGNOFF_REQUIRE_CLIENTS is set (as in CI), so a green CI ran the client."""

from __future__ import annotations

import shutil
from pathlib import Path

import claude_code_harness as harness
import pytest


def test_without_npm_it_skips_or_fails_when_clients_are_required(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(harness, "CACHE", tmp_path / "cache")
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-dir"))
    monkeypatch.delenv("SIGNOFF_REQUIRE_CLIENTS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="npm is not installed"):
        harness.claude_code_binary()
    monkeypatch.setenv("SIGNOFF_REQUIRE_CLIENTS", "1")
    with pytest.raises(pytest.fail.Exception, match="SIGNOFF_REQUIRE_CLIENTS is set"):
        harness.claude_code_binary()


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm to reach a dead registry")
def test_an_unreachable_registry_skips_or_fails_when_clients_are_required(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(harness, "CACHE", tmp_path / "cache")
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # nothing listens
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_fetch_retries", "0")  # fail now, not after a minute
    monkeypatch.delenv("SIGNOFF_REQUIRE_CLIENTS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="registry is unreachable"):
        harness.claude_code_binary()
    monkeypatch.setenv("SIGNOFF_REQUIRE_CLIENTS", "1")
    with pytest.raises(pytest.fail.Exception, match="SIGNOFF_REQUIRE_CLIENTS is set"):
        harness.claude_code_binary()
