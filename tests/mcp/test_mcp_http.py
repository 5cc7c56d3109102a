"""deskhand mcp --http 0 --console 0 as a host on the network sees it: the
official SDK's StreamableHTTPClientTransport with the bearer token from
AUDIT.mcp lists the tools, takes a screenshot and clicks the target found
in it once the console (chromium) said yes; raw requests (http.client,
which adds no header of its own) are refused for want of the token, for
a foreign Origin or Host, a wrong method, type, size or protocol version,
and a good one still works after them; SIGTERM ends the server (exit 0)
and takes its AUDIT.mcp away, and with calls pending (one asked in the
console, one queued) runs nothing and answers both before their streams
end. Every case ends with its audit log checked."""
import http.client
import json
import os
import time
import unittest

import harness as h
import mcpdesk as md
import mcplib
from trickle import Trickle, closed_by_server

NODE_MISSING = mcplib.require_node()
BROWSER_MISSING = NODE_MISSING or md.missing()
D = None

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-http", "version": "1"}}}
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def setUpModule():
    global D
    if NODE_MISSING is None:
        D = md.Desk(browser=BROWSER_MISSING is None)


def tearDownModule():
    if D is not None:
        D.stop()


class Case(unittest.TestCase):
    def setUp(self):
        D.reset()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.close()
            md.check_audit(self, s)
            for c in s.clients:
                self.assertEqual(c.events(lambda e: e["event"] == "error"), [], c.logtext())

    def start(self, *flags, **kw):
        s = md.Http(D, *flags, **kw)
        self.servers.append(s)
        return s


@unittest.skipIf(BROWSER_MISSING, BROWSER_MISSING)
class Sdk(Case):
    def test_list_screenshot_and_a_console_approved_click(self):
        s = self.start("--console", "0", "--screen-max", "640x480")
        self.assertEqual(s.url, "http://127.0.0.1:%d/mcp" % s.port)
        self.assertEqual(os.stat(s.mcp_file).st_mode & 0o777, 0o600)
        self.assertIn(s.token, s.stderr())
        c = s.client()
        self.assertEqual(c.connected["protocolVersion"], "2025-11-25")
        self.assertEqual(c.connected["serverVersion"]["name"], "deskhand")
        self.assertEqual([t["name"] for t in c.list_tools()], md.TOOLS)
        self.assertEqual(c.last_list["schema_errors"], [])

        shot = c.call("screenshot")
        png = md.image_of(shot)
        view = shot["structuredContent"]
        self.assertEqual(md.png_size(png), (view["width"], view["height"]))
        self.assertEqual(md.png_size(png), (640, 480))
        self.assertEqual(view["screen"], {"x": 0, "y": 0, "width": md.WIDTH, "height": md.HEIGHT})
        x0, y0, x1, y1 = md.target_in(png)
        point = ((x0 + x1) // 2, (y0 + y1) // 2)

        D.reset()
        tag = c.call_async("click", {"x": point[0], "y": point[1]}, progress=True)
        s.wait_question()
        # The call's stream carries progress while the question waits.
        c.wait_event(lambda e: e.get("tag") == tag and e.get("event") == "progress"
                     and "waiting for a human" in e["message"])
        self.assertEqual(D.presses(D.settle()), [])
        self.assertNotIn(tag, c.results)
        D.B.do("click", page=s.page, sel="#q-y")
        r = c.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertFalse(r["result"]["isError"], r)
        D.wait_presses(1)
        presses = D.presses(D.settle())
        self.assertEqual(len(presses), 1, presses)
        button, x, y = presses[0]
        tx, ty, tw, th = md.TARGET
        self.assertEqual(button, 1)
        self.assertTrue(tx <= x < tx + tw and ty <= y < ty + th, presses)
        self.assertLessEqual(abs(x - point[0] * view["scale"]), 1)
        self.assertLessEqual(abs(y - point[1] * view["scale"]), 1)
        ev = s.audit_events()
        click = md.proposed(ev, "os_input")[0]
        self.assertEqual(click["proposer"], "mcp:deskhand-test-host 0.0.1")
        self.assertEqual(click["action"]["screen_coordinate"], [x, y])
        self.assertEqual([(a["by"], a.get("from")) for a in md.by_id(ev, click["id"], "approved")],
                         [("user", "console:approver")])
        self.assertEqual(s.terminate(), 0, s.stderr())
        self.assertFalse(os.path.exists(s.mcp_file))


@unittest.skipIf(NODE_MISSING, NODE_MISSING)
class Raw(Case):
    def post(self, s, body=None, headers=None, **kw):
        hd = dict(JSON)
        hd.update(headers or {})
        return s.request("POST", headers=hd,
                         body=json.dumps(INIT) if body is None else body, **kw)

    def test_refusals_then_a_good_request(self):
        s = self.start("--console", "0", open_page=False)
        answers = []

        def expect(status, got):
            answers.append(got)
            self.assertEqual(got[0], status, got)
            return got

        with self.subTest("no token"):
            st = expect(401, self.post(s, token=None))
            self.assertIn("Bearer", st[1].get("www-authenticate", ""))
        with self.subTest("a wrong token"):
            expect(401, self.post(s, token="0" * 32))
        with self.subTest("a wrong token of another length"):
            expect(401, self.post(s, token=s.token + "0"))
        with self.subTest("a foreign Origin"):
            expect(403, self.post(s, headers={"Origin": "http://evil.example"}))
        with self.subTest("Origin null"):
            expect(403, self.post(s, headers={"Origin": "null"}))
        with self.subTest("a foreign Host"):
            expect(403, self.post(s, host="evil.example"))
        with self.subTest("a foreign Host with this port"):
            expect(403, self.post(s, host="evil.example:%d" % s.port))
        with self.subTest("GET"):
            st = expect(405, s.request("GET", headers={"Accept": "text/event-stream"}))
            self.assertEqual(st[1].get("allow"), "POST")
        with self.subTest("text/plain"):
            expect(415, self.post(s, headers={"Content-Type": "text/plain"}))
        with self.subTest("over 8 MiB"):
            big = '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"%s"}}' % (
                "x" * (8 * 1024 * 1024))
            expect(413, self.post(s, body=big))
        with self.subTest("an unknown MCP-Protocol-Version"):
            expect(400, self.post(s, headers={"MCP-Protocol-Version": "1999-01-01"}))
        with self.subTest("a header that differs from the message's _meta version"):
            meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}
            st = expect(400, self.post(s, body=json.dumps(
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "screenshot", "arguments": {}, "_meta": meta}}),
                headers={"MCP-Protocol-Version": "2025-11-25"}))
            self.assertIn(b"differs", st[2])
        with self.subTest("no CORS"):
            for st, hd, _ in answers:
                self.assertFalse([k for k in hd if k.startswith("access-control-")], hd)

        # After all of them a good token still works, from this server's own Origin too.
        st, hd, body = self.post(s, headers={"Origin": "http://127.0.0.1:%d" % s.port})
        self.assertEqual(st, 200, body)
        self.assertTrue(hd["content-type"].startswith("application/json"), hd)
        r = json.loads(body)
        self.assertEqual(r["id"], 1)
        self.assertEqual(r["result"]["protocolVersion"], "2025-11-25")
        st, _, body = self.post(s, body=json.dumps({"jsonrpc": "2.0", "id": 2,
                                                    "method": "tools/list"}),
                                headers={"MCP-Protocol-Version": "2025-11-25"})
        self.assertEqual(st, 200, body)
        self.assertEqual([t["name"] for t in json.loads(body)["result"]["tools"]], md.TOOLS)
        # The header and _meta agreeing: served.
        st, _, body = self.post(s, body=json.dumps(
            {"jsonrpc": "2.0", "id": 4, "method": "tools/list",
             "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                  "io.modelcontextprotocol/clientCapabilities": {}}}}),
            headers={"MCP-Protocol-Version": "2026-07-28"})
        self.assertEqual(st, 200, body)
        self.assertEqual(len(json.loads(body)["result"]["tools"]), len(md.TOOLS))
        # And so does the SDK's client.
        self.assertEqual(s.client().call("screenshot")["isError"], False)
        # No refused request reached the gate.
        self.assertEqual([e["kind"] for e in md.proposed(s.audit_events())], ["os_observe"])
        self.assertEqual(s.terminate(), 0, s.stderr())

    def test_trickling_strangers_cannot_lock_the_host_out(self):
        """Slowloris: 40 connections (the server holds 32) whose headers never
        end, a byte a second each; the host's requests still get in (before,
        the first 32 held every slot, for up to 600 s each)."""
        s = self.start()
        trickle = Trickle(s.port, 40)
        try:
            time.sleep(1.5)
            st, _, body = self.post(s)
            self.assertEqual(st, 200, body)
            self.assertEqual(s.client().call("screenshot")["isError"], False)
            # Only the newest strangers were kept: the older ones were cut.
            self.assertTrue(h.wait_for(lambda: sum(map(closed_by_server, trickle.socks)) >= 30, 10))
        finally:
            trickle.stop()
        self.assertEqual(s.terminate(), 0, s.stderr())

    def test_a_wrong_token_fails_the_sdks_connection(self):
        s = self.start()
        with self.assertRaises(mcplib.ConnectFailed) as cm:
            s.client(token="f" * 32)
        self.assertEqual(cm.exception.error["code"], 401)

    def test_sigterm_ends_it_and_takes_its_file_away(self):
        s = self.start()
        c = s.client()
        c.ping()
        self.assertTrue(os.path.exists(s.mcp_file))
        self.assertEqual(s.terminate(), 0, s.stderr())
        self.assertFalse(os.path.exists(s.mcp_file))
        # The port is closed.
        with self.assertRaises(OSError):
            s.request("POST", headers=JSON, body=json.dumps(INIT))


def open_call(s, rid, name, arguments):
    """POSTs one tools/call (raw) and returns once its stream's headers
    came: the server has taken the call. (connection, response)."""
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()
    for k, v in dict(JSON, **{"Host": "127.0.0.1:%d" % s.port,
                             "Authorization": "Bearer " + s.token,
                             "MCP-Protocol-Version": "2025-11-25",
                             "Content-Length": str(len(body))}).items():
        conn.putheader(k, v)
    conn.endheaders(body)
    r = conn.getresponse()
    assert (r.status, r.getheader("Content-Type")) == (200, "text/event-stream"), r.status
    return conn, r


def rest_of(conn, r):
    """What is left of a stream: (messages, whether it was cut off)."""
    try:
        text, cut = r.read().decode(), False
    except http.client.IncompleteRead as e:
        text, cut = e.partial.decode(), True
    conn.close()
    return [json.loads(l[6:]) for l in text.splitlines() if l.startswith("data: ")], cut


@unittest.skipIf(BROWSER_MISSING, BROWSER_MISSING)
class Ending(Case):
    def test_sigterm_with_calls_pending(self):
        s = self.start("--console", "0")
        st, _, body = s.request("POST", headers=JSON, body=json.dumps(INIT))
        self.assertEqual(st, 200, body)
        # One call asked in the console, a second queued behind it (one worker).
        asked = open_call(s, "asked-1", "click", {"x": 780, "y": 550})
        s.wait_question()
        queued = open_call(s, "queued-1", "click", {"x": 790, "y": 560})
        self.assertEqual(s.terminate(), 0, s.stderr())
        self.assertFalse(os.path.exists(s.mcp_file))
        streams = {"asked-1": rest_of(*asked), "queued-1": rest_of(*queued)}
        with self.subTest("nothing ran"):
            self.assertEqual(D.presses(D.settle()), [])
            ev = s.audit_events()
            self.assertEqual([e["event"] for e in ev if e.get("id")],
                             ["proposed", "asked", "denied"])
        with self.subTest("the audit log says the server stopped, not that the client withdrew"):
            denied = [e for e in s.audit_events() if e["event"] == "denied"]
            self.assertNotIn("client withdrew", denied[0]["reason"], denied)
        for rid, (msgs, cut) in streams.items():
            with self.subTest("the call is answered before its stream ends", call=rid):
                # The client did not cancel it: its request gets a response
                # (an error result or a JSON-RPC error); without one a host
                # waits for its own timeout (the SDK's: 60 s).
                answers = [m for m in msgs if "result" in m or "error" in m]
                self.assertEqual([m["id"] for m in answers], [rid], "the stream %s: %r" % (
                    "was cut off" if cut else "ended", msgs))
                self.assertTrue("error" in answers[0] or answers[0]["result"]["isError"], answers)


if __name__ == "__main__":
    h.main()
