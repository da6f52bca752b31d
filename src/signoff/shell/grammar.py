"""The tree-sitter extension modules, loaded without their packages' `__init__`.

`tree_sitter/__init__.py` imports typing (for one Protocol) and `tree_sitter_bash`'s
imports importlib.resources (for query files signoff never reads): together a tenth of a
hook's start-up. Their compiled `_binding` modules are what parsing uses; each is loaded
from where the package lies, registered under its usual name (so a later ordinary import
of the package shares it, types included), and if the layout ever changes the ordinary
import is used instead.
"""

from __future__ import annotations

import sys
from types import ModuleType


def binding(package: str) -> ModuleType:
    """`<package>._binding`, the package's compiled module."""
    name = f"{package}._binding"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    from importlib.machinery import ExtensionFileLoader, PathFinder

    found = PathFinder.find_spec(package)
    where = found.submodule_search_locations if found else None
    spec = PathFinder.find_spec(name, where) if where else None
    if spec is None or not isinstance(spec.loader, ExtensionFileLoader):
        import importlib

        return importlib.import_module(name)
    module = spec.loader.create_module(spec)
    assert module is not None  # an extension module always makes one
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


__all__ = ["binding"]
