"""A raw MCP client for the tests: `deskhand mcp` as a child whose standard
input and output are pipes, and exactly the bytes the test writes on the
first, one JSON object (or whatever a hostile client sends) per line. No
SDK in between: what the server answers to each line is what the test
sees. Only the Python standard library.

    s = mcpraw.Server(X, "--console", "0")     # a private home, --audit s.audit
    s.initialize(capabilities={"elicitation": {}})
    rid = s.request("tools/call", {"name": "click", "arguments": {"x": 1, "y": 2}})
    s.wait_audit(lambda e: e["event"] == "asked")
    s.notify("notifications/cancelled", {"requestId": rid})
    s.ping()
    s.close()
    mcpraw.check_audit(self, s.audit_events()); mcpraw.verify_audit(self, s.audit)

tty=True gives the server a new pseudo-terminal as its controlling
terminal (/dev/tty there) while its standard input and output stay the
protocol's pipes: tty_expect() reads what it shows, tty_send() answers.
Without it the server has no controlling terminal (it leads a new
session). Every server is ended by its own pid (its group), never by name.
"""
import base64
import json
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time

import harness as h
from ttyend import TtyEnd

STATELESS = "2026-07-28"
INITIALIZE = "2025-11-25"

# After setsid (start_new_session): opening the terminal without O_NOCTTY
# makes it the new session's controlling terminal on Linux; TIOCSCTTY says
# so explicitly. Then the server, with the pipes it was given as 0 and 1.
_LAUNCH = r"""
import fcntl, os, sys, termios
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
os.close(fd)
os.execve(sys.argv[2], sys.argv[2:], os.environ)
"""


def meta(version=STATELESS, capabilities=None, client=("mcpraw", "1.0"), **more):
    """params._meta of a 2026-07-28 request (capabilities None: {}; pass
    capabilities=False to leave them out)."""
    m = {"io.modelcontextprotocol/protocolVersion": version}
    if capabilities is not False:
        m["io.modelcontextprotocol/clientCapabilities"] = capabilities or {}
    if client is not None:
        m["io.modelcontextprotocol/clientInfo"] = {"name": client[0], "version": client[1]}
    m.update(more)
    return m


class Server(TtyEnd):
    """`deskhand mcp --audit AUDIT --workspace W FLAGS...` on X (an
    harness.Xvfb), in a private home (HOME, XDG_DATA_HOME,
    XDG_CONFIG_HOME under a new temporary folder)."""

    def __init__(self, X, *flags, tty=False, env=None):
        self.dir = h.tmpdir()
        self.audit = os.path.join(self.dir, "audit.jsonl")
        self.work = os.path.join(self.dir, "work")
        home = os.path.join(self.dir, "home")
        os.makedirs(self.work)
        os.makedirs(home)
        e = X.env()
        for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
            e.pop(k, None)
        e.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "data"),
                 XDG_CONFIG_HOME=os.path.join(home, "config"), LANG="C.UTF-8")
        e.update(env or {})
        self.env = e
        self.argv = [h.binary(), "mcp", "--audit", self.audit, "--workspace", self.work] + \
            [str(f) for f in flags]
        self.err_path = os.path.join(self.dir, "stderr")
        self.messages = []       # every line of stdout, parsed, in order
        self.garbage = []        # lines of stdout that are not a JSON object
        self.cond = threading.Condition()
        self.ended = False
        self.n = 0
        self.tty = None
        self.tty_buf = b""
        self.tty_transcript = b""
        args = self.argv
        if tty:
            master, slave = os.openpty()
            self.tty = master
            args = [sys.executable, "-c", _LAUNCH, os.ttyname(slave)] + self.argv
        self.p = subprocess.Popen(args, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(self.err_path, "wb"), start_new_session=True)
        if tty:
            os.close(slave)
        self.pid = self.p.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # ---- standard output: the protocol
    def _read(self):
        for raw in self.p.stdout:
            try:
                msg = json.loads(raw)
                ok = isinstance(msg, dict)
            except ValueError:
                ok = False
            with self.cond:
                if ok:
                    self.messages.append(msg)
                else:
                    self.garbage.append(raw)
                self.cond.notify_all()
        with self.cond:
            self.ended = True
            self.cond.notify_all()

    def send(self, line):
        """One line as it is: a dict becomes its JSON; str and bytes are
        sent as given, with a newline added unless they end in one."""
        if isinstance(line, dict) or isinstance(line, list):
            line = json.dumps(line)
        if isinstance(line, str):
            line = line.encode()
        if not line.endswith(b"\n"):
            line += b"\n"
        self.p.stdin.write(line)
        self.p.stdin.flush()

    def next_id(self):
        self.n += 1
        return self.n

    def request(self, method, params=None, id=None):
        """Sends a request; returns its id (the next integer unless given)."""
        rid = self.next_id() if id is None else id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def respond(self, rid, result):
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def wait(self, pred, timeout=60, what="a message", start=0):
        """The first message (from index start on) pred accepts; bounded."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for m in self.messages[start:]:
                    if pred(m):
                        return m
                left = deadline - time.monotonic()
                if self.ended or left <= 0:
                    raise AssertionError("%s: no %s within %ds; the server sent:\n%s\n"
                                         "[stderr]\n%s" % (
                                             "the server's output ended" if self.ended
                                             else "timed out", what, timeout,
                                             self.shown(), self.stderr()[-3000:]))
                self.cond.wait(min(left, 1.0))

    def responses(self, rid):
        """Every response the server sent to request id rid (a list)."""
        with self.cond:
            return [m for m in self.messages if "method" not in m and m.get("id") == rid
                    and type(m.get("id")) is type(rid)]

    def response(self, rid, timeout=60, start=0):
        """The first response to id rid (from message index start on)."""
        return self.wait(lambda m: "method" not in m and m.get("id") == rid and
                         type(m.get("id")) is type(rid), timeout, "response to %r" % (rid,),
                         start)

    def mark(self):
        """The index the next message will have."""
        with self.cond:
            return len(self.messages)

    def call(self, method, params=None, id=None, timeout=60):
        """A request and its response (one sent after it: ids may be reused)."""
        start = self.mark()
        return self.response(self.request(method, params, id), timeout, start)

    def error(self, method, params=None, id=None, timeout=60):
        """A request that must be answered with an error; the error object."""
        r = self.call(method, params, id, timeout)
        if "error" not in r:
            raise AssertionError("%s answered without an error: %s" % (method, json.dumps(r)[:500]))
        return r["error"]

    def ping(self, timeout=60):
        """A ping answered with {}: the server is alive and reads on."""
        r = self.call("ping", timeout=timeout)
        if r.get("result") != {}:
            raise AssertionError("ping answered %r" % (r,))
        return r

    def initialize(self, version=INITIALIZE, capabilities=None, client=("mcpraw", "1.0")):
        """The 2025-11-25 handshake: initialize, then notifications/initialized."""
        r = self.call("initialize", {"protocolVersion": version,
                                     "capabilities": capabilities or {},
                                     "clientInfo": {"name": client[0], "version": client[1]}})
        if "result" not in r:
            raise AssertionError("initialize failed: %r" % (r,))
        self.notify("notifications/initialized")
        return r["result"]

    def tool(self, name, arguments=None, id=None, timeout=60, stateless=False, progress=None):
        """Sends tools/call (stateless: with 2026-07-28 _meta); returns its id."""
        params = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        m = meta() if stateless else {}
        if progress is not None:
            m["progressToken"] = progress
        if m:
            params["_meta"] = m
        return self.request("tools/call", params, id)

    def tool_result(self, name, arguments=None, timeout=60, **kw):
        """tools/call and its result (a CallToolResult; an error fails)."""
        start = self.mark()
        r = self.response(self.tool(name, arguments, **kw), timeout, start)
        if "result" not in r:
            raise AssertionError("tools/call %s: %s" % (name, json.dumps(r)[:500]))
        return r["result"]

    def requests_from_server(self, method):
        """The requests the server sent (e.g. elicitation/create)."""
        with self.cond:
            return [m for m in self.messages if m.get("method") == method and "id" in m]

    def shown(self, n=20):
        with self.cond:
            tail = self.messages[-n:]
        return "\n".join(json.dumps(m)[:400] for m in tail)

    # ---- standard error, the audit log, the console
    def stderr(self):
        try:
            with open(self.err_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def wait_stderr(self, text, timeout=60):
        if not h.wait_for(lambda: text in self.stderr(), timeout):
            raise AssertionError("no %r on stderr within %ds:\n%s" % (
                text, timeout, self.stderr()[-3000:]))

    def audit_events(self):
        return read_audit(self.audit)

    def wait_audit(self, pred, timeout=60, what="audit line"):
        found = h.wait_for(lambda: [e for e in self.audit_events() if pred(e)], timeout)
        if not found:
            raise AssertionError("no %s within %ds; the log has:\n%s\n[stderr]\n%s" % (
                what, timeout, "\n".join(json.dumps(e) for e in self.audit_events()),
                self.stderr()[-3000:]))
        return found[0]

    def console(self, timeout=30):
        """The console's links from AUDIT.console (--console 0), an object
        tests/console/consolelib's login/post/Events take."""
        path = self.audit + ".console"

        def links():
            try:
                with open(path) as f:
                    return json.loads(f.read())
            except (OSError, ValueError):
                return None
        if not h.wait_for(links, timeout):
            raise AssertionError("no console links in %s:\n%s" % (path, self.stderr()))
        return ConsoleLinks(links())

    def rss_peak_kb(self):
        """The server's peak resident set (VmHWM, kB), from /proc."""
        with open("/proc/%d/status" % self.pid) as f:
            return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


    # ---- the end
    def close(self, timeout=30):
        """Closes its standard input (the client has gone) and waits for
        the exit; if it does not come, ends its group by its pid. Returns
        the exit status."""
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._finish()
        return self.p.returncode

    def kill(self):
        if self.p.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.p.wait(10)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._finish()

    def _finish(self):
        self.reader.join(10)
        for f in (self.p.stdin, self.p.stdout):
            try:
                f.close()
            except (OSError, ValueError):
                pass
        if self.tty is not None:
            try:
                os.close(self.tty)
            except OSError:
                pass
            self.tty = None


class ConsoleLinks:
    """AUDIT.console as consolelib's Agent has it: approver, observer, port."""

    def __init__(self, links):
        self.approver, self.observer, self.port = links["approver"], links["observer"], links["port"]
        self.host = "127.0.0.1:%d" % self.port
        self.origin = "http://" + self.host


def consolelib():
    """tests/console/consolelib (login, post, Events), imported on demand."""
    path = os.path.join(h.SRCDIR, "tests", "console")
    if path not in sys.path:
        sys.path.insert(0, path)
    import consolelib as c  # noqa: E402
    return c


# ---- the audit log

def read_audit(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read()
    # Only whole lines: the server may be writing the last one.
    return [json.loads(l) for l in text[: text.rfind("\n") + 1].splitlines() if l.strip()]


def check_audit(tc, events):
    """Every executed line has an approved line of its id before it (after
    its proposal), and nothing of an id runs after it was denied or
    blocked. Returns {id: [event names in order]}."""
    state, seq = {}, {}
    for e in events:
        i = e.get("id")
        ev = e.get("event")
        if i is not None:
            seq.setdefault(i, []).append(ev)
        if ev == "proposed":
            tc.assertNotIn(state.get(i), ("approved",), "proposed again while approved: %r" % e)
            state[i] = "proposed"
        elif ev == "approved":
            tc.assertEqual(state.get(i), "proposed", "approval out of order: %r" % e)
            state[i] = "approved"
        elif ev in ("denied", "blocked"):
            tc.assertIn(state.get(i), ("proposed",), "%s out of order: %r" % (ev, e))
            state[i] = "closed"
        elif ev == "executed":
            tc.assertEqual(state.get(i), "approved", "executed without approval: %r" % e)
            state[i] = "done"
    return seq


def verify_audit(tc, path, env=None):
    """`deskhand audit verify PATH` exits 0 (the hash chain and the order
    hold); returns its output."""
    r = h.run([h.binary(), "audit", "verify", path], env=env)
    tc.assertEqual(r.returncode, 0, r.stdout.decode() + r.stderr.decode())
    return r.stdout.decode()


# ---- results

def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def png_size(result):
    """(width, height) of the image content's PNG (its IHDR); None without one."""
    for c in result.get("content", []):
        if c.get("type") == "image":
            data = base64.b64decode(c["data"])
            assert c.get("mimeType") == "image/png", c.get("mimeType")
            assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
            assert data[12:16] == b"IHDR"
            return struct.unpack(">II", data[16:24])
    return None


INPUT_KINDS = ("press", "release", "key-press", "key-release", "motion")
