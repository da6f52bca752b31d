"""`signoff.digests` gives hashlib's and hmac's digests without loading OpenSSL."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from signoff import digests

# around the boundaries that matter: the 64-byte block (keys longer than it are hashed
# first) and the size from which long data goes to hashlib
SIZES = [0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, digests.SHORT, digests.SHORT + 1, 200_000]


def _data(size: int, seed: int) -> bytes:
    return bytes((n * 31 + seed * 7) % 256 for n in range(size))


def test_sha256_is_hashlib_s_at_every_size() -> None:
    for size in SIZES:
        data = _data(size, size)
        assert digests.sha256_hex(data) == hashlib.sha256(data).hexdigest()
        assert digests.sha256(data).digest() == hashlib.sha256(data).digest()


def test_hmac_is_hmac_s_for_every_key_and_message_size() -> None:
    for key_size in (0, 1, 32, 63, 64, 65, 100, 1000):
        for size in SIZES:
            key, message = _data(key_size, 1), _data(size, 2)
            expected = hmac.new(key, message, hashlib.sha256).hexdigest()
            assert digests.hmac_sha256_hex(key, message) == expected
            assert digests.hmac_sha256(key, message) == hmac.digest(key, message, "sha256")


@settings(max_examples=300)
@given(key=st.binary(max_size=200), message=st.binary(max_size=2000))
def test_hmac_equals_hmac_new_over_many_inputs(key: bytes, message: bytes) -> None:
    expected = hmac.new(key, message, hashlib.sha256).hexdigest()
    assert digests.hmac_sha256_hex(key, message) == expected


def test_compare_digest_answers_as_hmac_s() -> None:
    """The constant-time comparison hmac itself falls back to (`_operator`'s)."""
    pairs: list[tuple[object, object]] = [
        ("k1:ab", "k1:ab"),
        ("k1:ab", "k1:ac"),
        ("", ""),
        (b"ab", b"ab"),
        (b"ab", b"a"),
    ]
    for a, b in pairs:
        assert digests.compare_digest(a, b) == hmac.compare_digest(a, b)  # type: ignore[arg-type]
    for a, b in [("ab", b"ab"), ("é", "é")]:  # refused alike: mixed kinds, non-ASCII str
        try:
            hmac.compare_digest(a, b)  # type: ignore[arg-type]
        except TypeError:
            with pytest.raises(TypeError):
                digests.compare_digest(a, b)


def test_the_keys_mac_is_hmac_sha256_under_the_derived_key() -> None:
    """The key ring's tags did not change: a record made before verifies after."""
    from signoff.keys import Keys

    master = _data(32, 9)
    keys = Keys("k1", {"k1": master}, source="test")
    derived = hmac.digest(master, b"signoff/binding", "sha256")
    assert keys.key("binding") == derived
    tag = hmac.new(derived, b"message", hashlib.sha256).hexdigest()
    assert keys.mac("binding", "message") == f"k1:{tag}"
    assert keys.check("binding", "message", f"k1:{tag}")
    assert not keys.check("binding", "message", f"k1:{tag[:-1]}0")
