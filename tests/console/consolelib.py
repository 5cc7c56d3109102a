"""Shared pieces of the console's tests: deskhand run as the agent with
--console on a private Xvfb, against the fake model server, its links read
from the 0600 file beside the audit log, and an HTTP client that says
exactly which headers it sends (http.client: nothing added behind our back)."""
import http.client
import json
import os
import re
import subprocess
import time

import harness as h
from agentlib import FakeLLM, Run, call, check_audit, tool_results  # noqa: F401


class Agent:
    """deskhand --console 0 as a child, its standard input a pipe the test
    holds open (closed: the terminal can no longer answer)."""

    def __init__(self, srv, X=None, turns_fmt="openai", flags=(), message="go", listen="0"):
        self.run = Run()
        args = self.run.args(srv, turns_fmt, "--console", listen, *flags)
        if X is not None:
            args.append("--os")
        if message is not None:
            args += ["-m", message]
        self.out_path = os.path.join(self.run.dir, "stdout")
        self.err_path = os.path.join(self.run.dir, "stderr")
        self.proc = subprocess.Popen(args, env=self.run.env(X), stdin=subprocess.PIPE,
                                     stdout=open(self.out_path, "wb"),
                                     stderr=open(self.err_path, "wb"),
                                     start_new_session=True)
        self.file = self.run.audit + ".console"
        if not h.wait_for(lambda: os.path.exists(self.file) and self.links() is not None, 30):
            self.stop()
            raise RuntimeError("no console links: " + self.stderr())
        links = self.links()
        self.approver, self.observer, self.port = links["approver"], links["observer"], links["port"]
        self.host = "127.0.0.1:%d" % self.port
        self.origin = "http://" + self.host

    def links(self):
        try:
            with open(self.file) as f:
                return json.loads(f.read())
        except (OSError, ValueError):
            return None

    def say(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def close_stdin(self):
        self.proc.stdin.close()

    def stdout(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()

    def stop(self):
        """Ends the agent this test started, by its pid (its own group)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()


def token_of(url):
    return re.search(r"[?&]t=([0-9a-f]+)", url).group(1)


def request(port, method, path, headers=None, body=None, host=None):
    """One request, exactly these headers (plus Host, Content-Length)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    c.putheader("Host", host if host is not None else "127.0.0.1:%d" % port)
    for k, v in (headers or {}).items():
        c.putheader(k, v)
    if body is not None:
        if isinstance(body, str):
            body = body.encode()
        c.putheader("Content-Length", str(len(body)))
    c.endheaders()
    if body is not None:
        c.send(body)
    r = c.getresponse()
    data = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, hdrs, data


def login(agent, approver=True):
    """Exchanges the link's token for a cookie; returns (cookie, csrf)."""
    url = agent.approver if approver else agent.observer
    st, hd, _ = request(agent.port, "GET", "/?t=" + token_of(url))
    assert st == 303, st
    cookie = hd["set-cookie"].split(";")[0]
    st, _, body = request(agent.port, "GET", "/api/state", {"Cookie": cookie})
    assert st == 200, st
    return cookie, json.loads(body)["csrf"]


def post(agent, path, cookie, csrf, obj, origin=None, headers=None):
    hd = {"Cookie": cookie, "X-Deskhand-CSRF": csrf, "Content-Type": "application/json",
          "Origin": origin if origin is not None else agent.origin}
    hd.update(headers or {})
    return request(agent.port, "POST", path, hd, json.dumps(obj))


def stalled_stream(agent, cookie):
    """An event stream that never reads: a socket with a small receive
    buffer whose request was sent; the caller closes it."""
    import socket
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", agent.port))
    s.sendall(("GET /api/events HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\n\r\n"
               % (agent.host, cookie)).encode())
    return s


class Events:
    """The console's event stream, read in a thread of the test."""

    def __init__(self, agent, cookie):
        import threading
        self.c = http.client.HTTPConnection("127.0.0.1", agent.port, timeout=120)
        self.c.putrequest("GET", "/api/events", skip_host=True, skip_accept_encoding=True)
        self.c.putheader("Host", agent.host)
        self.c.putheader("Cookie", cookie)
        self.c.endheaders()
        self.r = self.c.getresponse()
        self.events = []
        self.frames = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        kind = None
        try:
            for raw in self.r:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    d = json.loads(line[6:])
                    (self.frames if kind == "frame" else self.events).append(d)
        except Exception:
            pass

    def wait(self, pred, timeout=60):
        return h.wait_for(lambda: [e for e in list(self.events) if pred(e)], timeout)

    def question(self, timeout=60, after=0):
        qs = self.wait(lambda e: e.get("type") == "question" and e["qid"] > after, timeout)
        return qs[-1] if qs else None

    def close(self):
        try:
            self.c.sock.shutdown(2)
        except Exception:
            pass
        self.c.close()


HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = os.environ.get("DESKHAND_CHROMIUM", "/usr/bin/chromium")


def browser_missing():
    """Why the browser tests cannot run here, or None."""
    import shutil
    if not os.path.exists(CHROMIUM):
        return "no chromium at %s (.ci/install-deps installs it)" % CHROMIUM
    if not shutil.which("node"):
        return "no node (.ci/install-deps installs it)"
    if not os.path.isdir(os.path.join(HERE, "node_modules", "playwright-core")):
        return "playwright-core is not installed in tests/console (.ci/install-deps runs npm ci)"
    return None


class Browser:
    """tests/console/browser.mjs as a child: chromium driven by playwright-core."""

    def __init__(self):
        self.log = open(os.path.join(h.tmpdir(), "browser.log"), "wb")
        self.p = subprocess.Popen(["node", os.path.join(HERE, "browser.mjs")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.log, start_new_session=True, cwd=HERE)

    def do(self, op, **kw):
        kw["op"] = op
        self.p.stdin.write((json.dumps(kw) + "\n").encode())
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("the browser driver ended: " + self.logtext())
        r = json.loads(line)
        if not r.get("ok"):
            raise AssertionError("browser %s failed: %s" % (op, r.get("error")))
        return r

    def eval(self, page, js):
        return self.do("eval", page=page, js=js)["value"]

    def wait(self, page, js, timeout=60000):
        return self.do("wait", page=page, js=js, timeout=timeout)["value"]

    def logtext(self):
        self.log.flush()
        with open(self.log.name, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def stop(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write(b'{"op":"quit"}\n')
                self.p.stdin.flush()
                self.p.wait(20)
            except Exception:
                os.killpg(self.p.pid, 9)
                self.p.wait()
