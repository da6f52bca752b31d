"""Where `signoff.escape` was first defined: its names, still importable from here."""

from __future__ import annotations

from ..escape import escape_json_text, escape_untrusted, safe_json

__all__ = ["escape_json_text", "escape_untrusted", "safe_json"]
