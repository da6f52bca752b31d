"""Counts read as English: "1 change", "2 changes", never "1 change(s)"."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from signoff.i18n import plural

SRC = Path(__file__).resolve().parent.parent / "src" / "signoff"
HEDGED = re.compile(r"[a-z]\(s\)")  # "change(s)", "grant(s)"; not "http(s)" (a real scheme)


def test_plural() -> None:
    assert plural(1, "change") == "1 change"
    assert plural(0, "change") == "0 changes"
    assert plural(2, "change") == "2 changes"
    assert plural(1_200, "run") == "1,200 runs"
    assert plural(1, "request or grant", "requests or grants") == "1 request or grant"
    assert plural(3, "request or grant", "requests or grants") == "3 requests or grants"


def test_no_message_hedges_its_plural() -> None:
    found = []
    for path in SRC.rglob("*.py"):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        for token in tokens:
            if token.type not in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)):
                continue
            text = token.string.replace("http(s)", "")
            if HEDGED.search(text):
                found.append(f"{path.relative_to(SRC)}:{token.start[0]}: {token.string[:60]}")
    for template in (SRC / "web" / "templates").glob("*.html"):
        for number, line in enumerate(template.read_text().splitlines(), 1):
            if HEDGED.search(line.replace("http(s)", "")):
                found.append(f"{template.name}:{number}: {line.strip()[:60]}")
    assert found == []
