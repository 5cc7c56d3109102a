"""The agent and its safety layer end to end on a headless sway
(tests/lib/wayland.py), deskhand run as the compositor's uid as the user's
agent would be, against the strict fake model servers (tests/fake_llm):

- the model finds a red square wlrecord draws at a random place in the
  very screenshot it was sent and clicks its centre, in three wire formats
  (Anthropic's computer toolset, OpenAI's Responses computer use, Gemini's
  computer use), approved on standard input or by --os-auto-approve; the
  click arrives in wlrecord on the square;
- the stop key: Wayland hides the pointer, so the kill switch is
  Ctrl+Alt+Escape bound through sway's IPC. A person pressing it (a second
  virtual keyboard) ends a series of auto-approved actions with no further
  action, and ends a display block already running; the startup notice
  names the key; once deskhand exits the binding is gone (the combination
  reaches the focused client again, sway reports no binding event);
- fail closed: without sway's IPC (no SWAYSOCK: no stop key, no window
  owners) an --os-auto-approve run with nothing to stop it exits 2 before
  the model is called; from a terminal it runs, but every action is asked,
  and a denied click never reaches wlrecord;
- deskhand's own terminal: run inside foot, input aimed at foot's window is
  asked even under --os-auto-approve (sway's tree gives foot's pid, an
  ancestor of deskhand), input aimed at another window is not."""
import base64
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

import harness as h
import wayland
from agentlib import FakeLLM, Held, Pty, check_audit

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
import pngfind  # noqa: E402

GEMINI_KEY = "AIza-test-KEY-0123456789"
# evdev codes the human's keyboard presses.
KEY_ESC, KEY_LEFTCTRL, KEY_LEFTALT = 1, 29, 56
KEY_Y, KEY_N, KEY_ENTER = 21, 49, 28
MOD_CTRL, MOD_ALT = 0x4, 0x8


class WlRun:
    """A private home for one agent run, owned by the compositor's uid."""

    def __init__(self, comp):
        self.comp = comp
        self.dir = comp.tmpdir(prefix="deskhand-wlagent-")
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        for d in (self.home, self.work):
            os.makedirs(d)
            if os.geteuid() == 0:
                os.chown(d, comp.uid, comp.gid)
        self.conv = os.path.join(self.dir, "conv.json")
        self.audit = os.path.join(self.dir, "audit.jsonl")

    def env(self, **extra):
        e = dict(HOME=self.home, XDG_DATA_HOME=os.path.join(self.home, "data"),
                 XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                 DESKHAND_RETRY_BASE_MS="20", GEMINI_API_KEY=GEMINI_KEY)
        e.update(extra)
        return e

    def args(self, srv, fmt, *more):
        a = [h.binary()]
        if fmt == "anthropic":
            a += ["--provider", "anthropic", "--model", "claude-sonnet-5-5"]
        elif fmt == "responses":
            a += ["--provider", "openai", "--api", "responses", "--model", "fake"]
        else:
            a += ["--provider", "gemini", "--model", "gemini-3.5-flash"]
        return a + ["--api-base", srv.base_url(fmt), "--conversation", self.conv,
                    "--audit", self.audit, "--workspace", self.work] + list(more)

    def run(self, srv, fmt, *more, input=b"", env=None, timeout=120):
        return self.comp.run_as(self.args(srv, fmt, *more), env=self.env(**(env or {})),
                                input=input, timeout=timeout)

    def spawn(self, srv, fmt, *more, env=None, prefix=()):
        """deskhand started, no terminal (stdin /dev/null), output kept."""
        out = open(os.path.join(self.dir, "out"), "wb")
        err = open(os.path.join(self.dir, "err"), "wb")
        p = subprocess.Popen(list(prefix) + self.comp.argv(self.args(srv, fmt, *more)),
                             env=self.comp.environ(**self.env(**(env or {}))),
                             cwd=self.comp.home, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        out.close()
        err.close()
        return p

    def output(self):
        with open(os.path.join(self.dir, "out"), "rb") as f, \
                open(os.path.join(self.dir, "err"), "rb") as g:
            return f.read().decode(errors="replace"), g.read().decode(errors="replace")

    def pty(self, srv, fmt, *more, env=None):
        argv = self.comp.argv(self.args(srv, fmt, *more))
        argv[0] = shutil.which(argv[0]) or argv[0]
        return Pty(argv, self.comp.environ(**self.env(**(env or {}))))

    def audit_events(self):
        try:
            with open(self.audit) as f:
                return [json.loads(l) for l in f if l.strip()]
        except OSError:
            return []

    def events(self, *kinds):
        return [e for e in self.audit_events() if e["event"] in kinds]

    def pid(self):
        """deskhand's pid, as its audit log's session record gives it."""
        return self.events("session")[0]["pid"]

    def conversation_text(self):
        with open(self.conv) as f:
            return f.read()


def last_png(body):
    """The newest PNG a request carries, in any of the three formats."""
    found = []

    def walk(o):
        if isinstance(o, dict):
            src = o.get("source")
            if o.get("type") == "image" and isinstance(src, dict):
                found.append(src.get("data", ""))
            inline = o.get("inlineData") or o.get("inline_data")
            if isinstance(inline, dict) and "png" in inline.get("mimeType", "png"):
                found.append(inline.get("data", ""))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
        elif isinstance(o, str) and o.startswith("data:image/png;base64,"):
            found.append(o.split(",", 1)[1])
    walk(body)
    return pngfind.decode(base64.b64decode(found[-1])) if found else None


def _presses(evs):
    """The pointer position at each button press (from the motion before it)."""
    out, at = [], None
    for e in evs:
        if e["kind"] in ("motion", "enter"):
            at = (int(e["x"]), int(e["y"]))
        elif e["kind"] == "press":
            out.append(at)
    return out


def key_names(evs):
    return [e["name"] for e in evs if e["kind"] == "key-press"]


class SwayEvents:
    """Sway's binding events, subscribed to on its IPC socket directly (a
    subscription that has been answered, so that no event is missed)."""

    MAGIC = b"i3-ipc"

    def __init__(self, sway):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sway.swaysock)
        payload = b'["binding"]'
        self.sock.sendall(self.MAGIC + struct.pack("=II", len(payload), 2) + payload)
        kind, reply = self._read()
        assert json.loads(reply).get("success"), reply
        self.events = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _read(self):
        head = self._exact(14)
        n, kind = struct.unpack("=II", head[6:])
        return kind, self._exact(n)

    def _loop(self):
        try:
            while True:
                _, data = self._read()
                self.events.append(json.loads(data))
        except (EOFError, OSError):
            pass

    def commands(self):
        return [e["binding"]["command"] for e in list(self.events)]

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def press_stop_key(vi):
    """Ctrl+Alt+Escape as a person types it: the modifiers held (a virtual
    keyboard's keys do not set the modifier state by themselves)."""
    vi.key(KEY_LEFTCTRL, True)
    vi.key(KEY_LEFTALT, True)
    vi.mods(MOD_CTRL | MOD_ALT)
    vi.key(KEY_ESC, True)
    vi.key(KEY_ESC, False)
    vi.mods(0)
    vi.key(KEY_LEFTALT, False)
    vi.key(KEY_LEFTCTRL, False)


def type_keys(vi, *codes):
    for c in codes:
        vi.key(c, True)
        vi.key(c, False)


class SwayCase(unittest.TestCase):
    """One headless sway per class, with a person's pointer and keyboard."""

    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway()
        cls.addClassCleanup(cls.sway.stop)
        cls.hand = wayland.VirtualInput(cls.sway)


# ---- 1. the model sees the target and its click lands ---------------------------

def screenshot_turn(fmt):
    if fmt == "anthropic":
        return {"blocks": [{"tool": "screenshot", "input": {}}]}
    if fmt == "responses":
        return {"computer_call": {"call_id": "call_shot", "actions": [{"type": "screenshot"}]}}
    return {"calls": [{"name": "take_screenshot", "args": {}}]}


def click_turn(fmt, img, cx, cy):
    """A click at the image point (cx, cy) in the format's own convention."""
    if fmt == "anthropic":
        return {"blocks": [{"text": "The red square."},
                           {"tool": "left_click", "input": {"coordinate": [int(cx), int(cy)]}}]}
    if fmt == "responses":
        return {"computer_call": {"call_id": "call_click", "actions": [
            {"type": "click", "button": "left", "x": int(cx), "y": int(cy)}]}}
    gx, gy = pngfind.to_relative(cx, cy, img, 1000)
    return {"calls": [{"name": "click", "args": {"x": gx, "y": gy}}]}


def done_turn(fmt):
    if fmt == "anthropic":
        return {"blocks": [{"text": "clicked it"}]}
    if fmt == "responses":
        return {"text": "clicked it", "phase": "final_answer"}
    return {"text": "clicked it"}


class ModelClicksTarget(SwayCase):
    # (format, how the action is approved)
    CASES = (("anthropic", "stdin"), ("responses", "--os-auto-approve"), ("gemini", "stdin"))

    def test_the_model_finds_the_square_and_its_click_lands_on_it(self):
        seed = int(os.environ.get("DESKHAND_SEED") or time.time_ns() % 1000000)
        print("# squares placed with DESKHAND_SEED=%d" % seed)
        rnd = random.Random(seed)
        W, H = self.sway.size
        for fmt, approve in self.CASES:
            with self.subTest(fmt=fmt, approve=approve):
                n = rnd.randint(24, 60)
                x0, y0 = rnd.randint(0, W - n), rnd.randint(0, H - n)
                rec = wayland.Recorder(self.sway, square="%d+%d+%d" % (n, x0, y0))
                try:
                    self.click_case(fmt, approve, rec, (x0, y0, n))
                finally:
                    rec.stop()

    def test_the_next_screenshot_shows_what_changed_meanwhile(self):
        # One deskhand process reads the screen again and again (settle
        # checks, shots): each read is of a frame after it started, not a
        # strip kept from the read before.
        seen, recs = [], [wayland.Recorder(self.sway, square="60+300+300")]

        def look(body, f):
            seen.append(pngfind.find_colour(last_png(body), (255, 0, 0)))
            if len(seen) > 1:
                return done_turn("anthropic")
            # The screen changes before the model asks to look again.
            recs[-1].stop()
            recs.append(wayland.Recorder(self.sway, square="60+1500+900"))
            return screenshot_turn("anthropic")

        r = WlRun(self.sway)
        try:
            with FakeLLM([screenshot_turn("anthropic"), look, look]) as srv:
                p = r.run(srv, "anthropic", "--os", "-m", "look twice")
                self.assertEqual(p.returncode, 0, p.stderr)
        finally:
            recs[-1].stop()
        # The squares' centres (330,330 and 1530,930) at 2/3 in the model's picture.
        want = [(220, 220), (1020, 620)]
        self.assertEqual(len(seen), 2)
        for (x, y), (wx, wy) in zip(seen, want):
            self.assertLessEqual(abs(x - wx), 2, seen)
            self.assertLessEqual(abs(y - wy), 2, seen)

    def click_case(self, fmt, approve, rec, box):
        x0, y0, n = box
        seen = {}

        def aim(body, f):
            img = last_png(body)
            cx, cy = pngfind.find_colour(img, (255, 0, 0))
            seen.update(size=(img.width, img.height), centre=(cx, cy))
            return click_turn(fmt, img, cx, cy)

        r = WlRun(self.sway)
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
        # On the square, within a couple of pixels of its centre (the
        # model's picture is 2/3 of the screen; Gemini's grid is 1/1000).
        self.assertTrue(x0 <= x < x0 + n and y0 <= y < y0 + n, (x, y, box, seen))
        self.assertLessEqual(abs(x + 0.5 - (x0 + n / 2)), 2.5, (x, box, seen))
        self.assertLessEqual(abs(y + 0.5 - (y0 + n / 2)), 2.5, (y, box, seen))
        self.assertEqual(seen["size"], (1280, 720))
        print("# %s: square %d at %d,%d; the model saw it at %.1f,%.1f of %dx%d; the "
              "click landed at %d,%d" % (fmt, n, x0, y0, seen["centre"][0], seen["centre"][1],
                                        seen["size"][0], seen["size"][1], x, y))
        check_audit(self, r.audit_events())
        # The screenshot runs unasked; the click on the person's yes or the override.
        why = [e["reason"] for e in r.events("approved")]
        self.assertEqual(why, ["observation: runs without a question",
                               "the user said yes" if approve == "stdin"
                               else "os_auto_approve set at start"])


# ---- 2. the stop key ---------------------------------------------------------------

def anthropic_click(x, y):
    return {"blocks": [{"tool": "left_click", "input": {"coordinate": [x, y]}}]}


class StopKey(SwayCase):
    def setUp(self):
        self.rec = wayland.Recorder(self.sway)
        self.binds = SwayEvents(self.sway)

    def tearDown(self):
        self.binds.close()
        self.rec.stop()

    def test_the_stop_key_ends_a_series_of_actions_and_is_unbound_at_exit(self):
        r = WlRun(self.sway)
        held = Held(anthropic_click(300, 300))
        # Two clicks, a third held back while the person presses the key,
        # and many more the run would go on with.
        turns = [anthropic_click(100, 100), anthropic_click(200, 200), held] + \
            [anthropic_click(400 + 5 * i, 400) for i in range(30)] + \
            [{"blocks": [{"text": "never"}]}]
        with FakeLLM(turns) as srv:
            p = r.spawn(srv, "anthropic", "--os", "--os-auto-approve", "-m", "click away")
            try:
                self.assertEqual(srv.wait_requests(3, 60), 3, r.output())
                self.assertEqual(len(_presses(self.rec.wait_events(
                    lambda e: len(_presses(e)) >= 2, 10))), 2)
                press_stop_key(self.hand)
                held.release()
                p.wait(60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            requests = len(srv.requests)
        out, err = r.output()
        # The startup notice names the key to press, and says that what the
        # override's banner tells of (the corner, the mouse) does not work here.
        self.assertIn("press Ctrl+Alt+Escape", err)
        self.assertIn("screen corner", err.split("WARNING: --os-auto-approve")[1])
        self.assertIn("the screen corner and moving the mouse do NOT stop it here", err)
        self.assertIn("the stop key was pressed", err)
        # Nobody can take over a run without a terminal: it ends.
        self.assertNotEqual(p.returncode, 0, err)
        self.assertLess(p.returncode, 128, err)
        self.assertEqual(requests, 3, "the model was asked again after the stop key")
        # The key was sway's, tagged with deskhand's pid, and no client saw it.
        self.assertEqual(self.binds.commands(), ["nop deskhand-stop"])
        during = self.rec.new_events()
        self.assertNotIn("Escape", key_names(during))
        self.assertEqual(_presses(during), [(150, 150), (300, 300)])
        ev = r.audit_events()
        check_audit(self, ev)
        self.assertEqual(len(r.events("executed")), 2)
        self.assertEqual(len(r.events("proposed")), 3)
        # After the exit: nothing more arrives, and the combination is an
        # ordinary key again (the focused client gets it, sway binds nothing).
        self.rec.reset()
        press_stop_key(self.hand)
        after = self.rec.wait_events(lambda e: "Escape" in key_names(e), 10)
        self.assertIn("Escape", key_names(after))
        self.assertEqual(_presses(after), [])
        self.assertEqual(len(self.binds.commands()), 1, self.binds.events)

    def test_a_second_run_does_not_take_the_stop_key_from_the_first(self):
        # Two agent sessions on one desktop: the second binds the same key
        # and exits first; the first must still be stoppable, and the key
        # is unbound only when the last one leaves.
        first, second = WlRun(self.sway), WlRun(self.sway)
        held_a, held_b = Held(anthropic_click(300, 300)), Held(anthropic_click(600, 600))
        turns_a = [held_a] + [anthropic_click(100 + 10 * i, 100) for i in range(20)] + \
            [{"blocks": [{"text": "never"}]}]
        turns_b = [held_b, {"blocks": [{"text": "done"}]}]
        with FakeLLM(turns_a) as sa, FakeLLM(turns_b) as sb:
            pa = first.spawn(sa, "anthropic", "--os", "--os-auto-approve", "-m", "a")
            try:
                self.assertEqual(sa.wait_requests(1, 60), 1, first.output())
                pb = second.spawn(sb, "anthropic", "--os", "--os-auto-approve", "-m", "b")
                try:
                    self.assertEqual(sb.wait_requests(1, 60), 1, second.output())
                    held_b.release()
                    self.assertEqual(pb.wait(60), 0, second.output())
                finally:
                    if pb.poll() is None:
                        pb.kill()
                        pb.wait()
                self.rec.reset()
                press_stop_key(self.hand)
                held_a.release()
                pa.wait(60)
            finally:
                if pa.poll() is None:
                    pa.kill()
                    pa.wait()
            requests = len(sa.requests)
        out, err = first.output()
        self.assertIn("the stop key was pressed", err)
        self.assertNotEqual(pa.returncode, 0, err)
        self.assertEqual(requests, 1)
        evs = self.rec.new_events()
        self.assertNotIn("Escape", key_names(evs))
        self.assertEqual(_presses(evs), [])
        self.assertEqual(len(first.events("executed")), 0)
        # The last one gone, the key is free again.
        self.rec.reset()
        press_stop_key(self.hand)
        self.assertIn("Escape", key_names(self.rec.wait_events(
            lambda e: "Escape" in key_names(e), 10)))

    def test_the_stop_key_stops_a_running_display_block(self):
        self.display_block_stops("--os")

    def test_a_display_block_without_os_is_refused_not_run_unwatched(self):
        # Without --os no stop key is armed (the session opens no desktop),
        # and the pointer cannot be watched: such a block, auto-approved,
        # could not be stopped but by Ctrl-C. It is refused outright. A
        # change granting it the Wayland display must arm the key first.
        r = WlRun(self.sway)
        started = os.path.join(r.work, "started")
        turns = [{"blocks": [{"name": "execute", "input": {
            "language": "python", "display": True,
            "code": "open(%r, 'w').write('x')" % started}}]},
            {"blocks": [{"text": "ok"}]}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "anthropic", "--os-auto-approve", "-y", "--safe-mode", "off",
                      "-m", "draw")
            told = json.dumps(srv.requests[-1]["body"]["messages"][-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(started))
        self.assertIn("no display is available to this code", told)
        self.assertEqual(r.events("executed"), [])

    def display_block_stops(self, *flags):
        r = WlRun(self.sway)
        started = os.path.join(r.work, "started")
        code = ("import time\nopen(%r, 'w').write('x')\ntime.sleep(100)\n"
                "open(%r, 'w').write('x')\n") % (started, started + ".end")
        turns = [{"blocks": [{"name": "execute", "input": {
            "language": "python", "display": True, "code": code}}]},
            {"blocks": [{"text": "never"}]}]
        with FakeLLM(turns) as srv:
            # The sandbox's processes count against the uid's limit, which
            # other tests' clients share.
            p = r.spawn(srv, "anthropic", *flags, "--os-auto-approve", "-y", "--safe-mode", "off",
                        "-m", "wait", prefix=["prlimit", "--nproc=4000"])
            try:
                self.assertTrue(h.wait_for(lambda: os.path.exists(started), 60), r.output())
                t0 = time.monotonic()
                press_stop_key(self.hand)
                p.wait(60)
                stopped_in = time.monotonic() - t0
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            requests = len(srv.requests)
        out, err = r.output()
        self.assertIn("the stop key was pressed: the running block was stopped", err)
        self.assertNotEqual(p.returncode, 0, err)
        self.assertLess(p.returncode, 128, err)
        self.assertLess(stopped_in, 10)
        self.assertFalse(os.path.exists(started + ".end"))
        self.assertEqual(requests, 1)
        self.assertIn("stopped by the kill switch (the stop key was pressed)",
                      r.conversation_text())
        check_audit(self, r.audit_events())
        print("# the stop key ended the block %.2f s after it was pressed" % stopped_in)


# ---- 3. fail closed without sway's IPC ---------------------------------------------

class WithoutIPC(SwayCase):
    def test_unstoppable_auto_approve_run_does_not_start(self):
        r = WlRun(self.sway)
        with FakeLLM([anthropic_click(100, 100), {"blocks": [{"text": "done"}]}]) as srv:
            p = r.run(srv, "anthropic", "--os", "--os-auto-approve", "-m", "click",
                      env={"SWAYSOCK": None})
            self.assertEqual(len(srv.requests), 0, "the model was called")
        err = p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, 2, err)
        self.assertIn("nothing could stop this run", err)
        self.assertIn("SWAYSOCK", err)
        # The control: with the IPC there, the same run starts.
        r = WlRun(self.sway)
        with FakeLLM([{"blocks": [{"text": "done"}]}]) as srv:
            p = r.run(srv, "anthropic", "--os", "--os-auto-approve", "-m", "nothing")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 1)

    def test_without_window_owners_every_action_is_asked(self):
        rec = wayland.Recorder(self.sway)
        try:
            r = WlRun(self.sway)
            turns = [anthropic_click(100, 100), anthropic_click(200, 200),
                     {"blocks": [{"text": "done"}]}]
            with FakeLLM(turns) as srv:
                t = r.pty(srv, "anthropic", "--os", "--os-auto-approve", "-m", "click",
                          env={"SWAYSOCK": None})
                t.expect(rb"stop a run with Ctrl-C \(the screen corner and moving the mouse "
                         rb"do NOT stop it here\)")
                t.expect(rb"Perform this action\?")
                t.send("n\n")
                # Asked, not refused: a yes lets the next one through.
                t.expect(rb"Perform this action\?")
                t.send("y\n")
                self.assertEqual(t.wait(60), 0, t.shown())
            evs = rec.wait_events(lambda e: any(x["kind"] == "release" for x in e), 10)
        finally:
            rec.stop()
        # The denied click never arrived; the approved one did.
        self.assertEqual(_presses(evs), [(300, 300)])
        asked = r.events("asked")
        self.assertEqual(len(asked), 2)
        self.assertTrue(all("own terminal" in a["reason"] for a in asked), asked)
        self.assertEqual([e["event"] for e in r.events("asked", "approved", "denied",
                                                        "executed")],
                         ["asked", "denied", "asked", "approved", "executed"])
        check_audit(self, r.audit_events())


# ---- 4. deskhand's own terminal ----------------------------------------------------

def tree_nodes(node):
    yield node
    for k in ("nodes", "floating_nodes"):
        for c in node.get(k, []):
            yield from tree_nodes(c)


class OwnTerminal(SwayCase):
    @unittest.skipUnless(shutil.which("foot"), "foot is not installed")
    def test_input_aimed_at_foot_is_asked_and_at_another_window_is_not(self):
        sway = self.sway
        rec = wayland.Recorder(sway)
        # Side by side: wlrecord on the left half, deskhand's foot on the right.
        sway.swaymsg("[app_id=wlrecord]", "fullscreen", "disable")
        r = WlRun(sway)
        status = os.path.join(r.dir, "status")
        turns = [
            # foot has the focus: typing goes there.
            {"blocks": [{"tool": "type", "input": {"text": "xyz"}}]},
            anthropic_click(960, 360),          # on foot (screen 1440,540)
            anthropic_click(320, 360),          # on wlrecord (480,540): it takes the focus
            {"blocks": [{"tool": "type", "input": {"text": "hello"}}]},
            {"blocks": [{"text": "done"}]},
        ]
        try:
            with FakeLLM(turns) as srv:
                # A shell in between, as when deskhand is started from a prompt.
                foot = sway.spawn(["foot", "--app-id", "deskhand-term", "sh", "-c",
                                   '"$@"; echo $? > %s; sleep 60' % status, "sh"] +
                                  r.args(srv, "anthropic", "--os", "--os-auto-approve", "-m",
                                         "go"), env=r.env())
                for n in (1, 2):
                    # The person at foot answers no to each question.
                    self.assertTrue(h.wait_for(lambda: len(r.events("asked")) >= n, 60),
                                    r.audit_events())
                    type_keys(self.hand, KEY_N, KEY_ENTER)
                self.assertTrue(h.wait_for(lambda: os.path.exists(status), 60))
                views = [v for v in tree_nodes(sway.query("get_tree"))
                         if v.get("app_id") == "deskhand-term"]
                foot.stop()
            evs = rec.new_events()
        finally:
            rec.stop()
        with open(status) as f:
            self.assertEqual(f.read().strip(), "0")
        # sway's tree gives foot's pid (setpriv exec'd it, keeping the pid).
        self.assertEqual([v["pid"] for v in views], [foot.p.pid])
        ev = r.events("proposed", "asked", "approved", "denied", "executed")
        self.assertEqual([e["event"] for e in ev], [
            "proposed", "asked", "denied",
            "proposed", "asked", "denied",
            "proposed", "approved", "executed",
            "proposed", "approved", "executed"])
        for a in r.events("asked"):
            self.assertIn("own terminal", a["reason"])
        check_audit(self, r.audit_events())
        self.assertEqual(_presses(evs), [(480, 540)])
        keys = key_names(evs)
        self.assertEqual([k for k in keys if len(k) == 1], list("hello"))


if __name__ == "__main__":
    h.main()
