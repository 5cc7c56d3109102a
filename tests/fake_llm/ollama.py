"""
ollama — Ollama's native POST /api/chat for fakellm, as strict as its
types (ollama/ollama api/types.go: ChatRequest, Message, ToolCall):

  - an unknown field in the request or a message is refused (400), as a
    Go decoder that disallows them would;
  - images are raw base64 strings: a "data:" URL is refused with Go's
    base64 error;
  - tool call arguments are JSON objects: a string is refused with Go's
    unmarshal error;
  - a tool result ({"role": "tool"}) must name its tool (tool_name);
  - think is a boolean or "low" | "medium" | "high".

Answers: streamed as newline-delimited JSON (application/x-ndjson), one
object per line, the last with "done": true and the counts — split on the
wire wherever the turn's net_chunk says; or whole (application/json).
Errors are {"error": "..."}: the body of a failed request, or a line in a
stream (fault {"stream_error": "..."}). The stream breaks as fakellm's do
(faults cut_after_events, hang_after_events, garbage_after_events: an event
is a line); big_body is a long stream of text lines, cut (with "stream":
false, a whole answer's start, cut).

A turn (as fakellm's): text, thinking, tool_calls [{"name", "arguments"}],
stop (done_reason), usage, stream, net_chunk, text_chunk, faults.
"""
import base64
import binascii
import json

REQUEST_FIELDS = {"model", "messages", "tools", "stream", "format", "options", "keep_alive",
                  "think", "truncate", "shift"}
MESSAGE_FIELDS = {"role", "content", "thinking", "images", "tool_calls", "tool_name",
                  "tool_call_id"}
ROLES = {"system", "user", "assistant", "tool"}


def _err(msg):
    return {"error": msg}


def _message_problem(i, m):
    if not isinstance(m, dict):
        return "json: cannot unmarshal into Go value of type api.Message"
    extra = set(m) - MESSAGE_FIELDS
    if extra:
        return 'json: unknown field "%s"' % sorted(extra)[0]
    if m.get("role") not in ROLES:
        return "messages[%d]: invalid role %r" % (i, m.get("role"))
    if not isinstance(m.get("content", ""), str):
        return ("json: cannot unmarshal array into Go struct field Message.messages.content "
                "of type string")
    for img in m.get("images") or []:
        if not isinstance(img, str):
            return "json: cannot unmarshal into Go struct field Message.messages.images"
        try:
            base64.b64decode(img, validate=True)
        except (binascii.Error, ValueError):
            pos = img.find(":") if img.startswith("data:") else 0
            return "illegal base64 data at input byte %d" % max(pos, 0)
    for tc in m.get("tool_calls") or []:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return "messages[%d]: a tool call needs function.name" % i
        if set(tc) - {"id", "function"} or set(fn) - {"index", "name", "arguments"}:
            return 'json: unknown field in tool_calls of messages[%d]' % i
        if not isinstance(fn.get("arguments", {}), dict):
            return ("json: cannot unmarshal string into Go struct field "
                    "ToolCallFunction.messages.tool_calls.function.arguments of type "
                    "api.ToolCallFunctionArguments")
    if m.get("role") == "tool" and not m.get("tool_name"):
        return "messages[%d]: a tool result must name its tool (tool_name)" % i
    return None


def problem(body):
    """None, or (status, error body) for what Ollama refuses."""
    if not isinstance(body, dict):
        return 400, _err("invalid JSON")
    extra = set(body) - REQUEST_FIELDS
    if extra:
        return 400, _err('json: unknown field "%s"' % sorted(extra)[0])
    if not body.get("model"):
        return 400, _err("model is required")
    think = body.get("think")
    if think is not None and not isinstance(think, bool) and think not in ("low", "medium",
                                                                           "high"):
        return 400, _err("invalid think value: %r" % (think,))
    msgs = body.get("messages")
    if not isinstance(msgs, list):
        return 400, _err("messages must be a list")
    for i, m in enumerate(msgs):
        p = _message_problem(i, m)
        if p:
            return 400, _err(p)
    for t in body.get("tools") or []:
        if t.get("type") != "function" or not isinstance(t.get("function"), dict):
            return 400, _err("a tool is {\"type\": \"function\", \"function\": {...}}")
    return None


def _base(model, done):
    return {"model": model, "created_at": "2026-01-01T00:00:00Z", "done": done}


def lines(turn, model, text_pieces):
    """The stream's objects, in order."""
    if turn.get("thinking"):
        yield dict(_base(model, False), message={"role": "assistant", "content": "",
                                                 "thinking": turn["thinking"]})
    for piece in text_pieces(turn):
        yield dict(_base(model, False), message={"role": "assistant",
                                                 "content": piece.decode("utf-8", "replace")})
    calls = turn.get("tool_calls", [])
    if calls:
        yield dict(_base(model, False), message={
            "role": "assistant", "content": "",
            "tool_calls": [{"function": {"index": k, "name": c["name"],
                                         "arguments": c.get("arguments", {})}}
                           for k, c in enumerate(calls)]})
    u = turn.get("usage", {"input": 11, "output": 7})
    yield dict(_base(model, True), message={"role": "assistant", "content": ""},
               done_reason=turn.get("stop", "stop"), prompt_eval_count=u["input"],
               eval_count=u["output"])


def whole(turn, model):
    msg = {"role": "assistant", "content": turn.get("text", "")}
    if turn.get("thinking"):
        msg["thinking"] = turn["thinking"]
    if turn.get("tool_calls"):
        msg["tool_calls"] = [{"function": {"index": k, "name": c["name"],
                                           "arguments": c.get("arguments", {})}}
                             for k, c in enumerate(turn["tool_calls"])]
    u = turn.get("usage", {"input": 11, "output": 7})
    return dict(_base(model, True), message=msg, done_reason=turn.get("stop", "stop"),
                prompt_eval_count=u["input"], eval_count=u["output"])


def _start(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/x-ndjson")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()


def serve(handler, fake, body, text_pieces, split_at):
    """Answers one /api/chat request on handler (fakellm's _Handler)."""
    p = problem(body)
    if p:
        return handler._send_json(p[0], p[1])
    turn, fault = fake._next()
    if callable(turn):
        turn = turn(body, "ollama")
    if turn is None:
        return handler._send_json(500, _err("fakellm: no turn left"))
    model = body.get("model", "fake")
    if fault and "status" in fault:
        return handler._send_json(fault["status"], fault.get("body", _err("fakellm status")))
    stream = turn.get("stream")
    if stream is None:
        stream = body.get("stream", True) is not False   # Ollama streams by default
    if fault and "big_body" in fault and not stream:
        return handler._big_body(fault["big_body"], fault["cut_at"], "ollama")
    if fault and "big_body" in fault:
        def text_line(text):
            return json.dumps(dict(_base(model, False), message={
                "role": "assistant", "content": text})).encode() + b"\n"
        return handler._big_stream(fault["cut_at"], text_line, lambda: _start(handler))
    if not stream and not fault:
        return handler._send_json(200, whole(turn, model))
    brk = handler.stream_break(fault, lambda junk: junk + b"\n") if fault else None
    if fault and not brk and "stream_error" not in fault:
        raise ValueError("ollama fake: unknown fault %r" % fault)
    _start(handler)
    out = [json.dumps(o).encode() + b"\n" for o in lines(turn, model, text_pieces)]
    if fault and "stream_error" in fault:
        out = out[:1] + [json.dumps(_err(fault["stream_error"])).encode() + b"\n"]
    n = min(brk[0], len(out)) if brk else len(out)
    # Written together, so that net_chunk splits fall across lines too.
    handler._chunk(b"".join(out[:n]), turn.get("net_chunk"))
    if brk:
        return brk[1](out[n] if n < len(out) else b"")
    handler._end_stream()
    if not fault:
        fake.answered.append(0)
