"""The worker inside `signoff serve`: it resumes a run as soon as its decisions are in, so an
approval in the browser moves the run on without a `signoff resume` or `signoff worker`.

It is `runs.worker.work` in a thread, with its own store connection (a `memory:` store is
shared: another connection would see nothing). Runs and approved calls are claimed in the
store as with any other worker, so it and any number of `signoff worker` processes resume
each run once and run each approved call once.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable

from ..exceptions import ConfigurationError
from ..run_state import Run
from ..runs.agent import worker_name
from ..runs.worker import work
from ..store import Store, open_store
from ..store.memory import MemoryStore

RETRY_AFTER_ERROR = 2.0  # seconds: an error other than a store outage (work rides those out)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class EmbeddedWorker:
    """Start with `start()`, stop with `stop()` (the app's lifespan does both)."""

    def __init__(
        self,
        url: str,
        *,
        store: Store | None = None,
        poll: float = 1.0,
        report: Callable[[str], None] = _to_stderr,
    ) -> None:
        self.url = url
        self.shared = store if isinstance(store, MemoryStore) else None
        self.poll = poll
        self.report = report
        self.name = f"{worker_name()}:serve"
        self.resumed = 0
        # run id -> why this server could not resume it (shown on the run's requests' pages)
        self.failures: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="signoff-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the loop to stop and wait for the run in hand (a tool may be running)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
            if self._thread.is_alive():
                self.report(
                    "signoff serve: the worker is still running a call; a call cut off by the "
                    "exit is shown as in doubt, never run twice"
                )

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _failed(self, run: Run, exc: Exception) -> None:
        why = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ConfigurationError):  # the agent does not import in this process
            why += (
                "; start signoff serve where that module imports (or set PYTHONPATH). This "
                "server holds the run for 5 minutes, then tries again; stopping it lets the "
                "run go at once"
            )
        self.failures[run.id] = why
        self.report(f"signoff serve: could not resume run {run.id}: {why}")

    def _loop(self) -> None:
        store = self.shared or open_store(self.url)
        said = ""  # the last error reported: the same one again is not repeated
        try:
            while not self._stop.is_set():
                try:
                    # a store outage is ridden out inside: one line when it starts, one
                    # when it ends (see signoff.outage)
                    self.resumed += work(
                        store,
                        worker=self.name,
                        poll=self.poll,
                        stop=self._stop.is_set,
                        on_error=self._failed,
                        report=lambda line: self.report(f"signoff serve: {line}"),
                        sleep=self._stop.wait,
                    )
                except Exception as exc:  # anything else: the server stays up, says so once
                    why = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                    if why != said:
                        self.report(
                            f"signoff serve: the worker stopped on {why}; trying again every "
                            f"{RETRY_AFTER_ERROR:g} s (said once)"
                        )
                        said = why
                    self._stop.wait(RETRY_AFTER_ERROR)
        finally:
            # the runs it could not rebuild are let go at once, for a process that can
            for run_id in list(self.failures):
                with contextlib.suppress(Exception):
                    store.release_run(run_id, self.name)
            if self.shared is None:
                store.close()


__all__ = ["EmbeddedWorker"]
