#!/usr/bin/env python3
"""
fakellm — a scripted model server on loopback for deskhand's tests.

It speaks the wire formats, streamed (server-sent events) and whole:
  POST /v1/chat/completions, /chat/completions   OpenAI Chat Completions
  POST /v1/messages                              Anthropic Messages
  POST /v1/responses                             OpenAI Responses (responses.py)
  POST /api/chat                                 Ollama's native chat (ollama.py)
  POST /v1beta/models/M:generateContent,
       /v1beta/models/M:streamGenerateContent     Google Gemini (gemini.py)
Requests whose model names an open family (qwen*, ui-tars*) are also held
to what those models expect (open_models.py).
and answers each request with the next scripted turn. It records every
request (path, headers, parsed body, arrival time) so a test can assert what
the model was sent.

Use in a test (in-process, a thread):

    sys.path.insert(0, os.path.join(SRCDIR, "tests", "fake_llm"))
    from fakellm import FakeLLM
    with FakeLLM([{"text": "Hello"}]) as srv:
        base = srv.base_url("openai")        # http://127.0.0.1:PORT/v1
        ... run deskhand or provider_probe with --base base ...
        srv.requests[0]["body"]["messages"]

or as a process:  python3 fakellm.py SCRIPT.json [--log requests.jsonl]
which prints "port N" on its first line and serves until killed (and
"hanging" once a hang_after_events fault holds a stream open: what came
before it was sent). SCRIPT.json is {"turns": [...]} or a bare list of turns.

A turn (every key optional):
  text           the assistant's text
  tool_calls     [{"id": "call_1", "name": "execute",
                   "arguments": {...} or "raw JSON text, possibly broken"}]
  stop           stop/finish reason (default: tool use when there are calls)
  stream         true/false forces the answer's form (default: as requested;
                 false answers stream:true requests with whole JSON)
  text_splits    byte offsets where the text is split into deltas
  text_chunk     or: bytes per text delta (default: 16 characters)
  arg_splits     byte offsets (of the UTF-8 arguments) where they are split
  arg_chunk      or: bytes per argument fragment (default: 20 bytes)
                 Splits land wherever asked: inside \\" or \\u00e9 escapes,
                 inside a multi-byte character (the fragment's JSON string then
                 carries the raw partial bytes, as a careless server would).
  net_chunk      write the HTTP body this many bytes at a time (1: byte by byte)
  crlf           end SSE lines with CRLF
  comments       interleave ": keep-alive" comment lines and pings
  delay          seconds to sleep between events (a slow server)
  delay_headers  seconds to wait before answering at all
  blocks         Anthropic: the answer's blocks in order (thinking, redacted
                 thinking, text, toolset members): see anthropic_strict.py, which
                 also holds the 2026 rules every Anthropic request is checked by
  usage          {"input": N, "output": M, "cache_read": R, "cache_write": W}
                 (the cache counts are Anthropic's and optional)
  faults         a list; each request first consumes one fault, then the turn:
      {"status": 429, "retry_after": "1", "body": {...} or "text"}
      {"status": 500} / {"status": 401, "body": {"error": {"message": "..."}}}
      {"cut_after_events": N}  stream N events of this turn, then close the socket
                               (with "cut_into": K, after the first K bytes
                               of the next event, K < 0: all but its last -K;
                               with "cut_before": "text", just before this
                               text in it: a cut inside the event)
      {"hang_after_events": N} stream N events, then send nothing and keep the
                               connection open (until the server stops, or
                               "hang" seconds, default 300)
      {"garbage_after_events": N, "text": "..."}
                               stream N events, then one event (in the
                               vendor's framing) of this text (default
                               "{{{ not json"), then end the stream
                               (these three: a stream of fewer than N events
                               breaks at its end)
      {"big_body": BYTES, "cut_at": K}
                               200 application/json announcing BYTES of body
                               (a valid answer's start in the vendor's shape,
                               padded) and closing after K of them; Gemini
                               and Ollama, which never answer a streamed
                               request whole: their stream of 64 KB text
                               events instead, closed after K bytes
      {"close": true}          close the connection without any answer
      {"garbage": "text"}      200 with this body (content type application/json)
      {"garbage_stream": "x"}  200 text/event-stream whose data line is this text
      {"stream_error": {"type": "overloaded_error", "message": "Overloaded"}}
                               an error event in an otherwise empty stream
      any fault may carry "repeat": N (used for N requests) and "delay" (s)
When no turn is left the server answers 500 {"error": {"message": "fakellm: no turn left"}}.
"""
import json
import os
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import responses  # noqa: E402
import anthropic_strict  # noqa: E402  the 2026 Anthropic rules and answers
import ollama  # noqa: E402  Ollama's /api/chat
import open_models  # noqa: E402  Qwen and UI-TARS behind an OpenAI-compatible server
import gemini  # noqa: E402  Google's generateContent, its rules and answers


def jbytes(b):
    """A JSON string literal of raw bytes: escapes what JSON requires and
    passes every other byte through, even half of a UTF-8 character."""
    out = bytearray(b'"')
    for c in b:
        if c == 0x22:
            out += b'\\"'
        elif c == 0x5C:
            out += b'\\\\'
        elif c < 0x20:
            out += b'\\u%04x' % c
        else:
            out.append(c)
    out += b'"'
    return bytes(out)


def jdump(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()


def split_at(data, splits=None, chunk=None):
    """Cuts bytes at the given offsets, or into pieces of `chunk` bytes."""
    if splits:
        pts = sorted(set(p for p in splits if 0 < p < len(data)))
        out, prev = [], 0
        for p in pts:
            out.append(data[prev:p])
            prev = p
        out.append(data[prev:])
        return out
    if chunk:
        return [data[i:i + chunk] for i in range(0, len(data), chunk)] or [b""]
    return [data]


def text_pieces(turn):
    raw = turn.get("text", "").encode()
    if not raw:
        return []
    if turn.get("text_splits") or turn.get("text_chunk"):
        return split_at(raw, turn.get("text_splits"), turn.get("text_chunk"))
    s = turn.get("text", "")
    return [s[i:i + 16].encode() for i in range(0, len(s), 16)]


def call_args(call):
    a = call.get("arguments", {})
    return (a if isinstance(a, str) else json.dumps(a, ensure_ascii=False)).encode()


def arg_pieces(turn, call):
    raw = call_args(call)
    if turn.get("arg_splits") is not None:
        return split_at(raw, turn.get("arg_splits"))
    return split_at(raw, None, turn.get("arg_chunk", 20))


def call_id(call, k):
    return call.get("id") or "call_%d" % (k + 1)


# ---- what the real servers refuse ---------------------------------------------

ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def anthropic_tool_problem(messages):
    """Anthropic's rules: tool_use ids unique in the request and plain; each
    answered by a tool_result in the very next message, and each
    tool_result answering a tool_use of the message before it."""
    seen, prev_calls = set(), set()
    for i, m in enumerate(messages):
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        answers = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        for a in answers:
            if a not in prev_calls:
                return "messages.%d: unexpected tool_use_id %r in tool_result blocks" % (i, a)
        if prev_calls - set(answers):
            return ("messages.%d: tool_use ids were found without tool_result blocks "
                    "immediately after: %s" % (i, ", ".join(sorted(prev_calls - set(answers)))))
        for c in calls:
            if not isinstance(c, str) or not ANTHROPIC_ID.match(c):
                return "messages.%d: tool_use.id: String should match pattern " \
                       "'^[a-zA-Z0-9_-]+$'" % i
            if c in seen:
                return "messages.%d: tool_use ids must be unique: %r" % (i, c)
            seen.add(c)
        prev_calls = set(calls)
    return None


def openai_tool_problem(messages):
    """OpenAI's rule: an assistant message with tool_calls is followed by
    tool messages answering each tool_call_id, and a tool message answers
    a call of the assistant message before it."""
    pending, answered = set(), set()
    for i, m in enumerate(messages):
        if m.get("role") == "tool":
            tid = m.get("tool_call_id")
            if tid not in pending:
                return ("messages.[%d].role: messages with role 'tool' must be a response "
                        "to a preceeding message with 'tool_calls' (%r)" % (i, tid))
            answered.add(tid)
            continue
        if pending - answered:
            return ("An assistant message with 'tool_calls' must be followed by tool "
                    "messages responding to each 'tool_call_id'. The following "
                    "tool_call_ids did not have response messages: %s"
                    % ", ".join(sorted(pending - answered)))
        pending, answered = set(), set()
        for c in m.get("tool_calls") or []:
            pending.add(c.get("id"))
    return None


def request_problem(body, fmt):
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None
    if fmt == "anthropic":
        return anthropic_tool_problem(messages)
    return openai_tool_problem(messages)


# ---- OpenAI ------------------------------------------------------------------

def openai_events(turn, model):
    calls = turn.get("tool_calls", [])
    pre = b'{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,"model":' + \
        jdump(model) + b',"choices":[{"index":0,"delta":'
    post = b',"finish_reason":null}]}'
    yield pre + b'{"role":"assistant","content":""}' + post
    for piece in text_pieces(turn):
        yield pre + b'{"content":' + jbytes(piece) + b'}' + post
    for k, call in enumerate(calls):
        head = {"index": k, "id": call_id(call, k), "type": "function",
                "function": {"name": call["name"], "arguments": ""}}
        yield pre + b'{"tool_calls":[' + jdump(head) + b']}' + post
        for piece in arg_pieces(turn, call):
            yield pre + b'{"tool_calls":[{"index":%d,"function":{"arguments":' % k + \
                jbytes(piece) + b'}}]}' + post
    stop = turn.get("stop") or ("tool_calls" if calls else "stop")
    yield pre + b'{}' + b',"finish_reason":' + jdump(stop) + b'}]}'
    u = turn.get("usage", {"input": 11, "output": 7})
    yield jdump({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [],
                 "usage": {"prompt_tokens": u["input"], "completion_tokens": u["output"]}})
    yield b"[DONE]"


def openai_whole(turn, model):
    calls = turn.get("tool_calls", [])
    msg = {"role": "assistant", "content": turn.get("text") or None}
    if calls:
        msg["tool_calls"] = [{"id": call_id(c, k), "type": "function",
                              "function": {"name": c["name"],
                                           "arguments": call_args(c).decode()}}
                             for k, c in enumerate(calls)]
    u = turn.get("usage", {"input": 11, "output": 7})
    return jdump({"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                  "choices": [{"index": 0, "message": msg,
                               "finish_reason": turn.get("stop") or
                               ("tool_calls" if calls else "stop")}],
                  "usage": {"prompt_tokens": u["input"], "completion_tokens": u["output"]}})


# ---- Anthropic ---------------------------------------------------------------

def anthropic_usage(u, output):
    usage = {"input_tokens": u["input"], "output_tokens": output}
    if "cache_read" in u or "cache_write" in u:
        usage["cache_read_input_tokens"] = u.get("cache_read", 0)
        usage["cache_creation_input_tokens"] = u.get("cache_write", 0)
    return usage


def anthropic_events(turn, model):
    calls = turn.get("tool_calls", [])
    u = turn.get("usage", {"input": 11, "output": 7})
    yield "message_start", jdump({"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "usage": anthropic_usage(u, 1)}})
    idx = 0
    pieces = text_pieces(turn)
    if pieces:
        yield "content_block_start", jdump({"type": "content_block_start", "index": idx,
                                            "content_block": {"type": "text", "text": ""}})
        for piece in pieces:
            yield "content_block_delta", \
                b'{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":' \
                % idx + jbytes(piece) + b'}}'
        yield "content_block_stop", jdump({"type": "content_block_stop", "index": idx})
        idx += 1
    for k, call in enumerate(calls):
        yield "content_block_start", jdump({"type": "content_block_start", "index": idx,
                                            "content_block": {"type": "tool_use",
                                                              "id": call_id(call, k),
                                                              "name": call["name"],
                                                              "input": {}}})
        for piece in arg_pieces(turn, call):
            yield "content_block_delta", \
                b'{"type":"content_block_delta","index":%d,"delta":' % idx + \
                b'{"type":"input_json_delta","partial_json":' + jbytes(piece) + b'}}'
        yield "content_block_stop", jdump({"type": "content_block_stop", "index": idx})
        idx += 1
    stop = turn.get("stop") or ("tool_use" if calls else "end_turn")
    yield "message_delta", jdump({"type": "message_delta",
                                  "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": u["output"]}})
    yield "message_stop", jdump({"type": "message_stop"})


def anthropic_whole(turn, model):
    calls = turn.get("tool_calls", [])
    content = []
    if turn.get("text"):
        content.append({"type": "text", "text": turn["text"]})
    for k, c in enumerate(calls):
        a = c.get("arguments", {})
        content.append({"type": "tool_use", "id": call_id(c, k), "name": c["name"],
                        "input": json.loads(a) if isinstance(a, str) else a})
    u = turn.get("usage", {"input": 11, "output": 7})
    return jdump({"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                  "content": content,
                  "stop_reason": turn.get("stop") or ("tool_use" if calls else "end_turn"),
                  "usage": anthropic_usage(u, u["output"])})


# ---- the server ----------------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakellm/1"

    def log_message(self, *args):
        pass

    def handle(self):
        # A client that went away (killed, cancelled, cut) is not an error.
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            pass

    # -- helpers
    def _sleep(self, s):
        if s:
            self.server.fake.stopping.wait(s)

    def _send_json(self, status, body, extra=()):
        data = body if isinstance(body, bytes) else (
            jdump(body) if not isinstance(body, str) else body.encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data, net_chunk=None):
        for piece in split_at(data, None, net_chunk) if net_chunk else [data]:
            if not piece:
                continue
            self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            self.wfile.flush()
            if net_chunk:
                time.sleep(0.0005)

    def _end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def headers_lower(self):
        return {k.lower(): v for k, v in self.headers.items()}

    # -- the request
    def do_POST(self):
        fake = self.server.fake
        arrived = time.monotonic()   # headers read; the body not yet parsed
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?")[0]
        fmt = "anthropic" if path.endswith("/v1/messages") else \
            "openai" if path.endswith("/chat/completions") else \
            "responses" if path.endswith("/responses") else \
            "ollama" if path.endswith("/api/chat") else \
            "gemini" if "/v1beta/models/" in path else None
        fake._record({"time": arrived, "path": path, "url": self.path, "format": fmt,
                      "headers": {k.lower(): v for k, v in self.headers.items()},
                      "body": body})
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        if "/v1beta/models/" in path:
            query = self.path.split("?", 1)[1] if "?" in self.path else ""
            return gemini.serve(self, fake, path, query, body, raw)
        if fmt is None:
            return self._send_json(404, {"error": {"message": "fakellm: no such endpoint"}})
        if fmt == "ollama":
            return ollama.serve(self, fake, body, text_pieces, split_at)
        refused = open_models.problem(body) if fmt == "openai" and isinstance(body, dict) \
            else None
        if refused:
            return self._send_json(400, refused)
        if fmt == "responses":
            with fake.lock:
                p = responses.problem(body, raw, fake.responses)
            if p:
                return self._send_json(400, p)
        problem = request_problem(body, fmt) if fmt != "responses" else None
        if problem:
            # As the real servers do, before any turn is used up.
            return self._send_json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": problem}})
        refused = anthropic_strict.check(fake.anthropic, body, self.headers_lower()) \
            if fmt == "anthropic" else None
        if refused:
            return self._send_json(400, refused)
        turn, fault = fake._next()
        if callable(turn):
            turn = turn(body, fmt)
        try:
            if turn is None:
                return self._send_json(500, {"error": {"message": "fakellm: no turn left"}})
            self._sleep(turn.get("delay_headers") or (fault or {}).get("delay"))
            if fault:
                return self._fault(fault, turn, fmt, body)
            self._answer(turn, fmt, body)
            # When the answer was complete: the client's own time per step
            # runs from here to its next request.
            fake.answered.append(time.monotonic())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _fault(self, fault, turn, fmt, body):
        if "status" in fault:
            extra = []
            if "retry_after" in fault:
                extra.append(("Retry-After", str(fault["retry_after"])))
            b = fault.get("body", {"error": {"type": "api_error",
                                             "message": "fakellm status %d" % fault["status"]}})
            return self._send_json(fault["status"], b, extra)
        if fault.get("close"):
            return self._cut()
        if "garbage" in fault:
            return self._send_json(200, fault["garbage"])
        if "garbage_stream" in fault:
            self._start_stream()
            self._chunk(b"data: " + fault["garbage_stream"].encode() + b"\n\n")
            return self._end_stream()
        if "stream_error" in fault:
            self._start_stream()
            err = {"type": "error", "error": fault["stream_error"]}
            if fmt == "openai":
                self._chunk(b"data: " + jdump({"error": fault["stream_error"]}) + b"\n\n")
            elif fmt == "responses":
                self._chunk(b"event: error\ndata: " + jdump(dict(
                    fault["stream_error"], type="error")) + b"\n\n")
            else:
                self._chunk(b"event: error\ndata: " + jdump(err) + b"\n\n")
            return self._end_stream()
        brk = self.stream_break(fault, lambda junk: b"data: " + junk + b"\n\n")
        if brk:
            return self._answer(turn, fmt, body, brk=brk)
        if "big_body" in fault:
            return self._big_body(fault["big_body"], fault["cut_at"], fmt)
        raise ValueError("fakellm: unknown fault %r" % fault)

    def stream_break(self, fault, frame):
        """A fault that breaks a stream part-way (cut_after_events,
        hang_after_events, garbage_after_events) as (n, end): after n whole
        events, end(the next event's bytes as framed, b"" at the stream's
        end) does what the fault does instead of the rest. frame(text): one
        event in the vendor's framing. None for other faults."""
        if "cut_after_events" in fault:
            into, before = fault.get("cut_into"), fault.get("cut_before")

            def cut(nxt):
                if before is not None and before.encode() not in nxt:
                    raise ValueError("fakellm: %r is not in the event to cut" % before)
                k = nxt.index(before.encode()) if before is not None else into
                if k:
                    self._chunk(nxt[:k])
                self._cut()
            return fault["cut_after_events"], cut
        if "hang_after_events" in fault:
            def hang(nxt):
                self.server.fake.hanging.set()
                self._sleep(fault.get("hang", 300))
                self._cut()
            return fault["hang_after_events"], hang
        if "garbage_after_events" in fault:
            junk = fault.get("text", "{{{ not json").encode()

            def garbage(nxt):
                self._chunk(frame(junk))
                self._end_stream()
            return fault["garbage_after_events"], garbage
        return None

    BIG_STARTS = {
        "openai": b'{"id":"big","object":"chat.completion","choices":[{"index":0,'
                  b'"message":{"role":"assistant","content":"',
        "anthropic": b'{"id":"msg_big","type":"message","role":"assistant","content":'
                     b'[{"type":"text","text":"',
        "responses": b'{"id":"resp_big","object":"response","status":"completed","output":'
                     b'[{"type":"message","id":"msg_big","role":"assistant","content":'
                     b'[{"type":"output_text","text":"',
        "gemini": b'{\n  "candidates": [\n    {\n      "content": {\n        "parts": '
                  b'[\n          {\n            "text": "',
        "ollama": b'{"model":"fake","created_at":"2026-01-01T00:00:00Z",'
                  b'"message":{"role":"assistant","content":"',
    }

    def _big_body(self, size, cut_at, fmt):
        """A whole answer that would be `size` bytes, cut after `cut_at`:
        its start is a real answer's (the vendor's shape), the rest one long text."""
        start = self.BIG_STARTS[fmt]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        self.wfile.write(start)
        sent, block = len(start), b"x" * 65536
        while sent < cut_at:
            piece = block[:cut_at - sent]
            self.wfile.write(piece)
            sent += len(piece)
        self.wfile.flush()
        self._cut()

    def _big_stream(self, cut_at, event, start=None):
        """A long streamed answer, text events of 64 KB (event(text): its
        bytes as framed), closed after `cut_at` bytes; start(): the headers
        (default: an event stream's)."""
        (start or self._start_stream)()
        frame, sent = event("x" * 65536), 0
        while sent < cut_at:
            piece = frame[:cut_at - sent]
            self._chunk(piece)
            sent += len(piece)
        self._cut()

    def _answer(self, turn, fmt, body, brk=None):
        model = body.get("model", "fake") if isinstance(body, dict) else "fake"
        stream = turn.get("stream")
        if stream is None:
            stream = bool(isinstance(body, dict) and body.get("stream"))
        fake = self.server.fake
        if not stream and fmt == "responses":
            with fake.lock:
                data = responses.whole(turn, model, body, fake.responses)
            return self._send_json(200, data)
        strict = fmt == "anthropic" and "blocks" in turn
        if not stream:
            if strict:
                return self._send_json(200, anthropic_strict.whole(self.server.fake.anthropic,
                                                                   turn, body))
            whole = openai_whole if fmt == "openai" else anthropic_whole
            return self._send_json(200, whole(turn, model))
        eol = b"\r\n" if turn.get("crlf") else b"\n"
        net = turn.get("net_chunk")
        self._start_stream()
        if fmt == "responses":
            with fake.lock:
                events = list(responses.events(turn, model, body, fake.responses, text_pieces))
        else:
            events = (((None, d) for d in openai_events(turn, model)) if fmt == "openai"
                      else anthropic_strict.events(fake.anthropic, turn, body)
                      if strict else anthropic_events(turn, model))
        for i, (name, data) in enumerate(events):
            out = b""
            if turn.get("comments"):
                out += b": keep-alive" + eol
                if fmt == "anthropic" and i == 1:
                    out += b"event: ping" + eol + b'data: {"type":"ping"}' + eol + eol
            if name:
                out += b"event: " + name.encode() + eol
            out += b"data: " + data + eol + eol
            if brk and i >= brk[0]:
                return brk[1](out)
            self._chunk(out, net)
            self._sleep(turn.get("delay"))
            if self.server.fake.stopping.is_set():
                return self._cut()
        if brk:
            return brk[1](b"")
        self._end_stream()


class Held:
    """A turn held back until the test releases it (a callable turn): the
    test acts while deskhand waits for the model, whatever the machine's
    speed. Bounded: an unreleased turn is answered after `bound` seconds."""

    def __init__(self, turn, bound=60):
        self.turn = turn
        self.bound = bound
        self.go = threading.Event()

    def __call__(self, body, fmt):
        self.go.wait(self.bound)
        return self.turn

    def release(self):
        self.go.set()


class FakeLLM:
    """The scripted server, run in a thread of the test process."""

    def __init__(self, turns, log_path=None, host="127.0.0.1", keep_bodies=True):
        if isinstance(turns, dict):
            turns = turns.get("turns", [])
        # A turn may also be a function(body, fmt) -> turn, called when its
        # request arrives: a model that answers from what it was sent.
        self.turns = [t if callable(t) else dict(t) for t in turns]
        self.log_path = log_path
        # A long run's bodies (each the whole history) would fill the test's
        # memory: without keep_bodies a record holds all but the body, which
        # a callable turn still gets.
        self.keep_bodies = keep_bodies
        self.requests = []
        self.answered = []
        self.anthropic = anthropic_strict.State()
        self.stopping = threading.Event()
        self.hanging = threading.Event()      # a stream is held open (hang_after_events)
        self._lock = threading.Lock()
        self.lock = threading.Lock()          # the Responses state below
        self.responses = responses.State()
        self.gemini = gemini.State()
        self._turn = 0
        self._fault = 0
        self._repeat = 0
        self.httpd = ThreadingHTTPServer((host, 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.fake = self
        self.port = self.httpd.server_address[1]
        self._thread = None

    def base_url(self, fmt="openai"):
        """--base for a provider: OpenAI's includes /v1, Anthropic's and Ollama's do not."""
        root = "http://127.0.0.1:%d" % self.port
        return root + "/v1" if fmt in ("openai", "responses") else root

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def wait_requests(self, n, timeout=30.0):
        """Waits (bounded) until at least n requests arrived; returns the count."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        return len(self.requests)

    def turns_left(self):
        return len(self.turns) - self._turn

    def _record(self, entry):
        with self._lock:
            entry["n"] = len(self.requests)
            if not self.keep_bodies:
                entry = dict(entry, body=None)
            self.requests.append(entry)
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def _next(self):
        """The turn for this request and the fault to apply (None: the answer)."""
        with self._lock:
            if self._turn >= len(self.turns):
                return None, None
            turn = self.turns[self._turn]
            faults = [] if callable(turn) else turn.get("faults", [])
            if self._fault < len(faults):
                f = faults[self._fault]
                self._repeat += 1
                if self._repeat >= f.get("repeat", 1):
                    self._fault += 1
                    self._repeat = 0
                return turn, f
            self._turn += 1
            self._fault = 0
            return turn, None


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        script = json.load(f)
    log = argv[argv.index("--log") + 1] if "--log" in argv else None
    srv = FakeLLM(script, log_path=log)
    print("port %d" % srv.port, flush=True)

    def tell_hang():
        srv.hanging.wait()
        print("hanging", flush=True)
    threading.Thread(target=tell_hang, daemon=True).start()
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
