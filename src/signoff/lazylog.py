"""Loggers that import `logging` only when what they log could be shown.

A coding-agent hook starts one process per tool call, and `logging` (with traceback,
string and threading) is a tenth of what the store costs it to import. The store logs
only at debug and info level. In a process that never imported `logging`, nothing set a
level or a handler, so `logging`'s defaults hold: the root level is WARNING and such a
record is dropped. So a `LazyLogger` drops it too, without importing anything; once some
code has imported `logging` (to configure it: the CLI's `SIGNOFF_LOG_LEVEL`, a server,
pytest's caplog), every call goes to `logging.getLogger(name)` as usual.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    import logging

DEBUG = 10  # logging.DEBUG, logging.INFO: the levels this logger offers
INFO = 20


class LazyLogger:
    """The debug and info methods of a `logging.Logger`, by name (no warning or error:
    those must be shown with no configuration at all, so they need `logging` itself)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def logger(self) -> logging.Logger | None:
        """The real logger, or None while `logging` was never imported."""
        found = sys.modules.get("logging")
        return None if found is None else found.getLogger(self.name)

    def isEnabledFor(self, level: int) -> bool:
        logger = self.logger()
        return logger is not None and logger.isEnabledFor(level)

    def debug(self, msg: str, *args: object) -> None:
        logger = self.logger()
        if logger is not None:
            logger.debug(msg, *args, stacklevel=2)

    def info(self, msg: str, *args: object) -> None:
        logger = self.logger()
        if logger is not None:
            logger.info(msg, *args, stacklevel=2)


def get_logger(name: str) -> LazyLogger:
    return LazyLogger(name)


__all__ = ["DEBUG", "INFO", "LazyLogger", "get_logger"]
