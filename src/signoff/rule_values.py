"""How rules compare argument values, URLs and hosts: normalised, so that another
spelling of the same recipient, host or amount does not slip past a deny rule.

Allow rules stay strict (a value must match as written, and canonically where that
narrows it); deny and ask rules catch a value in any of its spellings.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterator, Mapping

from .lazyre import lazy
from .normalize import (
    addresses,
    canonical_address,
    canonical_host,
    clean_text,
    host_in_domain,
    is_ip,
    strip_invisible,
)

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

MISSING: Any = object()


def canonical_url(url: str) -> str:
    """`HTTP://User@LOCAL\\u00adHOST:80/x` -> `http://localhost:80/x`: scheme and host
    canonical, user info dropped (it never changes where the request goes)."""
    from urllib.parse import urlsplit  # a URL's only (with ipaddress: slow to import)

    try:
        parts = urlsplit(strip_invisible(url).strip())
        port = parts.port
    except ValueError:
        return url
    host = canonical_host(parts.hostname or "")
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    rest += f"#{parts.fragment}" if parts.fragment else ""
    return f"{parts.scheme.lower()}://{netloc}{rest}"


def canonical_url_pattern(spec: str) -> str:
    scheme, sep, rest = spec.partition("://")
    if not sep:
        return spec
    host, slash, path = rest.partition("/")
    if not any(c in host for c in "*?[@"):
        name, colon, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
        host = canonical_host(name) + (f":{port}" if colon else "")
    return f"{scheme.lower()}://{host}{slash}{path}"


_WORD_SPLIT = lazy(r"[\s,;<>()\[\]\"'`]+|mailto:", re.IGNORECASE)


def values_match(value: Any, op: str, expected: str, *, every: bool) -> bool:
    """One argument matcher against one argument value.

    - `key=` (empty pattern) means the argument is absent or empty.
    - Lists and tuples: every element (allow) or any element (deny/ask) must match; an
      empty one never satisfies a non-empty pattern.
    - A dict or other structure never satisfies an allow matcher; it satisfies a deny or
      ask matcher when any string inside it does.
    - A pattern with `@` compares e-mail addresses: `"A <a@X.com.>, b@y.com"` is the two
      addresses `a@x.com` and `b@y.com`; for deny/ask, `*@x.com` also covers `*@sub.x.com`.
    - Other text: as written for allow; for deny/ask also with invisible characters
      removed, trimmed and case-folded.
    - Numbers: a value that is not a finite number never satisfies an allow bound and
      always satisfies a deny or ask bound (when in doubt, catch it).
    """
    if op == "=" and expected == "":
        return value is MISSING or value is None or value == "" or value in ([], ())
    if value is MISSING:
        return False
    if isinstance(value, list | tuple):
        items = list(_flatten(value))
        if not items:
            return False
        hits = (values_match(v, op, expected, every=every) for v in items)
        return all(hits) if every else any(hits)
    if op != "=":
        return _compare_number(value, op, expected, every=every)
    if isinstance(value, str):
        return _text_matches(value, expected, every=every)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fnmatch.fnmatchcase(str(value), expected)
    if every:
        return False
    return any(_text_matches(s, expected, every=False) for s in _strings_in(value))


def _flatten(values: list[Any] | tuple[Any, ...]) -> Iterator[Any]:
    for v in values:
        if isinstance(v, list | tuple):
            yield from _flatten(v)
        else:
            yield v


def _strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings_in(k)
            yield from _strings_in(v)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from _strings_in(v)
    elif value is not None:
        yield str(value)


def _text_matches(value: str, expected: str, *, every: bool) -> bool:
    if "@" in expected:
        return _address_matches(value, expected, every=every)
    if every:
        return fnmatch.fnmatchcase(value, expected)
    return fnmatch.fnmatchcase(value, expected) or fnmatch.fnmatchcase(
        clean_text(value), clean_text(expected)
    )


def _address_matches(value: str, expected: str, *, every: bool) -> bool:
    local, _, domain = clean_text(expected).rpartition("@")
    if not any(c in domain for c in "*?["):
        domain = canonical_host(domain)
    patterns = [f"{local}@{domain}"]
    if not every and not any(c in domain for c in "*?["):
        patterns.append(f"{local}@*.{domain}")  # a subdomain is the same organisation
    found = addresses(value)
    if every:
        return found is not None and all(fnmatch.fnmatchcase(a, patterns[0]) for a in found)
    # Also every address-like word, however the value separates them (`a@x b@y`, `x@y>`):
    # the tool, not this rule, decides how it reads the string.
    words = [canonical_address(w) for w in _WORD_SPLIT.split(value) if "@" in w]
    candidates = [*(found or ()), *words, clean_text(value)]
    return any(fnmatch.fnmatchcase(c, p) for c in candidates for p in patterns)


def _compare_number(value: Any, op: str, expected: str, *, every: bool) -> bool:
    number = _finite(value)
    bound = _finite(expected)
    if number is None or bound is None:
        return not every  # a non-number never passes an allow bound, always a deny bound
    return {
        "<=": number <= bound,
        ">=": number >= bound,
        "<": number < bound,
        ">": number > bound,
    }[op]


def _finite(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = strip_invisible(value).strip()
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def host_matches(host: str, domain: str, *, loose: bool = False) -> bool:
    """`host` is `domain` or a subdomain of it, compared canonically (`127.1` is
    127.0.0.1). `loose` (deny/ask rules): `localhost` and every loopback address match
    each other."""
    if loose:
        return host_in_domain(host, domain)
    h, d = canonical_host(host), canonical_host(domain.strip().removeprefix("*."))
    return bool(d) and (h == d or (not is_ip(d) and h.endswith("." + d)))


__all__ = ["MISSING", "canonical_url", "canonical_url_pattern", "host_matches", "values_match"]
