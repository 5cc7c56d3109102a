"""
anthropic_strict — the fake model server's Anthropic Messages rules for the
2026 computer-use API, as strict as the real one is documented to be, and
the answers that exercise them. Imported by fakellm.py (one State per
server); kept apart so the OpenAI side can change without touching it.

What a request is refused for (HTTP 400, Anthropic's error body, the real
error text where it is documented):
  - a computer tool type the model does not take ("'M' does not support
    tool types: T. Did you mean one of: ...");
  - a toolset entry with name / display fields / enable_zoom, a toolset next
    to another tool named "computer", a computer-use beta header with the
    toolset; a single computer tool without its beta header or display size;
  - a tool_result without the toolset_name of its toolset tool_use (or with
    a wrong or needless one); content other than text and images in it;
  - thinking or redacted_thinking blocks changed, moved or dropped from the
    assistant message they came in (compared with what this server sent,
    byte-exact on thinking, signature and data);
  - on models that bind thinking (the 5.5 generation), a thinking block
    whose history before it changed, unless thinking.block_binding asks to
    drop_block (which needs the thinking-binding-controls beta);
  - on the 5.5 models: tool_choice any/tool, thinking disabled or enabled
    with budget_tokens;
  - more than 4 cache_control breakpoints.

A turn with "blocks" is answered by this module, streamed or whole:
  {"blocks": [{"thinking": "text", "signature": "optional"},
              {"redacted": "opaque data"},
              {"text": "..."},
              {"tool": "left_click", "input": {...}, "id": "optional"},      toolset member
              {"name": "execute", "input": {...}}],                         plain tool
   "thinking_chunk": 5}   characters per thinking_delta (default 7)
"""
import base64
import copy
import json
import os

TOOLSET = "computer_toolset_20260801"
SINGLE = {"computer_20251124": "computer-use-2025-11-24",
          "computer_20250124": "computer-use-2025-01-24"}
BINDING_BETA = "thinking-binding-controls-2026-08-01"

FIVE_FIVE = ("claude-opus-5-5", "claude-sonnet-5-5")
BINDS = FIVE_FIVE + ("claude-fable-5-1", "claude-mythos-5-1")
# The tool types each family accepts (the models overview and the
# computer-use tool page); a model not listed takes every type.
ACCEPTS = [
    (BINDS, {TOOLSET}),
    (("claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-mythos-5",
      "claude-opus-4-8"), {TOOLSET, "computer_20251124"}),
    (("claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5", "claude-sonnet-4-6"),
     {"computer_20251124"}),
    (("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"), {"computer_20250124"}),
]
ALL_TYPES = [TOOLSET, "computer_20251124", "computer_20250124"]


def family(model):
    """The alias a model id belongs to (a dated id drops its date)."""
    parts = model.split("-")
    if len(parts) > 2 and len(parts[-1]) == 8 and parts[-1].isdigit():
        return "-".join(parts[:-1])
    return model


class State:
    """What this server sent (to compare what comes back) and a test's overrides."""

    def __init__(self):
        self.models = {}        # model -> set of tool types it accepts (a test's own model)
        self.thinking = {}      # signature or data -> {"block", "model", "prefix"}
        self.responses = {}     # tool_use id or signature -> the content sent
        self.dropped = 0        # thinking blocks dropped under drop_block
        self.seq = 0

    def accepts(self, model):
        if model in self.models:
            return set(self.models[model])
        fam = family(model)
        for names, types in ACCEPTS:
            if fam in names:
                return set(types)
        return set(ALL_TYPES)


def err(message):
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def canon(o):
    """Messages as compared: cache markers are not content."""
    if isinstance(o, dict):
        return {k: canon(v) for k, v in o.items() if k != "cache_control"}
    if isinstance(o, list):
        return [canon(v) for v in o]
    return o


def count_markers(o):
    if isinstance(o, dict):
        return (1 if "cache_control" in o else 0) + sum(count_markers(v) for v in o.values())
    if isinstance(o, list):
        return sum(count_markers(v) for v in o)
    return 0


def betas(headers):
    v = headers.get("anthropic-beta", "")
    return [b.strip() for b in v.split(",") if b.strip()]


# ---- the checks -----------------------------------------------------------------

def tools_problem(state, body, headers):
    model = body.get("model", "")
    tools = body.get("tools") or []
    types = [t.get("type") for t in tools if isinstance(t, dict)]
    used = [t for t in types if t in ALL_TYPES]
    bad = [t for t in used if t not in state.accepts(model)]
    if bad:
        ok = ", ".join(sorted(state.accepts(model)))
        return ("'%s' does not support tool types: %s. Did you mean one of: %s?"
                % (model, ", ".join(bad), ok))
    for i, t in enumerate(tools):
        ty = t.get("type")
        if ty == TOOLSET:
            extra = set(t) - {"type", "configs", "cache_control", "allowed_callers"}
            if extra:
                return "tools.%d.%s.%s: Extra inputs are not permitted" % (i, TOOLSET,
                                                                           sorted(extra)[0])
            if any(o.get("name") == "computer" for o in tools if o is not t):
                return ("tools: %s cannot be used together with another tool named "
                        "'computer'" % TOOLSET)
            if any(b.startswith("computer-use-") for b in betas(headers)):
                return ("tools.%d: %s is generally available; remove the anthropic-beta "
                        "header %s" % (i, TOOLSET, headers.get("anthropic-beta")))
        elif ty in SINGLE:
            if SINGLE[ty] not in betas(headers):
                return "tools.%d: tool type %s requires the beta header %s" % (i, ty, SINGLE[ty])
            for k in ("name", "display_width_px", "display_height_px"):
                if k not in t:
                    return "tools.%d.%s.%s: Field required" % (i, ty, k)
    return None


def five_five_problem(body):
    if family(body.get("model", "")) not in FIVE_FIVE:
        return None
    tc = body.get("tool_choice")
    if isinstance(tc, dict) and tc.get("type") in ("any", "tool"):
        return 'tool_choice: type "tool" and "any" are not supported for this model.'
    th = body.get("thinking")
    if isinstance(th, dict) and th.get("type") in ("disabled", "enabled"):
        return ('"thinking.type.%s" is not supported for this model. Use '
                '"thinking.type.adaptive" and "output_config.effort" to control thinking '
                'behavior.' % th.get("type"))
    return None


def thinking_config_problem(body, headers):
    th = body.get("thinking")
    if th is None:
        return None
    if not isinstance(th, dict) or th.get("type") not in ("adaptive", "enabled", "disabled"):
        return "thinking.type: Input should be 'adaptive', 'enabled' or 'disabled'"
    if "display" in th and th["display"] not in ("summarized", "omitted", "updates"):
        return "thinking.display: Input should be 'summarized', 'omitted' or 'updates'"
    bb = th.get("block_binding")
    if bb is not None:
        if BINDING_BETA not in betas(headers):
            return "thinking.block_binding: requires the beta header %s" % BINDING_BETA
        if bb.get("prefix_mismatch_behavior") not in (None, "error", "drop_block"):
            return "thinking.block_binding.prefix_mismatch_behavior: Input should be " \
                   "'error' or 'drop_block'"
    return None


def results_problem(messages):
    prev = {}
    for i, m in enumerate(messages):
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        for j, b in enumerate(blocks):
            if b.get("type") != "tool_result":
                continue
            want = prev.get(b.get("tool_use_id"))
            got = b.get("toolset_name")
            if want and got != want:
                return ("messages.%d.content.%d: tool_result for a tool_use of toolset %r "
                        "must carry toolset_name %r" % (i, j, want, want))
            if got and not want:
                return ("messages.%d.content.%d: toolset_name %r does not match the tool_use "
                        "it answers" % (i, j, got))
            c = b.get("content")
            for k, part in enumerate(c if isinstance(c, list) else []):
                if part.get("type") not in ("text", "image"):
                    return "messages.%d.content.%d.content.%d: type %r is not allowed here" \
                        % (i, j, k, part.get("type"))
        prev = {b.get("id"): b.get("toolset_name") for b in blocks
                if b.get("type") == "tool_use"}
    return None


def thinking_problem(state, body):
    """Thinking blocks as sent, in place; bound ones only after an unchanged history."""
    messages = body.get("messages") or []
    drop = ((body.get("thinking") or {}).get("block_binding") or {}) \
        .get("prefix_mismatch_behavior") == "drop_block"
    for i, m in enumerate(messages):
        if m.get("role") != "assistant" or not isinstance(m.get("content"), list):
            continue
        content = canon(m["content"])
        sent = None
        for j, b in enumerate(content):
            key = b.get("signature") or b.get("data") or b.get("id")
            if b.get("type") in ("thinking", "redacted_thinking"):
                known = state.thinking.get(key)
                if known is None or known["block"] != b:
                    return ("messages.%d.content.%d: Invalid `signature` in `%s` block"
                            % (i, j, b.get("type")))
            sent = sent or state.responses.get(key)
        if sent is not None and sent != content:
            return ("messages.%d.content: `thinking` or `redacted_thinking` blocks in the "
                    "assistant message cannot be modified. These blocks must remain as they "
                    "were in the original response." % i)
        for j, b in enumerate(content):
            known = state.thinking.get(b.get("signature") or b.get("data"))
            if not known or family(known["model"]) not in BINDS:
                continue
            if known["prefix"] == json.dumps(canon(messages[:i]), sort_keys=True) and \
                    family(known["model"]) == family(body.get("model", "")):
                continue
            if drop:
                state.dropped += 1
                continue
            return ("messages.%d.content.%d: the thinking block's prefix binding does not "
                    "match this request (prefix_mismatch); set "
                    "thinking.block_binding.prefix_mismatch_behavior to \"drop_block\" to "
                    "drop it instead" % (i, j))
    return None


def check(state, body, headers):
    """The error body for a request the real API refuses, else None."""
    if not isinstance(body, dict):
        return None
    n = count_markers([body.get("system"), body.get("tools"), body.get("messages")])
    if n > 4:
        return err("A maximum of 4 blocks with cache_control may be provided. Found %d." % n)
    for f in (lambda: tools_problem(state, body, headers), lambda: five_five_problem(body),
              lambda: thinking_config_problem(body, headers),
              lambda: results_problem(body.get("messages") or []),
              lambda: thinking_problem(state, body)):
        p = f()
        if p:
            return err(p)
    return None


# ---- the answers ------------------------------------------------------------------

def content_of(state, turn):
    """The blocks of a "blocks" turn as the API sends them (ids and signatures filled in)."""
    out = []
    for b in turn["blocks"]:
        state.seq += 1
        if "thinking" in b:
            sig = b.get("signature") or "sig" + base64.b64encode(os.urandom(24)).decode()
            out.append({"type": "thinking", "thinking": b["thinking"], "signature": sig})
        elif "redacted" in b:
            out.append({"type": "redacted_thinking", "data": b["redacted"]})
        elif "text" in b:
            out.append({"type": "text", "text": b["text"]})
        else:
            block = {"type": "tool_use", "id": b.get("id") or "toolu_%04d" % state.seq,
                     "name": b.get("tool") or b.get("name"), "input": b.get("input", {})}
            if "tool" in b:
                block["toolset_name"] = b.get("toolset", "computer")
            out.append(block)
    return out


def remember(state, body, content):
    model = body.get("model", "")
    prefix = json.dumps(canon(body.get("messages") or []), sort_keys=True)
    for b in content:
        key = b.get("signature") or b.get("data") or b.get("id")
        if b["type"] in ("thinking", "redacted_thinking"):
            state.thinking[key] = {"block": copy.deepcopy(b), "model": model, "prefix": prefix}
        state.responses[key] = copy.deepcopy(content)


def answer(state, turn, body):
    """(content, stop_reason) for a "blocks" turn, remembered for later checks."""
    content = content_of(state, turn)
    remember(state, body, content)
    stop = turn.get("stop") or ("tool_use" if any(b["type"] == "tool_use" for b in content)
                                else "end_turn")
    return content, stop


def jd(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()


def events(state, turn, body):
    """(event name, data bytes) of the streamed answer."""
    content, stop = answer(state, turn, body)
    model = body.get("model", "fake")
    yield "message_start", jd({"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "usage": {"input_tokens": 11, "output_tokens": 1}}})
    step = turn.get("thinking_chunk", 7)
    for i, b in enumerate(content):
        start = dict(b)
        deltas = []
        if b["type"] == "thinking":
            start.update(thinking="", signature="")
            t = b["thinking"]
            deltas = [{"type": "thinking_delta", "thinking": t[k:k + step]}
                      for k in range(0, len(t), step)]
            deltas.append({"type": "signature_delta", "signature": b["signature"]})
        elif b["type"] == "text":
            start["text"] = ""
            deltas = [{"type": "text_delta", "text": b["text"][k:k + 16]}
                      for k in range(0, len(b["text"]), 16)]
        elif b["type"] == "tool_use":
            start["input"] = {}
            raw = json.dumps(b["input"], ensure_ascii=False)
            deltas = [{"type": "input_json_delta", "partial_json": raw[k:k + 9]}
                      for k in range(0, len(raw), 9)]
        yield "content_block_start", jd({"type": "content_block_start", "index": i,
                                         "content_block": start})
        for d in deltas:
            yield "content_block_delta", jd({"type": "content_block_delta", "index": i,
                                             "delta": d})
        yield "content_block_stop", jd({"type": "content_block_stop", "index": i})
    yield "message_delta", jd({"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 7}})
    yield "message_stop", jd({"type": "message_stop"})


def whole(state, turn, body):
    content, stop = answer(state, turn, body)
    return jd({"id": "msg_fake", "type": "message", "role": "assistant",
               "model": body.get("model", "fake"), "content": content, "stop_reason": stop,
               "usage": {"input_tokens": 11, "output_tokens": 7}})
