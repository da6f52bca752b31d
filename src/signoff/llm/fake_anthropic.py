"""FAKE Anthropic Messages API server, for tests. It is NOT a model and calls no LLM.

`FakeAnthropicServer` serves the part of the Anthropic HTTP API that a client such as
Claude Code uses, on 127.0.0.1 (a free port), from a background thread:

    POST /v1/messages                scripted replies, streamed (server-sent events) or not
    POST /v1/messages/count_tokens   a rough count (characters / 4)
    GET  /v1/models[/ID]             one fake model
    HEAD /api/hello                  200 (Claude Code's check that the API answers)

Anything else is answered 404 and logged in `unknown`. Every request is recorded (method,
path, headers, body) in `log`, and every Messages body in `requests`, so a test can assert
exactly what "the model" was shown, for instance that a hook's deny reason came back as the
tool result.

The model's turns are scripted. A script is a list of steps; the step served is chosen from
the conversation itself (the number of assistant turns already in `messages`), so a retried
request gets the same answer and a second client sees its own script position. A step is
`Text(...)`, `ToolUse(name, input)`, a list of those (one assistant message with several
blocks), `FakeError(...)`, or a function of `Seen` (the request, with its last tool results)
that returns one of those. When the steps run out the model says `DONE_TEXT` and ends its
turn. Requests that carry no tools (a client's side queries: titles, summaries, safety
checks) are not agent turns: they are answered by `side` (default: `DONE_TEXT`) and do not
use up the script::

    with FakeAnthropicServer([ToolUse("Bash", {"command": "touch x"}), Text("made x")]) as api:
        env = {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "fake"}
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .fake_server import LocalServer

BANNER = "FAKE Anthropic Messages API server (scripted replies, no LLM)"
FAKE_MODEL = "claude-fake-scripted"
DONE_TEXT = "Done (fake model: script finished)."


@dataclass(frozen=True, slots=True)
class Text:
    """A text block of the model's answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call of the model. A string `input` is streamed verbatim (even if not JSON)."""

    name: str
    input: Mapping[str, Any] | str
    id: str = ""


@dataclass(frozen=True, slots=True)
class FakeError:
    """A scripted HTTP error, answered in the Anthropic error format."""

    status: int
    message: str
    type: str = "api_error"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One `tool_result` block the client sent back: its text, joined, and whether it is
    marked as an error (Claude Code marks a hook's deny and a failed command that way)."""

    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class Seen:
    """What the fake model is shown on one agent turn."""

    body: dict[str, Any]
    turn: int  # how many assistant turns the conversation already holds
    tool_results: tuple[ToolResult, ...] = field(default=())  # those of the last user message

    @property
    def last_tool_result(self) -> ToolResult | None:
        return self.tool_results[-1] if self.tool_results else None


Block = Text | ToolUse
Turn = Block | Sequence[Block]
Reply = Turn | FakeError
Step = Reply | Callable[[Seen], Reply]
Script = Sequence[Step] | Callable[[Seen], Reply]


@dataclass(frozen=True, slots=True)
class Received:
    """One HTTP request as the fake received it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def tool_results(message: Mapping[str, Any]) -> tuple[ToolResult, ...]:
    """The `tool_result` blocks of one message (none if its content is a plain string)."""
    content = message.get("content")
    if not isinstance(content, list):
        return ()
    return tuple(
        ToolResult(
            str(block.get("tool_use_id", "")),
            _text_of(block.get("content")),
            bool(block.get("is_error", False)),
        )
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )


def seen(body: dict[str, Any]) -> Seen:
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    last = messages[-1] if messages and messages[-1].get("role") == "user" else {}
    return Seen(body, turn, tool_results(last))


def _blocks(turn: Turn) -> list[Block]:
    return [turn] if isinstance(turn, Text | ToolUse) else list(turn)


def _input_json(block: ToolUse) -> str:
    data = block.input
    return data if isinstance(data, str) else json.dumps(dict(data), ensure_ascii=False)


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


class FakeAnthropicServer(LocalServer):
    """A FAKE Anthropic Messages API server with scripted replies. See the module docstring.

    `api_key`, when given, is required in `x-api-key` (or as a bearer token).
    `chunk_size` is how many characters of text or tool input go in one streamed delta.
    """

    def __init__(
        self,
        script: Script = (),
        *,
        side: Callable[[dict[str, Any]], Reply] | None = None,
        api_key: str | None = None,
        model: str = FAKE_MODEL,
        chunk_size: int = 8,
        port: int = 0,
    ) -> None:
        self._script = script
        self._side = side
        self.api_key = api_key
        self.model = model
        self.chunk_size = max(1, chunk_size)
        self._port = port
        self.log: list[Received] = []  # every request, in order
        self.requests: list[dict[str, Any]] = []  # every agent-turn Messages body
        self.side_requests: list[dict[str, Any]] = []  # Messages bodies without tools
        self.unknown: list[Received] = []  # requests answered 404
        self._lock = threading.Lock()
        self._counter = 0

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """What `ANTHROPIC_BASE_URL` is set to (clients append `/v1/messages`)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeAnthropicServer:
        self._serve(_Handler, "fake-anthropic")
        return self

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    # ------------------------------------------------------------------ what was received

    def tool_results(self) -> list[ToolResult]:
        """Every tool result the client sent back, in the order they first arrived."""
        found: dict[str, ToolResult] = {}
        with self._lock:
            bodies = list(self.requests)
        for body in bodies:
            for message in body.get("messages") or ():
                if isinstance(message, dict):
                    for result in tool_results(message):
                        found.setdefault(result.tool_use_id, result)
        return list(found.values())

    def paths(self) -> list[str]:
        """`METHOD /path` of every request, in order (to see what a client calls)."""
        with self._lock:
            return [f"{r.method} {r.path}" for r in self.log]

    # ------------------------------------------------------------------ script

    def _reply(self, body: dict[str, Any]) -> Reply:
        tools = body.get("tools")
        if not tools:
            with self._lock:
                self.side_requests.append(body)
            return self._side(body) if self._side else Text(DONE_TEXT)
        with self._lock:
            self.requests.append(body)
        view = seen(body)
        if callable(self._script):
            return self._script(view)
        if view.turn >= len(self._script):
            return Text(DONE_TEXT)
        step = self._script[view.turn]
        return step(view) if callable(step) else step

    def _record(self, received: Received) -> None:
        with self._lock:
            self.log.append(received)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_fake{self._counter:04d}"

    # ------------------------------------------------------------------ wire format

    def _wire_blocks(self, turn: Turn) -> list[tuple[Block, str]]:
        """Each block with the id it goes out with (tool uses get one if scripted without)."""
        return [
            (b, (b.id or self._next_id("toolu")) if isinstance(b, ToolUse) else "")
            for b in _blocks(turn)
        ]

    def _usage(self, body: Mapping[str, Any]) -> dict[str, int]:
        return {
            "input_tokens": count_tokens(body),
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    def message(self, turn: Turn, body: Mapping[str, Any]) -> dict[str, Any]:
        """The whole reply, for a non-streaming request."""
        content: list[dict[str, Any]] = []
        for block, ident in self._wire_blocks(turn):
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            else:
                data = block.input
                parsed = json.loads(data) if isinstance(data, str) else dict(data)
                content.append(
                    {"type": "tool_use", "id": ident, "name": block.name, "input": parsed}
                )
        calls = any(part["type"] == "tool_use" for part in content)
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": self._usage(body),
        }

    def events(self, turn: Turn, body: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The reply as server-sent events, text and tool input split into many deltas."""
        start = self.message([], body)
        yield "message_start", {"type": "message_start", "message": start}
        yield "ping", {"type": "ping"}
        calls = False
        for index, (block, ident) in enumerate(self._wire_blocks(turn)):
            if isinstance(block, Text):
                head: dict[str, Any] = {"type": "text", "text": ""}
                kind, key, pieces = "text_delta", "text", block.text
            else:
                calls = True
                head = {"type": "tool_use", "id": ident, "name": block.name, "input": {}}
                kind, key, pieces = "input_json_delta", "partial_json", _input_json(block)
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": head,
                },
            )
            for piece in _pieces(pieces, self.chunk_size):
                delta = {"type": kind, key: piece}
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": delta,
                    },
                )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if calls else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": 1},
            },
        )
        yield "message_stop", {"type": "message_stop"}


def count_tokens(body: Mapping[str, Any]) -> int:
    """A rough token count: a quarter of the characters of the request's JSON."""
    return max(1, len(json.dumps(body, ensure_ascii=False)) // 4)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropicServer
    server_version = "FakeAnthropic/0 (FAKE, scripted)"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send_json(self, status: int, doc: Mapping[str, Any]) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", self.fake._next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str = "api_error") -> None:
        error = {"type": kind, "message": message}
        self._send_json(status, {"type": "error", "error": error})

    def _authorised(self) -> bool:
        key = self.fake.api_key
        given = self.headers.get("x-api-key") or ""
        bearer = self.headers.get("Authorization") or ""
        if key is None or key in (given, bearer.removeprefix("Bearer ")):
            return True
        self._error(401, "fake server: invalid x-api-key", "authentication_error")
        return False

    def _receive(self, body: Any) -> Received:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        headers = {k.lower(): v for k, v in self.headers.items()}
        received = Received(self.command, path, headers, body)
        self.fake._record(received)
        return received

    def _not_found(self, received: Received) -> None:
        with self.fake._lock:
            self.fake.unknown.append(received)
        self._error(
            404, f"fake server: no route {received.method} {received.path}", "not_found_error"
        )

    def do_GET(self) -> None:
        received = self._receive(None)
        if not self._authorised():
            return
        model = {
            "type": "model",
            "id": self.fake.model,
            "display_name": "Fake scripted model",
            "created_at": "2026-01-01T00:00:00Z",
        }
        if received.path == "/v1/models":
            self._send_json(
                200,
                {
                    "data": [model],
                    "has_more": False,
                    "first_id": model["id"],
                    "last_id": model["id"],
                },
            )
        elif received.path.startswith("/v1/models/"):
            self._send_json(200, {**model, "id": received.path.rsplit("/", 1)[1]})
        else:
            self._not_found(received)

    def do_HEAD(self) -> None:
        # Claude Code checks that the API answers (HEAD /api/hello) unless
        # CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set
        received = self._receive(None)
        if received.path == "/api/hello":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._not_found(received)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw or b"{}")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        received = self._receive(body)
        if received.path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._not_found(received)
            return
        if not self._authorised():
            return
        if not isinstance(body, dict):
            self._error(
                400, "fake server: the request body is not a JSON object", "invalid_request_error"
            )
            return
        if received.path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": count_tokens(body)})
            return
        reply = self.fake._reply(body)
        if isinstance(reply, FakeError):
            self._error(reply.status, reply.message, reply.type)
        elif body.get("stream"):
            self._stream(reply, body)
        else:
            try:
                message = self.fake.message(reply, body)
            except ValueError:  # a tool input scripted as malformed JSON
                self._error(500, "fake server: a malformed tool input can only be streamed")
                return
            self._send_json(200, message)

    def _stream(self, turn: Turn, body: Mapping[str, Any]) -> None:
        # HTTP/1.0 semantics: no length, the stream ends when the connection closes.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", self.fake._next_id("req"))
        self.end_headers()
        for name, event in self.fake.events(turn, body):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()


__all__ = [
    "BANNER",
    "DONE_TEXT",
    "FAKE_MODEL",
    "FakeAnthropicServer",
    "FakeError",
    "Received",
    "Seen",
    "Text",
    "ToolResult",
    "ToolUse",
    "count_tokens",
    "seen",
    "tool_results",
]
