"""
The OpenAI Responses API for fakellm (POST /v1/responses): as strict as the
documented API and the official SDK's types, so that what deskhand sends is
proved, not assumed.

Refused with HTTP 400 and OpenAI's error body ({"error": {"message", "type":
"invalid_request_error", "param", "code"}}), before any turn is used:
  - unknown top-level fields; previous_response_id of a response not stored;
  - function tools nested under "function", without top-level name, or not
    strict:false while their schema has optional properties (Responses
    defaults to strict); a GA computer tool with display fields; the legacy
    computer_use_preview tool without its fields or without truncation:auto;
  - a computer_call_output / function_call_output for an unknown call_id; a
    computer_call or function_call without its output when later input
    follows; a computer_call sent without the reasoning item(s) that came
    before it; a reasoning item not followed by its item, or not byte for
    byte as it was sent;
  - a computer_call_output whose output is not a PNG data URL screenshot
    with only the SDK's fields; acknowledged checks that were never pending;
    pending checks left unacknowledged ("Computer tool has unacknowledged
    safety check ...").

A turn (besides fakellm's common keys: text, text_chunk, tool_calls, usage,
stream, faults...):
  reasoning      [{"summary": "...", "encrypted": "..."}] items first
  computer_call  {"call_id", "actions": [...], "checks": [{id, code, message}],
                  "legacy": true (one "action")} or a list of them
  phase          the assistant message's phase ("commentary", "final_answer")
  status         "incomplete" (with incomplete_reason) instead of completed
  fail           {"code", "message"}: the stream ends in response.failed
"""
import json

ALLOWED_TOP = {
    "model", "input", "instructions", "tools", "tool_choice", "stream", "store", "include",
    "max_output_tokens", "previous_response_id", "truncation", "reasoning",
    "parallel_tool_calls", "temperature", "top_p", "metadata", "text", "user",
    "service_tier", "stream_options", "prompt_cache_key", "safety_identifier", "background",
    "conversation", "max_tool_calls", "top_logprobs", "prompt",
}
SCREENSHOT_KEYS = {"type", "image_url", "file_id"}
OUTPUT_KEYS = {"type", "call_id", "output", "acknowledged_safety_checks", "id", "status"}


class State:
    """What the fake has emitted, to hold deskhand to it."""

    def __init__(self):
        self.n = 0
        self.raw = {}        # item id -> the exact bytes sent
        self.reasoning_of = {}  # computer_call id -> [reasoning ids before it]
        self.checks = {}     # call_id -> [pending checks]
        self.stored = {}     # response id -> the items it continues from

    def next_id(self, prefix):
        self.n += 1
        return "%s_%04d" % (prefix, self.n)


def bad(message, param=None, code=None):
    return {"error": {"message": message, "type": "invalid_request_error",
                      "param": param, "code": code}}


def dump_item(item):
    # Spaced unlike a compact printer and with \\u escapes: an item rebuilt
    # instead of echoed cannot match these bytes.
    return json.dumps(item, ensure_ascii=True, separators=(", ", ": ")).encode()


# ---- the request -----------------------------------------------------------

def tools_problem(body):
    legacy = str(body.get("model", "")).startswith("computer-use-preview")
    for i, t in enumerate(body.get("tools") or []):
        where = "tools[%d]" % i
        typ = t.get("type")
        if typ == "function":
            if "function" in t:
                return bad("Unknown parameter: '%s.function'." % where, where + ".function")
            if not isinstance(t.get("name"), str):
                return bad("Missing required parameter: '%s.name'." % where, where + ".name")
            params = t.get("parameters") or {}
            props = set((params.get("properties") or {}).keys())
            missing = sorted(props - set(params.get("required") or []))
            if t.get("strict", True) is not False and missing:
                return bad("Invalid schema for function '%s': In context=(), 'required' is "
                           "required to be supplied and to be an array including every key "
                           "in properties. Missing '%s'." % (t["name"], missing[0]),
                           where + ".parameters", "invalid_function_parameters")
        elif typ == "computer":
            extra = sorted(set(t) - {"type"})
            if extra:
                return bad("Unknown parameter: '%s.%s'." % (where, extra[0]), where + "." + extra[0])
            if legacy:
                return bad("The computer tool is not supported with model %s; use "
                           "computer_use_preview." % body.get("model"), where)
        elif typ == "computer_use_preview":
            for k in ("display_width", "display_height", "environment"):
                if k not in t:
                    return bad("Missing required parameter: '%s.%s'." % (where, k), where + "." + k)
            if body.get("truncation") != "auto":
                return bad("The computer_use_preview tool requires truncation to be 'auto'.",
                           "truncation")
        else:
            return bad("Invalid value: '%s'." % typ, where + ".type")
    return None


def output_problem(item, i, pending):
    out = item.get("output")
    if not isinstance(out, dict) or out.get("type") != "computer_screenshot":
        return bad("Invalid 'input[%d].output': expected a computer_screenshot." % i)
    extra = sorted(set(out) - SCREENSHOT_KEYS)
    if extra:
        return bad("Unknown parameter: 'input[%d].output.%s'." % (i, extra[0]))
    if not str(out.get("image_url", "")).startswith("data:image/png;base64,"):
        return bad("Invalid 'input[%d].output.image_url'." % i)
    extra = sorted(set(item) - OUTPUT_KEYS)
    if extra:
        return bad("Unknown parameter: 'input[%d].%s'." % (i, extra[0]))
    acked = {c.get("id") for c in item.get("acknowledged_safety_checks") or []}
    want = {c["id"] for c in pending}
    if acked - want:
        return bad("Acknowledged safety check %s was never pending for call %s."
                   % (sorted(acked - want)[0], item.get("call_id")))
    if want - acked:
        return bad("Computer tool has unacknowledged safety check(s): %s"
                   % ", ".join(sorted(want - acked)))
    return None


def pairing_problem(items, state):
    calls = {}   # call_id -> (kind, position)
    answered = set()
    for i, it in enumerate(items):
        typ = it.get("type")
        if typ in ("computer_call", "function_call"):
            calls[it.get("call_id")] = (typ, i)
        elif typ in ("computer_call_output", "function_call_output"):
            kind = typ[:-len("_output")]
            cid = it.get("call_id")
            if calls.get(cid, (None,))[0] != kind:
                return bad("No tool call found for %s output with call_id %s."
                           % (kind.replace("_", " "), cid), "input")
            answered.add(cid)
            if typ == "computer_call_output":
                p = output_problem(it, i, state.checks.get(cid, []))
                if p:
                    return p
    for cid, (kind, i) in calls.items():
        if cid not in answered and i < len(items) - 1:
            return bad("No tool output found for %s %s." % (kind.replace("_", " "), cid),
                       "input")
    return None


def reasoning_problem(items, raw_body, state, whole):
    for i, it in enumerate(items):
        typ = it.get("type")
        if typ == "reasoning":
            rid = it.get("id")
            if rid in state.raw and state.raw[rid] not in raw_body:
                return bad("Item '%s' of type 'reasoning' was modified: its "
                           "encrypted_content does not verify." % rid, "input")
            nxt = items[i + 1] if i + 1 < len(items) else None
            if nxt is None or nxt.get("type") not in ("reasoning", "message", "computer_call",
                                                       "function_call") \
                    or nxt.get("role") == "user":
                return bad("Item '%s' of type 'reasoning' was provided without its required "
                           "following item." % rid, "input")
        if typ == "computer_call" and whole:
            needed = state.reasoning_of.get(it.get("id"), [])
            before = []
            k = i - 1
            while k >= 0 and items[k].get("type") == "reasoning":
                before.append(items[k].get("id"))
                k -= 1
            for r in needed:
                if r not in before:
                    return bad("Item '%s' of type 'computer_call' was provided without its "
                               "required 'reasoning' item: '%s'." % (it.get("id"), r), "input")
    return None


def problem(body, raw_body, state):
    """The 400 body for a request the real API refuses, or None."""
    if not isinstance(body, dict):
        return bad("We could not parse the JSON body of your request.")
    extra = sorted(set(body) - ALLOWED_TOP)
    if extra:
        return bad("Unknown parameter: '%s'." % extra[0], extra[0], "unknown_parameter")
    if not isinstance(body.get("input"), list):
        return bad("Missing required parameter: 'input'.", "input")
    p = tools_problem(body)
    if p:
        return p
    prefix = []
    prev = body.get("previous_response_id")
    if prev is not None:
        if prev not in state.stored:
            return bad("Previous response with id '%s' not found." % prev,
                       "previous_response_id", "previous_response_not_found")
        prefix = state.stored[prev]
    items = prefix + body["input"]
    return pairing_problem(items, state) or reasoning_problem(body["input"], raw_body, state,
                                                              prev is None)


# ---- the answer ------------------------------------------------------------

def build_items(turn, state):
    """The output items of a turn, each as (dict, exact bytes)."""
    out = []
    reasoning_ids = []
    for r in turn.get("reasoning") or []:
        rid = state.next_id("rs")
        it = {"type": "reasoning", "id": rid,
              "summary": [{"type": "summary_text", "text": r.get("summary", "")}]
              if r.get("summary") else [],
              "encrypted_content": r.get("encrypted", "gAAAAB-enc-" + rid + "-\u00e9")}
        reasoning_ids.append(rid)
        out.append(it)
    if turn.get("text"):
        it = {"type": "message", "id": state.next_id("msg"), "status": "completed",
              "role": "assistant",
              "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]}
        if turn.get("phase"):
            it["phase"] = turn["phase"]
        out.append(it)
    cc = turn.get("computer_call")
    for c in ([cc] if isinstance(cc, dict) else cc or []):
        cid = c.get("call_id") or state.next_id("call")
        it = {"type": "computer_call", "id": state.next_id("cu"), "call_id": cid,
              "status": "completed", "pending_safety_checks": c.get("checks", [])}
        if c.get("legacy"):
            it["action"] = c["actions"][0]
        else:
            it["actions"] = c.get("actions", [])
        state.checks[cid] = c.get("checks", [])
        state.reasoning_of[it["id"]] = list(reasoning_ids)
        out.append(it)
    for k, call in enumerate(turn.get("tool_calls") or []):
        a = call.get("arguments", {})
        out.append({"type": "function_call", "id": state.next_id("fc"),
                    "call_id": call.get("id") or "call_%d" % (k + 1), "name": call["name"],
                    "arguments": a if isinstance(a, str) else json.dumps(a), "status": "completed"})
    items = []
    for it in out:
        raw = dump_item(it)
        state.raw[it["id"]] = raw
        items.append((it, raw))
    return items


def response_obj(turn, model, items, rid, status="completed"):
    u = turn.get("usage", {})
    r = {"id": rid, "object": "response", "model": model, "status": status,
         "output": [it for it, _ in items],
         "usage": {"input_tokens": u.get("input", 11), "output_tokens": u.get("output", 7)}}
    if status == "incomplete":
        r["incomplete_details"] = {"reason": turn.get("incomplete_reason", "max_output_tokens")}
    if turn.get("fail"):
        r["status"] = "failed"
        r["error"] = turn["fail"]
    return r


def remember(state, body, items, rid):
    if body.get("store"):
        prev = state.stored.get(body.get("previous_response_id"), [])
        state.stored[rid] = prev + body.get("input", []) + [it for it, _ in items]


def whole(turn, model, body, state):
    items = build_items(turn, state)
    rid = state.next_id("resp")
    remember(state, body, items, rid)
    # The output array is spliced from the exact item bytes.
    resp = response_obj(turn, model, [], rid, turn.get("status", "completed"))
    text = json.dumps(resp, separators=(",", ":")).encode()
    arr = b"[" + b",".join(raw for _, raw in items) + b"]"
    return text.replace(b'"output":[]', b'"output":' + arr, 1)


def ev(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def events(turn, model, body, state, text_pieces):
    """(event name, data bytes) of a streamed answer."""
    items = build_items(turn, state)
    rid = state.next_id("resp")
    remember(state, body, items, rid)
    seq = [0]

    def e(obj):
        obj["sequence_number"] = seq[0]
        seq[0] += 1
        return obj["type"], ev(obj)

    yield e({"type": "response.created", "response": {"id": rid, "status": "in_progress",
                                                      "output": []}})
    for idx, (it, raw) in enumerate(items):
        partial = dict(it)
        if it["type"] == "reasoning":
            partial.pop("encrypted_content", None)
            partial["summary"] = []
        if it["type"] == "message":
            partial["content"] = []
        yield e({"type": "response.output_item.added", "output_index": idx, "item": partial})
        if it["type"] == "message":
            for piece in text_pieces(turn):
                name = "response.output_text.delta"
                d = b'{"type":"' + name.encode() + b'","item_id":' + ev(it["id"]) + \
                    b',"output_index":%d,"content_index":0,"delta":' % idx + \
                    json.dumps(piece.decode("utf-8", "replace")).encode() + b"}"
                yield name, d
        if it["type"] == "function_call":
            args = it["arguments"]
            for k in range(0, len(args), 7):
                yield e({"type": "response.function_call_arguments.delta", "item_id": it["id"],
                         "output_index": idx, "delta": args[k:k + 7]})
        name = "response.output_item.done"
        head = b'{"type":"response.output_item.done","output_index":%d,"item":' % idx
        yield name, head + raw + b"}"
    status = turn.get("status", "completed")
    resp = response_obj(turn, model, items, rid, status)
    if turn.get("fail"):
        yield e({"type": "response.failed", "response": resp})
    else:
        yield e({"type": "response.%s" % ("incomplete" if status == "incomplete" else "completed"),
                 "response": resp})
