"""Escaping of untrusted text for terminals and JSON output (no rich: `signoff check
--json` and the web API use it, and a hook's process should not pay for rich).

`render` re-exports these names, where they were first defined.
"""

from __future__ import annotations

import json
import re
import unicodedata

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

# Invisible or layout-changing characters that unicodedata does not class as Cc/Cf.
_INVISIBLE = frozenset({0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2028, 0x2029})
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_char(code: int) -> str:
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _is_variation_selector(code: int) -> bool:
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def escape_untrusted(text: str, *, newline: bool = True, tab: bool = True) -> str:
    """Make model-written text safe to print: nothing in it is interpreted by a terminal.

    Escaped as `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`: C0 and C1 controls (so ESC, BEL, CR
    and 8-bit CSI; an ANSI/OSC sequence becomes visible text such as `\\x1b[2K`), DEL,
    bidi overrides and isolates, zero-width and other format characters, line/paragraph
    separators, surrogates, private-use and unassigned code points. `newline` and `tab`
    keep a plain LF / TAB where the layout can show them (else they become `\\n` / `\\t`).
    A variation selector is kept only right after a visible symbol (as in ⚠️); alone it
    could hide a difference between two strings that look the same.
    """
    out: list[str] = []
    previous_kept = False
    for char in text:
        code = ord(char)
        if char == "\n" and newline:
            out.append(char)
            previous_kept = False
            continue
        if char == "\t" and tab:
            out.append(char)
            previous_kept = False
            continue
        if char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif _is_variation_selector(code):
            # Keep VS15/VS16 after a symbol (emoji presentation); escape it anywhere else.
            if previous_kept and code in (0xFE0E, 0xFE0F):
                out.append(char)
            else:
                out.append(_escape_char(code))
            previous_kept = False
            continue
        elif code in _INVISIBLE or unicodedata.category(char) in _ESCAPED_CATEGORIES:
            out.append(_escape_char(code))
        else:
            out.append(char)
            previous_kept = unicodedata.category(char) == "So"
            continue
        previous_kept = False
    return "".join(out)


def _needs_json_escape(char: str) -> bool:
    code = ord(char)
    return code > 0x7E and (code in _INVISIBLE or unicodedata.category(char) in _ESCAPED_CATEGORIES)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells a code point beyond the BMP as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


# everything past "~": written as a negated class, which compiles at once (the range
# 0x7f-0x10ffff spelt out made the regex compiler build a charset for ~20 ms at import)
_BEYOND_ASCII = re.compile("[^\x00-\x7e]")


def _escape_match(match: re.Match[str]) -> str:
    char = match.group()
    return _json_escape(char) if _needs_json_escape(char) else char


def escape_json_text(text: str) -> str:
    """JSON text with the code points `escape_untrusted` hides spelled `\\uXXXX`.

    For JSON that `json.dumps(..., ensure_ascii=False)` wrote: C1 controls, DEL, bidi
    overrides and isolates, zero-width and other format characters, separators, surrogates,
    private-use and unassigned code points become escapes (they can only occur inside
    strings, so the value parses back the same); other non-ASCII text stays readable.
    """
    return _BEYOND_ASCII.sub(_escape_match, text)


def safe_json(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)`, safe to print on a terminal."""
    return escape_json_text(json.dumps(value, ensure_ascii=False, **options))
