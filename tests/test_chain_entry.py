"""`keyed_entry` writes each event's text with one encoding of its keys: the text must be
exactly the canonical JSON of the doc with its MAC, and the MAC that of the doc without it,
whatever the keys (an event's own, or any other doc, which takes the long way)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signoff.exceptions import InvalidInput
from signoff.keys import load_keys
from signoff.store.base import Draft
from signoff.store.chain import _ENCODER, keyed_entry
from test_models import json_values  # the JSON values the model tests draw


def _check(doc: dict[str, Any], text: str) -> None:
    keys = load_keys()
    parsed = json.loads(text)
    assert text == _ENCODER.encode(parsed)  # canonical: sorted keys, no spaces
    assert parsed == doc  # the doc as given, plus its "n" and "mac" (set on it)
    mac = parsed.pop("mac")
    assert keys.check("audit", _ENCODER.encode(parsed), mac)


@settings(max_examples=200, deadline=None)
@given(
    kind=st.text(min_size=1),
    request_id=st.none() | st.text(),
    run_id=st.none() | st.text(),
    actor=st.none() | st.text(),
    data=st.dictionaries(st.text(), json_values, max_size=4),
    ts=st.floats(min_value=0, max_value=4e9),
)
def test_an_event_entry_is_its_canonical_json_with_the_mac_of_the_rest(
    kind: str,
    request_id: str | None,
    run_id: str | None,
    actor: str | None,
    data: dict[str, Any],
    ts: float,
) -> None:
    doc = Draft(kind, request_id, run_id, actor, data).doc(ts)
    _check(doc, keyed_entry(doc, load_keys()))


@settings(max_examples=200, deadline=None)
@given(
    doc=st.dictionaries(
        st.sampled_from(["a", "m", "ma", "mab", "mad", "nb", "z", "n"]), json_values, max_size=5
    )
)
def test_any_doc_with_keys_around_mac_and_n_gets_the_same_text(doc: dict[str, Any]) -> None:
    _check(doc, keyed_entry(doc, load_keys()))


def test_an_entry_that_is_not_json_is_refused() -> None:
    with pytest.raises(InvalidInput, match="not JSON"):
        keyed_entry({"data": {"x": float("nan")}, "ts": 1.0}, load_keys())
    with pytest.raises(InvalidInput, match="not JSON"):
        keyed_entry({"data": object(), "v": 1}, load_keys())
