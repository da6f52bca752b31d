"""What `typing` gives at run time, without importing typing.

A coding-agent hook starts one process per tool call, and `typing` is a tenth of what it
imports. Annotations are strings (`from __future__ import annotations`) and the names
they use are imported under `TYPE_CHECKING`; what is left at run time is here: `cast`
and `overload` (which do nothing at run time), and the `Literal` types some modules
export, made with typing when someone asks for one (`literal_type`):

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import Literal
        Mode = Literal["default", "plan"]

    MODES: tuple[Mode, ...] = ("default", "plan")
    _LITERALS = {"Mode": MODES}

    if not TYPE_CHECKING:
        def __getattr__(name):  # `from .settings import Mode` still works
            return literal_type(__name__, _LITERALS, name)

`tests/test_hints.py` holds each module's run-time values equal to its `Literal`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, cast, overload
else:

    def cast(kind, value):
        """`typing.cast`: the value, unchanged."""
        return value

    def overload(fn):
        """`typing.overload`: at run time the last definition, the implementation, wins."""
        return fn


def literal_type(module: str, literals: Mapping[str, tuple[str, ...]], name: str) -> Any:
    """`module`'s Literal type `name`, made of its values on first use and then kept in
    the module; any other name is the usual AttributeError (a module's `__getattr__`)."""
    values = literals.get(name)
    if values is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    from typing import Literal

    made = Literal[values]  # type: ignore[valid-type]  # the values, known at run time
    setattr(sys.modules[module], name, made)
    return made


__all__ = ["cast", "literal_type", "overload"]
