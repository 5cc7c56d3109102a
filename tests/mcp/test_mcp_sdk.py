"""deskhand mcp over stdio as a host sees it: the official MCP TypeScript
SDK's client (tests/mcp/driver.mjs) drives it on a private Xvfb with the
recording clients (tests/lib/mcpdesk.py: a white one over the screen, a
coloured target on it), and a human's answers come from the console in
Debian's chromium. The tools and their hints; the screenshot and its view;
a click on the target found in that screenshot that reaches the X server
only after the console's yes; a no; a cancellation that withdraws the
question; progress while a question waits; code in the sandbox; and a
server with nobody to ask. Every case ends with its audit log checked."""
import os
import shutil
import tempfile
import unittest

import harness as h
import mcpdesk as md
import mcplib

NODE_MISSING = mcplib.require_node()
BROWSER_MISSING = NODE_MISSING or md.missing()
D = None


def setUpModule():
    global D
    if NODE_MISSING is None:
        D = md.Desk(browser=BROWSER_MISSING is None)


def tearDownModule():
    if D is not None:
        D.stop()


class Case(unittest.TestCase):
    """A server per case; at the end it is closed (exit 0) and its audit
    log checked."""

    auto_approve = False

    def setUp(self):
        D.reset()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            r = s.close()
            if r is not None and "server_exit" in r:
                self.assertEqual(r["server_exit"], {"code": 0, "signal": None}, s.stderr())
            md.check_audit(self, s, auto_approve=self.auto_approve)
        # Nothing the SDK found odd about what the server sent.
        for s in self.servers:
            self.assertEqual(s.client.events(lambda e: e["event"] == "error"), [],
                             s.client.logtext())

    def start(self, *flags, **kw):
        s = md.Stdio(D, *flags, **kw)
        self.servers.append(s)
        return s

    def click_target(self, s, **kw):
        """A screenshot, the target found in it, a click at its centre
        sent (not waited for): (tag, (cx, cy), structuredContent)."""
        shot = s.client.call("screenshot")
        self.assertFalse(shot["isError"], shot)
        x0, y0, x1, y1 = md.target_in(md.image_of(shot))
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        D.reset()
        tag = s.client.call_async("click", {"x": cx, "y": cy}, **kw)
        return tag, (cx, cy), shot["structuredContent"]

    def assert_on_target(self, press, point, view, events, call_id):
        """The press is the left button, inside the target, where the
        screenshot's point maps by its scale, and where the audit says."""
        button, x, y = press
        tx, ty, tw, th = md.TARGET
        self.assertEqual(button, 1)
        self.assertTrue(tx <= x < tx + tw and ty <= y < ty + th, (press, md.TARGET))
        self.assertLessEqual(abs(x - (view["screen"]["x"] + point[0] * view["scale"])), 1)
        self.assertLessEqual(abs(y - (view["screen"]["y"] + point[1] * view["scale"])), 1)
        prop = md.by_id(events, call_id, "proposed")[0]
        self.assertEqual(prop["action"]["coordinate"], list(point))
        self.assertEqual(prop["action"]["screen_coordinate"], [x, y])
        # On the target's own window: nothing else took the press.
        self.assertEqual([e for e in D.target.new_events() if e["kind"] == "press"][0]["x"],
                         str(x))


@unittest.skipIf(NODE_MISSING, NODE_MISSING)
class Observe(Case):
    def test_the_tools_their_schemas_and_hints(self):
        s = self.start()
        tools = s.client.list_tools()
        self.assertEqual([t["name"] for t in tools], md.TOOLS)
        self.assertEqual(s.client.last_list["schema_errors"], [])
        for t in tools:
            with self.subTest(tool=t["name"]):
                hints = t["annotations"]
                self.assertEqual(t["inputSchema"]["type"], "object")
                if t["name"] in md.OBSERVATIONS:
                    self.assertIs(hints.get("readOnlyHint"), True)
                    self.assertNotEqual(hints.get("destructiveHint"), True)
                else:
                    self.assertIn(t["name"], md.INPUT | {"execute"})
                    self.assertIs(hints.get("destructiveHint"), True)
                    self.assertIs(hints.get("readOnlyHint", False), False)
                    self.assertIs(hints.get("openWorldHint"), True)
        shot = {t["name"]: t for t in tools}["screenshot"]
        self.assertEqual(set(shot["outputSchema"]["required"]),
                         {"width", "height", "scale", "screen"})
        # Listing asked nobody and ran nothing.
        self.assertEqual(md.proposed(s.audit_events()), [])

    def test_a_screenshot_is_the_screen(self):
        s = self.start()
        r = s.client.call("screenshot")
        self.assertFalse(r["isError"], r)
        png = md.image_of(r)
        view = r["structuredContent"]
        self.assertEqual(md.png_size(png), (view["width"], view["height"]))
        self.assertEqual(md.png_size(png), (md.WIDTH, md.HEIGHT))
        self.assertEqual(view["scale"], 1)
        self.assertEqual(view["screen"], {"x": 0, "y": 0, "width": md.WIDTH, "height": md.HEIGHT})
        # The pixels are the screen's: the target where xrecord put it.
        x, y, w, hh = md.TARGET
        self.assertEqual(md.target_in(png), [x, y, x + w - 1, y + hh - 1])
        ev = s.audit_events()
        self.assertEqual([e["kind"] for e in md.proposed(ev)], ["os_observe"])
        self.assertEqual(md.proposed(ev)[0]["proposer"], "mcp:deskhand-test-host 0.0.1")

    def test_screen_max_scales_the_view_not_the_screen(self):
        s = self.start("--screen-max", "640x480")
        r = s.client.call("screenshot")
        png = md.image_of(r)
        view = r["structuredContent"]
        w, hh = md.png_size(png)
        self.assertEqual((w, hh), (view["width"], view["height"]))
        self.assertLessEqual(w, 640)
        self.assertLessEqual(hh, 480)
        # 1024x768 fits 640x480 exactly (4:3): one side reaches its bound.
        self.assertEqual((w, hh), (640, 480))
        self.assertEqual(view["screen"], {"x": 0, "y": 0, "width": md.WIDTH, "height": md.HEIGHT})
        self.assertAlmostEqual(view["scale"], md.WIDTH / w, places=6)
        self.assertAlmostEqual(view["scale"], md.HEIGHT / hh, places=6)
        # The target, scaled by the same factor (a pixel of blending at its edges).
        x, y, tw, th = md.TARGET
        want = [x / view["scale"], y / view["scale"], (x + tw) / view["scale"] - 1,
                (y + th) / view["scale"] - 1]
        for got, exp in zip(md.target_in(png), want):
            self.assertLessEqual(abs(got - exp), 1.5, (md.target_in(png), want))


@unittest.skipIf(BROWSER_MISSING, BROWSER_MISSING)
class Console(Case):
    """--console 0: the questions are answered in chromium."""

    def start_console(self, *flags):
        return self.start("--console", "0", "--screen-max", "640x480", *flags)

    def test_a_click_reaches_x_only_after_the_consoles_yes(self):
        s = self.start_console()
        tag, point, view = self.click_target(s)
        self.assertAlmostEqual(view["scale"], 1.6)
        s.wait_question()
        self.assertIn("left_click", s.question_text())
        self.assertIn('"coordinate":[%d,%d]' % point, s.question_text())
        # Asked, not run: nothing of it reached the X server.
        self.assertEqual(D.presses(D.settle()), [])
        ev = s.audit_events()
        call_id = md.proposed(ev, "os_input")[0]["id"]
        self.assertEqual([e["event"] for e in md.by_id(ev, call_id)], ["proposed", "asked"])
        self.assertNotIn(tag, s.client.results)
        D.B.do("click", page=s.page, sel="#q-y")
        r = s.client.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertFalse(r["result"]["isError"], r)
        D.wait_presses(1)
        presses = D.presses(D.settle())
        self.assertEqual(len(presses), 1, presses)
        ev = s.audit_events()
        self.assert_on_target(presses[0], point, view, ev, call_id)
        approved = md.by_id(ev, call_id, "approved")
        self.assertEqual([(a["by"], a.get("from")) for a in approved],
                         [("user", "console:approver")])
        D.B.wait(s.page, "document.getElementById('q-who').textContent.includes("
                 "'by console:approver')")

    def test_a_no_in_the_console_is_an_error_result_and_nothing_runs(self):
        s = self.start_console()
        tag, _, _ = self.click_target(s)
        s.answer("n")
        r = s.client.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertTrue(r["result"]["isError"], r)
        self.assertIn("declined", md.text_of(r["result"]))
        self.assertEqual(D.presses(D.settle()), [])
        ev = s.audit_events()
        call_id = md.proposed(ev, "os_input")[0]["id"]
        self.assertEqual([e["event"] for e in md.by_id(ev, call_id)],
                         ["proposed", "asked", "denied"])
        d = md.by_id(ev, call_id, "denied")[0]
        self.assertEqual((d["by"], d.get("from")), ("user", "console:approver"))

    def cancel_open_question(self, s):
        """A click asked in the console, then the SDK's abort: (qid, call id)."""
        tag, _, _ = self.click_target(s)
        qid = s.wait_question()
        s.client.abort(tag, reason="the host changed its mind")
        r = s.client.wait_result(tag)
        self.assertFalse(r["ok"], r)
        self.assertTrue(r["error"].get("aborted"), r)

        def withdrawn():
            return [e for e in s.audit_events() if e["event"] == "denied"]
        denied = h.wait_for(withdrawn, 30)
        self.assertEqual(len(denied), 1, s.audit_events())
        return qid, denied[0]

    def test_a_cancellation_withdraws_the_question(self):
        s = self.start_console()
        qid, d = self.cancel_open_question(s)
        self.assertEqual(d["by"], "no-answer")
        self.assertIn("withdrew", d["reason"])
        # The console's question is over: its buttons are off, no qid open.
        D.B.wait(s.page, "document.getElementById('q-y').disabled && "
                 "document.getElementById('question').dataset.qid === ''")
        self.assertEqual(D.presses(D.settle()), [])
        self.assertEqual(md.by_id(s.audit_events(), d["id"], "executed"), [])
        # No answer went back for the withdrawn call (the SDK would report
        # a response to an unknown id as an error: tearDown checks none).
        # A later call is asked afresh, approved, and runs.
        tag, point, view = self.click_target(s)
        s.answer("y", after=qid)
        r = s.client.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertFalse(r["result"]["isError"], r)
        D.wait_presses(1)
        presses = D.presses(D.settle())
        self.assertEqual(len(presses), 1, presses)
        ev = s.audit_events()
        later = md.proposed(ev, "os_input")[-1]["id"]
        self.assertNotEqual(later, d["id"])
        self.assert_on_target(presses[0], point, view, ev, later)

    def test_the_console_says_who_withdrew_the_question(self):
        # The page tells the approver who settled the question. It was the
        # MCP client (this server has no terminal at all), not the terminal.
        s = self.start_console()
        self.cancel_open_question(s)
        D.B.wait(s.page, "document.getElementById('q-y').disabled")
        who = D.B.eval(s.page, "document.getElementById('q-who').textContent")
        self.assertNotIn("terminal", who)
        self.assertIn("withdr", who)

    def test_progress_while_the_question_waits(self):
        s = self.start_console()
        tag, _, _ = self.click_target(s, progress=True)
        s.wait_question()
        # Two notifications that say a human is awaited, before anyone answered
        # (one before the question opened may say "running").
        def waiting():
            return [p for p in s.client.progress(tag) if "waiting for a human" in p["message"]]
        s.client.wait_event(lambda e: len(waiting()) >= 2)
        self.assertNotIn(tag, s.client.results)
        prog = s.client.progress(tag)
        self.assertEqual([p["progress"] for p in prog], sorted({p["progress"] for p in prog}))
        self.assertTrue(all(p["message"] in ("running", waiting()[0]["message"]) for p in prog),
                        prog)
        D.B.do("click", page=s.page, sel="#q-y")
        r = s.client.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertFalse(r["result"]["isError"], r)
        # Every notification came before the result.
        mine = [l for l in s.client.lines if l.get("tag") == tag]
        self.assertEqual(mine[-1], r)
        self.assertEqual(len(D.presses(D.settle())), 1)


@unittest.skipIf(NODE_MISSING, NODE_MISSING)
class Sandbox(Case):
    """execute: code in the sandbox (-y: code runs unasked; the display
    and the desktop still need a human)."""

    def execute(self, s, code):
        r = s.client.call("execute", {"language": "python", "code": code})
        self.assertFalse(r["isError"], r)
        return md.text_of(r).strip()

    def outside_dirs(self, s):
        """Directories this test owns outside the server's workspace: the
        server's own test directory (the workspace's parent) and, where it
        can be written, one in /var/tmp."""
        dirs = [s.dir]
        if os.access("/var/tmp", os.W_OK):
            d = tempfile.mkdtemp(prefix="deskhand-test-", dir="/var/tmp")
            self.addCleanup(shutil.rmtree, d, True)
            dirs.append(d)
        return dirs

    WRITE = ("import os\n"
             "for d in %r:\n"
             "    p = os.path.join(d, 'escaped')\n"
             "    try:\n"
             "        open(p, 'w').write('x'); print('wrote', p)\n"
             "    except OSError as e:\n"
             "        print('refused', p, type(e).__name__)\n")

    def test_standard_hides_the_display_and_answers(self):
        s = self.start("-y")
        self.assertEqual(self.execute(s, "import os\nprint(repr(os.environ.get('DISPLAY')))"),
                         "None")
        self.assertEqual(self.execute(s, "print(6*7)"), "42")
        self.assertEqual(self.execute(s, "import os\nprint(os.getcwd())"),
                         os.path.realpath(s.work))
        # standard does let code write outside the workspace (README: "What
        # they do not protect"): the contrast to strict below.
        outside = self.outside_dirs(s)
        out = self.execute(s, self.WRITE % (outside,))
        self.assertEqual(out.count("wrote"), len(outside), out)
        ev = s.audit_events()
        self.assertEqual({e["kind"] for e in md.proposed(ev)}, {"code"})
        self.assertEqual({e["by"] for e in ev if e["event"] == "approved"}, {"policy"})

    def test_strict_keeps_writes_in_the_workspace(self):
        s = self.start("-y", "--sandbox", "strict")
        outside = self.outside_dirs(s)
        out = self.execute(s, self.WRITE % (outside,))
        # Nothing reached the host's files: /tmp is the session's own (a
        # write there lands in it), anywhere else is refused.
        for d in outside:
            self.assertFalse(os.path.exists(os.path.join(d, "escaped")), out)
            if not d.startswith("/tmp/"):
                self.assertIn("refused %s/escaped" % d, out)
        self.assertEqual(self.execute(s, "open('inside', 'w').write('y'); print('ok')"), "ok")
        with open(os.path.join(s.work, "inside")) as f:
            self.assertEqual(f.read(), "y")
        self.assertEqual(self.execute(s, "print(6*7)"), "42")


@unittest.skipIf(NODE_MISSING, NODE_MISSING)
class NoApprover(Case):
    """No terminal (the driver has none) and no console."""

    def test_input_is_refused_and_says_how_to_start(self):
        s = self.start()
        shot = s.client.call("screenshot")     # observations still work
        self.assertFalse(shot["isError"], shot)
        x0, y0, x1, y1 = md.target_in(md.image_of(shot))
        D.reset()
        r = s.client.call("click", {"x": (x0 + x1) // 2, "y": (y0 + y1) // 2})
        self.assertTrue(r["isError"], r)
        self.assertIn("--console", md.text_of(r))
        self.assertEqual(D.presses(D.settle()), [])
        ev = s.audit_events()
        call_id = md.proposed(ev, "os_input")[0]["id"]
        self.assertEqual([(e["event"], e.get("by")) for e in md.by_id(ev, call_id)][-1],
                         ("denied", "no-answer"))
        self.assertEqual(md.by_id(ev, call_id, "executed"), [])
        self.assertIn("nobody can approve", s.stderr())

    def test_display_code_is_refused_even_when_code_runs_unasked(self):
        s = self.start("-y")
        r = s.client.call("execute", {"language": "python", "code": "print('ran')",
                                      "display": True})
        self.assertTrue(r["isError"], r)
        self.assertIn("--console", md.text_of(r))
        # Code without the display runs (-y).
        r = s.client.call("execute", {"language": "python", "code": "print('ran')"})
        self.assertEqual(md.text_of(r).strip(), "ran")
        ev = s.audit_events()
        first = md.proposed(ev)[0]
        self.assertEqual(first["kind"], "code_display")
        self.assertEqual([e["event"] for e in md.by_id(ev, first["id"])],
                         ["proposed", "asked", "denied"])


class AuditCheck(unittest.TestCase):
    """The check every case ends with finds what it is there to find."""

    def lines(self, *steps):
        return [dict(event=ev, id="mcp-1", kind=kind, **extra) for ev, kind, extra in steps]

    def test_it_passes_a_human_yes_and_refuses_the_rest(self):
        P, Q, X = ("proposed", "os_input", {}), ("asked", "os_input", {}), \
            ("executed", "os_input", {})
        console = ("approved", "os_input", {"by": "user", "from": "console:approver"})
        md.check_approvals(self, self.lines(P, Q, console, X))
        md.check_approvals(self, self.lines(P, ("approved", "os_input", {"by": "user",
                                                                       "from": "terminal"}), X))
        bad = {
            "no approval": [P, X],
            "after a denial": [P, ("denied", "os_input", {"by": "user"}), X],
            "by the policy": [P, ("approved", "os_input", {"by": "policy"}), X],
            "by the host": [P, ("approved", "os_input", {
                "by": "user", "from": "MCP host (trusted at start)"}), X],
            "display code by the policy": [("proposed", "code_display", {}),
                                           ("approved", "code_display", {"by": "policy"}),
                                           ("executed", "code_display", {})],
            "an approval of another proposal": [P, console, X, P, X],
        }
        for why, steps in bad.items():
            with self.subTest(why):
                with self.assertRaises(AssertionError):
                    md.check_approvals(self, self.lines(*steps))
        # --os-auto-approve: the policy's approval is the start-up override.
        md.check_approvals(self, self.lines(P, ("approved", "os_input", {"by": "policy"}), X),
                           auto_approve=True)
        # Code without the display may run on the policy's word (-y).
        md.check_approvals(self, self.lines(("proposed", "code", {}),
                                            ("approved", "code", {"by": "policy"}),
                                            ("executed", "code", {})))


if __name__ == "__main__":
    h.main()
