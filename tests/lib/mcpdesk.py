"""Shared set-up of the MCP tests that drive a real desktop: a private Xvfb
with two recording clients (tests/xrecord: a white one over the whole
screen, and a coloured target at a known place on top of it, so every
press anywhere is seen and the target can be found in a screenshot),
`deskhand mcp` under the official TypeScript SDK's client (stdio, or
--http as its own process), its console answered in Debian's chromium
(tests/console/browser.mjs), and the audit checks every MCP test ends with.

    import mcpdesk as md
    MISSING = md.missing()                     # None, or why the tests skip
    D = md.Desk()                              # per module: Xvfb, recorders, browser
    s = md.Stdio(D, "--console", "0")          # deskhand mcp under the SDK
    r = s.client.call("screenshot")
    qid = s.answer("y")                        # the approver's page, in chromium
    s.close(); md.check_audit(self, s)         # approvals, and `deskhand audit verify`
"""
import base64
import json
import os
import signal
import struct
import subprocess
import sys

import harness as h
import mcplib
import pngread
import xinput_util as xi

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "console"))
import consolelib  # noqa: E402  (Browser, browser_missing, request)

WIDTH, HEIGHT = 1024, 768
# The target: x, y, w, h on the screen, and its colour (far from the white
# background and from anything the console or a cursor draws).
TARGET = (700, 500, 160, 100)
TARGET_RGB = (0xd0, 0x20, 0x30)

TOOLS = ["screenshot", "click", "drag", "scroll", "move", "key", "type", "wait",
         "find_text", "elements", "click_element", "windows", "execute"]
OBSERVATIONS = {"screenshot", "find_text", "elements", "windows", "wait"}
INPUT = {"click", "drag", "scroll", "move", "key", "type", "click_element"}
HUMAN = ("terminal", "console:approver")
# What runs only on a human's yes: desktop input, and code granted the display.
HUMAN_KINDS = {"os_input", "code_display"}

QUESTION_OPEN = ("document.getElementById('question').hidden === false && "
                 "!document.getElementById('q-y').disabled")


def missing():
    """Why these tests cannot run here, or None. Under CI a missing SDK or
    browser is a bail-out (mcplib.require_node, DESKHAND_REQUIRE_BROWSER)."""
    why = mcplib.require_node()
    if why:
        return why
    why = consolelib.browser_missing()
    if why and (os.environ.get("DESKHAND_REQUIRE_BROWSER")
                or os.environ.get("DESKHAND_REQUIRE_MCP")):
        raise SystemExit("Bail out! the MCP console tests cannot run: " + why)
    return why


def png_size(data):
    """(width, height) from a PNG's IHDR, which must come first."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise AssertionError("not a PNG: %r" % data[:16])
    return struct.unpack(">II", data[16:24])


def image_of(result):
    """The PNG bytes of a CallToolResult's one image content item."""
    imgs = [c for c in result["content"] if c["type"] == "image"]
    assert len(imgs) == 1, result["content"]
    assert imgs[0]["mimeType"] == "image/png", imgs[0]["mimeType"]
    return base64.b64decode(imgs[0]["data"])


def text_of(result):
    return "".join(c.get("text", "") for c in result["content"] if c["type"] == "text")


def target_in(png):
    """The target's box [x0, y0, x1, y1] (inclusive) in a screenshot's pixels."""
    _, _, rows = pngread.read(png)
    box = pngread.find_colour(rows, TARGET_RGB, tol=24)
    assert box is not None, "the target is not in the screenshot"
    return box


class Recorder(xi.Recorder):
    """tests/xrecord with its own arguments (--geometry, --color)."""

    def __init__(self, X, *args):
        self.X = X
        self.dir = h.tmpdir()
        self.path = os.path.join(self.dir, "events")
        self.out = open(self.path, "w")
        self.proc = h.Proc([h.binary("xrecord")] + list(args), env=X.env(), stdout=self.out)
        if not h.wait_for(lambda: "ready" in self.text(), 30):
            self.stop()
            raise RuntimeError("xrecord %r did not become ready" % (args,))
        self.mark = len(self.lines())


class Desk:
    """The desktop of a test module: Xvfb WIDTHxHEIGHT, the white recorder
    over all of it, the coloured target on top, and (browser=True) one
    chromium for every console page the module opens."""

    def __init__(self, browser=True):
        self.X = h.Xvfb(WIDTH, HEIGHT)
        self.recs = []
        self.B = None
        self.n = 0
        try:
            # Away from the screen's corners (the kill switch's) and the target.
            r = xi.deskhand(self.X, "move", 300, 300)
            assert r.returncode == 0, r.stderr
            self.bg = Recorder(self.X)
            self.recs.append(self.bg)
            x, y, w, hh = TARGET
            self.target = Recorder(self.X, "--geometry", "%dx%d+%d+%d" % (w, hh, x, y),
                                   "--color", "%02x%02x%02x" % TARGET_RGB)
            self.recs.append(self.target)
            if browser:
                self.B = consolelib.Browser()
        except BaseException:
            self.stop()
            raise

    def reset(self):
        for r in self.recs:
            r.reset()

    def settle(self):
        """Moves the pointer (deskhand's own command, not MCP) to a spot
        new each time, on the white recorder, and waits for its motion:
        whatever reached the X server before it has been recorded. Returns
        the events of both recorders since reset()."""
        self.n += 1
        x, y = 20 + self.n * 7 % 600, 20 + self.n * 5 % 400
        r = xi.deskhand(self.X, "move", x, y)
        assert r.returncode == 0, r.stderr
        evs = self.bg.wait_events(lambda evs: any(
            e["kind"] == "motion" and (e["x"], e["y"]) == (str(x), str(y)) for e in evs), 60)
        assert any(e["kind"] == "motion" and (e["x"], e["y"]) == (str(x), str(y))
                   for e in evs), "the settling motion never arrived: %r" % evs[-5:]
        return self.events()

    def events(self):
        return self.bg.new_events() + self.target.new_events()

    def presses(self, evs=None):
        """Every button press since reset(), on either recorder: (button, x, y)."""
        evs = self.events() if evs is None else evs
        return [(int(e["button"]), int(e["x"]), int(e["y"])) for e in evs if e["kind"] == "press"]

    def wait_presses(self, n, timeout=60):
        h.wait_for(lambda: len(self.presses()) >= n, timeout)
        return self.presses()

    def stop(self):
        if self.B is not None:
            self.B.stop()
            self.B = None
        for r in self.recs:
            r.stop()
        self.recs = []
        self.X.stop()


def home_env(X, root):
    """A private home under root for one server, and its environment."""
    home = os.path.join(root, "home")
    os.makedirs(home, exist_ok=True)
    env = X.env(HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
                XDG_DATA_HOME=os.path.join(home, "data"), LANG="C.UTF-8")
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
              "DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY"):
        env.pop(k, None)
    return env


class Server:
    """What both transports share: the server's files (audit, workspace,
    home) and its console, answered in the Desk's chromium."""

    def _files(self, desk):
        self.desk = desk
        self.dir = h.tmpdir()
        self.audit = os.path.join(self.dir, "audit.jsonl")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        self.env = home_env(desk.X, self.dir)
        self.stderr_path = os.path.join(self.dir, "server.stderr")
        self.links = None
        self.page = None
        self.closed = False

    def base_args(self, flags):
        return [h.binary(), "mcp", "--audit", self.audit, "--workspace", self.work] + list(flags)

    def wait_console(self):
        """The console's links, from the 0600 file beside the audit log."""
        path = self.audit + ".console"

        def links():
            try:
                with open(path) as f:
                    return json.loads(f.read())
            except (OSError, ValueError):
                return None
        self.links = h.wait_for(links, 30)
        assert self.links, "no console links in %s: %s" % (path, self.stderr())
        assert os.stat(path).st_mode & 0o777 == 0o600
        return self.links

    # ---- the console in chromium
    def open_console(self):
        """Opens the approver's link in a new page of the Desk's browser."""
        B = self.desk.B
        self.desk.n += 1
        self.page = "mcp%d" % self.desk.n
        r = B.do("open", page=self.page, url=self.links["approver"])
        assert r["url"] == "http://127.0.0.1:%d/" % self.links["port"], r
        B.wait(self.page, "document.body.dataset.role === 'approver'")
        return self.page

    def wait_question(self, after=0):
        """The qid of the open question newer than `after`, once its buttons work."""
        B = self.desk.B
        B.wait(self.page, QUESTION_OPEN + " && +document.getElementById('question').dataset.qid"
               " > %d" % after)
        return int(B.eval(self.page, "document.getElementById('question').dataset.qid"))

    def question_text(self):
        """The open question and what it shows of the action."""
        return self.desk.B.eval(self.page, "document.getElementById('q-text').textContent + "
                                "'\\n' + document.getElementById('q-body').textContent")

    def answer(self, key, after=0):
        """Clicks Yes (y) or No (n) on the next open question; its qid."""
        qid = self.wait_question(after)
        self.desk.B.do("click", page=self.page, sel="#q-" + key)
        self.desk.B.wait(self.page, "document.getElementById('q-y').disabled")
        return qid

    def close_page(self):
        if self.page is not None and self.desk.B is not None:
            try:
                self.desk.B.do("goto", page=self.page, url="about:blank")
            except (AssertionError, RuntimeError):
                pass
            self.page = None

    # ---- the record
    def audit_events(self):
        if not os.path.exists(self.audit):
            return []
        with open(self.audit) as f:
            return [json.loads(l) for l in f if l.strip()]

    def stderr(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""


class Stdio(Server):
    """deskhand mcp over stdio, the SDK's client its host:
    `deskhand mcp --audit A --workspace W FLAGS...`. With "--console" in
    flags the console's links are read (self.links) and, with open_page,
    the approver's page is opened in the Desk's chromium."""

    def __init__(self, desk, *flags, tty=False, open_page=True, client_name=None):
        self._files(desk)
        self.flags = list(flags)
        kw = {}
        if client_name is not None:
            kw["client_name"] = client_name
        self.client = mcplib.McpClient(
            mcplib.stdio_config(self.base_args(flags), env=self.env, cwd=self.dir,
                                stderr_file=self.stderr_path, **kw), tty=tty)
        self.server_pid = self.client.connected.get("server_pid")
        try:
            if "--console" in flags:
                self.wait_console()
                if open_page and desk.B is not None:
                    self.open_console()
        except BaseException:
            self.close()
            raise

    def close(self):
        """Ends the client (the SDK closes the server's stdin); the answer
        has server_exit. Idempotent."""
        if self.closed:
            return self.closed_with
        self.closed = True
        self.close_page()
        self.closed_with = self.client.close()
        return self.closed_with


class Http(Server):
    """`deskhand mcp --http 0 FLAGS...` as this test's own child (no
    terminal: a new session), its URL and token read from AUDIT.mcp."""

    def __init__(self, desk, *flags, open_page=True):
        self._files(desk)
        self.flags = list(flags)
        self.mcp_file = self.audit + ".mcp"
        self.err = open(self.stderr_path, "wb")
        self.proc = h.Proc(self.base_args(["--http", "0"] + list(flags)), env=self.env,
                           stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
                           cwd=self.dir, preexec_fn=xi.default_signals)
        self.clients = []
        try:
            self.info = h.wait_for(self._info, 30)
            assert self.info, "no %s: %s" % (self.mcp_file, self.stderr())
            self.url, self.token = self.info["url"], self.info["token"]
            self.port = self.info["port"]
            if "--console" in flags:
                self.wait_console()
                if open_page and desk.B is not None:
                    self.open_console()
        except BaseException:
            self.close()
            raise

    def _info(self):
        try:
            with open(self.mcp_file) as f:
                return json.loads(f.read())
        except (OSError, ValueError):
            return None

    def client(self, token=None, headers=None, **kw):
        c = mcplib.McpClient(mcplib.http_config(
            self.url, token=self.token if token is None else token, headers=headers, **kw))
        self.clients.append(c)
        return c

    def request(self, method, path="/mcp", headers=None, body=None, host=None, token=True):
        """One raw request (http.client: exactly these headers, plus Host and
        Content-Length); token=True adds the good bearer token."""
        hd = {}
        if token is True:
            hd["Authorization"] = "Bearer " + self.token
        elif token:
            hd["Authorization"] = "Bearer " + token
        hd.update(headers or {})
        return consolelib.request(self.port, method, path, hd, body, host=host)

    def terminate(self, timeout=30):
        """SIGTERM to the server (by its pid); its exit status."""
        if self.proc.p.poll() is None:
            self.proc.p.send_signal(signal.SIGTERM)
        try:
            return self.proc.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.stop()
            raise AssertionError("deskhand mcp --http did not end on SIGTERM: " + self.stderr())

    def close(self):
        if self.closed:
            return self.proc.p.returncode
        self.closed = True
        for c in self.clients:
            c.close()
        self.close_page()
        rc = self.proc.stop(10)
        self.err.close()
        return rc


def check_approvals(tc, events, auto_approve=False):
    """Every executed line follows an approval of the same id (each
    "proposed" starts an id afresh), and nothing runs after a denial or a
    block; an os_input or code_display one was approved by the user from
    a human channel (HUMAN), unless the server ran with --os-auto-approve."""
    state, approval = {}, {}
    for e in events:
        i, ev = e.get("id"), e["event"]
        if ev == "proposed":
            state[i] = "proposed"
            approval.pop(i, None)
        elif ev == "approved":
            tc.assertEqual(state.get(i), "proposed", "approval out of order: %r" % e)
            state[i] = "approved"
            approval[i] = e
        elif ev in ("denied", "blocked"):
            state[i] = "closed"
        elif ev == "executed":
            tc.assertEqual(state.get(i), "approved", "executed without approval: %r" % e)
            a = approval[i]
            human = HUMAN_KINDS & {e.get("kind"), a.get("kind")}
            # --os-auto-approve (with -y for display code) waives the human.
            if human and not auto_approve:
                tc.assertEqual((a.get("by"), a.get("from") in HUMAN), ("user", True),
                               "an OS action ran without a human's yes: %r then %r" % (a, e))
            state[i] = "done"


def check_audit(tc, server, auto_approve=False):
    """The audit log of a finished server: check_approvals, and `deskhand
    audit verify` accepts it (hash chain, end). Returns the events."""
    events = server.audit_events()
    tc.assertTrue(events, "no audit log at " + server.audit)
    check_approvals(tc, events, auto_approve)
    r = h.run([h.binary(), "audit", "verify", server.audit], env=server.env)
    tc.assertEqual(r.returncode, 0, "deskhand audit verify %s: %s%s" % (
        server.audit, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")))
    return events


def by_id(events, i, event=None):
    return [e for e in events if e.get("id") == i and (event is None or e["event"] == event)]


def proposed(events, kind=None):
    return [e for e in events if e["event"] == "proposed" and (kind is None or e["kind"] == kind)]
