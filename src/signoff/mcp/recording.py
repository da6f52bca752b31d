"""The proxy's ways of writing the record (see `recorder`): the adapter core with an
allowed call's outcome held and committed with the next verdict, and what the upstream
answered (or failed with) on the record."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..adapters.core import Adapter, Answer, HookCall
from ..kinds import REVIEW, SESSION_OUTCOME, VERDICT
from ..models import Verdict
from ..store import Draft
from .config import ProxyConfig
from .recorder import LINGER, Recorder
from .routed import CLIENT

if TYPE_CHECKING:
    from ..adapters.core import HookEvent
    from ..store import Store
    from ..store.base import Flush


class ProxyParts:
    """What the proxy's parts (`OutcomeRecording`, `asking.Asking`) use of the `Proxy`."""

    config: ProxyConfig
    store_url: str | None
    recorder: Recorder

    @property
    def adapter(self) -> RecordingAdapter:
        raise NotImplementedError

    def adapter_store(self) -> Store:
        raise NotImplementedError


class RecordingAdapter(Adapter):
    """The adapter core, with the proxy's ways of writing the record (see `recorder`):
    an allowed call's outcome is held and committed with the next verdict
    (`holding_outcomes`); with `[record] allowed = "beside"`, an allowed call's verdict
    too is written by the recorder, beside the call. Every other record is written
    before anything happens. An allowed call's verdict names this process
    (`outcome_by`): should its outcome never come, the call shows as in doubt once the
    process is gone (`audit.outcomes`)."""

    def __init__(
        self, recorder: Recorder, beside: bool, writer: str, *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.recorder = recorder
        self.beside = beside
        self.writer = writer
        self.holding_outcomes = False  # set around `post` of a call with no request
        self.held_first = False  # what it held was the first held since the last write

    def _record(self, hc: HookCall, kind: str, data: Mapping[str, Any], **extra: Any) -> None:
        verdict = data.get("verdict")
        effect = verdict.get("effect") if isinstance(verdict, Mapping) else None
        if kind == VERDICT and effect in ("allow", "notify") and hc.event == "pre":
            data = {**data, "outcome_by": self.writer}  # its outcome comes later, from us
        if self.beside and kind == VERDICT and effect in ("allow", "notify"):
            self.recorder.submit(lambda: Adapter._record(self, hc, kind, data, **extra))
        elif self.holding_outcomes and kind in (SESSION_OUTCOME, REVIEW):
            if self.recorder.later(self._draft(hc, kind, data, **extra)):
                self.held_first = True
        elif kind == VERDICT:
            # in the store before the call goes upstream (or is refused), on disk moments
            # later (Store.record); an ask's request and a claim wait for the disk
            self._with_held(self._draft(hc, kind, data, **extra), flush="soon")
        else:
            super()._record(hc, kind, data, **extra)

    def _draft(self, hc: HookCall, kind: str, data: Mapping[str, Any], **extra: Any) -> Draft:
        return Draft(
            kind, extra.get("request_id"), hc.run_id, extra.get("actor"), self._event(hc, data)
        )

    def _with_held(self, draft: Draft, *, flush: Flush = "now") -> None:
        """This verdict and the outcomes held before it, in one commit."""
        held = self.recorder.take()
        try:
            self.store.record_many([*held, draft], flush=flush)
        except BaseException:
            self.recorder.give_back(held)  # the writer tries them again (or stops the proxy)
            raise

    def refuse(self, hc: HookCall, verdict: Verdict) -> None:
        """A call refused before the policy saw it, on the record as a deny."""
        call = hc.call().to_json()
        data = {"call": call, "verdict": verdict.to_json(), "event": hc.event, "ask": "defer"}
        self._with_held(self._draft(hc, VERDICT, data))


class OutcomeRecording(ProxyParts):
    """What became of a call that went upstream, on the record."""

    def _after_verdict(self, answer: Answer, write: Any) -> None:
        """A record of an allowed call's end: by the writer of its verdict when that is the
        recorder (`[record] allowed = "beside"`), so it comes after it; else now."""
        if answer.request_id is None and self.config.record_allowed == "beside":
            self.recorder.submit(write)
        else:
            write()

    def record_outcome(self, hc: HookCall, answer: Answer, result: Any) -> None:
        """What the upstream answered (a tool's result, a resource, a prompt), on the
        record: a claimed request is finished before the client hears it ran; an allowed
        call's outcome is held and committed with the next verdict (see `recorder`)."""
        adapter = self.adapter

        # allowed outright, in this process: `pre` kept no state for the call
        kept = (
            answer.request_id is not None
            or answer.verdict is None
            or answer.verdict.effect != "allow"
        )

        def post() -> None:
            response = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            event: HookEvent = "post_failure" if getattr(result, "is_error", False) else "post"
            adapter.post(replace(hc, event=event, response=response), kept=kept)

        if answer.request_id is not None:
            post()
        elif self.config.record_allowed == "beside":
            self.recorder.submit(post)  # after its verdict, by the same writer
        else:
            try:  # once the answer is on its way: the loop's next turn
                loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:  # not asyncio (trio): now, and written now
                loop = None
            if loop is None:
                self._hold(post)
                self.recorder.write_held_soon()
            else:
                loop.call_soon(self._hold, post, loop)

    def _hold(self, post: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Put the outcome `post` records among the held ones; if none was held, the
        writer writes them in `LINGER` seconds unless a verdict took them meanwhile."""
        adapter = self.adapter
        adapter.holding_outcomes, adapter.held_first = True, False
        try:
            post()
        except BaseException as exc:  # an outcome not kept: no call runs from now on
            self.recorder.broken = exc
        finally:
            adapter.holding_outcomes = False
        if adapter.held_first and loop is not None:
            loop.call_later(LINGER, self.recorder.write_held_soon)

    def record_failure(self, hc: HookCall, answer: Answer, exc: BaseException) -> None:
        """The upstream refused or failed a read or a prompt (nothing it does changes
        anything), on the record as failed."""
        failed = _outcome(hc, answer, "failed", exc)
        self.adapter_store().record(SESSION_OUTCOME, failed, run_id=hc.run_id)

    def record_doubt(self, hc: HookCall, answer: Answer, exc: BaseException) -> None:
        """The call failed under the upstream's transport, or the client cancelled it:
        whether it ran is unknown. On the record as in doubt, after its verdict."""
        doubt = _outcome(hc, answer, "in_doubt", exc)
        store = self.adapter_store()
        self._after_verdict(answer, lambda: store.record(SESSION_OUTCOME, doubt, run_id=hc.run_id))


def _outcome(hc: HookCall, answer: Answer, outcome: str, exc: BaseException) -> dict[str, Any]:
    """The `session.outcome` of a call that did not come back from the upstream."""
    return {
        "client": CLIENT,
        "session_id": hc.session_id,
        "call": hc.call().to_json(),
        "outcome": outcome,
        "error": f"{type(exc).__name__}: {exc}",
        **({"request": answer.request_id} if answer.request_id else {}),
    }


__all__ = ["OutcomeRecording", "ProxyParts", "RecordingAdapter"]
