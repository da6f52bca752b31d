"""Shell command analysis: what would this command line really do?

`analyze()` parses a command with tree-sitter-bash (`shell.parse`), looks through
wrappers (`sudo`, `env`, `timeout`, `xargs`, `bash -c '…'`, `eval`, `find -exec`, …) and
classifies every effective simple command with the tables in `shell.knowledge`:

    read_only -> allow      reversible_write inside the workspace -> notify
    destructive / network / privilege / opaque / writes outside -> ask
    catastrophic (rm -rf ~, curl | sh, mkfs, …) -> deny, whatever the rules say

Pure: no I/O except resolving symlinks through an injectable resolver, no clock.
Anything dynamic or unparseable is opaque, so it can never be allowed.

The analysis lives in `shell.analysis`; the names below load it on first use, so that
importing a part of the package (`shell.normalize`, which rules use to read a rule's
command) does not load the grammar and every judge.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    from .analysis import CommandPart, ShellAnalysis, analyze, combine, suggest_rule
    from .facts import ShellClass

_PUBLIC = frozenset(
    {"CommandPart", "ShellAnalysis", "ShellClass", "analyze", "combine", "suggest_rule"}
)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import analysis, facts

    value = getattr(facts if name == "ShellClass" else analysis, name)
    globals()[name] = value
    return value


__all__ = ["CommandPart", "ShellAnalysis", "ShellClass", "analyze", "combine", "suggest_rule"]
