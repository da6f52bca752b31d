"""The `signoff` command line. `main` is the console script (`signoff.cli:main`); each
subcommand's module registers its own parser and loads only when it is used."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    import gc

    # `check` judges one call and exits (a hook starts one per tool call). Starting up
    # creates thousands of objects that live until exit (modules, classes, tables) and next
    # to no garbage: the cyclic collector would walk them dozens of times for nothing, ~10%
    # of the command's time. A batch (`--shell-file`) turns it back on once loaded
    # (`app.cmd_check`); other commands run long and keep it.
    words = sys.argv[1:] if argv is None else list(argv)
    was_enabled = gc.isenabled()
    if words[:1] == ["check"]:
        gc.disable()
    try:
        from .app import main as run

        return run(argv)
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["main"]
