"""Old import paths kept for one release after the layout change: each old module forwards
its names to the new place with a DeprecationWarning that says where to import from."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def forward(old: str, new: str) -> Callable[[str], Any]:
    """A module `__getattr__` for `old` that serves every name from `new`."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        warnings.warn(f"{old} moved: import {name} from {new}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(new), name)

    return __getattr__
