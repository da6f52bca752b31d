"""FAKE OpenAI-compatible server, for tests and demos. It is NOT a model and calls no LLM.

`FakeOpenAIServer` serves the small part of the Chat Completions HTTP API that an agent
loop uses, on 127.0.0.1 (a free port), from a background thread:

    POST /v1/chat/completions   scripted replies, streaming (SSE) or not
    GET  /v1/models             one fake model

Replies are scripted: a list of assistant messages served in order, or a function of the
request body. Every request body is recorded, so a test can assert exactly which
transcript "the model" saw. Streaming splits text and tool-call arguments across many
chunks, the way real providers do, so the client's reassembly is really exercised::

    with FakeOpenAIServer([{"role": "assistant", "content": "hello"}]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="fake")

A scripted reply may hold several tool calls, and tool-call arguments are sent exactly as
scripted (a string is sent verbatim, so malformed JSON can be scripted; a dict is encoded).
`FakeError(status, message)` scripts an HTTP error answer. `naive_reviewer()` scripts a
FAKE reviewer model that answers signoff's reviewer prompts (and obeys injected text).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BANNER = "FAKE OpenAI-compatible server (scripted replies, no LLM)"
FAKE_MODEL = "fake-scripted-model"


@dataclass(frozen=True, slots=True)
class FakeError:
    """A scripted HTTP error, answered in the OpenAI error format."""

    status: int
    message: str
    type: str = "fake_error"


Reply = Mapping[str, Any] | FakeError
Script = Sequence[Reply] | Callable[[dict[str, Any]], Reply]


def _tool_calls(message: Mapping[str, Any], turn: int = 0) -> list[dict[str, Any]]:
    """The reply's tool calls in wire form: ids filled in, arguments as a string."""
    calls = []
    for index, raw in enumerate(message.get("tool_calls") or ()):
        function = raw.get("function") or {}
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):  # a convenience for scripts: encode dicts
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": raw.get("id") or f"call_fake_{turn}_{index}",
                "type": "function",
                "function": {"name": function.get("name", ""), "arguments": arguments},
            }
        )
    return calls


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a timeout test) is not the fake's error to print


class LocalServer:
    """The lifecycle the FAKE servers share: a threaded HTTP server on 127.0.0.1 (port 0:
    any free one), its handler class bound to the fake, started and stopped with `with`."""

    _port = 0
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not running")
        return int(self._httpd.server_address[1])

    def _serve(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        bound = type("_BoundHandler", (handler,), {"fake": self})
        self._httpd = _QuietServer(("127.0.0.1", self._port), bound)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name=name, daemon=True
        )  # a short poll interval keeps stop() (and every test using the server) quick
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeOpenAIServer(LocalServer):
    """A FAKE OpenAI-compatible HTTP server with scripted replies. See the module docstring.

    `api_key`, when given, is required as a bearer token (to test authentication errors).
    `chunk_size` is how many characters of text or arguments go in one streamed chunk;
    `chunk_delay` pauses between chunks (seconds).
    """

    def __init__(
        self,
        replies: Script = (),
        *,
        api_key: str | None = None,
        model: str = FAKE_MODEL,
        chunk_size: int = 4,
        chunk_delay: float = 0.0,
        banner: bool = False,
        port: int = 0,
    ) -> None:
        self._script = replies
        self._queue: list[Reply] = [] if callable(replies) else list(replies)
        self.api_key = api_key
        self.model = model
        self.chunk_size = max(1, chunk_size)
        self.chunk_delay = chunk_delay
        self.banner = banner
        self._port = port
        self.requests: list[dict[str, Any]] = []  # every chat-completions body received
        self.headers: list[dict[str, str]] = []  # their headers, names lower-cased
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._serve(_Handler, "fake-openai")
        if self.banner:
            print(f"{BANNER} at {self.base_url}", flush=True)
        return self

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    # ------------------------------------------------------------------ script

    def add(self, *replies: Reply) -> None:
        """Queue more scripted replies (list scripts only)."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    def messages(self, index: int = -1) -> list[dict[str, Any]]:
        """The `messages` of the index-th request received (default: the last one)."""
        with self._lock:
            return list(self.requests[index].get("messages", []))

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if callable(self._script):
            return self._script(body)
        with self._lock:
            if not self._queue:
                return FakeError(500, "fake server: no scripted reply left")
            return self._queue.pop(0)

    def _record(self, body: dict[str, Any], headers: Mapping[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})

    # ------------------------------------------------------------------ wire format

    def completion(self, message: Mapping[str, Any]) -> dict[str, Any]:
        calls = _tool_calls(message, len(self.requests))
        wire: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if calls:
            wire["tool_calls"] = calls
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": wire,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def chunks(self, message: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The reply as streamed chunks: role, text pieces, then each tool call split up."""
        ident = f"chatcmpl-fake-{len(self.requests)}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(message.get("content") or "", self.chunk_size):
            yield chunk({"content": piece})
        calls = _tool_calls(message, len(self.requests))
        for index, call in enumerate(calls):
            # First the id and name, then the arguments in pieces (only the index repeats).
            head = {"name": call["function"]["name"], "arguments": ""}
            yield chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call["id"], "type": "function", "function": head}
                    ]
                }
            )
            for piece in _pieces(call["function"]["arguments"], self.chunk_size):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls" if calls else "stop")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    server_version = "FakeOpenAI/0 (FAKE, scripted)"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send_json(self, status: int, doc: Mapping[str, Any]) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str = "fake_error") -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "code": None}})

    def _authorised(self) -> bool:
        key = self.fake.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "fake server: invalid API key", "invalid_request_error")
        return False

    def do_GET(self) -> None:
        if not self._authorised():
            return
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": self.fake.model, "object": "model", "created": 0, "owned_by": "fake"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._error(404, f"fake server: no route GET {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"fake server: no route POST {self.path}")
            return
        if not self._authorised():
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "fake server: the request body is not JSON")
            return
        self.fake._record(body, dict(self.headers.items()))
        reply = self.fake._next_reply(body)
        if isinstance(reply, FakeError):
            self._error(reply.status, reply.message, reply.type)
        elif body.get("stream"):
            self._stream(reply)
        else:
            self._send_json(200, self.fake.completion(reply))

    def _stream(self, reply: Mapping[str, Any]) -> None:
        # HTTP/1.0 semantics: no length, the stream ends when the connection closes.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in self.fake.chunks(reply):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            if self.fake.chunk_delay:
                time.sleep(self.fake.chunk_delay)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def scripted_reply(content: str | None = None, *calls: Mapping[str, Any]) -> dict[str, Any]:
    """An assistant message for a script: text and/or tool calls (see `fake_call`)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [dict(call) for call in calls]
    return message


def fake_call(name: str, arguments: Mapping[str, Any] | str, id: str = "") -> dict[str, Any]:
    """One scripted tool call; a string `arguments` is sent verbatim (even if not JSON)."""
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return {"id": id, "type": "function", "function": {"name": name, "arguments": text}}


# ---------------------------------------------------------------------- a FAKE reviewer

_TAG = re.compile(r'<untrusted-data id="([0-9a-f]+)">')
_VERBATIM = re.compile(r"(?:reply|answer|respond) (?:exactly|with)[: ]+(.+?)(?:\\n|\n|\"|$)", re.I)


def naive_reviewer(
    default: str = "allow", *, obey: bool = True, reasoning: str = "looks fine"
) -> Callable[[dict[str, Any]], Reply]:
    """A FAKE reviewer model (no LLM) for the fake server: a script answering signoff's
    reviewer prompts in their format, `default` ("allow", "flag" or "escalate") unless
    the quoted data tells it otherwise. With `obey`, it does what injected text says, as a
    naive model might: "reply exactly: X" makes it answer X verbatim; "approve" or "safe"
    makes it allow. Tests use it to show what signoff's structure holds against."""

    def script(body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        system = str(messages[0].get("content", "")) if messages else ""
        data = str(messages[-1].get("content", "")) if messages else ""
        found = _TAG.search(data)
        tag = found.group(1) if found else "?"
        decision = default
        if obey:
            verbatim = _VERBATIM.search(data)
            if verbatim:
                return {"role": "assistant", "content": verbatim.group(1)}
            lowered = data.lower()
            if "approve" in lowered or "safe" in lowered:
                decision = "allow"
        if "exactly one line" in system:  # the fast filter
            word = "allow" if decision == "allow" else "flag"
            return {"role": "assistant", "content": f"{tag} {word}"}
        answer = {
            "review": tag,
            "decision": "allow" if decision == "allow" else "escalate",
            "reasoning": reasoning,
        }
        return {"role": "assistant", "content": "Thinking it over.\n" + json.dumps(answer)}

    return script


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m signoff.llm.fake_server SCRIPT.json`: serve a JSON list of assistant messages
    until Ctrl-C, to try a client (such as `signoff chat`) without any model."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m signoff.llm.fake_server", description=BANNER)
    parser.add_argument("script", help="JSON file: a list of assistant messages, served in order")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as f:
        replies = json.load(f)
    if not isinstance(replies, list) or not all(isinstance(r, dict) for r in replies):
        parser.error("the script must be a JSON list of assistant messages (objects)")
    try:
        server = FakeOpenAIServer(replies, port=args.port, banner=True).start()
    except OSError as exc:  # the port is taken, or not ours to bind
        sys.stderr.write(
            f"fake server: cannot listen on 127.0.0.1 port {args.port} ({exc.strerror or exc}): "
            "another server may hold it; choose another with --port N, or --port 0 for any "
            "free port\n"
        )
        return 2
    print("Ctrl-C to stop.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


__all__ = [
    "BANNER",
    "FAKE_MODEL",
    "FakeError",
    "FakeOpenAIServer",
    "fake_call",
    "main",
    "naive_reviewer",
    "scripted_reply",
]


if __name__ == "__main__":
    raise SystemExit(main())
