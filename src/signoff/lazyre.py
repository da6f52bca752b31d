"""Regular expressions compiled on first use.

A coding-agent hook starts one process per tool call, and most calls meet few of the
shell tables' patterns: compiling all of them at import cost more than judging the call.
`lazy(pattern, flags)` stands where `re.compile(pattern, flags)` stood and compiles when a
method is first called; a bad pattern still fails, at its first use and in the tests that
compile every one (`compile_all`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

_MADE: list[LazyPattern] = []  # every lazy pattern, for `compile_all`


class LazyPattern:
    """The methods of `re.Pattern` that signoff uses, compiling on the first call."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        _MADE.append(self)

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return compiled

    def match(self, string: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = 2**63 - 1
    ) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = 2**63 - 1) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled.subn(repl, string, count)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags!r})"


def lazy(pattern: str, flags: int | re.RegexFlag = 0) -> LazyPattern:
    """`re.compile(pattern, flags)`, deferred to the first match."""
    return LazyPattern(pattern, int(flags))


def compile_all() -> int:
    """Compile every lazy pattern made so far (tests: a typo fails now, not in a call)."""
    for made in _MADE:
        made.compiled  # noqa: B018
    return len(_MADE)


__all__ = ["LazyPattern", "compile_all", "lazy"]
