"""FAKE model APIs for the Codex CLI and the Gemini CLI, for tests. NOT models: no LLM is
called. Each serves, on 127.0.0.1 (a free port) from a background thread, just what its
client sends (see docs/real-clients.md):

    FakeResponsesServer  POST /v1/responses (streamed): the OpenAI Responses API, for Codex
    FakeGeminiServer     POST /v1beta/models/M:streamGenerateContent and :generateContent

A script is a list of steps: `Call(name, arguments)` (the model calls a tool), `Say(text)`,
or a function of the last tool output the model was shown (a string, or None) that returns
one of those. The step served is the number of tool calls already in the conversation the
client sends, so a retried request gets the same answer; after the last step the model
says `DONE`. Every request body is kept in `requests`, and every tool output the client
sent back in `outputs()`, so a test can check what the model read (a hook's deny reason).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DONE = "Done (fake model: script finished)."


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Say:
    text: str


Step = Call | Say | Callable[[str | None], "Call | Say"]


class _Server:
    """The HTTP plumbing both fakes share."""

    BANNER = "FAKE model API (scripted, no LLM)"

    def __init__(self, script: Sequence[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with owner._lock:
                    owner.paths.append(self.path)
                    owner.requests.append(body)
                status, headers, payload = owner.answer(self.path, body)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> _Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def step(self, calls_so_far: int, last_output: str | None) -> Call | Say:
        if calls_so_far >= len(self.script):
            return Say(DONE)
        step = self.script[calls_so_far]
        return step(last_output) if callable(step) else step

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        raise NotImplementedError


def _sse(events: list[dict[str, Any]], *, named: bool) -> bytes:
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    return "".join(out).encode()


class FakeResponsesServer(_Server):
    """FAKE OpenAI Responses API (what Codex CLI 0.171 sends): scripted, no LLM. Point
    Codex at `base_url + "/v1"` as a model provider with `wire_api = "responses"`."""

    BANNER = "FAKE OpenAI Responses API (scripted, no LLM)"

    def outputs(self) -> list[str]:
        """Every tool output the client sent back, in order (each request repeats the
        conversation, so the last request holds them all)."""
        if not self.requests:
            return []
        items = self.requests[-1].get("input") or []
        return [str(i.get("output")) for i in items if i.get("type") == "function_call_output"]

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if not path.endswith("/responses"):
            return 404, {}, b""
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        calls = sum(1 for i in items if i.get("type") == "function_call")
        outputs = [i for i in items if i.get("type") == "function_call_output"]
        last = None
        if outputs:
            value = outputs[-1].get("output")
            last = value if isinstance(value, str) else json.dumps(value)
        step = self.step(calls, last)
        n = len(self.requests)
        if isinstance(step, Call):
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": step.name,
                "arguments": json.dumps(dict(step.arguments)),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        response: dict[str, Any] = {
            "id": f"resp_{n}",
            "object": "response",
            "status": "in_progress",
            "output": [],
        }
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": [item], "usage": usage},
            },
        ]
        return 200, {"Content-Type": "text/event-stream"}, _sse(events, named=True)


class FakeGeminiServer(_Server):
    """FAKE Gemini API (what Gemini CLI 0.61 sends): scripted, no LLM. Point the client
    at it with `GOOGLE_GEMINI_BASE_URL=base_url`. A request without tools (its routing
    question) is answered with text and does not use up the script."""

    BANNER = "FAKE Gemini API (scripted, no LLM)"

    def outputs(self) -> list[str]:
        """Every tool result the client sent back (`functionResponse.response`), as JSON."""
        agent = [r for r in self.requests if r.get("tools")]
        if not agent:
            return []
        found = []
        for content in agent[-1].get("contents") or []:
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    found.append(json.dumps(part["functionResponse"].get("response")))
        return found

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        stream = ":streamGenerateContent" in path
        if not body.get("tools"):
            part: dict[str, Any] = {"text": '{"reasoning": "fake", "model_choice": "flash"}'}
        else:
            contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
            parts = [p for c in contents for p in c.get("parts") or [] if isinstance(p, dict)]
            calls = sum(1 for p in parts if "functionCall" in p)
            results = [p["functionResponse"] for p in parts if "functionResponse" in p]
            last = json.dumps(results[-1].get("response")) if results else None
            step = self.step(calls, last)
            if isinstance(step, Call):
                part = {"functionCall": {"name": step.name, "args": dict(step.arguments)}}
            else:
                part = {"text": step.text}
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
            "modelVersion": "fake",
        }
        if stream:
            return 200, {"Content-Type": "text/event-stream"}, _sse([chunk], named=False)
        return 200, {"Content-Type": "application/json"}, json.dumps(chunk).encode()


__all__ = ["DONE", "Call", "FakeGeminiServer", "FakeResponsesServer", "Say"]
