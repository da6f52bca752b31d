"""Canonical forms of the values rules compare: hosts, e-mail addresses, plain text.

A deny rule names an action, not a spelling. `127.1`, `0x7f000001` and
`[::ffff:127.0.0.1]` are all 127.0.0.1 to the socket layer; `CEO@Competitor.com.` and
`"Boss" <ceo@competitor.com>` reach the same mailbox; `local\\u00adhost` is `localhost`
once IDNA has dropped the soft hyphen. Rules and values are both brought to these forms
before they are compared. Pure: no I/O, no DNS.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from .lazyre import lazy

# `socket` and `ipaddress` are imported by the functions that use them: judging most
# calls never looks at a host, and the two cost a process started per call ~5 ms

# Characters that render as nothing: IDNA (nameprep) maps most of them away, and a
# person reading the value does not see them, so a rule must not either.
# Compiled on first use (a few ms of charset building that judging `git status` never needs).
_INVISIBLE = (
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_DOMAIN_LABEL = lazy(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


@functools.cache
def _invisible() -> re.Pattern[str]:
    return re.compile(_INVISIBLE)


def strip_invisible(text: str) -> str:
    return _invisible().sub("", text)


def clean_text(text: str) -> str:
    """Invisible characters removed, compatibility forms folded (NFKC), trimmed, case-folded:
    the form in which two spellings a person cannot tell apart compare equal."""
    return unicodedata.normalize("NFKC", strip_invisible(text)).strip().casefold()


def _ipv4(host: str) -> str | None:
    """The dotted quad the C library would connect to for `host`, if it is an IPv4
    address in any of the forms inet_aton accepts (`127.1`, `0x7f.1`, `0177.0.0.1`,
    `2130706433`, `0`)."""
    if not host or not re.fullmatch(r"[0-9a-fx.]+", host):
        return None
    import socket

    try:
        return socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        return None


def canonical_host(host: str) -> str:
    """A host as the network sees it: IPs in canonical form (IPv4-mapped IPv6 as IPv4),
    names lower-case, IDNA (punycode) ASCII, without a trailing dot or invisible characters."""
    text = clean_text(host).strip("[]").rstrip(".")
    # U+3002 and the fullwidth dots are label separators for IDNA too.
    text = re.sub("[\u3002\uff0e\uff61]", ".", text).rstrip(".")
    if not text:
        return ""
    v4 = _ipv4(text)
    if v4 is not None:
        return v4
    if ":" in text:
        import ipaddress

        try:
            address = ipaddress.IPv6Address(text.split("%", 1)[0])
        except ValueError:
            return text
        mapped = address.ipv4_mapped
        return str(mapped) if mapped is not None else address.compressed
    labels = []
    for label in text.split("."):
        try:
            labels.append(label.encode("idna").decode("ascii") if label else label)
        except UnicodeError:
            labels.append(label)
    return ".".join(labels)


def is_ip(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """Hosts that reach this machine: 127/8, ::1, and the any-addresses 0.0.0.0 and ::,
    which a client connects to as the local host."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def domain_pattern_problem(pattern: str) -> str | None:
    """Why a `domain:` pattern can never match a host, or None if it is a domain
    (optionally `*.`-prefixed) or an IP address."""
    text = pattern.strip()
    if text.startswith("*."):
        text = text[2:]
    host = canonical_host(text)
    if not host:
        return "is empty"
    if is_ip(host):
        return None
    if any(c in text for c in "*?[]/:@ "):
        return "is not a domain (only a leading '*.' is allowed; no path, port or glob)"
    if not all(_DOMAIN_LABEL.match(label) for label in host.split(".")):
        return "is not a domain name"
    return None


def host_in_domain(host: str, domain: str) -> bool:
    """Whether `host` is `domain` or one of its subdomains, both compared canonically.
    `localhost` and the loopback addresses name the same place and match each other."""
    h = canonical_host(host)
    d = domain.strip()
    if d.startswith("*."):
        d = d[2:]
    d = canonical_host(d)
    if not h or not d:
        return False
    if h == d or (not is_ip(d) and h.endswith("." + d)):
        return True
    return is_loopback(d) and is_loopback(h)


# ------------------------------------------------------------------ e-mail addresses


def canonical_address(address: str) -> str:
    """`Name <X@Example.COM.>` -> `x@example.com` (local part folded too: mail systems treat
    it case-insensitively in practice, and a rule that misses a spelling fails open)."""
    text = strip_invisible(address).strip()
    local, at, domain = text.rpartition("@")
    if not at:
        return clean_text(text)
    return f"{clean_text(local)}@{canonical_host(domain)}"


def addresses(value: str) -> list[str] | None:
    """The canonical addresses in a recipient string (`"a@x.com, B <b@y.com>"`), or None
    when some piece of it is not an address (the caller then cannot vouch for it)."""
    text = strip_invisible(value)
    if not text.strip():
        return None
    found: list[str] = []
    from email.utils import getaddresses  # here: only address rules need the parser

    for _name, addr in getaddresses([text.replace(";", ",")]):
        if not addr or "@" not in addr:
            return None
        local, _, domain = addr.rpartition("@")
        if not local or not domain:
            return None
        found.append(canonical_address(addr))
    return found or None


__all__ = [
    "addresses",
    "canonical_address",
    "canonical_host",
    "clean_text",
    "domain_pattern_problem",
    "host_in_domain",
    "is_ip",
    "is_loopback",
    "strip_invisible",
]
