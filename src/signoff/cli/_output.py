"""What every `signoff` command prints with: the console, the plain table, `--json`
output, and the store a command names. Subcommand modules import these from here, not
from `cli.app`, so that the command modules form no cycle."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..escape import safe_json

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


def store_url(args: argparse.Namespace) -> str:
    """The store a command names: --db, else $SIGNOFF_DB, else the workspace's own."""
    from ..store import default_url

    return str(getattr(args, "db", None) or default_url(getattr(args, "workspace", None) or "."))


def store_for(args: argparse.Namespace, *, existing: bool = False) -> Store:
    """Open the store a command names. With `existing` (commands that only read, or act on
    something already in it), a store that does not exist is refused and nothing is
    created: a mistyped --workspace must not read as "Inbox empty"."""
    from ..exceptions import ConfigurationError
    from ..store import open_store
    from ..store.exists import describe, store_exists

    url = store_url(args)
    if existing and not store_exists(url):
        raise ConfigurationError(
            f"no signoff store at {describe(url)}: check --workspace or --db, or create "
            f"one there with: signoff migrate{store_flags(args)}"
        )
    return open_store(url)


def store_flags(args: argparse.Namespace) -> str:
    """The options a printed `signoff ...` hint needs to reach the same store from any
    directory (`--db`, `--workspace`, absolute and shell-quoted); empty when the store is
    the default one for the current directory, so the common hint stays short."""
    return where_flags(getattr(args, "db", None), getattr(args, "workspace", None))


def where_flags(db: str | None, workspace: str | None) -> str:
    """`store_flags` from the values themselves (see there)."""
    import os
    import shlex

    from ..store.exists import MEMORY_URLS, POSTGRES_PREFIXES, sqlite_path

    words: list[str] = []
    url = db or os.environ.get("SIGNOFF_DB")
    if url and url not in MEMORY_URLS:
        path = sqlite_path(url)
        if path is not None and not url.startswith(POSTGRES_PREFIXES):
            url = str(path.absolute())  # a relative path means nothing from elsewhere
        words += ["--db", url]
    root = os.path.abspath(workspace or ".")
    if root != os.getcwd():
        words += ["--workspace", root]
    return "".join(f" {shlex.quote(w)}" for w in words)


DB_HELP = (
    "store URL: a SQLite path or postgresql://… (default: $SIGNOFF_DB, else "
    ".signoff/signoff.db in the workspace)"
)
WORKSPACE_HELP = "the project directory whose store and settings to use (default: .)"
JSON_HELP = "print JSON instead of a table, for scripts"


class HelpFormatter(argparse.HelpFormatter):
    """Wraps the description to the terminal, and keeps the examples (the epilog, which
    starts with "example") line for line, as they are to be typed."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def command(
    sub: Any, name: str, *, help: str, description: str, examples: Sequence[str]
) -> argparse.ArgumentParser:
    """A subcommand parser with its one-line `help` (in `signoff --help`), a description
    and examples (in `signoff NAME --help`); examples are shown exactly as written."""
    lines = "\n".join(f"  {e}" for e in examples)
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=f"example{'s' if len(examples) > 1 else ''}:\n{lines}",
        formatter_class=HelpFormatter,
    )
    return parser


def add_store_options(parser: argparse.ArgumentParser, *, default: Any = None) -> None:
    """--db and --workspace, as every command over the store takes them."""
    parser.add_argument("--db", default=default, help=DB_HELP)
    parser.add_argument(
        "--workspace", default="." if default is None else default, help=WORKSPACE_HELP
    )


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


__all__ = [
    "DB_HELP",
    "JSON_HELP",
    "WORKSPACE_HELP",
    "HelpFormatter",
    "add_store_options",
    "command",
    "console",
    "plain_table",
    "print_json",
    "store_flags",
    "store_for",
    "store_url",
    "where_flags",
]
