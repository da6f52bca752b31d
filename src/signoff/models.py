"""The vocabulary of signoff as frozen dataclasses, plus the canonical JSON codec.

Every stored document is plain JSON produced by `to_json()` and read back by
`from_json()`; each carries `"v"` (its schema version) and a newer version is refused.
The digest of a call is SHA-256 over its canonical encoding, so the same call with its
keys in another order has the same digest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from .digests import sha256_hex as _digest_hex
from .exceptions import InvalidInput, SchemaVersionError
from .hints import literal_type
from .records import field, record, replace

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, Literal

    Effect = Literal["allow", "notify", "ask", "deny"]
    Risk = Literal["none", "low", "medium", "high", "critical"]
    Tier = Literal["read", "write", "destructive", "external", "privileged", "unknown"]
    ToolKind = Literal["shell", "file_read", "file_write", "network", "other"]
    DecisionKind = Literal["approve", "approve_always", "reject", "edit", "skip", "respond"]
    GrantScope = Literal["run", "session", "project", "pattern"]
    RequestState = Literal[
        "pending",
        "approved",
        "claimed",
        "finished",
        "rejected",
        "skipped",
        "answered",
        "expired",
        "in_doubt",
        "failed",
    ]

# the values of the Literal types, at run time (see signoff.hints)
EFFECTS: tuple[Effect, ...] = ("allow", "notify", "ask", "deny")
RISKS: tuple[Risk, ...] = ("none", "low", "medium", "high", "critical")
ALL_TIERS: tuple[Tier, ...] = (
    "read",
    "write",
    "destructive",
    "external",
    "privileged",
    "unknown",
)
TOOL_KINDS: tuple[ToolKind, ...] = ("shell", "file_read", "file_write", "network", "other")
DECISION_KINDS: tuple[DecisionKind, ...] = (
    "approve",
    "approve_always",
    "reject",
    "edit",
    "skip",
    "respond",
)
GRANT_SCOPES: tuple[GrantScope, ...] = ("run", "session", "project", "pattern")
REQUEST_STATES: tuple[RequestState, ...] = (
    "pending",
    "approved",
    "claimed",
    "finished",
    "rejected",
    "skipped",
    "answered",
    "expired",
    "in_doubt",
    "failed",
)
_LITERALS: dict[str, tuple[str, ...]] = {
    "Effect": EFFECTS,
    "Risk": RISKS,
    "Tier": ALL_TIERS,
    "ToolKind": TOOL_KINDS,
    "DecisionKind": DECISION_KINDS,
    "GrantScope": GRANT_SCOPES,
    "RequestState": REQUEST_STATES,
}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


# What a person may choose for "always" on a stored run (web, CLI, terminal): this run,
# or the project (written to .signoff/settings.local.toml). In-process gates offer
# "session" in place of "run".
ALWAYS_SCOPES: tuple[GrantScope, ...] = ("run", "project")

SCHEMA_VERSION = 1
MAX_DEPTH = 64  # arguments nested deeper are refused (a 5,000-deep list broke the driver)


# --------------------------------------------------------------------------- codec


def unicode_problem(text: str) -> str | None:
    """Why `text` cannot be stored as UTF-8 (a lone surrogate such as "\\udc80"), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"invalid Unicode: a lone surrogate {text[exc.start]!a} at character {exc.start}"
    return None


def _check_text(text: str, where: str) -> None:
    problem = unicode_problem(text)
    if problem is not None:
        raise InvalidInput(f"{where}: {problem}")


def _check_json(value: Any, where: str, depth: int = 0) -> None:
    """Refuse what JSON cannot carry faithfully: NaN/Infinity, non-string keys, objects,
    invalid Unicode, nesting deeper than `MAX_DEPTH`."""
    kind = type(value)
    if kind is str:
        if not value.isascii():
            _check_text(value, where)
        return
    if kind is int or kind is bool or value is None:
        return  # the common cases first: this runs on every call judged
    if depth >= MAX_DEPTH:
        raise InvalidInput(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if kind is dict or kind is list:
        is_dict = kind is dict
        for key, item in value.items() if is_dict else enumerate(value):
            if is_dict:
                if type(key) is not str:
                    raise InvalidInput(f"{where}: object key {key!r} is not a string")
                if not key.isascii():
                    _check_text(key, f"{where} (a key)")
            # plain leaves are checked here: a nested call, and the text naming where it
            # is, only for what may hold something wrong
            leaf = type(item)
            if leaf is str:
                if not item.isascii():
                    _check_text(item, f"{where}.{key}" if is_dict else f"{where}[{key}]")
            elif not (leaf is int or leaf is bool or item is None):
                inner = f"{where}.{key}" if is_dict else f"{where}[{key}]"
                _check_json(item, inner, depth + 1)
        return
    if isinstance(value, str):
        _check_text(value, where)
        return
    if isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{where}: {value!r} is not allowed in JSON")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{where}: object key {key!r} is not a string")
            _check_text(key, f"{where} (a key)")
            _check_json(item, f"{where}.{key}", depth + 1)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]", depth + 1)
        return
    raise InvalidInput(f"{where}: {type(value).__name__} is not a JSON value")


def check_json(value: Any, *, where: str = "value") -> None:
    """Refuse what `canonical_json` refuses (naming `where`), without encoding it."""
    _check_json(value, where)


def canonical_json(value: Any, *, where: str = "value") -> str:
    """Deterministic JSON: sorted keys, no spaces, UTF-8 kept, NaN refused."""
    _check_json(value, where)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return _digest_hex(text.encode("utf-8"))


def check_version(doc: Mapping[str, Any], kind: str) -> None:
    version = doc.get("v", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{kind} document has schema version {version!r}; this signoff reads up to "
            f"{SCHEMA_VERSION}. Upgrade signoff to read it."
        )


def _require(doc: Mapping[str, Any], key: str, kind: str) -> Any:
    if key not in doc:
        raise InvalidInput(f"{kind} document is missing {key!r}")
    return doc[key]


# --------------------------------------------------------------------------- tool call


@record(frozen=True, slots=True)
class ToolCall:
    """One call the model proposed: the tool's name, a JSON object of arguments, its id."""

    name: str
    arguments: Mapping[str, Any]
    id: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidInput("tool call: name must be a non-empty string")
        _check_text(self.name, f"tool call {self.name!a}: name")
        if not isinstance(self.arguments, Mapping):
            raise InvalidInput(
                f"tool call {self.name!r}: arguments must be a JSON object, "
                f"got {type(self.arguments).__name__}"
            )
        _check_json(self.arguments, f"{self.name}.arguments")

    def canonical(self) -> str:
        return canonical_json({"name": self.name, "arguments": dict(self.arguments)})

    def digest(self) -> str:
        return sha256_hex(self.canonical())

    def with_arguments(self, arguments: Mapping[str, Any]) -> ToolCall:
        return ToolCall(self.name, dict(arguments), self.id)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments), "id": self.id}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ToolCall:
        return cls(
            name=_require(doc, "name", "tool call"),
            arguments=_require(doc, "arguments", "tool call"),
            id=str(doc.get("id", "")),
        )

    @classmethod
    def from_openai(cls, raw: Mapping[str, Any]) -> ToolCall:
        """From a chat-completions `tool_calls` entry; malformed arguments are refused."""
        function = raw.get("function") or {}
        name = function.get("name") or ""
        text = function.get("arguments") or "{}"
        try:
            arguments = json.loads(text, parse_constant=_refuse_constant)
        except (ValueError, TypeError) as exc:
            raise InvalidInput(f"tool call {name!a}: arguments are not valid JSON ({exc})") from exc
        except RecursionError:
            raise InvalidInput(
                f"tool call {name!a}: arguments are nested too deeply (over {MAX_DEPTH} levels)"
            ) from None
        if not isinstance(arguments, dict):
            raise InvalidInput(f"tool call {name!a}: arguments must be a JSON object")
        return cls(name=name, arguments=arguments, id=str(raw.get("id", "")))


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed")


# --------------------------------------------------------------------------- verdict


@record(frozen=True, slots=True)
class ShellPartSummary:
    """One effective simple command inside a shell command, as the verdict reports it."""

    command: str
    cls: str
    effect: Effect
    reasons: tuple[str, ...] = ()
    rule: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "class": self.cls,
            "effect": self.effect,
            "reasons": list(self.reasons),
            "rule": self.rule,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ShellPartSummary:
        return cls(
            command=doc["command"],
            cls=doc["class"],
            effect=doc["effect"],
            reasons=tuple(doc.get("reasons", ())),
            rule=doc.get("rule"),
        )


@record(frozen=True, slots=True)
class Verdict:
    """What the policy says about one call, and why."""

    effect: Effect
    risk: Risk
    rule: str | None
    reasons: tuple[str, ...]
    tier: Tier = "unknown"
    suggested_rule: str | None = None  # what "always allow" would save
    parts: tuple[ShellPartSummary, ...] = ()
    # runs only inside the OS sandbox (signoff.sandbox): an executor that cannot contain
    # it must not run it (the policy says contained only to an executor that can)
    contained: bool = False

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise InvalidInput(f"verdict: unknown effect {self.effect!r}")
        if self.risk not in RISKS:
            raise InvalidInput(f"verdict: unknown risk {self.risk!r}")

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    def with_effect(self, effect: Effect, reason: str, rule: str | None = None) -> Verdict:
        return replace(self, effect=effect, reasons=(*self.reasons, reason), rule=rule or self.rule)

    def to_json(self) -> dict[str, Any]:
        return {
            "effect": self.effect,
            "risk": self.risk,
            "rule": self.rule,
            "reasons": list(self.reasons),
            "tier": self.tier,
            "suggested_rule": self.suggested_rule,
            "parts": [p.to_json() for p in self.parts],
            **({"contained": True} if self.contained else {}),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Verdict:
        return cls(
            effect=_require(doc, "effect", "verdict"),
            risk=_require(doc, "risk", "verdict"),
            rule=doc.get("rule"),
            reasons=tuple(doc.get("reasons", ())),
            tier=doc.get("tier", "unknown"),
            suggested_rule=doc.get("suggested_rule"),
            parts=tuple(ShellPartSummary.from_json(p) for p in doc.get("parts", ())),
            contained=doc.get("contained") is True,
        )


# --------------------------------------------------------------------------- decision


@record(frozen=True, slots=True)
class Decision:
    """A person's answer to a request.

    `arguments` is set for `edit`, `result` for `respond`, `reason` for `reject`
    (required) and optionally the others, `scope` and `rule` for `approve_always`.
    """

    kind: DecisionKind
    actor: str = "local"
    reason: str | None = None
    arguments: Mapping[str, Any] | None = None
    result: Any = None
    scope: GrantScope | None = None
    rule: str | None = None
    decided_at: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in DECISION_KINDS:
            raise InvalidInput(
                f"decision: unknown kind {self.kind!r} "
                f"(expected one of {', '.join(DECISION_KINDS)})"
            )
        if self.kind == "reject" and not (self.reason and self.reason.strip()):
            raise InvalidInput("decision: a rejection needs a reason")
        if self.kind == "edit":
            if not isinstance(self.arguments, Mapping):
                raise InvalidInput("decision: an edit needs new arguments as a JSON object")
            _check_json(self.arguments, "decision.arguments")
        if self.kind == "approve_always" and self.scope not in GRANT_SCOPES:
            raise InvalidInput(
                f"decision: approve_always needs a scope ({', '.join(GRANT_SCOPES)})"
            )
        if self.kind == "respond":
            _check_json(self.result, "decision.result")

    @property
    def runs_the_call(self) -> bool:
        return self.kind in ("approve", "approve_always", "edit")

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"v": SCHEMA_VERSION, "kind": self.kind, "actor": self.actor}
        for key in ("reason", "result", "scope", "rule", "decided_at"):
            value = getattr(self, key)
            if value is not None:
                doc[key] = value
        if self.arguments is not None:
            doc["arguments"] = dict(self.arguments)
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Decision:
        check_version(doc, "decision")
        return cls(
            kind=_require(doc, "kind", "decision"),
            actor=doc.get("actor", "local"),
            reason=doc.get("reason"),
            arguments=doc.get("arguments"),
            result=doc.get("result"),
            scope=doc.get("scope"),
            rule=doc.get("rule"),
            decided_at=doc.get("decided_at"),
        )


# --------------------------------------------------------------------------- grant


@record(frozen=True, slots=True)
class Grant:
    """A remembered approval: an allow rule with a scope and an optional expiry."""

    rule: str
    scope: GrantScope
    id: str = ""
    created_at: float = 0.0
    expires_at: float | None = None
    created_by: str = "local"

    def active(self, now: float) -> bool:
        return self.expires_at is None or now < self.expires_at

    def to_json(self) -> dict[str, Any]:
        return {
            "v": SCHEMA_VERSION,
            "rule": self.rule,
            "scope": self.scope,
            "id": self.id,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "created_by": self.created_by,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Grant:
        check_version(doc, "grant")
        return cls(
            rule=_require(doc, "rule", "grant"),
            scope=_require(doc, "scope", "grant"),
            id=doc.get("id", ""),
            created_at=doc.get("created_at", 0.0),
            expires_at=doc.get("expires_at"),
            created_by=doc.get("created_by", "local"),
        )


# --------------------------------------------------------------------------- request


@record(frozen=True, slots=True)
class Request:
    """One pending call awaiting a decision."""

    id: str
    call: ToolCall
    verdict: Verdict
    preview: str = ""
    run_id: str | None = None
    tenant: str = "default"
    approvers: tuple[str, ...] = ()  # names or "role:NAME"; empty = any approver
    created_at: float = 0.0
    expires_at: float | None = None
    state: RequestState = "pending"
    digest: str = ""
    binding: str = ""
    requested_by: str | None = None
    decision: Decision | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # the store's keyed record of the decision (see store.base.decision_mac); "" if none
    decision_mac: str = ""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "id": self.id,
            "call": self.call.to_json(),
            "verdict": self.verdict.to_json(),
            "preview": self.preview,
            "run_id": self.run_id,
            "tenant": self.tenant,
            "approvers": list(self.approvers),
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "state": self.state,
            "digest": self.digest,
            "binding": self.binding,
            "requested_by": self.requested_by,
            "decision": self.decision.to_json() if self.decision else None,
            "metadata": dict(self.metadata),
        }
        if self.decision_mac:  # written only when set: older documents read back unchanged
            doc["decision_mac"] = self.decision_mac
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Request:
        check_version(doc, "request")
        decision = doc.get("decision")
        return cls(
            id=_require(doc, "id", "request"),
            call=ToolCall.from_json(_require(doc, "call", "request")),
            verdict=Verdict.from_json(_require(doc, "verdict", "request")),
            preview=doc.get("preview", ""),
            run_id=doc.get("run_id"),
            tenant=doc.get("tenant", "default"),
            approvers=tuple(doc.get("approvers", ())),
            created_at=doc.get("created_at", 0.0),
            expires_at=doc.get("expires_at"),
            state=doc.get("state", "pending"),
            digest=doc.get("digest", ""),
            binding=doc.get("binding", ""),
            requested_by=doc.get("requested_by"),
            decision=Decision.from_json(decision) if decision else None,
            metadata=doc.get("metadata", {}),
            decision_mac=doc.get("decision_mac", ""),
        )


# A child run's requests name the runs above it (parent first), for the inbox to show
# "in run X <- parent Y" and to list them under the parent.
PARENT_RUNS = "parent_runs"


def parent_runs(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The runs above a request's run, innermost first (empty when it is no child run)."""
    value = metadata.get(PARENT_RUNS)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in value if isinstance(v, str))
