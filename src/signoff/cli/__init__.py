"""The `signoff` command line. `main` is the console script (`signoff.cli:main`); each
subcommand's module registers its own parser and loads only when it is used."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    import gc

    # `check` judges one call and exits (a hook starts one per tool call). Starting up
    # creates thousands of objects that live until exit (modules, classes, tables) and next
    # to no garbage: the cyclic collector would walk them dozens of times for nothing, ~10%
    # of the command's time. A batch (`--shell-file`) turns it back on once loaded
    # (`app.cmd_check`); other commands run long and keep it.
    words = sys.argv[1:] if argv is None else list(argv)
    # A coding agent's hook is also a process per tool call, which closes its store
    # before it returns: it skips the collector and the teardown the same way, and the
    # parser of the other commands too (`hooks.run_hook` reads its own two options).
    hook = words[:1] == ["hook"]
    one_call = hook or words[:1] == ["check"]
    was_enabled = gc.isenabled()
    if one_call:
        gc.disable()
    try:
        if hook:
            from .hooks import run_hook

            code = run_hook(words[1:], process_ends=argv is None)
        elif words[:1] == ["sandbox"]:  # once per contained command: no other parsers
            from .sandbox import main_sandbox

            code = main_sandbox(words[1:])
        else:
            from .app import main as run

            code = run(argv)
    finally:
        if was_enabled:
            gc.enable()
    if one_call and argv is None:  # the console script, not a caller in this process
        _exit_now(code, unflushed=2 if hook else 120)
    return code


def _exit_now(code: int, *, unflushed: int = 120) -> NoReturn:
    """End the process without tearing it down: `check` (or a hook, its store closed) has
    written all it writes, and unloading ~150 modules and collecting every object they
    hold would cost ~10% of its time. Output that cannot be flushed (a closed pipe) ends
    it as Python would, 120; a hook with 2, which every client reads as blocked."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = unflushed
    os._exit(code)


__all__ = ["main"]
