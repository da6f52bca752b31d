"""The `signoff` command line. `main` is the console script (`signoff.cli:main`); each
subcommand's module registers its own parser and loads only when it is used."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from .app import main as run

    return run(argv)


__all__ = ["main"]
