"""The `fetch_url` tool: one HTTP(S) GET, redirects followed on the same host only."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..exceptions import InvalidInput, ToolError
from ._text import human_size, is_binary

MAX_FETCH_BYTES = 1024 * 1024
FETCH_TIMEOUT = 20.0


def fetch_url(url: str, timeout: float = FETCH_TIMEOUT) -> str:
    """HTTP(S) GET: status, content type and text (cut at `MAX_FETCH_BYTES`, noted)."""
    parts = urllib.parse.urlsplit(url if isinstance(url, str) else "")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput(f"fetch_url: {url!r} is not an http(s) URL")
    request = urllib.request.Request(url, headers={"User-Agent": "signoff/0.1"})
    opener = urllib.request.build_opener(_SameHostRedirects)
    try:
        with opener.open(request, timeout=timeout) as response:
            status, reason, headers = response.status, response.reason, response.headers
            final, data = response.geturl(), response.read(MAX_FETCH_BYTES + 1)
    except urllib.error.HTTPError as exc:  # an error page is still an answer to read
        status, reason, headers, final = exc.code, exc.reason, exc.headers, url
        data = exc.read(MAX_FETCH_BYTES + 1)
    except (urllib.error.URLError, OSError) as exc:
        why = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise ToolError(f"fetch_url: could not fetch {url}: {why}") from exc
    kind = headers.get("Content-Type", "unknown")
    lines = [f"HTTP {status} {reason}", f"Content-Type: {kind}"]
    if final != url:
        lines.append(f"URL: {final} (redirected)")
    if 300 <= status < 400 and headers.get("Location"):
        lines.append(
            f"Location: {headers['Location']} (a redirect to another host is not followed: "
            "fetch that URL to follow it, so it is checked like any other)"
        )
    cut = len(data) > MAX_FETCH_BYTES
    data = data[:MAX_FETCH_BYTES]
    if is_binary(data):
        return "\n".join([*lines, "", f"(binary content, {human_size(len(data))}; not shown)"])
    try:
        body = data.decode(headers.get_content_charset() or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        body = data.decode("utf-8", errors="replace")
    if cut:
        total = headers.get("Content-Length")
        body += (
            f"\n[... body cut at {human_size(MAX_FETCH_BYTES)}"
            + (f" of {total} bytes" if total else "; the rest was not read")
            + "]"
        )
    return "\n".join([*lines, "", body])


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects on the approved host only; another host needs its own call."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if (old.scheme, old.netloc) != (new.scheme, new.netloc):
            return None  # urllib then returns the 3xx itself as an HTTPError
        return super().redirect_request(req, fp, code, msg, headers, newurl)
