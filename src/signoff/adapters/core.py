"""The adapter core: one tool call from a coding agent in, one answer out.

    the client's hook JSON  --shell-->  HookCall
    HookCall  --policy-->  verdict (recorded)
      allow   -> allow
      notify  -> allow; a file change is kept for review (`signoff review`, revertible)
      deny    -> deny, with signoff's reason (the model reads it and re-plans)
      ask     -> by the `ask` strategy:
                 native  the client's own dialog, with signoff's reason and rule
                 inbox   a durable request; wait (to a deadline) for a person's decision
                 defer   a durable request; the client stops, `signoff worker` resumes it
    the outcome (PostToolUse)  -> on the record; a claimed request is finished

A request's id is derived from the client, the session and the tool-use id, so a hook
fired again for the same call (a resumed session) finds the same request instead of
asking twice. An approved call is claimed before it is handed to the client (exactly
once: a second hook for the same call is refused), and the client's input must be the
call the person approved (its digest). An edit is judged again here: a deny still wins.

What a later event of the same call needs (the claim token, the verdict of a call asked
in the client's dialog, what a file change replaced) is kept in `.signoff/hooks/`, which
is signoff's own state: no tool of the agent may read or write it.

Events that come from a `sender` other than the client's own hook process (the HTTP hook:
whoever holds the hook's credential) name it on every entry, and an outcome must match a
call judged here: `pre` leaves a note for every call it judged (with the digest of the
call that may run), and an outcome with no note, for a denied call that "ran", or for
other arguments is recorded as `session.unmatched` naming the sender, never as an
outcome, and refused (`UnmatchedOutcome`).

Fail closed: nothing here turns an error into allow. A shell turns every exception into
a block (see `claude_code.main`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping
from fnmatch import fnmatchcase

from ..exceptions import ConfigurationError, ConflictError, InvalidInput, NotFound
from ..hints import cast, literal_type
from ..kinds import (
    REVIEW,
    SANDBOX_BLOCKED,
    SESSION_DECIDED,
    SESSION_OUTCOME,
    SESSION_UNMATCHED,
    VERDICT,
)
from ..models import Request, ToolCall, Verdict, canonical_json, sha256_hex
from ..plainpath import joined
from ..records import field, record, replace
from ..settings import Settings, load_settings, parse_duration
from ..tools import TIERS, Registry, ToolSpec

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, Literal

    from ..models import Tier
    from ..policy import Policy
    from ..settings import Mode
    from ..store import Store

    Strategy = Literal["native", "inbox", "defer"]
    HookEvent = Literal["pre", "permission", "post", "post_failure"]
    Behavior = Literal["allow", "deny", "ask", "defer", "none"]

STRATEGIES: tuple[Strategy, ...] = ("native", "inbox", "defer")
HOOK_EVENTS: tuple[HookEvent, ...] = ("pre", "permission", "post", "post_failure")
BEHAVIORS: tuple[Behavior, ...] = ("allow", "deny", "ask", "defer", "none")
_LITERALS: dict[str, tuple[str, ...]] = {
    "Strategy": STRATEGIES,
    "HookEvent": HOOK_EVENTS,
    "Behavior": BEHAVIORS,
}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


DEFAULT_WAIT = 600.0  # seconds an inbox request waits for a decision
DEFAULT_DEFER_EXPIRY = 86400.0  # a deferred session waits longer: nobody holds a process
DEFAULT_POLL = 0.5
CLAIM_LEASE = 3600.0  # a tool may run for a while before its PostToolUse reports
STALE_STATE = 7 * 86400.0  # kept state no later event took (a call refused in a dialog)
STATE_DIR = ".signoff/hooks"  # under the workspace
_HOOK_KEYS = frozenset({"ask", "wait", "defer_expiry", "poll", "tiers", "claude", "resume_args"})


# ----------------------------------------------------------------------- vocabulary


class UnmatchedOutcome(ConflictError):
    """An outcome from a sender (the HTTP hook) that matches no call judged here: it is
    on the record as `session.unmatched`, naming the sender, and is no outcome."""


@record(frozen=True, slots=True)
class HookCall:
    """One hook event about one tool call, whatever client sent it."""

    client: str
    event: HookEvent
    session_id: str
    call_id: str  # the client's tool-use id ("" when the event carries none)
    tool: str
    arguments: Mapping[str, Any]
    cwd: str = ""
    permission_mode: str = "default"
    agent_id: str | None = None
    response: Any = None
    transcript_path: str | None = None

    def call(self) -> ToolCall:
        return ToolCall(self.tool, dict(self.arguments), self.call_id)

    @property
    def run_id(self) -> str:
        """The session, as the audit record names it."""
        return f"{self.client}-{self.session_id}"

    def key(self, *, by_digest: bool = False) -> str:
        """What names this call across hooks fired again: session and tool-use id (or,
        for an event without one, the call's digest)."""
        ident = self.call_id if self.call_id and not by_digest else "d:" + self.call().digest()
        return f"{self.client}/{self.session_id}/{ident}"


def request_id(key: str) -> str:
    return "req_" + sha256_hex(key)[:24]


@record(frozen=True, slots=True)
class Answer:
    """What the shell tells the client. `none`: no decision (the client's own flow)."""

    behavior: Behavior
    reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    verdict: Verdict | None = None
    request_id: str | None = None


@record(frozen=True, slots=True)
class HookOptions:
    """The `[hooks]` table of the settings (`--ask` overrides `ask`)."""

    ask: Strategy = "native"
    wait: float = DEFAULT_WAIT
    defer_expiry: float = DEFAULT_DEFER_EXPIRY
    poll: float = DEFAULT_POLL
    tiers: Mapping[str, str] = field(default_factory=dict)  # tool-name glob -> tier
    claude: str = "claude"
    resume_args: tuple[str, ...] = ()


MAX_INPUT = 64 * 1024 * 1024  # a Write of a large file arrives whole


def read_hook_input(stdin: Any) -> Any:
    """A hook's input from its stdin, as UTF-8 bytes (the hook's locale, LANG=C, must not
    decide how the JSON reads), parsed. Too large, not UTF-8, not JSON, NaN or Infinity,
    or nested deeper than the parser can follow: InvalidInput, which blocks the call."""
    buffer = getattr(stdin, "buffer", None)
    raw = buffer.read(MAX_INPUT + 1) if buffer is not None else stdin.read(MAX_INPUT + 1)
    if len(raw) > MAX_INPUT:
        raise InvalidInput(f"hook input is over {MAX_INPUT} bytes")
    return load_hook_input(raw)


def load_hook_input(raw: bytes | str) -> Any:
    """Hook input text (or bytes, read as UTF-8) as JSON; every problem is InvalidInput."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:  # Python's parser follows nesting on its own stack
        raise InvalidInput(
            "hook input is nested too deeply to read (tool arguments may nest 64 levels)"
        ) from None
    except ValueError as exc:  # not UTF-8, not JSON
        raise InvalidInput(f"hook input is not JSON ({exc})") from None


def _no_constant(name: str) -> Any:
    raise InvalidInput(f"hook input holds {name}, which JSON does not allow")


def hook_event(doc: Any, events: Mapping[str, HookEvent]) -> str:
    """The client's event name in a hook input, checked: the input is a JSON object and
    the event is one of the client's `events` that signoff handles."""
    if not isinstance(doc, Mapping):
        raise InvalidInput("hook input is not a JSON object")
    name = doc.get("hook_event_name")
    if name not in events:
        raise InvalidInput(
            f"hook_event_name {name!r} is not one signoff handles ({', '.join(events)})"
        )
    return str(name)


def hook_options(settings: Settings, *, ask: str | None = None) -> HookOptions:
    """Read `[hooks]`; every error names the key and what is wrong."""
    table = settings.extra.get("hooks") or {}
    where = f"[hooks] in {', '.join(settings.sources) or 'the settings'}"
    if not isinstance(table, Mapping):
        raise InvalidInput(f"{where}: must be a table")
    unknown = sorted(set(table) - _HOOK_KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown key {unknown[0]!r} (known: {sorted(_HOOK_KEYS)})")
    strategy = ask if ask is not None else table.get("ask", "native")
    if strategy not in STRATEGIES:
        raise InvalidInput(f"{where}: ask = {strategy!r} is not one of {', '.join(STRATEGIES)}")
    tiers = table.get("tiers", {})
    if not isinstance(tiers, Mapping) or not all(
        isinstance(k, str) and v in TIERS for k, v in tiers.items()
    ):
        raise InvalidInput(f"{where}: tiers must map tool names to one of {', '.join(TIERS)}")
    resume_args = table.get("resume_args", [])
    if not isinstance(resume_args, list) or not all(isinstance(a, str) for a in resume_args):
        raise InvalidInput(f"{where}: resume_args must be a list of strings")
    claude = table.get("claude", "claude")
    if not isinstance(claude, str) or not claude:
        raise InvalidInput(f"{where}: claude must be the client's command")
    return HookOptions(
        ask=strategy,
        wait=parse_duration(table.get("wait", DEFAULT_WAIT), f"{where}: wait"),
        defer_expiry=parse_duration(
            table.get("defer_expiry", DEFAULT_DEFER_EXPIRY), f"{where}: defer_expiry"
        ),
        poll=parse_duration(table.get("poll", DEFAULT_POLL), f"{where}: poll"),
        tiers=dict(tiers),
        claude=claude,
        resume_args=tuple(resume_args),
    )


@record(frozen=True)
class Client:
    """What a client shell tells the core about its tools."""

    name: str
    specs: Mapping[str, ToolSpec]  # its tool names as signoff declarations
    preview: Callable[[ToolCall, str], str]  # (call, workspace) -> what a person reads
    protected: Callable[[str, str], tuple[str, ...]]  # (workspace, home) -> never touched
    changed_files: Callable[[ToolCall], tuple[str, ...]]  # files a call rewrites (review)
    # a person's answer (decision `respond`) as the tool's new input, or None if the
    # tool cannot take one (then the answer goes back to the model as a refusal)
    answer_input: Callable[[ToolCall, Any], Mapping[str, Any] | None]
    modes: Mapping[str, Mode] = field(default_factory=dict)  # client mode -> signoff mode
    # How the client runs a call contained (its new input: Claude Code's Bash runs
    # `signoff sandbox -- bash -c CMD`), given (call, workspace, cwd, where its change set
    # is kept); None: it cannot be told to, so what only asks for its unknown effects still
    # asks for this client.
    contained_input: Callable[[ToolCall, str, str, str], Mapping[str, Any]] | None = None


# ----------------------------------------------------------------------- the core


class Adapter:
    """Judge a client's tool calls in one workspace. One per hook process (or per HTTP
    request); the store is opened on first use."""

    def __init__(
        self,
        client: Client,
        workspace: str | os.PathLike[str],
        *,
        settings: Settings | None = None,
        options: HookOptions | None = None,
        store: Store | None = None,
        store_url: str | None = None,
        clock: Callable[[], float] = time.time,
        sender: str | None = None,
        policies: dict[Mode, Policy] | None = None,
    ) -> None:
        """`policies`: a cache of the policy per mode shared by the adapters of one server
        (a policy depends only on the settings, the workspace and the client; building it
        is most of what judging a call costs)."""
        self.client = client
        # who posts the events when not the client's own hook process (the HTTP hook's
        # credential): named on every entry; outcomes must match a call judged here
        self.sender = sender
        self.unmatched: str | None = None  # why the last outcome was refused (see `post`)
        self.workspace = os.path.realpath(os.fspath(workspace))
        if not os.path.isdir(self.workspace):
            raise ConfigurationError(f"workspace {self.workspace} is not a directory")
        self.settings = settings if settings is not None else load_settings(self.workspace)
        self.options = options or hook_options(self.settings)
        self._store = store
        self._owns_store = store is None
        self.store_url = store_url
        self.clock = clock
        self._policies: dict[Mode, Policy] = {} if policies is None else policies

    # ------------------------------------------------------------------ plumbing

    @property
    def store(self) -> Store:
        if self._store is None:
            from ..store import open_store

            self._store = open_store(self.store_url, workspace=self.workspace)
        return self._store

    def close(self, *, process_ends: bool = False) -> None:
        """Close the store this adapter opened (`process_ends`: see Store.close)."""
        if self._store is not None and self._owns_store:
            self._store.close(process_ends=process_ends)
            self._store = None

    def _declare(self, policy: Policy, name: str) -> None:
        """`[hooks] tiers` declares tools nobody else did (MCP tools, by name globs)."""
        if policy.registry.known(name):
            return
        for pattern, tier in self.options.tiers.items():
            if fnmatchcase(name, pattern):
                policy.registry.add(
                    ToolSpec(name=name, tier=cast("Tier", tier), kind="other", subject_args=())
                )
                return

    def policy(self, hc: HookCall) -> Policy:
        """The policy, in the mode the client runs in when that is stricter."""
        mode = self.client.modes.get(hc.permission_mode, self.settings.mode)
        if mode not in ("plan", "accept-edits"):
            mode = self.settings.mode  # the agent's own mode never lowers the guard
        elif mode == "accept-edits" and self.settings.mode == "plan":
            mode = "plan"
        policy = self._policies.get(mode)
        if policy is None:
            from ..policy import Policy

            home = os.path.expanduser("~")
            policy = Policy(
                _guarding_signoff(self.settings),
                workspace=self.workspace,
                registry=Registry(dict(self.client.specs)),
                mode=mode,
                protected=self.client.protected(self.workspace, home),
                contain=self._can_contain(),
            )
            self._policies[mode] = policy
        return policy

    def _stash_path(self, key: str) -> str:
        name = sha256_hex(key)[:32]
        return joined(self.workspace, STATE_DIR, self.client.name, name + ".json")

    def _sandbox_keep(self, hc: HookCall) -> str:
        """Where a contained run of this call reports its change set (KEEP.json) and keeps
        what it replaced (KEEP.backup), beside the call's own state."""
        return self._stash_path(hc.key()).removesuffix(".json") + ".sandbox"

    def _stash(self, key: str, doc: Mapping[str, Any]) -> None:
        path = self._stash_path(key)
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True, mode=0o700)
        if int.from_bytes(os.urandom(1), "big") < 4:  # now and then: what no event took
            _sweep(folder, self.clock() - STALE_STATE)
        tmp = path.removesuffix(".json") + f".{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(canonical_json(dict(doc), where="hook state"))
        os.replace(tmp, path)

    def _unstash(self, key: str) -> dict[str, Any] | None:
        path = self._stash_path(key)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            return None
        with contextlib.suppress(FileNotFoundError):  # Path.unlink(missing_ok=True)
            os.unlink(path)
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise InvalidInput(f"{path}: hook state is not a JSON object")
        return doc

    def _event(self, hc: HookCall, data: Mapping[str, Any]) -> dict[str, Any]:
        """An event's data as recorded: which client, session and tool use it is about."""
        return {
            "client": self.client.name,
            "session_id": hc.session_id,
            "tool_use_id": hc.call_id,
            **({"agent_id": hc.agent_id} if hc.agent_id else {}),
            **data,
        }

    def _record(self, hc: HookCall, kind: str, data: Mapping[str, Any], **extra: Any) -> None:
        if self.sender is not None:
            extra.setdefault("actor", self.sender)
        self.store.record(kind, self._event(hc, data), run_id=hc.run_id, **extra)

    def _can_contain(self) -> bool:
        """Whether this client can be told to run a call contained (whether a sandbox can
        be made here is asked only of a verdict that would run contained: `judge`)."""
        return self.client.contained_input is not None and self.settings.sandbox

    def _judged(self, hc: HookCall, effect: str, runs: ToolCall | None = None) -> None:
        """With a sender: the note that this call was judged here (see `post`), for an
        answer that kept nothing else for it; `runs` is the call the client may run."""
        if self.sender is not None:
            note = {"judged": effect}
            self._stash(hc.key(), note if runs is None else {**note, "runs": runs.digest()})

    # ------------------------------------------------------------------ events

    def handle(self, hc: HookCall) -> Answer:
        if hc.event == "pre":
            return self.pre(hc)
        if hc.event == "permission":
            return self.permission(hc)
        self.post(hc)
        return Answer("none")

    def judge(self, hc: HookCall) -> Verdict:
        """The policy's verdict on the call, not recorded (see `verdict`)."""
        policy = self.policy(hc)
        self._declare(policy, hc.tool)
        if not policy.contain:
            return policy.evaluate(hc.call(), cwd=hc.cwd)
        from ..sandbox import settle  # no sandbox here: what it would contain asks

        return settle(policy, hc.call(), cwd=hc.cwd)[0]

    def verdict(self, hc: HookCall, *, judged: Verdict | None = None) -> Verdict:
        """The policy's verdict on the call (`judged`: from `judge` on the same call), on
        the record."""
        call = hc.call()
        verdict = judged if judged is not None else self.judge(hc)
        self._record(
            hc,
            VERDICT,
            {
                "call": call.to_json(),
                "verdict": verdict.to_json(),
                "event": hc.event,
                "ask": self.options.ask,
                "cwd": hc.cwd,
                **({"retry": True} if self._is_retry(hc, verdict, self.options.ask) else {}),
            },
        )
        return verdict

    def pre(self, hc: HookCall, *, wait: bool = True, judged: Verdict | None = None) -> Answer:
        """Before the tool runs (Claude Code's PreToolUse). With `wait=False` an inbox
        request still pending is answered `ask` with its id (someone else decides it;
        then `decided`). `judged`: the call's verdict from `judge`, not worked out again."""
        call = hc.call()
        verdict = self.verdict(hc, judged=judged)
        spec = self.policy(hc).registry.get(call.name)
        strategy = self.options.ask
        if verdict.effect == "deny":
            self._judged(hc, "deny")
            return Answer("deny", deny_reason(verdict), verdict=verdict)
        if verdict.effect in ("allow", "notify") and verdict.contained:
            return self._contained(hc, call, verdict)
        if verdict.effect in ("allow", "notify"):
            if verdict.effect != "notify" or not self._keep_for_review(hc, call):
                self._judged(hc, verdict.effect, call)
            return Answer("allow", f"signoff: {verdict.effect} ({verdict.reason})", verdict=verdict)
        if strategy == "native":
            if spec.always_ask:  # the person is the tool: the client asks them itself
                self._judged(hc, "ask", call)
                return Answer("none", verdict=verdict)
            kept = {"verdict": verdict.to_json(), "ask": "native", "runs": call.digest()}
            self._stash(hc.key(), kept)
            return Answer("ask", ask_reason(verdict), verdict=verdict)
        request = self._request(hc, verdict, strategy)
        if request.state == "pending":
            if strategy == "defer":
                return Answer("defer", ask_reason(verdict), verdict=verdict, request_id=request.id)
            if not wait:
                return Answer("ask", ask_reason(verdict), verdict=verdict, request_id=request.id)
            request = self.wait(request)
        answer = self._decided(hc, request)
        if answer.behavior == "deny":
            self._judged(hc, "deny")
        return answer

    def _contained(self, hc: HookCall, call: ToolCall, verdict: Verdict) -> Answer:
        """Allow the call as the sandbox runs it: the client runs the contained command
        (exactly the judged one, inside `signoff sandbox`), never the bare one."""
        make = self.client.contained_input
        assert make is not None  # the policy contains only for a client that can
        cwd = hc.cwd if os.path.isabs(hc.cwd) else self.workspace
        keep = self._sandbox_keep(hc)
        updated = dict(make(call, self.workspace, cwd, keep))
        note: dict[str, Any] = {"contained": call.to_json()}  # as judged, for its review
        if self.sender is not None:  # what the client may report as run (see `post`)
            note |= {"judged": verdict.effect, "runs": call.with_arguments(updated).digest()}
        self._stash(hc.key(), note)
        return Answer(
            "allow",
            f"signoff: {verdict.effect}, contained ({verdict.reason})",
            updated_input=updated,
            verdict=verdict,
        )

    def decided(self, hc: HookCall, request_id: str) -> Answer:
        """The answer for a request of this call, as it stands now (pending: a deny)."""
        return self._decided(hc, self.store.get_request(request_id))

    def _is_retry(self, hc: HookCall, verdict: Verdict, strategy: Strategy) -> bool:
        """Whether this call already has its request: the same call made again (a deferred
        call retried, a hook fired again). Its verdict is on the record as a retry, so the
        call counts once (`signoff stats`). Allowed calls are not looked up: they make no
        request, and they are the hot path."""
        if verdict.effect in ("allow", "notify") or strategy == "native" or not hc.call_id:
            return False
        try:
            self.store.get_request(request_id(hc.key()))
        except NotFound:
            return False
        return True

    def permission(self, hc: HookCall) -> Answer:
        """The client is about to show its own permission dialog (PermissionRequest)."""
        strategy = self.options.ask
        if strategy == "native":
            return Answer("none")  # the dialog is the native way of asking
        marker = self._unstash(hc.key(by_digest=True))
        if marker is not None and marker.get("approved"):
            return Answer("allow", "signoff: approved in the inbox", request_id=marker.get("id"))
        call = hc.call()
        policy = self.policy(hc)
        self._declare(policy, call.name)
        verdict = policy.evaluate(call, cwd=hc.cwd)
        self._record(
            hc,
            VERDICT,
            {
                "call": call.to_json(),
                "verdict": verdict.to_json(),
                "event": hc.event,
                "ask": strategy,
                "cwd": hc.cwd,
            },
        )
        if verdict.effect == "deny":
            return Answer("deny", deny_reason(verdict), verdict=verdict)
        if strategy == "defer":  # a dialog in a headless session: nobody can answer it now
            return Answer(
                "deny",
                "signoff: this call needs a person's approval and this session cannot wait "
                "for one; ask again after it is approved in the signoff inbox",
                verdict=verdict,
            )
        # The client wants a person to decide: the person decides in the inbox.
        asking = Verdict(
            "ask",
            verdict.risk,
            verdict.rule,
            (*verdict.reasons, f"{self.client.name} asks for permission"),
            verdict.tier,
            verdict.suggested_rule,
            verdict.parts,
        )
        request = self._request(hc, asking, "inbox", by_digest=True)
        if request.state == "pending":
            request = self.wait(request)
        return self._decided(hc, request, by_digest=True)

    def post(self, hc: HookCall, *, kept: bool = True) -> None:
        """The tool ran (PostToolUse) or failed (PostToolUseFailure): on the record.
        `kept=False`: the caller knows `pre` kept nothing for this call (it allowed it
        outright, in this process), so no state is looked for."""
        call = hc.call()
        ok = hc.event == "post"
        state = (self._unstash(hc.key()) or {}) if kept else {}
        by_digest = (self._unstash(hc.key(by_digest=True)) or {}) if kept else {}
        if "token" not in state and "token" in by_digest:
            state = {**by_digest, **state}  # approved through the client's dialog hook
        if self.sender is not None and kept:
            self._match(hc, call, state, ok)
        response_digest = None
        if hc.response is not None:
            try:
                response_digest = sha256_hex(canonical_json(hc.response, where="tool response"))
            except InvalidInput:
                response_digest = None
        token = state.get("token")
        if isinstance(token, str) and isinstance(state.get("id"), str):
            self.store.finish(state["id"], token, ok=ok, result_digest=response_digest)
        if state.get("ask") == "native":
            # The call ran after signoff asked in the client's own dialog: a person said yes.
            self._record(
                hc,
                SESSION_DECIDED,
                {
                    "call": call.to_json(),
                    "verdict": state.get("verdict"),
                    "decision": {"kind": "approve", "actor": f"{self.client.name} dialog"},
                },
                actor=f"{self.client.name} dialog",
            )
        snapshot = state.get("snapshot")
        if ok and isinstance(snapshot, Mapping):
            self._record_review(hc, call, snapshot)
        if kept:
            self._record_contained(hc, call, state.get("contained"))
        self._record(
            hc,
            SESSION_OUTCOME,
            {
                "call": call.to_json(),
                "outcome": "ran" if ok else "failed",
                "result_digest": response_digest,
                **({"request": state["id"]} if isinstance(state.get("id"), str) else {}),
            },
        )

    def _match(self, hc: HookCall, call: ToolCall, state: Mapping[str, Any], ok: bool) -> None:
        """An outcome from a sender must be of a call judged here, as judged: else it is
        recorded as unmatched, naming the sender, and refused."""
        why = None
        runs = state.get("runs")
        if not state:
            why = f"no call of session {hc.session_id} with this tool-use id was judged here"
        elif state.get("judged") == "deny" and ok:
            why = "the call was denied here, so it cannot have run"
        elif isinstance(runs, str) and runs != call.digest():
            why = "the call reported is not the call judged here (other arguments)"
        if why is None:
            return
        data = {"call": call.to_json(), "outcome": "ran" if ok else "failed", "why": why}
        self._record(hc, SESSION_UNMATCHED, {**data, "sender": self.sender})
        self.unmatched = why
        raise UnmatchedOutcome(
            f"an outcome from {self.sender} matches no judged call ({why}): recorded as "
            "unmatched, not as an outcome"
        )

    # ------------------------------------------------------------------ requests

    def _request(
        self, hc: HookCall, verdict: Verdict, strategy: Strategy, *, by_digest: bool = False
    ) -> Request:
        """The durable request for this call: found if a hook fired before, else made."""
        rid = request_id(hc.key(by_digest=by_digest))
        try:
            return self.store.get_request(rid)
        except NotFound:
            pass
        call = hc.call()
        ttl = self.options.defer_expiry if strategy == "defer" else self.options.wait
        request = Request(
            id=rid,
            call=call,
            verdict=verdict,
            preview=self.client.preview(call, self.workspace),
            requested_by=self.client.name,
            expires_at=self.clock() + ttl,
            metadata={
                "client": self.client.name,
                "session_id": hc.session_id,
                "tool_use_id": hc.call_id,
                "cwd": hc.cwd or self.workspace,
                "workspace": self.workspace,
                "ask": strategy,
                **({"agent_id": hc.agent_id} if hc.agent_id else {}),
            },
        )
        try:
            created = self.store.create_request(request)
        except InvalidInput:  # made by a hook fired at the same moment: use that one
            return self.store.get_request(rid)
        self._notify()
        return created

    def _notify(self) -> None:
        """Tell the configured destinations now (in the background: the wait goes on);
        a running `signoff serve` or `signoff notify` delivers whatever this misses."""
        table = self.settings.extra.get("notifications")
        if not isinstance(table, Mapping) or not any(
            isinstance(v, Mapping) for v in table.values()
        ):
            return
        url, workspace, settings = self.store_url, self.workspace, self.settings

        def deliver() -> None:
            from ..notify import Notifier
            from ..store import open_store

            store = open_store(url, workspace=workspace)
            try:
                Notifier.from_settings(store, settings).run_once()
            except Exception:  # a side channel: it never decides anything
                pass  # recorded as notify.failed where it could be; serve delivers it later
            finally:
                store.close()

        import threading  # only when there is someone to tell

        threading.Thread(target=deliver, name="signoff-notify", daemon=True).start()

    def wait(self, request: Request) -> Request:
        """Until a person decides or the request expires (a deadline, never for ever)."""
        store = self.store
        deadline = request.expires_at if request.expires_at is not None else self.clock()
        while True:
            seen = store.last_seq()
            current = store.get_request(request.id)
            if current.state != "pending":
                return current
            left = deadline - self.clock()
            if left <= 0:
                store.expire_stale()
                return store.get_request(request.id)
            store.wait_for_event(min(self.options.poll, left), after_seq=seen)

    def _decided(self, hc: HookCall, request: Request, *, by_digest: bool = False) -> Answer:
        """The answer for a request a person decided (or that expired)."""
        decision = request.decision
        who = decision.actor if decision else "nobody"
        rid = request.id
        if request.state == "pending" or request.state == "expired":
            return Answer(
                "deny",
                f"signoff: no decision on request {rid} before it expired; the call did not run",
                request_id=rid,
            )
        if request.state == "rejected":
            if decision is not None and decision.kind == "edit":
                return Answer(
                    "deny",
                    f"signoff: {who} edited the call, and the edited call is denied: "
                    f"{request.verdict.reason}",
                    request_id=rid,
                )
            reason = decision.reason if decision and decision.reason else "no reason given"
            return Answer("deny", f"signoff: rejected by {who}: {reason}", request_id=rid)
        if request.state == "skipped":
            note = f": {decision.reason}" if decision and decision.reason else ""
            return Answer("deny", f"signoff: skipped by {who}{note}", request_id=rid)
        if request.state == "answered":
            result = decision.result if decision else None
            updated = self.client.answer_input(hc.call(), result)
            if updated is not None:
                self._judged(hc, "answered", hc.call().with_arguments(updated))
                return Answer(
                    "allow", f"signoff: answered by {who}", updated_input=updated, request_id=rid
                )
            return Answer(
                "deny",
                f"signoff: {who} answered instead of running it: {_text(result)}",
                request_id=rid,
            )
        if request.state != "approved":
            return Answer(
                "deny",
                f"signoff: request {rid} is {request.state}: this call was already handed to "
                "the agent once and is not run again",
                request_id=rid,
            )
        return self._approved(hc, request, by_digest=by_digest)

    def _approved(self, hc: HookCall, request: Request, *, by_digest: bool) -> Answer:
        rid = request.id
        asked = hc.call().digest()
        approved_for = str(request.metadata.get("original_digest") or request.digest)
        if asked != approved_for:
            return Answer(
                "deny",
                f"signoff: the call is not the one approved in request {rid}; it did not run",
                request_id=rid,
            )
        approved_in = request.metadata.get("cwd")
        if isinstance(approved_in, str) and approved_in != (hc.cwd or self.workspace):
            return Answer(
                "deny",
                f"signoff: request {rid} was approved for a call in {approved_in}, and this "
                f"one runs in {hc.cwd or 'a directory the client did not say'}; it did not run",
                request_id=rid,
            )
        edited = request.call.digest() != asked
        if edited:  # a person's new arguments are judged again: a deny still wins
            verdict = self.policy(hc).evaluate(request.call, cwd=hc.cwd)
            if verdict.effect == "deny":
                return Answer("deny", deny_reason(verdict), verdict=verdict, request_id=rid)
        claim = self.store.claim(
            rid, worker=f"{self.client.name}:{hc.session_id}", lease_seconds=CLAIM_LEASE
        )
        # PostToolUse finishes the claim with this token; a PermissionRequest for the
        # same call (the client's own rules ask) finds the approval by the call's digest.
        runs = request.call.digest()  # what the client runs: the person's edit, if any
        self._stash(hc.key(by_digest=by_digest), {"id": rid, "token": claim.token, "runs": runs})
        if not by_digest:  # the token too: a client whose later events carry no
            # tool-use id (Gemini CLI) finishes the claim by the call's digest
            approved = {"id": rid, "approved": True, "token": claim.token, "runs": runs}
            self._stash(hc.key(by_digest=True), approved)
        who = request.decision.actor if request.decision else "a person"
        if edited:
            return Answer(
                "allow",
                f"signoff: approved with edits by {who}",
                updated_input=dict(request.call.arguments),
                request_id=rid,
            )
        return Answer("allow", f"signoff: approved by {who}", request_id=rid)

    # ------------------------------------------------------------------ review

    def _keep_for_review(self, hc: HookCall, call: ToolCall) -> bool:
        """What a file change replaces, kept until PostToolUse puts it up for review
        (whether anything was kept)."""
        from ..workspace.snapshots import SnapshotEntry

        entries = []
        base = hc.cwd if os.path.isabs(hc.cwd) else self.workspace
        for path in self.client.changed_files(call):
            full = os.path.realpath(path if os.path.isabs(path) else os.path.join(base, path))
            rel = os.path.relpath(full, self.workspace)
            if rel.startswith(".."):
                return False  # outside the workspace: nothing signoff can revert
            entries.append(SnapshotEntry.capture(rel, full).to_json())
        if entries:
            snapshot = {
                "v": 1,
                "tool": call.name,
                "root": self.workspace,
                "entries": entries,
                "dirs": [],
                "taken_at": self.clock(),
            }
            self._stash(hc.key(), {"snapshot": snapshot, "runs": call.digest()})
        return bool(entries)

    def _record_contained(self, hc: HookCall, call: ToolCall, judged: Any = None) -> None:
        """A contained run's change set, on the record for review (and revert), and what
        the sandbox stopped it doing; then its report and backup are removed."""
        import shutil

        from ..sandbox.review import change_set, read_report

        keep = self._sandbox_keep(hc)
        report = read_report(keep + ".json")
        if report is None:
            return
        if isinstance(judged, Mapping):  # the call as judged, not as the sandbox wrapped it
            call = ToolCall.from_json(judged)
        try:
            found = change_set(report, keep + ".backup", self.workspace, call.name)
            landed = [c for c in found.changes if c["action"] in ("created", "modified", "deleted")]
            if found.snapshot is not None and landed:
                doc = {"call": call.to_json(), "snapshot": found.snapshot.to_json()}
                self._record(hc, REVIEW, {**doc, "contained": True, "changes": list(found.changes)})
            elif landed:
                data = {"call": call.to_json(), "changes": list(found.changes)}
                self._record(
                    hc, REVIEW, {**data, "contained": True, "not_kept": found.why_not_kept}
                )
            if found.blocked:
                data = {"call": call.to_json(), "blocked": list(found.blocked)}
                self._record(hc, SANDBOX_BLOCKED, {**data, "exit_code": found.exit_code})
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(keep + ".json")
            shutil.rmtree(keep + ".backup", ignore_errors=True)

    def _record_review(self, hc: HookCall, call: ToolCall, doc: Mapping[str, Any]) -> None:
        from ..workspace.snapshots import Snapshot, path_state

        snapshot = Snapshot.from_json(doc)
        settled = tuple(
            e.settle_as(path_state(os.path.join(self.workspace, e.path))) for e in snapshot.entries
        )
        snapshot = snapshot.with_entries(settled)
        self._record(hc, REVIEW, {"call": call.to_json(), "snapshot": snapshot.to_json()})


def _guarding_signoff(settings: Settings) -> Settings:
    """Writing signoff's own code changes what judges the agent: such writes ask."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return replace(settings, sensitive=(*settings.sensitive, "/" + package))


def _sweep(folder: str, before: float) -> None:
    with os.scandir(folder) as entries:
        for entry in entries:
            backup = entry.name.endswith(".sandbox.backup")  # of a run no event took
            if not entry.name.endswith(".json") and not backup:
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime < before:
                    if backup:
                        import shutil

                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        os.unlink(entry.path)
            except OSError:
                continue  # taken by another hook meanwhile


def deny_reason(verdict: Verdict) -> str:
    rule = f" (rule {verdict.rule})" if verdict.rule else ""
    return f"signoff denied this call{rule}: {verdict.reason}"


def ask_reason(verdict: Verdict) -> str:
    rule = f" (rule {verdict.rule})" if verdict.rule else ""
    return f"signoff asks{rule}: {verdict.reason}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


__all__ = [
    "STRATEGIES",
    "Adapter",
    "Answer",
    "Client",
    "HookCall",
    "HookOptions",
    "Strategy",
    "UnmatchedOutcome",
    "hook_event",
    "hook_options",
    "request_id",
]
