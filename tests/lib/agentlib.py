"""Shared pieces of the agent's end-to-end tests: running `deskhand` as the
agent against the fake model server (or on a pseudo-terminal), reading what
the model was sent, and checking the audit log."""
import base64
import json
import os
import pty
import re
import select
import signal
import sys
import termios
import time

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


class Pty:
    """deskhand on a pseudo-terminal, driven like a person would."""

    def __init__(self, args, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(args[0], args, env)
        self.buf = b""
        self.transcript = b""   # everything read, for failure messages

    def expect(self, pattern, timeout=30):
        """Reads until `pattern` (regex on bytes) appears; returns the match."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %r within %ds; the terminal showed:\n%s" %
                                     (pattern, timeout, self.shown()))
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError("ended before %r; the terminal showed:\n%s" %
                                         (pattern, self.shown()))
                self._took(data)

    def _took(self, data):
        self.buf += data
        self.transcript += data

    def shown(self, limit=2000):
        """The tail of the transcript, one terminal line per line."""
        text = self.transcript[-limit:].decode("utf-8", "replace")
        return "\n".join(repr(l) for l in text.split("\n"))

    def mode(self):
        """The terminal's local modes (on Linux the master reports the
        slave's), or None once the pty is gone."""
        try:
            return termios.tcgetattr(self.fd)[3]
        except (termios.error, OSError):
            return None

    def send(self, text):
        os.write(self.fd, text if isinstance(text, bytes) else text.encode())

    def eof(self, key=b"\x04"):
        """Ctrl-D at the prompt, once: deskhand holds the terminal (no
        canonical input) from start to end, so the key reaches the line
        editor whenever it is typed."""
        self.send(key)

    def wait(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.final_mode = self.mode()
                try:
                    while True:
                        data = os.read(self.fd, 4096)
                        if not data:
                            break
                        self._took(data)
                except OSError:
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            try:
                r, _, _ = select.select([self.fd], [], [], 0.05)
                if r:
                    self._took(os.read(self.fd, 4096))
            except OSError:
                time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError("deskhand did not exit; the terminal showed:\n%s" %
                             self.shown())


def marked(mark):
    """Live pids whose environment carries DESKHAND_TEST_MARK=mark: a run
    and whatever it started, in whatever session or namespace (the test
    sets the mark in the run's environment; "no process left behind")."""
    needle = ("DESKHAND_TEST_MARK=%s" % mark).encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state != "Z":
            found.append(int(pid))
    return found


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
