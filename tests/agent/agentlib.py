"""Shared pieces of the agent's end-to-end tests: running `deskhand` as the
agent against the fake model server, reading what the model was sent, and
checking the audit log."""
import base64
import json
import os
import sys

import harness as h

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
from fakellm import FakeLLM, Held  # noqa: E402,F401

import pngread  # noqa: E402


class Run:
    """A private home for one agent run: data, config, conversation, audit."""

    def __init__(self):
        self.dir = h.tmpdir()
        self.home = os.path.join(self.dir, "home")
        os.makedirs(self.home)
        self.conv = os.path.join(self.dir, "conv.json")
        self.audit = os.path.join(self.dir, "audit.jsonl")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)

    def env(self, X=None, **extra):
        e = X.env() if X is not None else dict(os.environ)
        if X is None:
            e.pop("DISPLAY", None)
        for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL",
                  "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                  "GOOGLE_GEMINI_BASE_URL"):
            e.pop(k, None)
        e.update(HOME=self.home, XDG_DATA_HOME=os.path.join(self.home, "data"),
                 XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                 DESKHAND_RETRY_BASE_MS="20", LANG="C.UTF-8")
        e.update(extra)
        return e

    def args(self, srv, fmt="openai", *more):
        a = [h.binary(), "--provider", "anthropic" if fmt == "anthropic" else "openai",
             "--api-base", srv.base_url(fmt), "--model", "fake",
             "--conversation", self.conv, "--audit", self.audit,
             "--workspace", self.work]
        return a + list(more)

    def run(self, srv, fmt, *more, X=None, input=b"", timeout=120, env=None):
        return h.run(self.args(srv, fmt, *more), env=env or self.env(X),
                     input=input, timeout=timeout)

    def audit_events(self):
        if not os.path.exists(self.audit):
            return []
        with open(self.audit) as f:
            return [json.loads(l) for l in f if l.strip()]

    def conversation(self):
        with open(self.conv) as f:
            return json.load(f)


def check_audit(testcase, events):
    """Every executed action follows an approval (by the user or the policy)
    of its proposal, and nothing runs after a denial or a block. Models
    reuse call ids across turns, so each "proposed" starts the id afresh."""
    state = {}
    for e in events:
        i = e.get("id")
        if e["event"] == "proposed":
            state[i] = "proposed"
        elif e["event"] == "approved":
            testcase.assertEqual(state.get(i), "proposed", "approval out of order: %r" % e)
            state[i] = "approved"
        elif e["event"] in ("denied", "blocked"):
            state[i] = "closed"
        elif e["event"] == "executed":
            testcase.assertEqual(state.get(i), "approved",
                                 "executed without approval: %r" % e)
            state[i] = "done"


def tool_results(body, fmt):
    """The tool results a request carries: [(call id, text, is_error)]."""
    out = []
    for m in body.get("messages", []):
        if fmt == "openai" and m.get("role") == "tool":
            c = m.get("content")
            if isinstance(c, list):
                c = "".join(p.get("text", "") for p in c)
            out.append((m.get("tool_call_id"), c or "", None))
        elif fmt == "anthropic" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    c = b.get("content")
                    if isinstance(c, list):
                        c = "".join(p.get("text", "") for p in c if p.get("type") == "text")
                    out.append((b.get("tool_use_id"), c or "", b.get("is_error")))
    return out


def last_image(body):
    """The newest PNG a request carries, decoded: (w, h, rows) or None."""
    found = []

    def walk(o):
        if isinstance(o, dict):
            if o.get("type") == "image" and isinstance(o.get("source"), dict):
                found.append(o["source"].get("data", ""))
            url = o.get("url")
            if isinstance(url, str) and url.startswith("data:image/png;base64,"):
                found.append(url.split(",", 1)[1])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(body.get("messages", []))
    if not found:
        return None
    return pngread.read(base64.b64decode(found[-1]))


def texts(body):
    """All text a request carries, joined (for 'was this sent' checks)."""
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def call(name, **args):
    return {"name": name, "arguments": args}
