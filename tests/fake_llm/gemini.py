"""
gemini — Google's generateContent for fakellm, as strict as the documented
contract (ai.google.dev computer use, Gemini 3 thought signatures):

  POST /v1beta/models/{model}:generateContent
  POST /v1beta/models/{model}:streamGenerateContent?alt=sse   (CRLF-framed SSE)

Refused, with Google's error body {"error": {"code", "message", "status"}},
before any turn is used up:
  - the key in the URL (?key=), or no x-goog-api-key header (403);
  - a role other than "user" or "model" ("function" included);
  - a model content that is not one this server sent, byte for byte, when
    it carries a thought signature: a signature dropped or altered, or a
    content re-serialized (a functionCall without a signature, other than
    Google's documented "skip_thought_signature_validator" for history the
    model did not write, is refused too);
  - a content with function calls not followed by a user content with one
    functionResponse per call, in order, names (and ids) matching;
  - a call whose args held safety_decision require_confirmation answered
    without safety_acknowledgement (true or "true") in its response;
  - a functionResponse image that is not a PNG;
  - computer_use with a display size, an unknown environment, or
    ENVIRONMENT_DESKTOP for gemini-2.5-computer-use-preview-10-2025.

A turn (every key optional):
  text        the model's text (split into `text_chunks` pieces when streamed)
  thought     a thought summary part (thought: true)
  calls       [{"name": ..., "args": {...}, "id": optional}] function calls
  parts       the parts verbatim instead (then no signature is added)
  signature   false: no thought signature on the first call (a broken model)
  finish      finishReason (default STOP)
  stream      true/false forces the answer's form (default: as requested)
  net_chunk   write the stream this many bytes at a time (awkward splits)
  unchecked   send coordinates outside 0..999 (the fake refuses to otherwise)
  faults      as in fakellm, in Google's shapes: {"status": N, "body"?},
              {"garbage": text}, {"garbage_stream": text},
              {"cut_after_events": N, "cut_into"?: K, "cut_before"?: text},
              {"hang_after_events": N},
              {"garbage_after_events": N, "text"?}, {"big_body": BYTES, "cut_at": K}
              (streamed: a long stream of text chunks, cut after K bytes),
              {"stream_error": {"code", "message", "status"}}
A turn may also be a function(body, "gemini") -> turn: a model that answers
from what it was sent (pngfind.decode the last image, find the target).
"""
import base64
import hashlib
import json
import re

import pngfind

SKIP = "skip_thought_signature_validator"
SECRET = b"fakellm-gemini"
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
          404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
COORD_KEYS = ("x", "y", "start_x", "start_y", "end_x", "end_y", "destination_x",
              "destination_y")


def error(code, message, status=None):
    return {"error": {"code": code, "message": message,
                      "status": status or STATUS.get(code, "UNKNOWN")}}


class State:
    def __init__(self):
        self.issued = []      # [(content parsed, its bytes as deskhand must send them)]
        self.signatures = set()
        self.n = 0


def _canon(part):
    return json.dumps({k: v for k, v in part.items() if k != "thoughtSignature"},
                      sort_keys=True, ensure_ascii=False).encode()


def _sig(state, part):
    """A signature bound to its part, so that any fake (a resumed conversation
    meets a new server) can tell it was issued for exactly this part."""
    state.n += 1
    tag = hashlib.sha256(SECRET + str(state.n).encode() + b"|" + _canon(part)).hexdigest()
    s = base64.b64encode(("fs1|%d|%s" % (state.n, tag)).encode()).decode()
    state.signatures.add(s)
    return s


def _sig_valid(sig, part):
    try:
        _, n, tag = base64.b64decode(sig, validate=True).decode().split("|")
    except (ValueError, UnicodeDecodeError):
        return False
    return tag == hashlib.sha256(SECRET + n.encode() + b"|" + _canon(part)).hexdigest()


def make_parts(turn, state):
    """The parts of a turn's content (signatures added as Gemini 3 does)."""
    if "parts" in turn:
        return [dict(p) for p in turn["parts"]]
    parts = []
    if turn.get("thought"):
        parts.append({"text": turn["thought"], "thought": True})
    if turn.get("text"):
        parts.append({"text": turn["text"]})
    for k, c in enumerate(turn.get("calls", [])):
        if not turn.get("unchecked"):
            for key in COORD_KEYS:
                v = c.get("args", {}).get(key)
                if isinstance(v, int) and not 0 <= v <= 999:
                    raise ValueError("gemini fake: %s=%d is outside 0..999 (unchecked: true "
                                     "to send it anyway)" % (key, v))
        fc = {"name": c["name"], "args": c.get("args", {})}
        if c.get("id"):
            fc["id"] = c["id"]
        p = {"functionCall": fc}
        if k == 0 and turn.get("signature", True):
            p["thoughtSignature"] = _sig(state, p)
        parts.append(p)
    if not turn.get("calls") and parts and turn.get("signature", True):
        parts[-1]["thoughtSignature"] = _sig(state, parts[-1])
    return parts


def _dump(o):
    # Not deskhand's spelling (spaces after separators): a re-serialized
    # content would not match byte for byte.
    return json.dumps(o, ensure_ascii=False, separators=(", ", ": "))


def whole(turn, state, model):
    """The body text of a whole answer, pretty-printed as Google does."""
    parts = make_parts(turn, state)
    content = {"parts": parts, "role": "model"}
    ctext = json.dumps(content, ensure_ascii=False, indent=1)
    state.issued.append((content, ctext))
    body = ('{\n  "candidates": [\n    {\n      "content": %s,\n      "finishReason": %s,\n'
            '      "index": 0\n    }\n  ],\n  "usageMetadata": {"promptTokenCount": 11, '
            '"candidatesTokenCount": 7, "thoughtsTokenCount": 3},\n  "modelVersion": %s\n}\n'
            % (ctext, json.dumps(turn.get("finish", "STOP")), json.dumps(model)))
    return body.encode()


def events(turn, state, model):
    """The chunks of a streamed answer (data lines' JSON texts)."""
    parts = make_parts(turn, state)
    pieces = []
    for p in parts:
        n = turn.get("text_chunks", 1)
        if "text" in p and n > 1 and not p.get("thought"):
            t, step = p["text"], max(1, len(p["text"]) // n)
            chunks = [t[i:i + step] for i in range(0, len(t), step)]
            for k, c in enumerate(chunks):
                q = {"text": c}
                if k == len(chunks) - 1 and "thoughtSignature" in p:
                    q["thoughtSignature"] = _sig(state, q)
                pieces.append(q)
        else:
            pieces.append(p)
    texts = [_dump(p) for p in pieces]
    content = {"role": "model", "parts": pieces}
    state.issued.append((content, '{"role":"model","parts":[' + ",".join(texts) + "]}"))
    out = []
    for i, t in enumerate(texts):
        last = i == len(texts) - 1
        chunk = '{"candidates": [{"content": {"parts": [%s], "role": "model"}, "index": 0%s}]%s, ' \
                '"modelVersion": %s}' % (
                    t, (', "finishReason": %s' % json.dumps(turn.get("finish", "STOP"))) if last
                    else "", ', "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7}'
                    if last else "", json.dumps(model))
        out.append(chunk.encode())
    if not texts:
        out.append(('{"candidates": [{"content": {"role": "model"}, "finishReason": %s, '
                    '"index": 0}]}' % json.dumps(turn.get("finish", "STOP"))).encode())
    return out


# ---- the request's checks ------------------------------------------------------

def _model_content_problem(c, raw, state):
    for content, text in state.issued:
        if content == c:
            if text.encode() not in raw:
                return "a model content was sent back changed (not byte for byte as received)"
            return None
    for p in c.get("parts", []):
        sig = p.get("thoughtSignature")
        if sig is not None and sig != SKIP and not _sig_valid(sig, p):
            return "Corrupted thought signature."
    calls = [p for p in c.get("parts", []) if "functionCall" in p]
    if calls and calls[0].get("thoughtSignature") is None:
        return ("Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly.")
    return None


def _responses_problem(c, nxt):
    calls = [p["functionCall"] for p in c.get("parts", []) if "functionCall" in p]
    if not calls:
        return None
    frs = [p["functionResponse"] for p in (nxt or {}).get("parts", []) if "functionResponse" in p]
    if nxt is None or nxt.get("role") != "user" or len(frs) != len(calls):
        return ("Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn.")
    for fc, fr in zip(calls, frs):
        if fr.get("name") != fc.get("name") or fr.get("id") != fc.get("id"):
            return "functionResponse %r does not answer functionCall %r" % (
                fr.get("name"), fc.get("name"))
        sd = (fc.get("args") or {}).get("safety_decision") or {}
        ack = (fr.get("response") or {}).get("safety_acknowledgement")
        if sd.get("decision") == "require_confirmation" and ack not in (True, "true"):
            return ("The safety decision of %s requires confirmation and must be acknowledged "
                    "(safety_acknowledgement)" % fc.get("name"))
        for part in fr.get("parts", []) or []:
            d = part.get("inlineData") or {}
            try:
                pngfind.decode(base64.b64decode(d.get("data", "")))
            except (ValueError, TypeError):
                return "functionResponse.parts holds an image that is not a PNG"
            if d.get("mimeType") != "image/png":
                return "functionResponse.parts: mimeType must be image/png"
    return None


def _tools_problem(body, model):
    for t in body.get("tools", []) or []:
        cu = t.get("computer_use") or t.get("computerUse")
        if cu is None:
            for fd in t.get("functionDeclarations", t.get("function_declarations", [])) or []:
                if not fd.get("name"):
                    return "a function declaration without a name"
            continue
        if set(cu) - {"environment", "excluded_predefined_functions",
                      "excludedPredefinedFunctions", "enable_prompt_injection_detection"}:
            return "Unknown name in computer_use: %s" % sorted(set(cu))
        env = cu.get("environment")
        if env not in ("ENVIRONMENT_BROWSER", "ENVIRONMENT_DESKTOP", "ENVIRONMENT_MOBILE"):
            return "computer_use.environment: invalid value %r" % env
        if env != "ENVIRONMENT_BROWSER" and model.startswith("gemini-2.5-computer-use"):
            return "%s supports ENVIRONMENT_BROWSER only" % model
    return None


def problem(path, query, headers, body, raw, state):
    """(status, error body) for a request Google would refuse, else None."""
    if re.search(r"(^|&)key=", query or ""):
        return 400, error(400, "fake: the API key must travel in x-goog-api-key, not the URL")
    if not headers.get("x-goog-api-key"):
        return 403, error(403, "Method doesn't allow unregistered callers (callers without "
                               "established identity). Please use API Key or other form of "
                               "API consumer identity to call this API.")
    if "_raw" in body:
        return 400, error(400, "Invalid JSON payload received.")
    model = path.split("/models/", 1)[1].split(":", 1)[0]
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return 400, error(400, "* GenerateContentRequest.contents: contents is not specified")
    for i, c in enumerate(contents):
        if c.get("role") not in ("user", "model"):
            return 400, error(400, "Please use a valid role: user, model. (got %r)" % c.get("role"))
        if not c.get("parts"):
            return 400, error(400, "contents[%d].parts must not be empty" % i)
        if c["role"] == "model":
            p = _model_content_problem(c, raw, state) or \
                _responses_problem(c, contents[i + 1] if i + 1 < len(contents) else None)
            if p:
                return 400, error(400, p)
    p = _tools_problem(body, model)
    if p:
        return 400, error(400, p)
    return None


# ---- serving -------------------------------------------------------------------

def serve(h, fake, path, query, body, raw):
    """Answers one request on fakellm's handler h."""
    stream = ":streamGenerateContent" in path
    if stream and "alt=sse" not in (query or ""):
        return h._send_json(400, error(400, "fake: streaming answers only with alt=sse"))
    with fake.lock:
        p = problem(path, query, h.headers_lower(), body, raw, fake.gemini)
    if p:
        return h._send_json(p[0], p[1])
    turn, fault = fake._next()
    if callable(turn):
        turn = turn(body, "gemini")
    if turn is None:
        return h._send_json(500, error(500, "fakellm: no turn left"))
    model = path.split("/models/", 1)[1].split(":", 1)[0]
    if fault:
        return _fault(h, fake, fault, turn, stream, model)
    _answer(h, fake, turn, stream, model)
    fake.answered.append(__import__("time").monotonic())


def _text_chunk(text, model):
    """A stream's chunk holding one text part, as Google spells it."""
    return ('{"candidates": [{"content": {"parts": [%s], "role": "model"}, "index": 0}], '
            '"modelVersion": %s}' % (_dump({"text": text}), json.dumps(model))).encode()


def _frame(d):
    return b"data: " + d + b"\r\n\r\n"


def _answer(h, fake, turn, stream, model, brk=None):
    if turn.get("stream") is not None:
        stream = turn["stream"]
    with fake.lock:
        data = events(turn, fake.gemini, model) if stream else whole(turn, fake.gemini, model)
    if not stream:
        return h._send_json(200, data)
    h._start_stream()
    for i, d in enumerate(data):
        if brk and i >= brk[0]:
            return brk[1](_frame(d))
        h._chunk(_frame(d), turn.get("net_chunk"))
    if brk:
        return brk[1](b"")
    h._end_stream()


def _fault(h, fake, fault, turn, stream, model):
    if "status" in fault:
        code = fault["status"]
        extra = [("Retry-After", str(fault["retry_after"]))] if "retry_after" in fault else []
        return h._send_json(code, fault.get("body", error(code, "fake status %d" % code)), extra)
    if "garbage" in fault:
        return h._send_json(200, fault["garbage"])
    if "garbage_stream" in fault:
        h._start_stream()
        h._chunk(b"data: " + fault["garbage_stream"].encode() + b"\r\n\r\n")
        return h._end_stream()
    if "stream_error" in fault:
        h._start_stream()
        h._chunk(b"data: " + json.dumps({"error": fault["stream_error"]}).encode() + b"\r\n\r\n")
        return h._end_stream()
    brk = h.stream_break(fault, _frame)
    if brk:
        return _answer(h, fake, turn, stream, model, brk=brk)
    if "big_body" in fault and stream:
        return h._big_stream(fault["cut_at"], lambda text: _frame(_text_chunk(text, model)))
    if "big_body" in fault:
        return h._big_body(fault["big_body"], fault["cut_at"], "gemini")
    raise ValueError("gemini fake: unknown fault %r" % fault)
