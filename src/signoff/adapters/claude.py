"""The Claude Agent SDK's permission callback over the adapter core.

    from claude_agent_sdk import ClaudeAgentOptions, query
    from signoff.adapters.claude import can_use_tool

    guard = can_use_tool(workspace=".")
    options = ClaudeAgentOptions(can_use_tool=guard, hooks=guard.hooks, cwd=".")

The same tool mapping and previews as the Claude Code hook (`claude_code.CLIENT`), under its
own client name (`claude-agent-sdk`, so the record says which one judged). For each call:
allow -> `PermissionResultAllow`; notify -> allow, and a file change is kept for review;
deny -> `PermissionResultDeny` with signoff's reason (the model reads it); ask -> a durable
request in the inbox (its id derived from the session and the tool-use id), then either a
person decides it from anywhere (`signoff approve`, the web inbox) while the callback waits
to a deadline, or the `ask=` coroutine you pass decides it. An edit comes back as
`updated_input`.

Why `guard.hooks` as well: the Claude client asks `can_use_tool` only for calls it would
prompt for. Reads, calls its own allow rules cover, and everything in `bypassPermissions`
never reach the callback, so a signoff deny (`Read(./.env)`) would not hold on them. The
`PreToolUse` hook judges every call first: it denies there (deny is absolute) and sends
the rest to the callback (`ask`), noting the session's id; `PostToolUse` puts the outcome
on the record and finishes an approved call's claim. Hook failures block (`on_failure`).

Fail closed: an error anywhere is a deny with the reason, never an allow.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..exceptions import ConfigurationError, InvalidInput
from ..models import Decision, Request
from .claude_code import CLIENT as CLAUDE_CODE
from .core import Adapter, Answer, HookCall, HookOptions, deny_reason, hook_options

if TYPE_CHECKING:
    from claude_agent_sdk import (
        HookMatcher,
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
    )

    from ..settings import Settings
    from .core import HookEvent

NAME = "claude-agent-sdk"
CLIENT = replace(CLAUDE_CODE, name=NAME)
# Decides one pending request: a person behind your own UI, a test, a chat bot.
Decider = Callable[[Request], Awaitable[Decision]]
_SEEN_LIMIT = 4096  # hook notes kept for the callback (a tool-use id each)


class Guard:
    """The `can_use_tool` callback (call it) and the hooks that make it see every call."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        ask: Literal["inbox"] | Decider = "inbox",
        session: str | None = None,
        wait: float | None = None,
        store_url: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        root = Path(workspace).expanduser().resolve()
        if not root.is_dir():
            raise ConfigurationError(f"can_use_tool: workspace {root} is not a directory")
        if ask != "inbox" and not callable(ask):
            raise InvalidInput(
                f"can_use_tool: ask={ask!r} must be 'inbox' or an async function of a "
                "Request that returns a Decision"
            )
        if wait is not None and wait <= 0:
            raise InvalidInput(f"can_use_tool: wait={wait!r} must be a positive number of seconds")
        self.workspace = str(root)
        self.ask = ask
        # Names the session when no hook told us Claude's own session id.
        self.session = session or "sdk-" + uuid.uuid4().hex
        self.wait = wait
        self.store_url = store_url
        self.settings = settings
        self._seen: dict[str, HookCall] = {}  # tool-use id -> what PreToolUse saw

    # ------------------------------------------------------------------ plumbing

    def _adapter(self) -> Adapter:
        """A fresh adapter (settings read again: an `approve always` grant lands there).
        One per call and per thread: a store connection stays in its thread."""
        from ..settings import load_settings

        settings = self.settings or load_settings(self.workspace)
        options: HookOptions = replace(hook_options(settings), ask="inbox")
        if self.wait is not None:
            options = replace(options, wait=self.wait)
        return Adapter(
            CLIENT, self.workspace, settings=settings, options=options, store_url=self.store_url
        )

    def _call(self, tool: str, arguments: Mapping[str, Any], tool_use_id: str | None) -> HookCall:
        seen = self._seen.pop(tool_use_id, None) if tool_use_id else None
        if seen is not None and seen.tool == tool:
            return replace(seen, arguments=dict(arguments))
        return HookCall(
            client=NAME,
            event="pre",
            session_id=self.session,
            call_id=tool_use_id or "",
            tool=tool,
            arguments=dict(arguments),
            cwd="",  # the PreToolUse hook, which carries the shell's directory, did not fire
        )

    # ------------------------------------------------------------------ the callback

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        try:
            answer = await self._judge(self._call(tool_name, tool_input, context.tool_use_id))
        except Exception as exc:  # fail closed: never an allow
            detail = str(exc) or type(exc).__name__
            reason = f"signoff could not judge this call, so it is blocked: {detail}"
            answer = Answer("deny", reason)
        if answer.behavior == "allow":
            updated = dict(answer.updated_input) if answer.updated_input is not None else None
            return PermissionResultAllow(updated_input=updated)
        reason = answer.reason or "signoff: this call was not approved"
        return PermissionResultDeny(message=reason)

    async def _judge(self, hc: HookCall) -> Answer:
        import anyio.to_thread

        decider = self.ask if callable(self.ask) else None

        def first() -> Answer:
            adapter = self._adapter()
            try:
                return adapter.pre(hc, wait=decider is None)
            finally:
                adapter.close()

        answer = await anyio.to_thread.run_sync(first, abandon_on_cancel=True)
        if answer.behavior != "ask" or decider is None or answer.request_id is None:
            return answer
        rid = answer.request_id

        def pending() -> Request:
            adapter = self._adapter()
            try:
                return adapter.store.get_request(rid)
            finally:
                adapter.close()

        request = await anyio.to_thread.run_sync(pending)
        decision = await decider(request) if request.state == "pending" else None

        def settle() -> Answer:
            from .. import approvals
            from ..exceptions import ConflictError

            adapter = self._adapter()
            try:
                if decision is not None:
                    if not isinstance(decision, Decision):
                        raise InvalidInput(
                            f"can_use_tool: the ask function returned {type(decision).__name__}, "
                            "not a signoff Decision; the call is blocked"
                        )
                    # decided meanwhile (the inbox was quicker): the request says how
                    with contextlib.suppress(ConflictError):
                        approvals.decide(
                            adapter.store,
                            rid,
                            decision,
                            actor=decision.actor,
                            workspace=self.workspace,
                            policy=adapter.policy(hc),
                        )
                return adapter.decided(hc, rid)
            finally:
                adapter.close()

        return await anyio.to_thread.run_sync(settle)

    # ------------------------------------------------------------------ the hooks

    @property
    def hooks(self) -> dict[Any, list[HookMatcher]]:
        """For `ClaudeAgentOptions(hooks=...)`: every call through signoff, every
        outcome on the record. A hook that fails blocks the call."""
        from claude_agent_sdk import HookMatcher

        return {
            "PreToolUse": [HookMatcher(hooks=[self.pre_tool_use], on_failure="block")],
            "PostToolUse": [HookMatcher(hooks=[self.post_tool_use])],
            "PostToolUseFailure": [HookMatcher(hooks=[self.post_tool_use])],
        }

    async def pre_tool_use(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        """Deny here what signoff denies; send everything else to the callback."""
        import anyio.to_thread

        try:
            hc = _hook_call(data, "pre", tool_use_id)

            def judge() -> str | None:
                adapter = self._adapter()
                try:
                    policy = adapter.policy(hc)
                    verdict = policy.evaluate(hc.call(), cwd=hc.cwd)  # the callback records it
                    if verdict.effect != "deny":
                        return None
                    return deny_reason(adapter.verdict(hc))  # on the record here
                finally:
                    adapter.close()

            denied = await anyio.to_thread.run_sync(judge)
        except Exception as exc:  # fail closed
            denied = f"signoff could not judge this call, so it is blocked: {exc}"
            hc = None
        if denied is not None:
            return _pre_answer("deny", denied)
        assert hc is not None
        if hc.call_id:
            if len(self._seen) >= _SEEN_LIMIT:  # a call the callback never saw
                self._seen.pop(next(iter(self._seen)))
            self._seen[hc.call_id] = hc
        return _pre_answer("ask", "signoff judges this call (can_use_tool)")

    async def post_tool_use(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        """The outcome on the record; an approved call's claim finished."""
        import anyio.to_thread

        event: HookEvent = (
            "post_failure"
            if isinstance(data, Mapping) and data.get("hook_event_name") == "PostToolUseFailure"
            else "post"
        )
        hc = _hook_call(data, event, tool_use_id)
        if hc.call_id:
            self._seen.pop(hc.call_id, None)

        def record() -> None:
            adapter = self._adapter()
            try:
                adapter.post(hc)
            finally:
                adapter.close()

        await anyio.to_thread.run_sync(record)
        return {}


def _hook_call(data: Any, event: HookEvent, tool_use_id: str | None) -> HookCall:
    """An SDK hook's input; every problem names the field."""
    if not isinstance(data, Mapping):
        raise InvalidInput("hook input is not a mapping")

    def text(key: str, *, required: bool) -> str:
        value = data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value):
            raise InvalidInput(f"hook input: {key} must be a non-empty string")
        return value

    tool_input = data.get("tool_input")
    if not isinstance(tool_input, Mapping):
        raise InvalidInput("hook input: tool_input must be a mapping")
    return HookCall(
        client=NAME,
        event=event,
        session_id=text("session_id", required=True),
        call_id=tool_use_id or text("tool_use_id", required=False),
        tool=text("tool_name", required=True),
        arguments=dict(tool_input),
        cwd=text("cwd", required=False),
        permission_mode=text("permission_mode", required=False) or "default",
        agent_id=text("agent_id", required=False) or None,
        response=data.get("tool_response") if event == "post" else data.get("error"),
    )


def _pre_answer(decision: Literal["deny", "ask"], reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def can_use_tool(
    workspace: str | Path = ".",
    *,
    ask: Literal["inbox"] | Decider = "inbox",
    session: str | None = None,
    wait: float | None = None,
    store_url: str | None = None,
    settings: Settings | None = None,
) -> Guard:
    """The callback for `ClaudeAgentOptions(can_use_tool=...)`, judging calls in
    `workspace` by its signoff settings; pass its `.hooks` as `hooks=` too.

    `ask`: "inbox" (wait for a person's decision, made anywhere, until `wait` seconds or
    `[hooks] wait` pass; then the call is denied) or an async function that decides the
    request itself. `session` names the session when the hooks are not installed (they
    tell the callback Claude's own session id)."""
    return Guard(
        workspace, ask=ask, session=session, wait=wait, store_url=store_url, settings=settings
    )


__all__ = ["CLIENT", "NAME", "Decider", "Guard", "can_use_tool"]
