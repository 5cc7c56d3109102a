"""An MCP host for the tests: tests/mcp/driver.mjs (the official TypeScript
SDK's Client, @modelcontextprotocol/sdk from tests/mcp/node_modules) as a
child, one JSON line per command and per answer or event.

    import mcplib
    MISSING = mcplib.node_ready()          # None, or why the SDK cannot run
    c = mcplib.McpClient(mcplib.stdio_config([deskhand, "mcp", ...], env=env))
    tools = c.list_tools()                 # every page; c.last_list["schema_errors"]
    r = c.call("screenshot", {})           # the CallToolResult, or McpCallError
    tag = c.call_async("click", {...}, progress=True)
    c.wait_event(lambda e: e.get("tag") == tag and e.get("event") == "progress")
    c.abort(tag); err = c.wait_result(tag)  # {"ok": False, "error": {...,"aborted": True}}
    c.close()

The driver leads its own process group (and the stdio server is its child,
in that group): close() ends it by that group's id if it does not exit.
"""
import fcntl
import json
import os
import shutil
import signal
import subprocess
import termios
import threading
import time

import harness as h
from ttyend import TtyEnd

MCP_DIR = os.path.join(h.SRCDIR, "tests", "mcp")
DRIVER = os.path.join(MCP_DIR, "driver.mjs")
SDK = os.path.join(MCP_DIR, "node_modules", "@modelcontextprotocol", "sdk", "package.json")


def node_ready():
    """Why the SDK-driven tests cannot run here, or None."""
    if not shutil.which("node"):
        return "no node (.ci/install-deps installs it)"
    if not os.path.exists(SDK):
        return ("@modelcontextprotocol/sdk is not installed in tests/mcp "
                "(.ci/install-deps runs npm ci there)")
    return None


def require_node():
    """node_ready() for a test module: a reason to skip, or None. Under CI
    (DESKHAND_REQUIRE_BROWSER, which .ci/run sets for every npm-installed
    test client, or DESKHAND_REQUIRE_MCP) a missing SDK is a bail-out, not a
    skip that would let the tests pass unseen."""
    missing = node_ready()
    if missing and (os.environ.get("DESKHAND_REQUIRE_MCP")
                    or os.environ.get("DESKHAND_REQUIRE_BROWSER")):
        raise SystemExit("Bail out! the MCP client tests cannot run: " + missing)
    return missing


def stdio_config(argv, env=None, cwd=None, stderr_file=None, **kw):
    """A driver config that starts argv as the server. env is the server's
    whole environment as the test means it (the SDK adds HOME, LOGNAME,
    PATH, SHELL, TERM and USER of the driver's own, which are the test's)."""
    c = {"transport": "stdio", "command": argv[0], "args": list(argv[1:]),
         "env": dict(env) if env is not None else None, "cwd": cwd,
         "stderr_file": stderr_file or os.path.join(h.tmpdir(), "server.stderr")}
    c.update(kw)
    return c


def http_config(url, token=None, headers=None, **kw):
    """A driver config for Streamable HTTP; token becomes a bearer header.
    (Node's fetch sends a given Origin, but drops a given Host.)"""
    hd = dict(headers or {})
    if token is not None:
        hd["Authorization"] = "Bearer " + token
    c = {"transport": "http", "url": url, "headers": hd}
    c.update(kw)
    return c


class McpCallError(AssertionError):
    """A call whose answer was ok: false (a JSON-RPC error, a timeout, an
    abort, or the SDK's own refusal such as a bad structuredContent)."""

    def __init__(self, name, error):
        self.error = error
        self.code = error.get("code")
        super().__init__("%s failed: %s" % (name, json.dumps(error)))


class ConnectFailed(RuntimeError):
    def __init__(self, error, log):
        self.error = error
        super().__init__("the driver could not connect: %s\n%s" % (json.dumps(error), log))


class McpClient(TtyEnd):
    """driver.mjs with `config` (stdio_config/http_config). Connects in the
    constructor: raises ConnectFailed with the driver's connect_failed error
    (e.g. {"code": 401, ...} from the HTTP transport) if it cannot.

    tty=True gives the driver (and so a stdio server, its child) a new
    pseudo-terminal as its controlling terminal: /dev/tty there is
    self.tty, which a test reads with tty_expect() and answers with
    tty_send(). Without it the driver has no controlling terminal at all."""

    def __init__(self, config, timeout=60, tty=False):
        self.config = dict(config)
        self.dir = h.tmpdir()
        self.log_path = os.path.join(self.dir, "driver.stderr")
        self.log = open(self.log_path, "wb")
        self.lines = []          # every line the driver wrote, parsed, in order
        self.results = {}        # tag -> final answer
        self.cond = threading.Condition()
        self.ended = False
        self.n = 0
        self.tty = None
        self.tty_buf = b""
        self.tty_transcript = b""
        preexec = None
        if tty:
            master, slave = os.openpty()
            self.tty = master

            def preexec(ioctl=fcntl.ioctl, op=termios.TIOCSCTTY, fd=slave):
                # After the setsid of start_new_session: this terminal
                # becomes the new session's controlling terminal. (Bound
                # beforehand: the forked child runs as little Python as can be.)
                ioctl(fd, op, 0)
        self.p = subprocess.Popen(
            ["node", DRIVER, json.dumps(self.config)], cwd=MCP_DIR,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            start_new_session=True, preexec_fn=preexec,
            pass_fds=(slave,) if tty else ())
        if tty:
            os.close(slave)
        self.pid = self.p.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        first = self.wait_event(lambda e: e.get("event") in ("connected", "connect_failed"),
                                timeout)
        if first.get("event") == "connect_failed":
            self._reap()
            raise ConnectFailed(first.get("error"), self.logtext())
        self.connected = first

    # ---- the driver's lines
    def _read(self):
        for raw in self.p.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                msg = {"event": "driver_garbage", "line": raw.decode(errors="replace")}
            with self.cond:
                self.lines.append(msg)
                if "ok" in msg and "tag" in msg:
                    self.results[msg["tag"]] = msg
                self.cond.notify_all()
        with self.cond:
            self.ended = True
            self.cond.notify_all()

    def _send(self, cmd):
        try:
            self.p.stdin.write((json.dumps(cmd) + "\n").encode())
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise RuntimeError("the driver has ended: " + self.logtext())

    def _tag(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def events(self, pred=lambda e: True):
        with self.cond:
            return [e for e in self.lines if "event" in e and pred(e)]

    def wait_event(self, pred, timeout=60):
        """The first event line (tagged or not) pred accepts; bounded."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for e in self.lines:
                    if "event" in e and pred(e):
                        return e
                left = deadline - time.monotonic()
                if self.ended or left <= 0:
                    raise AssertionError("%s: no such event within %ds; the driver said:\n%s\n%s" % (
                        "the driver ended" if self.ended else "timed out", timeout,
                        "\n".join(json.dumps(l)[:300] for l in self.lines[-20:]), self.logtext()))
                self.cond.wait(min(left, 1.0))

    def wait_result(self, tag, timeout=60):
        """The final line of command `tag` ({"ok": ...}); bounded."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while tag not in self.results:
                left = deadline - time.monotonic()
                if self.ended or left <= 0:
                    raise AssertionError("%s: no answer to %s within %ds; the driver said:\n%s\n%s" % (
                        "the driver ended" if self.ended else "timed out", tag, timeout,
                        "\n".join(json.dumps(l)[:300] for l in self.lines[-20:]), self.logtext()))
                self.cond.wait(min(left, 1.0))
            return self.results[tag]

    def request(self, op, timeout=60, **kw):
        tag = self._tag(op)
        kw.update(op=op, tag=tag)
        self._send(kw)
        return self.wait_result(tag, timeout)

    # ---- MCP
    def list_tools(self, timeout=60):
        """Every tool (all pages). self.last_list keeps the whole answer:
        pages and schema_errors (strict compiles of every schema)."""
        r = self.request("list", timeout, timeout_ms=int(timeout * 1000))
        if not r["ok"]:
            raise McpCallError("tools/list", r["error"])
        self.last_list = r
        return r["tools"]

    def server_info(self):
        return self.request("server_info")

    def ping(self):
        r = self.request("ping")
        if not r["ok"]:
            raise McpCallError("ping", r["error"])

    def set_elicitation(self, mode, content=None):
        self.request("set_elicitation", elicitation=mode, content=content)

    def call_async(self, name, arguments=None, timeout=60, progress=False):
        """Sends tools/call and returns its tag at once. The SDK gives up
        after `timeout` s (reset by each progress notification when
        progress=True, which also asks for them)."""
        tag = self._tag("call")
        cmd = {"op": "call", "tag": tag, "name": name, "arguments": arguments or {},
               "timeout_ms": int(timeout * 1000)}
        if progress:
            cmd["progress"] = True
        self._send(cmd)
        return tag

    def call(self, name, arguments=None, timeout=60, progress=False):
        """tools/call, blocking: the CallToolResult (isError results are
        results), or McpCallError."""
        tag = self.call_async(name, arguments, timeout, progress)
        r = self.wait_result(tag, timeout + 30)
        if not r["ok"]:
            raise McpCallError(name, r["error"])
        return r["result"]

    def progress(self, tag):
        return self.events(lambda e: e.get("tag") == tag and e.get("event") == "progress")

    def abort(self, tag, reason=None):
        """Aborts pending call `tag`: the SDK sends notifications/cancelled;
        the call's own answer follows (wait_result)."""
        cmd = {"op": "abort", "tag": tag}
        if reason is not None:
            cmd["reason"] = reason
        self._send(cmd)


    # ---- the end
    def logtext(self, limit=4000):
        try:
            self.log.flush()
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")[-limit:]
        except (OSError, ValueError):
            text = ""
        se = self.config.get("stderr_file")
        if se and os.path.exists(se):
            with open(se, "rb") as f:
                text += "\n[server stderr]\n" + f.read().decode(errors="replace")[-limit:]
        return text

    def close(self, timeout=30):
        """client.close() (stdio: the SDK ends the server's stdin, then
        SIGTERM, then SIGKILL); returns the answer, with server_exit for
        stdio. If the driver does not end, its process group is killed."""
        r = None
        if not self.ended and self.p.returncode is None:
            try:
                tag = self._tag("close")
                self._send({"op": "close", "tag": tag})
                r = self.wait_result(tag, timeout)
            except (RuntimeError, AssertionError):
                r = None
        self._reap()
        return r

    def _reap(self, timeout=10):
        # Until it is reaped the driver's pid (its group's id) cannot be
        # reused: wait without reaping, end what is left of its own group
        # (a stdio server the SDK did not end; it too if it hangs), then reap.
        if self.p.returncode is None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                    break
                time.sleep(0.05)
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.p.wait()
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
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
