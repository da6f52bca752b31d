"""Property (Hypothesis): whatever single field of an approved request's stored document an
attacker changes, with whatever value, a claim never hands out a call, verdict, preview,
approver list or metadata other than what the person approved: it hands out exactly that,
or it refuses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fast_loop import examples
from signoff.exceptions import SignoffError
from signoff.models import Decision
from signoff.store.memory import MemoryDB, MemoryStore
from store_helpers import Backend, make_request

COVERED = ("call", "verdict", "preview", "approvers", "metadata", "digest", "expires_at")


def leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into the document, containers included (a container can be replaced)."""
    if path:
        yield path
    if isinstance(doc, dict):
        for key in sorted(doc):
            yield from leaves(doc[key], (*path, key))
    elif isinstance(doc, list):
        for index, item in enumerate(doc):
            yield from leaves(item, (*path, index))


def put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = value


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10_000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.lists(st.text(max_size=4), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(0, 9), max_size=2),
)


def _approved() -> tuple[Backend, MemoryStore, str, dict[str, Any]]:
    backend = Backend.__new__(Backend)
    backend.kind, backend.memory, backend.stores = "memory", MemoryDB(), []
    store = MemoryStore(backend.memory)
    request = store.create_request(
        make_request(metadata={"intent": "clean the build"}, approvers=("alice",))
    )
    approved = store.decide(request.id, Decision("approve"), actor="alice")
    return backend, store, request.id, approved.to_json()


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_a_claim_hands_out_what_was_approved_or_nothing(data: st.DataObject) -> None:
    backend, store, rid, approved = _approved()
    paths = list(leaves(approved))
    path = data.draw(st.sampled_from(paths), label="path")
    value = data.draw(VALUES.filter(lambda v: v != _at(approved, path)), label="value")
    backend.edit_doc(rid, lambda doc: put(doc, path, value))
    try:
        claim = store.claim(rid, worker="w")
    except SignoffError:
        return  # refused: nothing runs
    handed = claim.request.to_json()
    for key in COVERED:
        assert handed[key] == approved[key], (path, value)


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


ENTRY_FIELDS = ("ts", "kind", "actor", "run_id", "data", "n", "v")


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_any_edited_entry_is_found_even_after_a_full_rehash(data: st.DataObject) -> None:
    """Edit any field of any audit entry (not its MAC: the key is elsewhere), then
    recompute every plain hash and the chain's head, as a database writer can: verify
    fails at that entry."""
    import json

    from signoff.store.chain import GENESIS_HASH, chain_hash

    backend, store, _, _ = _approved()
    store.record("verdict", {"call": {"name": "ls"}}, run_id="run-1")
    events = backend.memory.events
    seq = data.draw(st.sampled_from(sorted(events)), label="entry")
    field = data.draw(st.sampled_from(ENTRY_FIELDS), label="field")
    doc = json.loads(events[seq][5])
    value = data.draw(VALUES.filter(lambda v: v != doc.get(field)), label="value")
    doc[field] = value
    events[seq][5] = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if field == "kind" and isinstance(value, str):
        events[seq][2] = value  # keep the column in step, as a careful forger would
    prev = GENESIS_HASH
    for n in sorted(events):
        events[n][6] = prev
        events[n][7] = prev = chain_hash(prev, events[n][5])
    backend.memory.head[:] = [max(events), prev]
    ok, bad, message = store.verify_chain()
    assert not ok and bad == seq, message
