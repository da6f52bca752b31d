"""Dataclasses without `dataclasses`: `record` makes the same class as `dataclass` does.

A coding-agent hook starts one process per tool call. Importing `dataclasses` (with
`inspect`, `ast`, `dis`, `tokenize`) and letting it write, compile and exec the source of
each method of the ~35 classes a hook meets cost a third of the hook's start-up. `record`
builds those methods from closures instead: the same `__init__` (positional or keyword,
defaults, `field(default_factory=...)`, `init=False`, `__post_init__`), `__repr__`,
`__eq__`, `__hash__`, frozen `__setattr__`/`__delattr__`, `__match_args__`, `__slots__`
and the frozen slotted class's pickling state. A class a process makes many of (a server,
a batch) gets, after `HOT` instances, the `__init__` dataclass would write, compiled once:
a hook never pays for it, a long-lived process keeps dataclass's speed.

The classes stay dataclasses for everyone else: `dataclasses.fields`, `replace`,
`asdict` and `is_dataclass` work on them, through a `__dataclass_fields__` that imports
`dataclasses` and is worked out on first use (by a twin made with `dataclass`, so its
fields are exactly `dataclass`'s). Type checkers see `dataclasses` itself (below).
`replace` here is `dataclasses.replace` without the import. The work is done in
`signoff._records`. Only what signoff uses is supported (no `order`, `kw_only`,
`ClassVar`, `InitVar` or inheritance between records); anything else is refused when the
class is made. `tests/test_records.py` holds each
behaviour equal to `dataclass`'s.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:  # to a type checker, records are dataclasses
    from dataclasses import FrozenInstanceError, field, replace
    from dataclasses import dataclass as record
else:
    from ._records import FrozenInstanceError, field, record, replace

__all__ = ["FrozenInstanceError", "field", "record", "replace"]
