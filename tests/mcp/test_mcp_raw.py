"""deskhand mcp spoken to line by line (tests/lib/mcpraw.py: no SDK in
between), on a private Xvfb where tests/xrecord records every event that
reaches the X server: the 2026-07-28 era (server/discover, the version and
the capabilities in each request's _meta), the 2025-11-25 handshake,
hostile clients (each answered with a JSON-RPC error or a refusal, the
server alive after it, nothing run), no approver, a cancellation that
withdraws the question, --os-auto-approve and --trust-host-approvals.

Every server's audit log is checked when its test ends: every executed
line follows an approved line of its id, and `deskhand audit verify`
accepts the log. "Nothing reached X" is proven by order, not by waiting:
a marker (the pointer moved by `deskhand move` to a point of its own) is
recorded after everything the test sent, so an event before it came from
the test's calls."""
import json
import os
import unittest

import harness as h
import mcpraw
import xinput_util as xu
from mcpraw import STATELESS, INITIALIZE, meta, png_size, text_of

W, H = 1920, 1080              # the screen
SHOT_W, SHOT_H = 1280, 720     # --screen-max: the host's view, scale 1.5
TOOLS = {"screenshot", "click", "drag", "scroll", "move", "key", "type", "wait", "find_text",
         "elements", "click_element", "windows", "execute"}
CLICK = {"x": 100, "y": 200}   # in the view: the screen's (150, 300)


def screen(v):
    return v * 3 // 2


class Desk(unittest.TestCase):
    """One Xvfb and one recording client per class; servers per test."""

    @classmethod
    def setUpClass(cls):
        cls.X = h.Xvfb(W, H)
        try:
            cls.rec = xu.Recorder(cls.X)
        except Exception:
            cls.X.stop()
            raise
        cls.home = h.tmpdir()
        cls.n_marks = 0

    @classmethod
    def tearDownClass(cls):
        cls.rec.stop()
        cls.X.stop()

    def setUp(self):
        self.servers = []
        self.rec.reset()

    def tearDown(self):
        for s in self.servers:
            s.close()
        for s in self.servers:
            # Standard output carried only protocol messages.
            self.assertEqual(s.garbage, [], "stdout carried non-protocol lines")
            self.check_log(s)

    def check_log(self, s):
        events = s.audit_events()
        self.assertTrue(events, "no audit log at " + s.audit)
        seq = mcpraw.check_audit(self, events)
        mcpraw.verify_audit(self, s.audit, env=s.env)
        return seq

    def server(self, *flags, init=True, capabilities=None, **kw):
        s = mcpraw.Server(self.X, "--screen-max", "%dx%d" % (SHOT_W, SHOT_H), *flags, **kw)
        self.servers.append(s)
        if init:
            s.initialize(capabilities=capabilities)
        return s

    def shot(self, s, **kw):
        r = s.tool_result("screenshot", {}, **kw)
        self.assertFalse(r["isError"], r)
        self.assertEqual(png_size(r), (SHOT_W, SHOT_H))
        return r

    # ---- what reached the X server
    def marker(self):
        """Moves the pointer (deskhand's own command, not the server) to a
        point no other marker and no click of these tests uses, and waits
        for its motion event; returns the events recorded before it."""
        type(self).n_marks += 1
        n = type(self).n_marks
        x, y = 700 + 7 * n, 600 + 3 * n
        env = self.X.env(HOME=self.home, XDG_DATA_HOME=os.path.join(self.home, "data"),
                         XDG_CONFIG_HOME=os.path.join(self.home, "config"))
        r = h.run([h.binary(), "move", str(x), str(y)], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)

        def at_mark(e):
            return e["kind"] == "motion" and e["x"] == str(x) and e["y"] == str(y)
        evs = self.rec.wait_events(lambda evs: any(at_mark(e) for e in evs))
        self.assertTrue(any(at_mark(e) for e in evs), "the marker never arrived: %r" % evs)
        before = evs[:next(i for i, e in enumerate(evs) if at_mark(e))]
        self.rec.reset()
        return before

    def nothing_reached(self):
        before = [e for e in self.marker() if e["kind"] in mcpraw.INPUT_KINDS]
        self.assertEqual(before, [], "input reached the X server")

    def wait_click(self, x, y, button="1"):
        """The press and release of one click at screen (x, y)."""
        def done(evs):
            return any(e["kind"] == "release" and e.get("button") == button for e in evs)
        evs = self.rec.wait_events(done)
        presses = [e for e in evs if e["kind"] == "press"]
        self.assertEqual([(e["button"], e["x"], e["y"]) for e in presses],
                         [(button, str(x), str(y))], evs)
        self.rec.reset()
        return evs

    # ---- the audit log
    def input_ids(self, s):
        return [e["id"] for e in s.audit_events()
                if e["event"] == "proposed" and e["kind"] == "os_input"]

    def events_of(self, s, aid):
        return [e for e in s.audit_events() if e.get("id") == aid]

    def assert_not_run(self, s):
        """No input action of this server ran."""
        ran = [e for e in s.audit_events() if e["event"] == "executed" and e["kind"] == "os_input"]
        self.assertEqual(ran, [])


def errors_between(s, start, end_id):
    """The messages after index start up to the response to end_id."""
    s.response(end_id, start=start)
    with s.cond:
        msgs = s.messages[start:]
    out = []
    for m in msgs:
        if "method" not in m and m.get("id") == end_id:
            break
        out.append(m)
    return out


class Stateless(Desk):
    """2026-07-28: no handshake; each request names the version and the
    client's capabilities in its _meta."""

    def test_discover_result_shape(self):
        s = self.server(init=False)
        for params in (None, {"_meta": meta()}):
            r = s.call("server/discover", params)["result"]
            self.assertEqual(set(r), {"supportedVersions", "capabilities", "serverInfo",
                                      "instructions"})
            self.assertEqual(r["supportedVersions"][:2], [STATELESS, INITIALIZE])
            self.assertTrue(all(isinstance(v, str) for v in r["supportedVersions"]))
            self.assertIsInstance(r["capabilities"]["tools"], dict)
            self.assertEqual(r["serverInfo"]["name"], "deskhand")
            self.assertIsInstance(r["serverInfo"]["version"], str)
            self.assertIn("screenshot", r["instructions"])
        s.ping()

    def test_tools_list_and_screenshot_with_only_meta(self):
        s = self.server(init=False)
        r = s.call("tools/list", {"_meta": meta()})["result"]
        tools = {t["name"]: t for t in r["tools"]}
        self.assertEqual(set(tools), TOOLS)
        for t in tools.values():
            self.assertEqual(t["inputSchema"]["type"], "object", t["name"])
        self.assertTrue(tools["screenshot"]["annotations"]["readOnlyHint"])
        self.assertFalse(tools["click"]["annotations"]["readOnlyHint"])
        self.assertTrue(tools["click"]["annotations"]["destructiveHint"])
        self.assertIn("outputSchema", tools["screenshot"])

        res = self.shot(s, stateless=True)
        self.assertEqual(res["structuredContent"],
                         {"width": SHOT_W, "height": SHOT_H, "scale": 1.5,
                          "screen": {"x": 0, "y": 0, "width": W, "height": H}})
        # The client's self-reported name from _meta is the proposer.
        proposed = [e for e in s.audit_events() if e["event"] == "proposed"]
        self.assertEqual([e["proposer"] for e in proposed], ["mcp:mcpraw 1.0"])
        # _meta does not initialize the connection: a bare request still needs it.
        err = s.error("tools/list")
        self.assertEqual(err["code"], -32600)

    def test_unknown_meta_version_lists_the_supported_ones(self):
        s = self.server(init=False)
        supported = s.call("server/discover")["result"]["supportedVersions"]
        # Versions before 2026-07-28 are negotiated by initialize, not in _meta.
        for v in ("2099-01-01", INITIALIZE, ""):
            for method, params in (("tools/list", {}),
                                   ("tools/call", {"name": "click", "arguments": CLICK}),
                                   ("ping", {})):
                with self.subTest(version=v, method=method):
                    params = dict(params, _meta=meta(version=v))
                    err = s.error(method, params)
                    self.assertEqual(err["code"], -32022)
                    self.assertEqual(err["data"]["supported"], supported)
                    self.assertEqual(err["data"]["requested"], v)
        self.assertEqual(self.input_ids(s), [])
        s.ping()
        self.nothing_reached()

    def test_missing_client_capabilities_is_invalid_params(self):
        s = self.server(init=False)
        for method, params in (("tools/list", {}),
                               ("tools/call", {"name": "screenshot"}),
                               ("tools/call", {"name": "click", "arguments": CLICK})):
            with self.subTest(method=method, params=params):
                err = s.error(method, dict(params, _meta=meta(capabilities=False)))
                self.assertEqual(err["code"], -32602)
                self.assertIn("clientCapabilities", err["message"])
        # Of the wrong type: also invalid params.
        err = s.error("tools/list", {"_meta": dict(meta(), **{
            "io.modelcontextprotocol/clientCapabilities": "all"})})
        self.assertEqual(err["code"], -32602)
        self.assertEqual(s.audit_events()[1:], [])   # only the session line
        s.ping()
        self.nothing_reached()


class Handshake(Desk):
    """2025-11-25: initialize first."""

    def test_initialize_handshake(self):
        s = self.server(init=False)
        # Before initialize: only ping and server/discover.
        s.ping()
        self.assertEqual(s.error("tools/list")["code"], -32600)
        err = s.error("tools/call", {"name": "click", "arguments": CLICK})
        self.assertEqual(err["code"], -32600)
        self.assertIn("initialize", err["message"])
        self.assertEqual(s.audit_events()[1:], [])
        r = s.initialize(client=("raw-host", "2.5"))
        self.assertEqual(r["protocolVersion"], INITIALIZE)
        self.assertIsInstance(r["capabilities"]["tools"], dict)
        self.assertEqual(r["serverInfo"]["name"], "deskhand")
        self.assertIsInstance(r["instructions"], str)
        # notifications/initialized is a notification: nothing answers it.
        mark = s.mark()
        rid = s.request("ping")
        self.assertEqual(errors_between(s, mark, rid), [])
        tools = s.call("tools/list")["result"]["tools"]
        self.assertEqual({t["name"] for t in tools}, TOOLS)
        self.shot(s)
        self.assertEqual([e["proposer"] for e in s.audit_events() if e["event"] == "proposed"],
                         ["mcp:raw-host 2.5"])
        self.nothing_reached()

    def test_the_config_file_named_after_other_options_is_read(self):
        # deskhand mcp --audit A --workspace W --config F: F is read although
        # options with values come before it (they were taken for the end
        # of the options, and F was never read).
        conf = os.path.join(h.tmpdir(), "config.json")
        with open(conf, "w") as f:
            json.dump({"screen_max": "640x360"}, f)
        s = mcpraw.Server(self.X, "--config", conf)
        self.servers.append(s)
        s.initialize()
        r = s.tool_result("screenshot", {})
        self.assertFalse(r["isError"], r)
        self.assertEqual(png_size(r), (640, 360))
        # A file that is not there is an error at start, not a silence.
        bad = mcpraw.Server(self.X, "--config", conf + ".missing")
        self.assertEqual(bad.close(), 2)
        self.assertIn("no such file", bad.stderr())

    def test_versions_of_initialize(self):
        for asked, got in (("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"),
                           (INITIALIZE, INITIALIZE), ("1999-01-01", INITIALIZE)):
            with self.subTest(asked=asked):
                s = self.server(init=False)
                self.assertEqual(s.initialize(version=asked)["protocolVersion"], got)
                # The negotiated version may be named in _meta; another may not.
                self.assertIn("result", s.call("tools/list", {"_meta": meta(version=got)}))
                other = "2025-06-18" if got != "2025-06-18" else INITIALIZE
                self.assertEqual(s.error("tools/list", {"_meta": meta(version=other)})["code"],
                                 -32022)

    def test_initialize_needs_a_version(self):
        s = self.server(init=False)
        for params in ({}, {"protocolVersion": 20251125, "capabilities": {}},
                       {"protocolVersion": INITIALIZE, "capabilities": []}):
            with self.subTest(params=params):
                self.assertEqual(s.error("initialize", params)["code"], -32602)
        # Still not initialized.
        self.assertEqual(s.error("tools/list")["code"], -32600)


class Hostile(Desk):
    """Clients that send what they should not. Each case runs against a
    server with --os-auto-approve, so that anything that slipped through
    would really click; a valid click at the end (the control) is the
    first and only input that reaches X."""

    def auto(self, **kw):
        s = self.server("--os-auto-approve", **kw)
        self.shot(s)
        return s

    def control(self, s):
        """A valid click: answered, and the only input X saw."""
        r = s.tool_result("click", {"x": 300, "y": 400})
        self.assertFalse(r["isError"], r)
        evs = self.wait_click(450, 600)
        self.assertEqual([e["kind"] for e in evs if e["kind"] in ("press", "release")],
                         ["press", "release"])
        # Nothing but the control's own motion came before its press.
        pre = evs[:[e["kind"] for e in evs].index("press")]
        self.assertEqual([e for e in pre if (e["kind"], e["x"], e["y"]) != ("motion", "450", "600")],
                         [], "input before the control click")
        ran = [e["id"] for e in s.audit_events() if e["event"] == "executed" and
               e["kind"] == "os_input"]
        self.assertEqual(len(ran), 1, s.audit_events())

    def expect_one_error(self, s, line, code, id=None):
        """line gets exactly one answer: an error with code, to id."""
        mark = s.mark()
        s.send(line)
        rid = s.request("ping", id="after-%d" % mark)
        got = errors_between(s, mark, rid)
        self.assertEqual(len(got), 1, got)
        self.assertEqual(got[0].get("id", "missing"), id, got)
        self.assertEqual(got[0]["error"]["code"], code, got)
        return got[0]["error"]

    def test_malformed_json(self):
        s = self.auto()
        click = '{"jsonrpc":"2.0","id":"m%d","method":"tools/call","params":{"name":"click",' \
                '"arguments":{"x":10,"y":10}}}'
        lines = ["{bad", click[:-1] % 1, click % 2 + " trailing", click % 3 + "}",
                 "'single'", "nul\x00l", "   ", click.replace('"x":10', '"x":10,') % 4,
                 b'{"jsonrpc":"2.0","id":"m5","method":"ping","params":{"s":"\xff\xfe"}}']
        for line in lines:
            with self.subTest(line=line):
                self.expect_one_error(s, line, -32700)
        # None of those ids was answered as a request.
        for i in range(1, 6):
            self.assertEqual(s.responses("m%d" % i), [])
        s.ping()
        self.control(s)

    def test_batch_array(self):
        s = self.auto()
        batch = [{"jsonrpc": "2.0", "id": "b1", "method": "tools/call",
                  "params": {"name": "click", "arguments": {"x": 10, "y": 10}}},
                 {"jsonrpc": "2.0", "id": "b2", "method": "ping"}]
        self.assertIn("batch", self.expect_one_error(s, batch, -32600)["message"])
        self.expect_one_error(s, [], -32600)
        self.expect_one_error(s, "[1,2]", -32600)
        for line in ("null", "7", '"ping"', "true"):
            self.expect_one_error(s, line, -32600)
        self.assertEqual(s.responses("b1") + s.responses("b2"), [])
        self.control(s)

    def test_jsonrpc_version(self):
        s = self.auto()
        base = {"id": "v", "method": "tools/call",
                "params": {"name": "click", "arguments": {"x": 10, "y": 10}}}
        for v in ("1.0", 2, 2.0, None, "2.0 "):
            with self.subTest(jsonrpc=v):
                self.expect_one_error(s, dict(base, jsonrpc=v), -32600)
        self.expect_one_error(s, base, -32600)   # no "jsonrpc" at all
        self.control(s)

    def test_unknown_method(self):
        s = self.auto()
        for i, method in enumerate(("frobnicate", "tools/Call", "tools/call/", "Ping",
                                    "resources/read", "sampling/createMessage", "")):
            with self.subTest(method=method):
                err = s.error(method, {"name": "click", "arguments": {"x": 10, "y": 10}},
                              id="u%d" % i)
                self.assertEqual(err["code"], -32601)
        # A method that is not a string: an invalid request.
        self.expect_one_error(s, {"jsonrpc": "2.0", "id": "u-num", "method": 7}, -32600,
                              id="u-num")
        # An unknown notification is not answered at all.
        mark = s.mark()
        s.notify("notifications/frobnicate", {"x": 1})
        s.notify("tools/call", {"name": "click", "arguments": {"x": 10, "y": 10}})
        rid = s.request("ping", id="after-notes")
        self.assertEqual(errors_between(s, mark, rid), [])
        self.control(s)

    def test_wrong_parameter_types(self):
        s = self.auto()
        protocol = [  # answered with a JSON-RPC error
            ({"name": 7, "arguments": CLICK}, -32602),
            ({"name": None}, -32602),
            ({"name": ["click"]}, -32602),
            ({"arguments": CLICK}, -32602),
            ({"name": "Click", "arguments": CLICK}, -32602),
            ({"name": "left_click", "arguments": {"coordinate": [10, 10]}}, -32602),
        ]
        for params, code in protocol:
            with self.subTest(params=params):
                self.assertEqual(s.error("tools/call", params)["code"], code)
        for params in ([1, 2], "click", 7):
            with self.subTest(params=params):
                self.expect_one_error(s, {"jsonrpc": "2.0", "id": "p-%r" % (params,),
                                          "method": "tools/call", "params": params},
                                      -32602, id="p-%r" % (params,))
        refused = [  # answered with an isError result
            "x=10&y=10", ["x", 10], 7, True,
            {"x": "a", "y": 10}, {"x": 10, "y": "10"}, {"x": 10.5, "y": 10}, {"x": 10},
            {"x": 1e12, "y": 10}, {"x": None, "y": 10}, {"x": [10], "y": 10},
            {"x": 10, "y": 10, "z": 1}, {"x": 10, "y": 10, "coordinate": [10, 10]},
            {"x": 10, "y": 10, "button": "left; rm -rf /"}, {"x": 10, "y": 10, "button": 1},
            {"x": 10, "y": 10, "count": 4}, {"x": 10, "y": 10, "count": "2"},
            {"x": 10, "y": 10, "button": "right", "count": 2},
            {"x": 10, "y": 10, "modifiers": "hyper+nonsense"},
            {"x": -5, "y": 10}, {"x": SHOT_W, "y": 10}, {"x": 10, "y": SHOT_H},
        ]
        for args in refused:
            with self.subTest(arguments=args):
                r = s.tool_result("click", args)
                self.assertTrue(r["isError"], r)
                self.assertNotIn("done", text_of(r))
        for name, args in (("key", {"keys": 7}), ("key", {"keys": "ctrl+s", "repeat": 0}),
                           ("type", {"text": ["a"]}), ("drag", {"x1": 1, "y1": 1}),
                           ("scroll", {"direction": "sideways"}), ("move", {}),
                           ("wait", {"seconds": "1"}), ("screenshot", {"x": 1})):
            with self.subTest(tool=name, arguments=args):
                self.assertTrue(s.tool_result(name, args)["isError"])
        s.ping()
        self.control(s)

    def test_names_with_a_nul_are_other_names(self):
        # "click\u0000..." is not "click", nor "tools/call\u0000x" tools/call:
        # cJSON would cut each at the NUL, so a message holding one is refused
        # whole (with its id), whichever string holds it.
        s = self.auto()
        for params in ({"name": "click\u0000", "arguments": CLICK},
                       {"name": "click\u0000 or anything", "arguments": CLICK},
                       {"name": "type", "arguments": {"text": "ls\u0000; rm -rf ~"}}):
            with self.subTest(params=params):
                self.assertEqual(s.error("tools/call", params)["code"], -32600)
        for method in ("tools/call\u0000x", "ping\u0000"):
            with self.subTest(method=method):
                self.assertEqual(s.error(method, {"name": "click", "arguments": CLICK})["code"],
                                 -32600)
        self.control(s)

    def test_a_100_mb_line(self):
        s = self.auto()
        before = s.rss_peak_kb()
        mark = s.mark()
        # A click that would run, padded to 100 MiB in one line.
        head = (b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"click",'
                b'"arguments":{"x":10,"y":10},"pad":"')
        chunk = b"x" * (1 << 20)
        s.p.stdin.write(head)
        for _ in range(100):
            s.p.stdin.write(chunk)
        s.p.stdin.write(b'"}}\n')
        s.p.stdin.flush()
        rid = s.request("ping", id="after-big")
        got = errors_between(s, mark, rid)
        self.assertEqual(len(got), 1, got)
        self.assertIsNone(got[0]["id"])
        self.assertEqual(got[0]["error"]["code"], -32600)
        self.assertIn("too large", got[0]["error"]["message"])
        self.assertEqual(s.responses("big"), [])
        peak = s.rss_peak_kb()
        # Never buffered whole: the peak stays far below the line's size.
        self.assertLess(peak, 64 * 1024, "peak RSS %d kB (before: %d kB)" % (peak, before))
        self.assertLess(peak - before, 40 * 1024, "grew %d kB" % (peak - before))
        self.control(s)

    def test_the_size_limit_is_exact(self):
        s = self.auto()
        limit = 8 << 20

        def ping_of(n, rid):
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode()
            return line[:-1] + b" " * (n - len(line)) + b"}"
        s.send(ping_of(limit, "at-limit"))
        self.assertEqual(s.response("at-limit")["result"], {})
        self.expect_one_error(s, ping_of(limit + 1, "over-limit"), -32600)
        self.assertEqual(s.responses("over-limit"), [])
        self.control(s)

    def test_a_request_id_reused(self):
        s = self.auto()
        s.call("ping", id="r")
        err = s.error("tools/call", {"name": "click", "arguments": {"x": 10, "y": 10}}, id="r")
        self.assertEqual(err["code"], -32600)
        self.assertIn("already used", err["message"])
        # An integer id and the same number written otherwise are one id;
        # the string "5" is another.
        s.call("ping", id=5)
        mark = s.mark()
        s.send('{"jsonrpc":"2.0","id":5.0,"method":"tools/call","params":{"name":"click",'
               '"arguments":{"x":10,"y":10}}}')
        rid = s.request("ping", id="after-5")
        got = errors_between(s, mark, rid)
        self.assertEqual([m["error"]["code"] for m in got], [-32600], got)
        self.assertEqual(s.call("ping", id="5")["result"], {})
        # The id of a call that ran cannot be used again either.
        done = s.tool_result("screenshot", {}, id="shot-1")
        self.assertFalse(done["isError"])
        self.assertEqual(s.error("tools/call", {"name": "click", "arguments": CLICK},
                                 id="shot-1")["code"], -32600)
        # Exactly one answer per id, and only one screenshot was proposed for shot-1.
        self.assertEqual(len(s.responses("shot-1")), 2)
        self.assertEqual(self.input_ids(s), [])
        self.control(s)

    def test_an_id_is_answered_as_it_was_sent(self):
        # JSON-RPC: the response carries the request's id. An integer id
        # deskhand takes comes back as that integer, not as another number
        # or in exponent form (which clients with integer ids cannot read);
        # one it will not take is an invalid request (id null), never a
        # response to some other id.
        s = self.auto()
        for rid in (0, -1, 2147483648, 10 ** 15 - 1, 10 ** 15, 4503599627370497,
                    9007199254740991, -9007199254740991):
            with self.subTest(id=rid):
                mark = s.mark()
                s.send('{"jsonrpc":"2.0","id":%d,"method":"ping"}' % rid)
                got = errors_between(s, mark, s.request("ping", id="after-%d" % rid))
                self.assertEqual(len(got), 1, got)
                if "error" in got[0]:
                    self.assertEqual((got[0]["id"], got[0]["error"]["code"]), (None, -32600))
                else:
                    self.assertIs(type(got[0]["id"]), int, got)
                    self.assertEqual(got[0]["id"], rid)
        self.control(s)

    def test_calls_after_a_cancellation(self):
        s = self.server("--console", "0")
        self.shot(s)
        cl = mcpraw.consolelib()
        links = s.console()
        cookie, csrf = cl.login(links)
        ev = cl.Events(links, cookie)
        try:
            a = s.tool("click", CLICK, id="a")
            q1 = ev.question()
            self.assertIsNotNone(q1)
            b = s.tool("click", {"x": 20, "y": 20}, id="b")     # queued behind a
            s.notify("notifications/cancelled", {"requestId": b, "reason": "changed my mind"})
            s.notify("notifications/cancelled", {"requestId": a})
            s.wait_audit(lambda e: e["event"] == "denied" and "withdrew" in e.get("reason", ""))
            # The single worker takes calls in turn: once this screenshot is
            # answered, a and b are over, with no answer to either.
            self.shot(s, id="after")
            self.assertEqual(s.responses(a) + s.responses(b), [])
            self.assertEqual(len(self.input_ids(s)), 1, "the queued call was proposed")
            # The withdrawn question cannot be answered any more.
            st, _, _ = cl.post(links, "/api/answer", cookie, csrf, {"qid": q1["qid"], "answer": "y"})
            self.assertEqual(st, 409)
            # Ids of cancelled calls stay used.
            self.assertEqual(s.error("tools/call", {"name": "click", "arguments": CLICK},
                                     id="a")["code"], -32600)
            self.assertEqual(s.error("tools/call", {"name": "click", "arguments": CLICK},
                                     id="b")["code"], -32600)
            # A later call asks afresh (the withdrawal answered nothing for
            # it) and waits for the human, who says no.
            c = s.tool("click", CLICK, id="c")
            q2 = ev.question(after=q1["qid"])
            self.assertIsNotNone(q2)
            s.ping()
            self.assertEqual(s.responses(c), [])
            st, _, _ = cl.post(links, "/api/answer", cookie, csrf, {"qid": q2["qid"], "answer": "n"})
            self.assertEqual(st, 200)
            r = s.response(c)["result"]
            self.assertTrue(r["isError"], r)
        finally:
            ev.close()
        ids = self.input_ids(s)
        self.assertEqual(len(ids), 2)
        self.assertEqual(self.events_of(s, ids[1])[-1]["event"], "denied")
        self.assertEqual(self.events_of(s, ids[1])[-1].get("from"), "console:approver")
        self.assert_not_run(s)
        self.nothing_reached()

    def test_an_elicitation_answered_without_the_trust_flag(self):
        s = self.server("--console", "0", capabilities={"elicitation": {}})
        self.shot(s)
        cl = mcpraw.consolelib()
        links = s.console()
        cookie, csrf = cl.login(links)
        ev = cl.Events(links, cookie)
        try:
            rid = s.tool("click", CLICK)
            el = s.wait(lambda m: m.get("method") == "elicitation/create", what="elicitation")
            self.assertIn("does not count", el["params"]["message"])
            self.assertEqual(el["params"]["requestedSchema"]["properties"]["approve"]["type"],
                             "boolean")
            # The host says yes, twice, and answers questions never asked.
            s.respond(el["id"], {"action": "accept", "content": {"approve": True}})
            s.respond(el["id"], {"action": "accept", "content": {"approve": True}})
            s.respond("deskhand-ask-99", {"action": "accept", "content": {"approve": True}})
            s.send({"jsonrpc": "2.0", "id": el["id"], "error": {"code": 0, "message": "x"}})
            s.wait_stderr("does not count")
            s.ping()
            # Still pending: no answer to the call, the question still open.
            q = ev.question()
            self.assertIsNotNone(q)
            self.assertEqual(s.responses(rid), [])
            aid = self.input_ids(s)[0]
            self.assertEqual([e["event"] for e in self.events_of(s, aid)], ["proposed", "asked"])
            # The human denies it in the console.
            st, _, body = cl.post(links, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "n"})
            self.assertEqual(st, 200, body)
            r = s.response(rid)["result"]
            self.assertTrue(r["isError"], r)
        finally:
            ev.close()
        self.assertEqual(self.events_of(s, aid)[-1]["event"], "denied")
        self.assertEqual(self.events_of(s, aid)[-1]["from"], "console:approver")
        self.assert_not_run(s)
        s.ping()
        self.nothing_reached()


class NoApprover(Desk):
    """No terminal (the server leads a new session), no console, no
    --os-auto-approve: observations work, input is refused."""

    def test_input_is_refused_and_says_how_to_start(self):
        s = self.server()
        self.shot(s)
        self.assertIn("nobody can approve", s.stderr())
        calls = [("click", CLICK), ("click", dict(CLICK, button="right")),
                 ("move", {"x": 50, "y": 60}), ("drag", {"x1": 1, "y1": 2, "x2": 30, "y2": 40}),
                 ("scroll", {"direction": "down", "x": 50, "y": 50}), ("key", {"keys": "ctrl+s"}),
                 ("type", {"text": "hello"})]
        for name, args in calls:
            with self.subTest(tool=name, arguments=args):
                r = s.tool_result(name, args)
                self.assertTrue(r["isError"], r)
                self.assertIn("--console", text_of(r))
        s.ping()
        ids = self.input_ids(s)
        self.assertEqual(len(ids), len(calls))
        for aid in ids:
            evs = [e["event"] for e in self.events_of(s, aid)]
            self.assertTrue("denied" in evs or "blocked" in evs, evs)
            self.assertNotIn("approved", evs)
            self.assertNotIn("executed", evs)
        self.nothing_reached()


class Cancellation(Desk):
    def test_cancellation_withdraws_the_question(self):
        s = self.server("--console", "0")
        self.shot(s)
        cl = mcpraw.consolelib()
        links = s.console()
        cookie, csrf = cl.login(links)
        ev = cl.Events(links, cookie)
        try:
            rid = s.tool("click", CLICK, id="c1", progress="p1")
            s.wait_audit(lambda e: e["event"] == "asked")
            q = ev.question()
            self.assertIsNotNone(q)
            # Pending, with progress while the question waits.
            p = s.wait(lambda m: m.get("method") == "notifications/progress" and
                       "waiting" in m["params"].get("message", ""), what="progress")
            self.assertEqual(p["params"]["progressToken"], "p1")
            s.notify("notifications/cancelled", {"requestId": rid, "reason": "user aborted"})
            d = s.wait_audit(lambda e: e["event"] == "denied")
            self.assertIn("withdrew", d["reason"])
            # The question is gone: the console cannot approve it any more.
            st, _, _ = cl.post(links, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
            self.assertEqual(st, 409)
            # The worker has finished c1 once a later call is answered.
            self.shot(s)
            s.ping()
            self.assertEqual(s.responses(rid), [])
        finally:
            ev.close()
        aid = self.input_ids(s)[0]
        self.assertEqual([e["event"] for e in self.events_of(s, aid)],
                         ["proposed", "asked", "denied"])
        self.nothing_reached()

    def test_a_cancellation_for_another_id_changes_nothing(self):
        s = self.server("--console", "0")
        self.shot(s)
        cl = mcpraw.consolelib()
        links = s.console()
        cookie, csrf = cl.login(links)
        ev = cl.Events(links, cookie)
        try:
            rid = s.tool("click", CLICK, id="keep")
            q = ev.question()
            for other in ("keep ", "KEEP", 0, None, {"id": "keep"}, ["keep"]):
                s.notify("notifications/cancelled", {"requestId": other})
            s.notify("notifications/cancelled", {})
            s.notify("notifications/cancelled")
            s.ping()
            self.assertEqual([e["event"] for e in self.events_of(s, self.input_ids(s)[0])],
                             ["proposed", "asked"])
            st, _, _ = cl.post(links, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
            self.assertEqual(st, 200)
            r = s.response(rid)["result"]
            self.assertFalse(r["isError"], r)
            self.wait_click(screen(CLICK["x"]), screen(CLICK["y"]))
        finally:
            ev.close()
        aid = self.input_ids(s)[0]
        self.assertEqual(self.events_of(s, aid)[2]["from"], "console:approver")


class AutoApprove(Desk):
    def test_click_reaches_x_at_the_mapped_point(self):
        s = self.server("--os-auto-approve")
        self.shot(s)
        r = s.tool_result("click", CLICK)
        self.assertFalse(r["isError"], r)
        self.assertIn("screen %d,%d" % (screen(CLICK["x"]), screen(CLICK["y"])), text_of(r))
        self.wait_click(screen(CLICK["x"]), screen(CLICK["y"]))
        r = s.tool_result("click", {"x": 640, "y": 360, "button": "right"})
        self.assertFalse(r["isError"], r)
        self.wait_click(960, 540, button="3")
        for aid in self.input_ids(s):
            evs = self.events_of(s, aid)
            self.assertEqual([e["event"] for e in evs], ["proposed", "approved", "executed"])
            self.assertEqual(evs[1]["by"], "policy")
            self.assertIn("os_auto_approve", evs[1]["reason"])


class TrustHost(Desk):
    """--trust-host-approvals: the host's elicitation answers count."""

    def click_elicited(self, s, answer):
        n = len(s.requests_from_server("elicitation/create"))
        rid = s.tool("click", CLICK)
        s.wait(lambda m: len(s.requests_from_server("elicitation/create")) > n,
               what="elicitation")
        el = s.requests_from_server("elicitation/create")[n]
        self.assertNotIn("does not count", el["params"]["message"])
        s.respond(el["id"], answer)
        return s.response(rid)["result"]

    def test_accept_approve_true_clicks(self):
        s = self.server("--trust-host-approvals", capabilities={"elicitation": {}})
        self.shot(s)
        self.assertIn("--trust-host-approvals", s.stderr())
        r = self.click_elicited(s, {"action": "accept", "content": {"approve": True}})
        self.assertFalse(r["isError"], r)
        self.wait_click(screen(CLICK["x"]), screen(CLICK["y"]))
        evs = self.events_of(s, self.input_ids(s)[0])
        self.assertEqual([e["event"] for e in evs], ["proposed", "asked", "approved", "executed"])
        self.assertIn("MCP host", evs[2]["from"])

    def test_anything_but_accept_true_denies(self):
        s = self.server("--trust-host-approvals", capabilities={"elicitation": {}})
        self.shot(s)
        # An answer sent before the question, with the id the next one will get.
        s.respond("deskhand-ask-1", {"action": "accept", "content": {"approve": True}})
        s.ping()
        answers = [{"action": "accept", "content": {"approve": False}},
                   {"action": "decline"}, {"action": "cancel"},
                   {"action": "accept", "content": {"approve": "true"}},
                   {"action": "accept", "content": {}}, {"action": "accept"},
                   {"action": "ACCEPT", "content": {"approve": True}}]
        for a in answers:
            with self.subTest(answer=a):
                r = self.click_elicited(s, a)
                self.assertTrue(r["isError"], r)
        ids = self.input_ids(s)
        self.assertEqual(len(ids), len(answers))
        for aid in ids:
            self.assertEqual(self.events_of(s, aid)[-1]["event"], "denied")
        self.assert_not_run(s)
        self.nothing_reached()

    def test_a_client_that_cannot_be_asked_is_no_approver(self):
        # The flag trusts the host to relay a human, but this connection
        # gives deskhand no way to ask it: 2026-07-28 requests stand alone
        # (deskhand sends no requests to the client), and a 2025-11-25
        # client that declared no elicitation cannot be elicited. With no
        # terminal and no console either, nobody can approve: the call is
        # refused at once, as without the flag; it must not wait forever.
        for era in ("2026-07-28", "2025-11-25 without elicitation"):
            with self.subTest(era=era):
                stateless = era.startswith("2026")
                s = self.server("--trust-host-approvals", init=not stateless)
                self.shot(s, stateless=stateless)
                rid = s.tool("click", CLICK, stateless=stateless)
                try:
                    r = s.response(rid, timeout=30)["result"]
                finally:
                    s.close()   # a call still waiting is withdrawn
                self.assertTrue(r["isError"], r)
                self.assertIn("--console", text_of(r))
                self.assertEqual(s.requests_from_server("elicitation/create"), [])
                self.assert_not_run(s)
        self.nothing_reached()


if __name__ == "__main__":
    h.main()
