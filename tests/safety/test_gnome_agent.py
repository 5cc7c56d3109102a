"""The agent and its safety layer end to end on a headless GNOME
compositor (tests/lib/mutter.py: Mutter 43 with a private bus, pipewire
and wireplumber), deskhand run as the compositor's uid as the user's
agent would be, against the strict fake model servers (tests/fake_llm):

- the model finds the red square wlrecord draws at a random place in the
  very screenshot it was sent (Mutter's ScreenCast) and clicks its
  centre, in two wire formats (Anthropic's computer toolset approved with
  y on standard input, Gemini's computer use under --os-auto-approve);
  the press arrives in wlrecord on the square (surface coordinates);
- the kill switch as on X11: the pointer comes from the screen-cast
  stream's cursor metadata, so a person's hand (a second RemoteDesktop
  session, mutter.MutterHand) moving the pointer between deskhand's
  actions, or pushing it into a screen corner, ends a series of
  auto-approved actions with no further action; a corner ends a display
  block already running; a series nobody touches runs to its end (a
  stale cursor report would trip it); no stop key is bound and none is
  announced;
- fail closed: Mutter tells no window's owner, so from a terminal every
  input action may reach deskhand's own terminal and is asked even under
  --os-auto-approve (a denied click never reaches wlrecord); observations
  are not asked;
- refusal: Mutter's Wayland socket with a session bus that lacks Mutter's
  services is refused (exit 2) before the model is called.
Skipped where mutter is not installed."""
import os
import random
import time
import unittest

import harness as h
import mutter
import wayland
from agentlib import FakeLLM, Held, check_audit
from test_wayland_agent import (WlRun, _presses, anthropic_click, click_turn, done_turn,
                                last_png, pngfind, screenshot_turn)

SIZE = (1280, 800)
NEUTRAL = (640, 400)          # where the hand rests: no corner, no target


class MutterCase(unittest.TestCase):
    """One headless Mutter per class, with a person's hand on the pointer
    (resting away from the corners: Mutter shows no pointer until a
    device moved it, and the kill switch judges where it is)."""

    @classmethod
    def setUpClass(cls):
        cls.m = mutter.Mutter(monitors=1, size=SIZE)
        cls.addClassCleanup(cls.m.stop)
        cls.hand = mutter.MutterHand(cls.m)
        cls.addClassCleanup(cls.hand.stop)

    def hand_to(self, x, y):
        """The hand moves the pointer, and a fresh reader of Mutter's
        cursor metadata (deskhand cursor) sees it there: Mutter has sent
        the move to its streams."""
        self.hand.move(x, y)
        want = [b"%d" % x, b"%d" % y]
        ok = h.wait_for(lambda: self.m.run_as([h.binary(), "cursor"]).stdout.split()[:2] ==
                        want, 30)
        self.assertTrue(ok, "the pointer never showed at %d,%d" % (x, y))

    def recorder(self, square=None):
        rec = wayland.Recorder(self.m, square=square)
        self.addCleanup(rec.stop)
        self.shown(square)
        return rec

    def shown(self, square=None):
        """Once wlrecord fills the screen: Mutter animates a new window in
        (scaled about its centre, fading), and until it ends both a
        screenshot and the input's surface coordinates are the animated
        window's (a click at 100,120 arrives at 99,119). Then the corners
        are wlrecord's white, and its square is where it was drawn."""
        path = os.path.join(self.m.tmpdir(), "settled.png")
        W, H = SIZE

        def done():
            if self.m.run_as([h.binary(), "screenshot", "-o", path]).returncode != 0:
                return False
            with open(path, "rb") as f:
                img = pngfind.decode(f.read())
            if any(img.pixel(x, y)[:3] != (255, 255, 255) for x, y in
                   ((0, 0), (W - 1, 0), (0, H - 1), (W - 1, H - 1))):
                return False
            if square is None:
                return True
            n, x0, y0 = (int(v) for v in square.split("+"))
            return pngfind.find_colour(img, (255, 0, 0)) == (x0 + n / 2, y0 + n / 2)
        self.assertTrue(h.wait_for(done, 30), "wlrecord never filled the screen")


# ---- 1. the model sees the target and its click lands ---------------------------

class ModelClicksTarget(MutterCase):
    CASES = (("anthropic", "stdin"), ("gemini", "--os-auto-approve"))

    def test_the_model_finds_the_square_and_its_click_lands_on_it(self):
        seed = int(os.environ.get("DESKHAND_SEED") or time.time_ns() % 1000000)
        print("# squares placed with DESKHAND_SEED=%d" % seed)
        rnd = random.Random(seed)
        W, H = SIZE
        for fmt, approve in self.CASES:
            with self.subTest(fmt=fmt, approve=approve):
                self.hand_to(*NEUTRAL)
                n = rnd.randint(24, 60)
                # Not under the resting pointer, whose image would cover part of it.
                while True:
                    x0, y0 = rnd.randint(0, W - n), rnd.randint(0, H - n)
                    if not (x0 - 40 <= NEUTRAL[0] < x0 + n and y0 - 40 <= NEUTRAL[1] < y0 + n):
                        break
                square = "%d+%d+%d" % (n, x0, y0)
                rec = wayland.Recorder(self.m, square=square)
                try:
                    self.shown(square)
                    rec.reset()
                    self.click_case(fmt, approve, rec, (x0, y0, n))
                finally:
                    rec.stop()

    def click_case(self, fmt, approve, rec, box):
        x0, y0, n = box
        seen = {}

        def aim(body, f):
            img = last_png(body)
            cx, cy = pngfind.find_colour(img, (255, 0, 0))
            seen.update(size=(img.width, img.height), centre=(cx, cy))
            return click_turn(fmt, img, cx, cy)

        r = WlRun(self.m)
        flags = ["--os-auto-approve"] if approve == "--os-auto-approve" else []
        with FakeLLM([screenshot_turn(fmt), aim, done_turn(fmt)]) as srv:
            p = r.run(srv, fmt, "--os", *flags, "-m", "click the red square",
                      input=b"y\n" if approve == "stdin" else b"")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 3, p.stderr)
        out = p.stdout.decode(errors="replace")
        self.assertEqual("Perform this action?" in out, approve == "stdin", out)
        evs = rec.wait_events(lambda e: any(x["kind"] == "release" for x in e), 10)
        at = _presses(evs)
        self.assertEqual(len(at), 1, evs)
        x, y = at[0]
        self.assertTrue(x0 <= x < x0 + n and y0 <= y < y0 + n, (x, y, box, seen))
        self.assertLessEqual(abs(x + 0.5 - (x0 + n / 2)), 2.5, (x, box, seen))
        self.assertLessEqual(abs(y + 0.5 - (y0 + n / 2)), 2.5, (y, box, seen))
        print("# %s: square %d at %d,%d; the model saw it at %.1f,%.1f of %dx%d; the "
              "click landed at %d,%d" % (fmt, n, x0, y0, seen["centre"][0], seen["centre"][1],
                                        seen["size"][0], seen["size"][1], x, y))
        check_audit(self, r.audit_events())
        why = [e["reason"] for e in r.events("approved")]
        self.assertEqual(why, ["observation: runs without a question",
                               "the user said yes" if approve == "stdin"
                               else "os_auto_approve set at start"])


# ---- 2. the kill switch ----------------------------------------------------------

def no_stop_key_notice(test, err):
    """GNOME watches the pointer: no stop key is bound or announced, and
    the override's banner (the corner, the mouse) is not contradicted."""
    test.assertNotIn("stop key", err)
    test.assertNotIn("cannot watch the pointer", err)
    test.assertNotIn("do NOT stop it here", err)
    test.assertIn("screen corner", err.split("WARNING: --os-auto-approve")[1])


class KillSwitch(MutterCase):
    CLICKS = [(100, 100), (200, 150), (300, 200)]

    def setUp(self):
        self.hand_to(*NEUTRAL)
        self.rec = self.recorder()
        self.rec.reset()

    def series(self, r, turns):
        srv = FakeLLM(turns)
        p = r.spawn(srv.__enter__(), "anthropic", "--os", "--os-auto-approve", "-m",
                    "click away")
        return srv, p

    def end(self, srv, p):
        try:
            p.wait(90)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            srv.__exit__(None, None, None)

    def test_a_series_nobody_touches_runs_to_its_end(self):
        # The control, and a check on deskhand's own moves: where it left
        # the pointer is read from the cursor metadata after each click; a
        # report older than the click would look like a person's move.
        r = WlRun(self.m)
        clicks = [(100 + 90 * i, 120 + 50 * i) for i in range(8)]
        turns = [anthropic_click(x, y) for x, y in clicks] + [{"blocks": [{"text": "done"}]}]
        srv, p = self.series(r, turns)
        self.end(srv, p)
        out, err = r.output()
        self.assertEqual(p.returncode, 0, err)
        self.assertNotIn("kill switch", err)
        no_stop_key_notice(self, err)
        evs = self.rec.wait_events(lambda e: len(_presses(e)) >= len(clicks), 10)
        self.assertEqual(_presses(evs), clicks)
        self.assertEqual(len(r.events("executed")), len(clicks))
        # No terminal on standard input, so no own terminal to reach: the
        # override does what it says (the fail-closed rule is a terminal's).
        self.assertEqual(r.events("asked"), [])
        self.assertEqual({e["reason"] for e in r.events("approved")},
                         {"os_auto_approve set at start"})
        check_audit(self, r.audit_events())

    def stopped_between_actions(self, where, reason):
        r = WlRun(self.m)
        held = Held(anthropic_click(400, 300))
        # Two clicks, a third held back while the person moves the
        # pointer, and many more the run would go on with.
        turns = [anthropic_click(*self.CLICKS[0]), anthropic_click(*self.CLICKS[1]), held] + \
            [anthropic_click(500 + 5 * i, 500) for i in range(20)] + \
            [{"blocks": [{"text": "never"}]}]
        srv, p = self.series(r, turns)
        try:
            self.assertEqual(srv.wait_requests(3, 60), 3, r.output())
            self.assertEqual(len(_presses(self.rec.wait_events(
                lambda e: len(_presses(e)) >= 2, 10))), 2)
            self.hand_to(*where)
            held.release()
        finally:
            self.end(srv, p)
        requests = len(srv.requests)
        out, err = r.output()
        self.assertIn(reason, err)
        no_stop_key_notice(self, err)
        # Nobody can take over a run without a terminal: it ends.
        self.assertNotEqual(p.returncode, 0, err)
        self.assertLess(p.returncode, 128, err)
        self.assertEqual(requests, 3, "the model was asked again after the kill switch")
        self.assertEqual(_presses(self.rec.new_events()), self.CLICKS[:2])
        self.assertEqual(len(r.events("executed")), 2)
        self.assertEqual(len(r.events("proposed")), 3)
        check_audit(self, r.audit_events())
        return err

    def test_a_move_between_actions_stops_the_series(self):
        err = self.stopped_between_actions((700, 450), "kill switch: someone moved the "
                                           "pointer (deskhand left it at 200,150; it is at "
                                           "700,450)")
        print("# " + [l for l in err.splitlines() if "kill switch" in l][0])

    def test_a_corner_between_actions_stops_the_series(self):
        self.stopped_between_actions((1279, 0), "kill switch: the pointer (1279,0) is in a "
                                     "screen corner (1279,0)")

    def test_a_corner_stops_a_running_display_block(self):
        r = WlRun(self.m)
        started = os.path.join(r.work, "started")
        code = ("import time\nopen(%r, 'w').write('x')\ntime.sleep(100)\n"
                "open(%r, 'w').write('x')\n") % (started, started + ".end")
        turns = [{"blocks": [{"name": "execute", "input": {
            "language": "python", "display": True, "code": code}}]},
            {"blocks": [{"text": "never"}]}]
        with FakeLLM(turns) as srv:
            p = r.spawn(srv, "anthropic", "--os", "--os-auto-approve", "-y", "--safe-mode",
                        "off", "-m", "wait", prefix=["prlimit", "--nproc=4000"])
            try:
                self.assertTrue(h.wait_for(lambda: os.path.exists(started), 60), r.output())
                t0 = time.monotonic()
                self.hand.move(0, 799)
                p.wait(60)
                stopped_in = time.monotonic() - t0
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            requests = len(srv.requests)
        out, err = r.output()
        self.assertIn("kill switch: the pointer (0,799) is in a screen corner (0,799): the "
                      "running block was stopped", err)
        no_stop_key_notice(self, err)
        self.assertNotEqual(p.returncode, 0, err)
        self.assertLess(p.returncode, 128, err)
        self.assertFalse(os.path.exists(started + ".end"))
        self.assertEqual(requests, 1)
        self.assertEqual(_presses(self.rec.new_events()), [])
        self.assertIn("stopped by the kill switch (kill switch: the pointer (0,799) is in a "
                      "screen corner", r.conversation_text())
        check_audit(self, r.audit_events())
        print("# the corner ended the block %.2f s after the hand moved" % stopped_in)


# ---- 3. fail closed: no owners, so the own terminal may be anywhere ---------------

class OwnTerminal(MutterCase):
    def test_from_a_terminal_every_input_is_asked_under_auto_approve(self):
        self.hand_to(*NEUTRAL)
        rec = self.recorder()
        rec.reset()
        r = WlRun(self.m)
        turns = [screenshot_turn("anthropic"), anthropic_click(100, 100),
                 anthropic_click(200, 200), {"blocks": [{"text": "done"}]}]
        with FakeLLM(turns) as srv:
            t = r.pty(srv, "anthropic", "--os", "--os-auto-approve", "-m", "click")
            # The screenshot runs unasked; each click is asked.
            t.expect(rb"Perform this action\?")
            t.send("n\n")
            # Asked, not refused: a yes lets the next one through.
            t.expect(rb"Perform this action\?")
            t.send("y\n")
            self.assertEqual(t.wait(60), 0, t.shown())
        evs = rec.wait_events(lambda e: any(x["kind"] == "release" for x in e), 10)
        # The denied click never arrived; the approved one did.
        self.assertEqual(_presses(evs), [(200, 200)])
        shown = t.shown(20000)
        self.assertNotIn("stop key", shown)
        self.assertNotIn("do NOT stop it here", shown)
        asked = r.events("asked")
        self.assertEqual(len(asked), 2)
        self.assertTrue(all("own terminal" in a["reason"] for a in asked), asked)
        self.assertEqual([e["event"] for e in r.events("asked", "approved", "denied",
                                                        "executed")],
                         ["approved", "executed", "asked", "denied", "asked", "approved",
                          "executed"])
        print("# asked: " + asked[0]["reason"])
        check_audit(self, r.audit_events())


# ---- 4. refusal --------------------------------------------------------------------

class Refusal(MutterCase):
    def test_a_bus_without_mutters_services_is_refused_before_the_model(self):
        # Mutter's own Wayland socket, but a session bus of nobody's.
        bus = os.path.join(self.m.tmpdir(prefix="deskhand-emptybus-"), "bus")
        self.m.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile",
                      "--address=unix:path=" + bus])
        self.assertTrue(h.wait_for(lambda: wayland._socket_answers(bus), 10))
        for flags in (["--os"], ["--os", "--os-auto-approve"]):
            with self.subTest(flags=flags):
                r = WlRun(self.m)
                with FakeLLM([anthropic_click(100, 100), {"blocks": [{"text": "done"}]}]) \
                        as srv:
                    p = r.run(srv, "anthropic", *flags, "-m", "click",
                              env={"DBUS_SESSION_BUS_ADDRESS": "unix:path=" + bus})
                    self.assertEqual(len(srv.requests), 0, "the model was called")
                err = p.stderr.decode(errors="replace")
                self.assertEqual(p.returncode, 2, err)
                for name in ("org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.ScreenCast"):
                    self.assertIn(name, err)
                self.assertEqual(r.events("executed"), [])
        # The control: the same run on Mutter's bus starts.
        r = WlRun(self.m)
        with FakeLLM([{"blocks": [{"text": "done"}]}]) as srv:
            p = r.run(srv, "anthropic", "--os", "--os-auto-approve", "-m", "nothing")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 1)


if __name__ == "__main__":
    h.main()
