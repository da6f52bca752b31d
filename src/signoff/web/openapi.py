"""The OpenAPI 3.1 document of the JSON API (hand-written: the API is small and stable)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .. import __version__
from ..models import ALWAYS_SCOPES, DECISION_KINDS, RISKS

_ERR = {"$ref": "#/components/schemas/Error"}


def _resp(desc: str, schema: dict[str, Any] | None = None, *codes: int) -> dict[str, Any]:
    out: dict[str, Any] = {"200": {"description": desc}}
    if schema is not None:
        out["200"]["content"] = {"application/json": {"schema": schema}}
    texts = {
        400: "bad request",
        401: "no valid token",
        403: "not allowed (role, approvers, CSRF)",
        404: "not found",
        409: "already decided or conflict",
        410: "expired",
        413: "the body is over the server's cap (1 MiB by default)",
        422: "invalid input",
    }
    for code in (401, *codes):
        out[str(code)] = {
            "description": texts[code],
            "content": {"application/json": {"schema": _ERR}},
        }
    return out


def _q(name: str, desc: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": desc, "schema": schema}


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_LIMIT = _q("limit", "at most this many", {"type": "integer", "minimum": 1, "maximum": 500})
_OBJ: dict[str, Any] = {"type": "object", "additionalProperties": True}
_NUM = {"type": ["number", "null"]}
_INT = {"type": "integer"}
_DECISIONS = ("approve", "edit", "reject", "skip", "answer")


def _named(names: tuple[str, ...], schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(names), "properties": {n: schema for n in names}}


_RATES = {
    "type": "object",
    "required": ["key", "asked", "decided", "counts", "rates"],
    "properties": {
        "key": {"type": "string", "description": "the tool or the rule"},
        "asked": _INT,
        "decided": _INT,
        "counts": _named(_DECISIONS, _INT),
        "rates": _named(_DECISIONS, _NUM),
        "expired": _INT,
        "pending": _INT,
    },
}
_STATS = {
    "type": "object",
    "additionalProperties": True,
    "description": "Exactly what `signoff stats --json` prints "
    "(signoff.audit.stats.Stats.to_json). Rates are fractions (0..1) or null "
    "when nothing was decided; times are seconds; `since` is epoch seconds or "
    "null (all time).",
    "required": [
        "since",
        "min_count",
        "calls",
        "effects",
        "asked",
        "ask_share",
        "questions",
        "runs",
        "questions_per_run",
        "decided",
        "decisions",
        "rates",
        "per_tool",
        "per_rule",
        "time_to_decision",
        "expired",
        "in_doubt",
        "pending",
        "suggestions",
        "by_day",
    ],
    "properties": {
        "since": _NUM,
        "min_count": _INT,
        "calls": _INT,
        "effects": _named(("allow", "notify", "ask", "deny"), _INT),
        "asked": _INT,
        "ask_share": _NUM,
        "questions": _INT,
        "runs": _INT,
        "questions_per_run": _named(("mean", "median", "max"), _NUM),
        "per_run": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"run_id": {"type": "string"}, "calls": _INT, "questions": _INT},
            },
        },
        "decided": _INT,
        "decisions": _named(_DECISIONS, _INT),
        "rates": _named(_DECISIONS, _NUM),
        "per_tool": {"type": "array", "items": _RATES},
        "per_rule": {"type": "array", "items": _RATES},
        "time_to_decision": {
            "type": "object",
            "properties": {"count": _INT, "median": _NUM, "p90": _NUM},
        },
        "expired": _INT,
        "in_doubt": _INT,
        "in_doubt_unresolved": _INT,
        "pending": _INT,
        "suggestions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind", "rule", "tool", "count", "reason"],
                "properties": {
                    "kind": {"type": "string", "enum": ["allow", "deny", "remove_ask_rule"]},
                    "rule": {"type": "string"},
                    "tool": {"type": "string"},
                    "count": _INT,
                    "reason": {"type": "string"},
                    "command": {
                        "type": ["string", "null"],
                        "description": "allow: the exact `signoff grant add` command",
                    },
                    "toml": {
                        "type": ["string", "null"],
                        "description": "deny: the line to add under [permissions] deny",
                    },
                    "examples": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "by_day": {
            "type": "array",
            "items": {
                "type": "object",
                "description": "one UTC day",
                "properties": {
                    "date": {"type": "string", "format": "date"},
                    "calls": _INT,
                    "asked": _INT,
                    "approve": _INT,
                    "edit": _INT,
                    "reject": _INT,
                },
            },
        },
    },
}

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "signoff",
        "version": __version__,
        "description": "Approve, edit, reject or answer AI agents' tool calls.",
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error", "message"],
                "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
            },
            "Request": {
                "type": "object",
                "additionalProperties": True,
                "required": ["id", "call", "verdict", "state", "summary"],
                "properties": {
                    "id": {"type": "string"},
                    "state": {"type": "string"},
                    "call": _OBJ,
                    "verdict": _OBJ,
                    "preview": {"type": "string"},
                    "run_id": {"type": ["string", "null"]},
                    "tenant": {"type": "string"},
                    "approvers": {"type": "array", "items": {"type": "string"}},
                    "created_at": {"type": "number"},
                    "expires_at": {"type": ["number", "null"]},
                    "decision": {"type": ["object", "null"]},
                    "outcome": {"type": ["object", "null"]},
                    "summary": {"type": "string"},
                    "metadata": _OBJ,
                    "what_next": {"type": ["string", "null"]},
                },
            },
            "Decision": {
                "type": "object",
                "required": ["kind"],
                "additionalProperties": False,
                "properties": {
                    "kind": {"type": "string", "enum": list(DECISION_KINDS)},
                    "reason": {
                        "type": "string",
                        "description": "required for reject; sent to the model",
                    },
                    "arguments": {
                        "type": "object",
                        "description": "edit: the new arguments (judged again)",
                    },
                    "result": {"description": "respond: the human's answer"},
                    "scope": {
                        "type": "string",
                        "enum": list(ALWAYS_SCOPES),
                        "description": "approve_always: where the grant applies",
                    },
                },
            },
            "Grant": _OBJ,
            "Run": _OBJ,
            "Stats": _STATS,
        },
    },
    "security": [{"bearer": []}],
    "paths": {
        "/api/health": {
            "get": {
                "summary": "liveness and the last event sequence number",
                "security": [],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "ok": {"type": "boolean"},
                                        "last_seq": {"type": "integer"},
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
        "/api/me": {
            "get": {
                "summary": "the account behind the token",
                "responses": _resp("the account", _OBJ),
            }
        },
        "/api/requests": {
            "get": {
                "summary": "requests, newest first (default: pending ones)",
                "parameters": [
                    _q("state", "a state, or all", {"type": "string"}),
                    _q("risk", "risk level", {"type": "string", "enum": list(RISKS)}),
                    _q("tool", "tool name", {"type": "string"}),
                    _q("run", "run id", {"type": "string"}),
                    _q("tenant", "tenant", {"type": "string"}),
                    _LIMIT,
                ],
                "responses": _resp(
                    "requests",
                    {"type": "array", "items": {"$ref": "#/components/schemas/Request"}},
                    422,
                ),
            }
        },
        "/api/requests/{id}": {
            "get": {
                "summary": "one request with its outcome",
                "parameters": [_ID],
                "responses": _resp("the request", {"$ref": "#/components/schemas/Request"}, 404),
            }
        },
        "/api/requests/{id}/decide": {
            "post": {
                "summary": "approve, approve always, edit, reject, skip or answer",
                "description": "Goes through signoff.approvals.decide: edits are validated and "
                "judged again (a deny still wins); the request's approvers are "
                "enforced. With a session cookie, send X-CSRF-Token.",
                "parameters": [_ID],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Decision"}}
                    },
                },
                "responses": _resp(
                    "the decided request",
                    {"$ref": "#/components/schemas/Request"},
                    400,
                    403,
                    404,
                    409,
                    410,
                    413,
                    422,
                ),
            }
        },
        "/api/grants": {
            "get": {
                "summary": "remembered approvals",
                "parameters": [_q("run", "only this run's grants", {"type": "string"})],
                "responses": _resp(
                    "grants", {"type": "array", "items": {"$ref": "#/components/schemas/Grant"}}
                ),
            }
        },
        "/api/grants/{id}/revoke": {
            "post": {
                "summary": "revoke a grant (admin)",
                "parameters": [_ID],
                "responses": _resp(
                    "the revoked grant", {"$ref": "#/components/schemas/Grant"}, 403, 404, 409
                ),
            }
        },
        "/api/runs": {
            "get": {
                "summary": "runs, most recently updated first",
                "parameters": [_q("status", "run status", {"type": "string"}), _LIMIT],
                "responses": _resp(
                    "runs", {"type": "array", "items": {"$ref": "#/components/schemas/Run"}}, 422
                ),
            }
        },
        "/api/runs/{id}": {
            "get": {
                "summary": "a run with its transcript (`messages`)",
                "parameters": [_ID],
                "responses": _resp("the run", {"$ref": "#/components/schemas/Run"}, 404),
            }
        },
        "/api/stats": {
            "get": {
                "summary": "decision statistics and suggested rules (`signoff stats --json`)",
                "parameters": [
                    _q(
                        "since",
                        "only calls since: 7d, 12h, 30m, an ISO date or epoch seconds "
                        "(the syntax of `signoff stats --since`)",
                        {"type": "string"},
                    ),
                    _q(
                        "min_count",
                        "identical answers a suggestion needs (default 5)",
                        {"type": "integer", "minimum": 1, "maximum": 100000},
                    ),
                ],
                "responses": _resp(
                    "the statistics", {"$ref": "#/components/schemas/Stats"}, 409, 422
                ),
            }
        },
        "/api/audit": {
            "get": {
                "summary": "audit log entries, oldest first (`signoff audit --json`)",
                "parameters": [
                    _q("run", "only this run (or chat session)", {"type": "string"}),
                    _q("request", "only this request", {"type": "string"}),
                    _q(
                        "kind",
                        "an exact kind or a prefix (`request.`, `run.*`); repeatable",
                        {"type": "string"},
                    ),
                    _q("since", "7d, 12h, 30m, an ISO date or epoch seconds", {"type": "string"}),
                    _q(
                        "limit",
                        "the newest this many (default 200)",
                        {"type": "integer", "minimum": 1, "maximum": 5000},
                    ),
                ],
                "responses": _resp(
                    "entries with seq, prev_hash and hash", {"type": "array", "items": _OBJ}, 422
                ),
            }
        },
        "/api/audit/verify": {
            "get": {
                "summary": "verify the hash chain (`signoff audit verify --json`)",
                "responses": _resp(
                    "the report: ok, entries, head_hash, first_bad_seq, message", _OBJ
                ),
            }
        },
        "/api/events": {
            "get": {
                "summary": "the events feed as server-sent events",
                "description": "Streams events after `after` (or Last-Event-ID) for up to "
                "`wait` seconds, then ends; reconnect to continue.",
                "parameters": [
                    _q("after", "sequence number", {"type": "integer", "minimum": 0}),
                    _q(
                        "wait",
                        "seconds to stream",
                        {"type": "number", "minimum": 0, "maximum": 300},
                    ),
                ],
                "responses": {
                    **_resp("event stream", None, 422),
                    "200": {
                        "description": "text/event-stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                },
            }
        },
    },
}


async def openapi(request: HTTPRequest) -> Response:
    return JSONResponse(DOCUMENT)


ROUTES = [Route("/openapi.json", openapi)]

__all__ = ["DOCUMENT", "ROUTES"]
