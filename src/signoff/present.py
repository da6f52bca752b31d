"""How a request reads wherever it is shown (the CLI, the web inbox, notifications): a
one-line summary of its call, and its `--json` shape with the outcome. Both the CLI and
the web use it, so neither imports the other."""

from __future__ import annotations

import json
from typing import Any

from .models import Request, ToolCall
from .store import Store


def summary(request: Request) -> str:
    return summary_of(request.call)


def summary_of(call: ToolCall) -> str:
    spec_args = call.arguments
    for key in ("command", "path", "url", "to", "question"):
        if isinstance(spec_args.get(key), str):
            return f"{key}={spec_args[key]}"
    return json.dumps(dict(spec_args), ensure_ascii=False)


def request_json(request: Request, store: Store) -> dict[str, Any]:
    return requests_json([request], store)[0]


def requests_json(requests: list[Request], store: Store) -> list[dict[str, Any]]:
    """The `--json` shape of requests: the stored document, a summary and the outcome
    (read for the whole list in one query)."""
    outcomes = store.get_outcomes([r.id for r in requests])
    docs = []
    for request in requests:
        doc = request.to_json()
        doc["summary"] = summary(request)
        doc["outcome"] = outcomes.get(request.id)
        docs.append(doc)
    return docs


__all__ = ["request_json", "requests_json", "summary", "summary_of"]
