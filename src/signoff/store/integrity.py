"""Integrity of stored requests: bindings and decision records, pure functions.

The digest is SHA-256 over the canonical call. The binding (``KID:HEX``) is an HMAC under
the ``binding`` key, kept outside the store (signoff.keys), over the request id, approvers,
digest, expiry and what the reviewer is shown: the verdict (risk, reasons), the preview
and the metadata (the model's stated intent, an edit's original call). A decision that
runs the call leaves a decision record (``decision_mac``), an HMAC under the ``decision``
key over the request id, digest, binding, the decision with its decider and time, and the
state it led to. Without the keys neither can be made, so a row set to 'approved' by hand,
or a payload rewritten after an approval, is refused.

Requests of an older signoff carry a plain-hex binding made with a key that lived in the
store; it verifies, by the old formula, with that key once moved to the key file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..digests import compare_digest, hmac_sha256_hex
from ..exceptions import IntegrityError, SignoffError
from ..keys import Keys
from ..models import Decision, Grant, Request, canonical_json
from ..times import when

RUNNABLE_STATES = frozenset({"approved", "claimed", "in_doubt", "finished", "failed"})


def binding_of(
    key: bytes, request_id: str, approvers: Iterable[str], digest: str, expires_at: float | None
) -> str:
    """The binding of an older signoff (plain hex; no verdict or preview): verify only."""
    message = canonical_json(
        {"id": request_id, "approvers": list(approvers), "digest": digest, "expires_at": expires_at}
    )
    return hmac_sha256_hex(key, message.encode("utf-8"))


def binding_message(request: Request) -> str:
    """What a binding covers: who may decide what, until when, as the reviewer sees it
    (the verdict, the preview, and the metadata pages show: intent, original call)."""
    return canonical_json(
        {
            "id": request.id,
            "approvers": list(request.approvers),
            "digest": request.digest,
            "expires_at": request.expires_at,
            "verdict": request.verdict.to_json(),
            "preview": request.preview,
            "metadata": dict(request.metadata),
            "call_id": request.call.id,
        },
        where="request binding",
    )


def bind(keys: Keys, request: Request) -> str:
    return keys.mac("binding", binding_message(request))


def verify_integrity(request: Request, keys: Keys) -> None:
    """Raise IntegrityError if the stored call or binding was changed behind our back."""
    _checked(_verify_integrity, request, keys)


def _checked(check: Callable[[Request, Keys], None], request: Request, keys: Keys) -> None:
    """Run one check; a stored field of the wrong form becomes an IntegrityError."""
    try:
        check(request, keys)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        if isinstance(exc, SignoffError):
            raise
        raise _malformed(request, exc) from exc


def _malformed(request: Request, exc: Exception) -> IntegrityError:
    return IntegrityError(
        f"request {request.id}: a stored field has the wrong form "
        f"({type(exc).__name__}: {exc}); it was changed in the database "
        "and will not be decided or run"
    )


def _verify_integrity(request: Request, keys: Keys) -> None:
    actual = request.call.digest()
    if not compare_digest(actual, request.digest):
        raise IntegrityError(
            f"request {request.id}: the stored call does not match its digest "
            f"({actual[:12]}… vs {request.digest[:12]}…); the payload was changed in the "
            "database and will not be handed out"
        )
    if ":" in request.binding:
        if keys.check("binding", binding_message(request), request.binding):
            return
        raise IntegrityError(
            f"request {request.id}: the binding does not verify (approvers, digest, expiry, "
            "verdict or preview were changed in the database, or the binding was forged)"
        )
    legacy = keys.legacy_key(keys.store_legacy_id) if keys.store_legacy_id else None
    if legacy is None:
        raise IntegrityError(
            f"request {request.id}: its binding was made by an older signoff with a key that "
            "is not in the key file; it cannot be verified, so it will not be decided or run "
            "(ask again)"
        )
    expected = binding_of(legacy, request.id, request.approvers, request.digest, request.expires_at)
    if not compare_digest(expected, request.binding):
        raise IntegrityError(
            f"request {request.id}: the binding does not verify (approvers, digest or expiry "
            "were changed, or the binding was forged)"
        )


def decision_message(request: Request, decision: Decision, state: str) -> str:
    return canonical_json(
        {
            "id": request.id,
            "digest": request.digest,
            "binding": request.binding,
            "state": state,
            "decision": decision.to_json(),
        },
        where="decision record",
    )


def verify_decision(request: Request, keys: Keys) -> None:
    """Raise IntegrityError unless an approval backs this request: a decision that runs
    the call, with its keyed record (written only by `plan_decide`, with the key)."""
    _checked(_verify_decision, request, keys)


def _verify_decision(request: Request, keys: Keys) -> None:
    decision = request.decision
    if decision is None or not decision.runs_the_call:
        raise IntegrityError(
            f"request {request.id} is marked {request.state} but holds no approval; it was "
            "changed in the database and will not run"
        )
    if not keys.check(
        "decision", decision_message(request, decision, "approved"), request.decision_mac
    ):
        who = f"{decision.kind} by {decision.actor} at {when(decision.decided_at)}"
        raise IntegrityError(
            f"request {request.id}: its approval ({who}) has no valid decision record: it "
            "was written into the database, not made by a person through signoff; it will "
            "not run"
        )


def check_request(request: Request, keys: Keys) -> str | None:
    """What is wrong with a stored request (None: nothing): its binding, and for a request
    that was approved, its decision record. Requests of an older signoff whose decision
    predates decision records are only checked for their binding."""
    try:
        verify_integrity(request, keys)
        if request.state in RUNNABLE_STATES and ":" in request.binding:
            verify_decision(request, keys)
    except IntegrityError as exc:
        return str(exc)
    return None


# A grant is an allow rule: one row written into the grants table would let calls run
# without asking. So a grant's stored document carries a MAC (under the ``grant`` key) and
# a grant whose MAC does not verify grants nothing.


def signed_grant(keys: Keys, grant: Grant, revoked_at: float | None = None) -> str:
    """The stored document of `grant`: its JSON (with ``revoked_at`` once revoked, so that
    clearing the column does not revive it) plus ``mac``."""
    doc = grant.to_json()
    if revoked_at is not None:
        doc["revoked_at"] = revoked_at
    return canonical_json({**doc, "mac": keys.mac("grant", canonical_json(doc))}, where="grant")


def read_grant(keys: Keys, text: str) -> tuple[Grant, str | None]:
    """A stored grant and what is wrong with it (None: its MAC verifies)."""
    import json

    doc = json.loads(text)
    mac = doc.pop("mac", None)
    grant = Grant.from_json(doc)
    if mac is None:
        return grant, (
            f"grant {grant.id} ({grant.rule}) carries no MAC: it was written into "
            "the database (or by an older signoff); it grants nothing"
        )
    if not keys.check("grant", canonical_json(doc), mac):
        return grant, (
            f"grant {grant.id} ({grant.rule}): its MAC does not verify (changed "
            "in the database); it grants nothing"
        )
    if doc.get("revoked_at") is not None:
        return grant, (
            f"grant {grant.id} ({grant.rule}) was revoked, and revived in the "
            "database; it grants nothing"
        )
    return grant, None


def check_shape(request: Request) -> None:
    """Raise IntegrityError if a stored request's fields are not of their types (a
    document edited by hand): the rules compare and hash them and must not crash."""
    number = (int, float)
    problems = [
        name
        for name, ok in (
            ("preview", isinstance(request.preview, str)),
            ("tenant", isinstance(request.tenant, str)),
            ("run_id", request.run_id is None or isinstance(request.run_id, str)),
            ("requested_by", request.requested_by is None or isinstance(request.requested_by, str)),
            ("approvers", all(isinstance(a, str) for a in request.approvers)),
            (
                "created_at",
                isinstance(request.created_at, number) and not isinstance(request.created_at, bool),
            ),
            (
                "expires_at",
                request.expires_at is None
                or (
                    isinstance(request.expires_at, number)
                    and not isinstance(request.expires_at, bool)
                ),
            ),
            ("digest", isinstance(request.digest, str)),
            ("binding", isinstance(request.binding, str)),
            ("decision_mac", isinstance(request.decision_mac, str)),
            ("metadata", isinstance(request.metadata, dict)),
        )
        if not ok
    ]
    if problems:
        raise IntegrityError(
            f"request {request.id}: stored {'field' if len(problems) == 1 else 'fields'} "
            f"{', '.join(problems)} {'has' if len(problems) == 1 else 'have'} the wrong type; "
            "the document was changed in the database"
        )
