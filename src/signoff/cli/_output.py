"""What every `signoff` command prints with: the console, the plain table, `--json`
output, and the store a command names. Subcommand modules import these from here, not
from `cli.app`, so that the command modules form no cycle."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from ..channels.escape import safe_json

if TYPE_CHECKING:  # rich and the store load only for the commands that print or read them
    from rich.console import Console
    from rich.table import Table

    from ..store import Store


def console(stream: TextIO | None = None) -> Console:
    from rich.console import Console

    out = stream or sys.stdout
    # Off a terminal (pipes, logs, CI) rich assumes 80 columns; tables read better wider.
    width = None if out.isatty() else 120
    return Console(file=out, highlight=False, markup=False, soft_wrap=True, width=width)


def store_for(args: argparse.Namespace) -> Store:
    """The store a command names: --db, else $SIGNOFF_DB, else the workspace's own."""
    from ..store import open_store

    return open_store(getattr(args, "db", None), workspace=getattr(args, "workspace", "."))


def plain_table(*columns: str) -> Table:
    """The borderless table every list command prints (long cells fold, never cut)."""
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def print_json(value: Any) -> None:
    """`--json` output: readable non-ASCII, but no code point a terminal would act on."""
    sys.stdout.write(safe_json(value) + "\n")


__all__ = ["console", "plain_table", "print_json", "store_for"]
