"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (no mocking of the client).

Script replies with ``server.script([...])`` (consumed in order) or answer every request
with ``server.handler = fn(request_json) -> Reply``. ``/v1/embeddings`` requests that nothing
scripted answer with :func:`embedding_reply` (a deterministic vector per input text, of the
requested ``dimensions`` or 8).
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted reply: JSON content (a string the model 'says'), or a raw status/body."""

    content: str | None = None
    status: int = 200
    body: dict | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> dict:
        if self.body is not None:
            return self.body
        return {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": self.content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


def fake_vector(text: str, dim: int = 8) -> list[float]:
    """A deterministic, not normalised vector for ``text`` (from its sha256)."""
    raw = hashlib.sha256(text.encode()).digest() * (1 + dim // 8)
    return [struct.unpack(">h", raw[2 * i:2 * i + 2])[0] / 1000.0 for i in range(dim)]


def embedding_reply(req: dict) -> Reply:
    """What an OpenAI-compatible server answers to ``POST /v1/embeddings``."""
    texts = req.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    dim = int(req.get("dimensions") or 8)
    return Reply(body={
        "object": "list", "model": req.get("model", "test"),
        "data": [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                 for i, t in enumerate(texts)],
        "usage": {"prompt_tokens": sum(len(t.split()) for t in texts),
                  "total_tokens": sum(len(t.split()) for t in texts)},
    })


class FakeLLMServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._script: list[Reply] = []
        self.handler: Callable[[dict], Reply] | None = None
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length", "0"))
                req = json.loads(self.rfile.read(n) or b"{}")
                with outer._lock:
                    outer.requests.append(req)
                    outer.paths.append(self.path)
                    outer.headers.append(dict(self.headers))
                    outer.active += 1
                    outer.max_active = max(outer.max_active, outer.active)
                    reply = outer._script.pop(0) if outer._script else None
                try:
                    if reply is None and self.path.rstrip("/").endswith("/embeddings"):
                        reply = embedding_reply(req)
                    if reply is None:
                        reply = outer.handler(req) if outer.handler else Reply(status=500, body={"error": "no reply scripted"})
                    if reply.delay:
                        time.sleep(reply.delay)
                    data = json.dumps(reply.payload()).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    try:
                        self.wfile.write(data)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                finally:
                    with outer._lock:
                        outer.active -= 1

        class S(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128

        self.httpd = S(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def script(self, replies: list[Reply]) -> None:
        with self._lock:
            self._script.extend(replies)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
