"""The public API is exactly these names, each importable from `signoff` (a change here
is a release note), and the names it used to export still import, with a warning."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

import signoff

EXPECTED = {
    # declare and judge
    "tool",
    "ToolSpec",
    "ToolCall",
    "Verdict",
    "Decision",
    "Request",
    "Run",
    "Policy",
    "Settings",
    # in process
    "Gate",
    "ToolResult",
    "Channel",
    "TerminalChannel",
    "Workspace",
    # durable
    "Agent",
    "Runner",
    "Store",
    "open_store",
    "decide",
    # what users catch
    "SignoffError",
    "CallDenied",
    "InvalidInput",
    "RunStopped",
    "ConflictError",
    "__version__",
}


def test_public_api_is_exactly_this() -> None:
    assert set(signoff.__all__) == EXPECTED
    assert len(signoff.__all__) == len(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_public_name_imports(name: str) -> None:
    assert getattr(signoff, name) is not None
    assert name in dir(signoff)


def test_version_comes_from_the_package_metadata() -> None:
    assert signoff.__version__ == importlib.metadata.version("signoff")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        signoff.Nope  # noqa: B018


@pytest.mark.parametrize("name", ["Registry", "load_settings", "Grant", "AlreadyClaimed"])
def test_names_no_longer_exported_still_import_with_a_warning(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"import {name} from signoff\\."):
        assert getattr(signoff, name) is not None


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("signoff.agent", "ScriptedModel", "signoff.llm"),
        ("signoff.registry", "Registry", "signoff.tools"),
        ("signoff.runner", "Runner", "signoff.runs.runner"),
        ("signoff.stats", "load_stats", "signoff.audit.stats"),
        ("signoff.fake_openai", "FakeOpenAIServer", "signoff.llm.fake_server"),
        ("signoff.web.notify", "verify", "signoff.notify"),
        ("signoff.tools", "Workspace", "signoff.workspace"),
    ],
)
def test_moved_modules_forward_with_a_warning(old: str, name: str, new: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old} moved: import {name} from {new}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_the_stored_demo_agent_reference_still_loads() -> None:
    from signoff.demo import AGENT_REF, build_agent

    assert AGENT_REF == "signoff.demo:build_agent"
    assert callable(build_agent)


def test_import_signoff_loads_no_heavy_module() -> None:
    """`import signoff` alone imports none of pydantic, rich, the store or the web."""
    code = (
        "import sys, signoff; heavy = [m for m in ('pydantic', 'rich', 'signoff.store', "
        "'signoff.web', 'tree_sitter', 'openai', 'signoff.policy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_testing_exports_the_doubles() -> None:
    from signoff import testing

    assert set(testing.__all__) == {
        "FakeOpenAIServer",
        "ScriptedChannel",
        "ScriptedModel",
        "fake_call",
        "scripted_reply",
    }
    for name in testing.__all__:
        assert getattr(testing, name) is not None
