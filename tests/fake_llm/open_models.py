"""
open_models — the open grounding models as an OpenAI-compatible server
(vLLM, llama.cpp) serves them, for fakellm's /chat/completions route:
Qwen2.5-VL and UI-TARS answer in pixels of an image sized by smart_resize,
Qwen3-VL on a 0..999 grid; Qwen calls its computer_use function (in
tool_calls, or as <tool_call> text when the server has no tool parser),
UI-TARS writes "Thought: ...\\nAction: ...".

problem(body) is what such a server and model refuse or could not have
been trained on (checked on every request whose model names a family);
aim_*() build turns that find a coloured target in the very image
deskhand sent (pngfind) and answer in the family's convention.
"""
import base64
import json
import math

import pngfind

QWEN_ACTIONS = {"key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
                "middle_click", "double_click", "triple_click", "scroll", "hscroll", "wait",
                "terminate", "answer"}


def family(model):
    n = (model or "").rsplit("/", 1)[-1].lower()
    for prefix, fam in (("ui-tars", "ui-tars"), ("uitars", "ui-tars"), ("qwen2.5-vl", "qwen2.5-vl"),
                        ("qwen2.5vl", "qwen2.5-vl"), ("qwen3-vl", "qwen3-vl"),
                        ("qwen3vl", "qwen3-vl"), ("qwen", "qwen")):
        if n.startswith(prefix):
            return fam
    return None


def smart_resize(h, w, factor=28, min_pixels=56 * 56, max_pixels=14 * 14 * 4 * 1280):
    """Qwen2-VL's smart_resize (the reference values deskhand must match)."""
    hb = max(factor, round(h / factor) * factor)
    wb = max(factor, round(w / factor) * factor)
    if hb * wb > max_pixels:
        beta = math.sqrt((h * w) / max_pixels)
        hb = math.floor(h / beta / factor) * factor
        wb = math.floor(w / beta / factor) * factor
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return hb, wb


def images(body):
    """Every image of the request as (message index, data URL or raw base64)."""
    out = []
    for i, m in enumerate(body.get("messages", [])):
        c = m.get("content")
        for p in c if isinstance(c, list) else []:
            if isinstance(p, dict) and p.get("type") == "image_url":
                out.append((i, (p.get("image_url") or {}).get("url", "")))
        for b in m.get("images") or []:
            out.append((i, b))
    return out


def last_png(body):
    found = images(body)
    if not found:
        return None
    data = found[-1][1]
    if data.startswith("data:"):
        data = data.split(",", 1)[1]
    return pngfind.decode(base64.b64decode(data))


def _error(msg):
    return {"error": {"message": msg, "type": "invalid_request_error"}}


def problem(body):
    """What a server with this model refuses (or the model never saw in
    training): None when the request is fine, else an error body."""
    fam = family(body.get("model"))
    if fam is None:
        return None
    msgs = body.get("messages", [])
    for i, url in images(body):
        if not url.startswith("data:image/png;base64,"):
            return _error("messages[%d]: only data: URLs of images are accepted" % i)
    tools = [t.get("function", {}) for t in body.get("tools") or []]
    names = {t.get("name") for t in tools}
    if fam == "ui-tars":
        if tools:
            return _error("UI-TARS was not trained on tools: it answers in text")
        if any(m.get("role") == "tool" or m.get("tool_calls") for m in msgs):
            return _error("UI-TARS reads its own Thought/Action text back, not tool messages")
    elif "computer_use" in names:
        cu = [t for t in tools if t.get("name") == "computer_use"][0]
        enum = set(cu.get("parameters", {}).get("properties", {}).get("action", {})
                   .get("enum", []))
        if enum != QWEN_ACTIONS:
            return _error("computer_use's actions are not Qwen's: %r" % sorted(enum))
        if "computer" in names:
            return _error("Qwen is offered its own computer_use, not a second computer tool")
    if fam in ("qwen2.5-vl", "ui-tars"):
        png = last_png(body)
        if png is not None and (png.width % 28 or png.height % 28):
            return _error("the image is %dx%d: not smart-resized (sides multiples of 28)"
                          % (png.width, png.height))
    return None


# ---- answers that look at the image -------------------------------------------

def locate(body, rgb=(255, 0, 0), grid=None):
    """The target's position in the family's coordinates (image pixels, or
    a grid x grid relative grid), and the image it was found in."""
    img = last_png(body)
    if img is None:
        raise ValueError("no image in the request")
    found = pngfind.find_colour(img, rgb)
    if found is None:
        raise ValueError("the target is not in the image")
    cx, cy = found
    if grid:
        return pngfind.to_relative(cx, cy, img, grid), img
    return (int(cx), int(cy)), img


def qwen_call(args, as_text=False):
    """A computer_use call, in tool_calls or as Qwen writes it in text."""
    if as_text:
        return {"text": "I will do that.\n<tool_call>\n" +
                json.dumps({"name": "computer_use", "arguments": args}) + "\n</tool_call>"}
    return {"tool_calls": [{"name": "computer_use", "arguments": args}]}


def aim_qwen(seen, grid=None, as_text=False, rgb=(255, 0, 0)):
    def turn(body, fmt):
        (x, y), img = locate(body, rgb, grid)
        seen.update(point=(x, y), size=(img.width, img.height), grid=grid)
        return qwen_call({"action": "left_click", "coordinate": [x, y]}, as_text)
    return turn


def aim_uitars(seen, rgb=(255, 0, 0), newer=False):
    def turn(body, fmt):
        (x, y), img = locate(body, rgb)
        seen.update(point=(x, y), size=(img.width, img.height), grid=None)
        box = "<point>%d %d</point>" % (x, y) if newer else "(%d,%d)" % (x, y)
        key = "point" if newer else "start_box"
        return {"text": "Thought: The red window is the target; I click it.\n"
                        "Action: click(%s='%s')" % (key, box)}
    return turn
