"""SHA-256 and HMAC-SHA256 without `hashlib` and `hmac` for short messages.

`hashlib` loads OpenSSL (`_hashlib`), a tenth of a coding-agent hook's start-up, which
digests a few hundred bytes: the call, a verdict event, a chain link. CPython's own
SHA-256 module gives the same digests. A long message (a large file written whole) goes
to `hashlib`, whose OpenSSL code is faster per byte. HMAC is RFC 2104, as `hmac` computes
it; `tests/test_digests.py` holds both equal to `hashlib` and `hmac` over many inputs.
"""

from __future__ import annotations

from _operator import _compare_digest  # what hmac.compare_digest is

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    import hashlib
    from collections.abc import Callable

try:  # the module's name: _sha256 up to Python 3.11, _sha2 from 3.12
    from _sha256 import sha256 as _builtin_sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - depends on the Python version
    try:
        from _sha2 import sha256 as _builtin_sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # a build without it
        from hashlib import sha256 as _builtin_sha256  # type: ignore[assignment,unused-ignore]

SHORT = 64 * 1024  # up to this many bytes the builtin module is as quick as OpenSSL
BLOCK = 64  # SHA-256's block size, which pads an HMAC key
_INNER = bytes(x ^ 0x36 for x in range(256))
_OUTER = bytes(x ^ 0x5C for x in range(256))

compare_digest: Callable[..., bool] = _compare_digest
"""`hmac.compare_digest`: equal in a time that does not depend on where they differ."""


def sha256(data: bytes = b"") -> hashlib._Hash:
    """A SHA-256 object of `data`, as `hashlib.sha256(data)` (OpenSSL's for long data)."""
    if len(data) > SHORT:
        import hashlib

        return hashlib.sha256(data)
    made: hashlib._Hash = _builtin_sha256(data)
    return made


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """`hmac.digest(key, message, "sha256")`."""
    if len(message) > SHORT:
        import hmac

        return hmac.digest(key, message, "sha256")
    if len(key) > BLOCK:
        key = sha256(key).digest()
    key = key.ljust(BLOCK, b"\0")
    inner = sha256(key.translate(_INNER))
    inner.update(message)
    outer = sha256(key.translate(_OUTER))
    outer.update(inner.digest())
    return outer.digest()


def hmac_sha256_hex(key: bytes, message: bytes) -> str:
    """`hmac.new(key, message, hashlib.sha256).hexdigest()`."""
    return hmac_sha256(key, message).hex()


__all__ = ["compare_digest", "hmac_sha256", "hmac_sha256_hex", "sha256", "sha256_hex"]
