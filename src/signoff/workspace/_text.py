"""Showing file and response contents: sizes people read, binary detection, and text cut
to a preview's length. Shared by the tools, their previews and the fetch tool."""

from __future__ import annotations

PREVIEW_CHARS = 60_000  # per preview; the terminal shows fewer lines and says so itself


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


def is_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB: not text to show or edit."""
    return b"\x00" in data[:8192]


def cut_text(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text`, or its first `limit` characters and a note of what was left out."""
    if len(text) <= limit:
        return text
    rest = text[limit:]
    return (
        f"{text[:limit]}\n[... {len(rest)} more characters ({rest.count(chr(10)) + 1} "
        "lines) not shown]"
    )


__all__ = ["PREVIEW_CHARS", "cut_text", "human_size", "is_binary"]
