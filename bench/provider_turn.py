#!/usr/bin/env python3
"""
What one model turn costs deskhand itself, with an instant fake model:
load the conversation file, build the request (the newest 3 of 40
screenshots base64-encoded from their PNG files), POST it over loopback,
parse the streamed answer, save the conversation atomically. Measured as
whole processes (tests/llm/provider_probe), so start-up is included;
resident memory is the child's peak RSS.

Compared with the same work in Python's standard library (json + base64 +
urllib), the way a Python agent would do it.

    bench/provider_turn.py [BUILD_DIR]     (default: build)
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "fake_llm"))
from fakellm import FakeLLM  # noqa: E402

STEPS = 40
RUNS = 15
PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(250_000)  # a busy 1280x800 screenshot's size


def make_conversation(d, probe, srv):
    conv = os.path.join(d, "conv.json")
    png = os.path.join(d, "shot.png")
    with open(png, "wb") as f:
        f.write(PNG)
    base = [probe, "--provider", "openai", "--base", srv.base_url("openai"),
            "--conversation", conv, "--no-turn"]
    subprocess.run(base + ["--user", "do the task"], check=True)
    conv_data = json.load(open(conv))
    # Recorded steps: an assistant call and its result with a screenshot, each.
    for i in range(STEPS):
        conv_data["messages"].append({"role": "assistant", "content": [
            {"type": "text", "text": "Step %d." % i},
            {"type": "tool_call", "id": "call_%d" % i, "name": "computer",
             "arguments": json.dumps({"action": "left_click", "coordinate": [100, 200]})}]})
        img = "conv.images/%04d.png" % (i + 1)
        os.makedirs(os.path.join(d, "conv.images"), exist_ok=True)
        shutil.copy(png, os.path.join(d, img))
        conv_data["messages"].append({"role": "tool", "content": [
            {"type": "tool_result", "call_id": "call_%d" % i, "text": "clicked",
             "is_error": False, "image": {"path": img, "width": 1280, "height": 800}}]})
    json.dump(conv_data, open(conv, "w"))
    return conv


def child_run(args):
    """Wall time, and the peak RSS the child reports from /proc/self/status
    (VmHWM): getrusage would count the resident size of this Python process,
    which the child was forked from."""
    t0 = time.perf_counter()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    dt = time.perf_counter() - t0
    last = json.loads(r.stdout.decode().strip().splitlines()[-1])
    return dt, last["peak_rss_kb"] / 1024.0


PY_CLIENT = r'''
import base64, json, os, sys, tempfile, urllib.request
conv_path, url = sys.argv[1], sys.argv[2]
d = os.path.dirname(conv_path)
conv = json.load(open(conv_path))
msgs = [{"role": "system", "content": "You are a test."}]
imgs = []
for m in conv["messages"]:
    for b in m["content"]:
        if b["type"] == "tool_result" and "image" in b:
            imgs.append(b)
keep = set(id(b) for b in imgs[-3:])
for m in conv["messages"]:
    if m["role"] == "user":
        msgs.append({"role": "user", "content": m["content"][0]["text"]})
    elif m["role"] == "assistant":
        msgs.append({"role": "assistant", "content": m["content"][0]["text"], "tool_calls": [
            {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": b["arguments"]}}
            for b in m["content"] if b["type"] == "tool_call"]})
    else:
        for b in m["content"]:
            msgs.append({"role": "tool", "tool_call_id": b["call_id"], "content": b["text"]})
            if id(b) in keep:
                data = base64.b64encode(open(os.path.join(d, b["image"]["path"]), "rb").read()).decode()
                msgs.append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + data}}]})
body = json.dumps({"model": "m", "stream": True, "messages": msgs}).encode()
req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
text = ""
with urllib.request.urlopen(req) as r:
    for line in r:
        line = line.strip()
        if line.startswith(b"data: ") and line != b"data: [DONE]":
            ev = json.loads(line[6:])
            for ch in ev.get("choices", []):
                text += ch.get("delta", {}).get("content") or ""
conv["messages"].append({"role": "assistant", "content": [{"type": "text", "text": text}]})
fd, tmp = tempfile.mkstemp(dir=d)
with os.fdopen(fd, "w") as f:
    json.dump(conv, f)
    f.flush()
    os.fsync(f.fileno())
os.rename(tmp, conv_path + ".py.json")
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print(json.dumps({"peak_rss_kb": int(hwm)}))
'''


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build")
    probe = os.path.join(build, "tests", "llm", "provider_probe")
    d = tempfile.mkdtemp(prefix="deskhand-bench-")
    try:
        with FakeLLM([{"text": "ok", "text_chunk": 2}] * (2 * RUNS + 4)) as srv:
            conv = make_conversation(d, probe, srv)
            pristine = open(conv).read()
            ours, theirs, rss_ours, rss_theirs = [], [], [], []
            for _ in range(RUNS):
                with open(conv, "w") as f:
                    f.write(pristine)
                dt, rss = child_run([probe, "--provider", "openai", "--base",
                                     srv.base_url("openai"), "--conversation", conv,
                                     "--keep-images", "3"])
                ours.append(dt)
                rss_ours.append(rss)
                dt, rss = child_run([sys.executable, "-c", PY_CLIENT, conv,
                                     srv.base_url("openai") + "/chat/completions"])
                theirs.append(dt)
                rss_theirs.append(rss)
            body = len(json.dumps(srv.requests[-2]["body"]))
    finally:
        shutil.rmtree(d)
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    print("one turn, %d recorded steps, 3 of %d screenshots sent (%.1f MB request), %d runs"
          % (STEPS, STEPS, body / 1e6, RUNS))
    print("  deskhand provider (whole process): median %.1f ms, peak RSS %.1f MB"
          % (med(ours) * 1000, max(rss_ours)))
    print("  python stdlib client:              median %.1f ms, peak RSS %.1f MB"
          % (med(theirs) * 1000, max(rss_theirs)))
    print("  ratio: %.1fx faster, %.1fx less memory"
          % (med(theirs) / med(ours), max(rss_theirs) / max(rss_ours)))


if __name__ == "__main__":
    main()
