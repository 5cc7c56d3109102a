"""Google Gemini computer use end to end: deskhand against the strict fake
(tests/fake_llm/gemini.py) on private Xvfb servers of odd sizes with the
recording client. The fake finds a coloured target in the very image it
was sent and answers on Gemini's 0..999 grid; the click lands on it. The
corners and the centre of the grid map exactly on odd screens; every
function of both of Google's sets reaches the X server; a safety decision
is put to the human even under --os-auto-approve (yes: acknowledged; no:
nothing runs, the model is told); thought signatures go back byte for byte
after a resume; garbage, out-of-grid coordinates and errors are told
clearly; the browser-only model is refused with --os; the key travels in
its header, from GOOGLE_API_KEY or GEMINI_API_KEY, never in the URL."""
import base64
import json
import os
import sys
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Pty, Run, check_audit

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
import gemini as fake_gemini  # noqa: E402
import pngfind  # noqa: E402

MODEL = "gemini-3.5-flash"
KEY = "AIza-test-KEY-0123456789"
SAFETY = {"decision": "require_confirmation",
          "explanation": "The dialog asks to delete every file; confirm this click."}


def setUpModule():
    global X
    X = h.Xvfb(1920, 1080)


def tearDownModule():
    X.stop()


def args(r, srv, *more, model=MODEL, base=True):
    a = [h.binary(), "--provider", "gemini", "--model", model,
         "--conversation", r.conv, "--audit", r.audit, "--workspace", r.work]
    if base:
        a += ["--api-base", srv.base_url("gemini")]
    return a + list(more)


def run(r, srv, *more, XS=None, env=None, input=b"", model=MODEL):
    e = env or r.env(XS or X, GEMINI_API_KEY=KEY)
    return h.run(args(r, srv, "--os", *more, model=model), env=e, input=input, timeout=180)


def call(name, **a):
    return {"name": name, "args": a}


def presses(evs):
    return [(e["button"], int(e["x"]), int(e["y"])) for e in evs if e["kind"] == "press"]


def responses(body):
    """The functionResponse parts of a request, in order."""
    out = []
    for c in body["contents"]:
        out += [p["functionResponse"] for p in c.get("parts", []) if "functionResponse" in p]
    return out


def user_texts(body):
    return "\n".join(p.get("text", "") for c in body["contents"] if c["role"] == "user"
                     for p in c["parts"])


def last_png(body):
    """The newest PNG a request carries (a functionResponse's or a user part's)."""
    found = []

    def walk(o):
        if isinstance(o, dict):
            d = o.get("inlineData")
            if isinstance(d, dict) and d.get("mimeType") == "image/png":
                found.append(d["data"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(body["contents"])
    return pngfind.decode(base64.b64decode(found[-1])) if found else None


def deskhand_map(m, screen):
    """deskhand's grid -> screen mapping: the pixel under the cell's centre."""
    return (2 * m + 1) * screen // 2000


def google_map(m, screen):
    """Google's reference agent: int(m / 1000 * screen)."""
    return int(m / 1000 * screen)


class Target:
    """A coloured recording window: the thing the model must find and click."""

    def __init__(self, XS, geometry, colour="ff0000"):
        self.rec = xi.Recorder.__new__(xi.Recorder)
        self.rec.X = XS
        self.rec.dir = h.tmpdir()
        self.rec.path = os.path.join(self.rec.dir, "events")
        self.rec.out = open(self.rec.path, "w")
        self.rec.proc = h.Proc([h.binary("xrecord"), "--geometry", geometry, "--color", colour],
                               env=XS.env(), stdout=self.rec.out)
        if not h.wait_for(lambda: "ready" in self.rec.text(), 30):
            self.rec.stop()
            raise RuntimeError("the target did not become ready")
        self.rec.mark = len(self.rec.lines())

    def stop(self):
        self.rec.stop()


class Gemini(unittest.TestCase):
    def setUp(self):
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 101)
        self.rec.reset()

    def tearDown(self):
        self.rec.stop()

    def settle(self, rec=None, XS=None):
        return xi.marker(rec or self.rec, XS or X, 202)

    # -- the model finds the target in what it was sent, and the click lands

    def aim_and_click(self, XS, geometry, box):
        seen = {}

        def aim(body, fmt):
            img = last_png(body)
            cx, cy = pngfind.find_colour(img, (255, 0, 0))
            gx, gy = pngfind.to_relative(cx, cy, img, 1000)
            seen.update(size=(img.width, img.height), centre=(cx, cy), grid=(gx, gy))
            return {"thought": "The red square is the target.",
                    "calls": [call("click", x=gx, y=gy, intent="click the red square")]}

        target = Target(XS, geometry)
        try:
            r = Run()
            turns = [{"calls": [call("take_screenshot")]}, aim, {"text": "clicked it"}]
            with FakeLLM(turns) as srv:
                p = run(r, srv, "-m", "click the red square", XS=XS, input=b"y\n")
                self.assertEqual(p.returncode, 0, p.stderr)
                first = srv.requests[0]["body"]
            evs = target.rec.wait_count(1, kinds=("press",))
        finally:
            target.stop()
        (b, x, y), = presses(evs)
        x0, y0, w, hh = box
        gx, gy = seen["grid"]
        # On the target, and where Google's own mapping of the model's point is.
        self.assertTrue(x0 <= x < x0 + w and y0 <= y < y0 + hh, (x, y, seen))
        self.assertEqual((x, y), (deskhand_map(gx, XS.width), deskhand_map(gy, XS.height)))
        self.assertLessEqual(abs(x - google_map(gx, XS.width)), 1)
        self.assertLessEqual(abs(y - google_map(gy, XS.height)), 1)
        # Within one screen pixel of the target's centre mapped through the grid.
        tx, ty = x0 + w / 2, y0 + hh / 2
        scale = 1000 / XS.width, 1000 / XS.height
        meant = (int(tx * scale[0]) + 0.5) / scale[0], (int(ty * scale[1]) + 0.5) / scale[1]
        self.assertLessEqual(abs(x + 0.5 - meant[0]), 1.0, (x, meant))
        self.assertLessEqual(abs(y + 0.5 - meant[1]), 1.0, (y, meant))
        print("# %dx%d: target centre %.1f,%.1f; model saw %dx%d, answered %d,%d; click at "
              "%d,%d; Google's mapping %d,%d" % (
                  XS.width, XS.height, tx, ty, seen["size"][0], seen["size"][1], gx, gy, x, y,
                  google_map(gx, XS.width), google_map(gy, XS.height)))
        tools = first["tools"]
        # No display size: only the environment.
        self.assertIn({"computer_use": {"environment": "ENVIRONMENT_DESKTOP"}}, tools)
        return seen

    def test_the_model_finds_the_target_and_the_click_lands(self):
        seen = self.aim_and_click(X, "31x29+1203+617", (1203, 617, 31, 29))
        self.assertEqual(seen["size"], (1280, 720))

    def test_odd_screen_sizes_target_corners_and_centre(self):
        for w, hh in ((1001, 777), (1999, 1111)):
            with self.subTest(size=(w, hh)), h.Xvfb(w, hh) as XS:
                self.aim_and_click(XS, "17x13+%d+%d" % (w // 3, hh // 2 + 1),
                                   (w // 3, hh // 2 + 1, 17, 13))
                rec = xi.Recorder(XS)
                try:
                    pts = [(0, 0), (999, 0), (0, 999), (999, 999), (500, 500), (333, 667)]
                    turns = [{"calls": [call("click", x=x, y=y) for x, y in pts]},
                             {"text": "ok"}]
                    r = Run()
                    with FakeLLM(turns) as srv:
                        # Asked one by one: a corner would trip the kill switch
                        # of --os-auto-approve.
                        p = run(r, srv, "-m", "corners", XS=XS, input=b"y\n" * len(pts))
                        self.assertEqual(p.returncode, 0, p.stderr)
                    got = presses(self.settle(rec, XS))
                finally:
                    rec.stop()
                want = [("1", deskhand_map(x, w), deskhand_map(y, hh)) for x, y in pts]
                self.assertEqual(got, want)
                self.assertEqual(want[0][1:], (0, 0))
                self.assertEqual(want[3][1:], (w - 1, hh - 1))
                for (_, sx, sy), (x, y) in zip(got, pts):
                    self.assertLessEqual(abs(sx - google_map(x, w)), 1)
                    self.assertLessEqual(abs(sy - google_map(y, hh)), 1)

    # -- every function of both sets

    def test_every_function_of_the_desktop_set_drives_the_x_server(self):
        calls = [
            call("click", x=100, y=100, intent="i"),
            call("double_click", x=110, y=100),
            call("triple_click", x=120, y=100),
            call("middle_click", x=130, y=100),
            call("right_click", x=140, y=100),
            call("mouse_down", x=200, y=200),
            call("move", x=250, y=250),
            call("mouse_up", x=300, y=300),
            call("drag_and_drop", start_x=400, start_y=400, end_x=450, end_y=450),
            call("drag_and_drop", x=460, y=460, destination_x=470, destination_y=480),
            call("type", text="ab", press_enter=True),
            call("press_key", key="ArrowLeft"),
            call("key_down", key="Shift"),
            call("press_key", key="z"),
            call("key_up", key="Shift"),
            call("hotkey", keys=["Control", "Alt", "T"]),
            call("scroll", x=500, y=500, direction="down", magnitude_in_pixels=300),
            call("scroll", x=500, y=500, direction="right", magnitude=100),
            call("take_screenshot"),
            call("wait", seconds=0),
        ]
        turns = [{"calls": calls}, {"text": "done"}]
        r = Run()
        with FakeLLM(turns) as srv:
            # Every screenshot of the batch kept in the request (the default
            # keeps the last 3).
            p = run(r, srv, "--os-auto-approve", "--keep-images", "40", "-m", "go")
            self.assertEqual(p.returncode, 0, p.stderr)
            second = srv.requests[1]["body"]
        evs = self.settle()
        m = lambda v, s: deskhand_map(v, s)  # noqa: E731
        X_, Y_ = lambda v: m(v, 1920), lambda v: m(v, 1080)  # noqa: E731
        self.assertEqual(presses(evs), [
            ("1", X_(100), Y_(100)), ("1", X_(110), Y_(100)), ("1", X_(110), Y_(100)),
            ("1", X_(120), Y_(100)), ("1", X_(120), Y_(100)), ("1", X_(120), Y_(100)),
            ("2", X_(130), Y_(100)), ("3", X_(140), Y_(100)),
            ("1", X_(200), Y_(200)),
            ("1", X_(400), Y_(400)), ("1", X_(460), Y_(460)),
            # 300/1000 of 1080 px = 324 px: 3 wheel clicks; 100/1000 of 1920 = 192: 2.
            ("5", X_(500), Y_(500)), ("5", X_(500), Y_(500)), ("5", X_(500), Y_(500)),
            ("7", X_(500), Y_(500)), ("7", X_(500), Y_(500)),
        ])
        rel = [(int(e["x"]), int(e["y"])) for e in evs if e["kind"] == "release"
               and e["button"] == "1"]
        for pt in ((X_(300), Y_(300)), (X_(450), Y_(450)), (X_(470), Y_(480))):
            self.assertIn(pt, rel)
        # The button was held while moving to 250,250 (mouse_down ... mouse_up).
        self.assertTrue(any(e["kind"] == "motion" and (int(e["x"]), int(e["y"])) ==
                            (X_(250), Y_(250)) and int(e["state"], 16) & 0x100 for e in evs))
        keys = [e["name"] for e in evs if e["kind"] == "key-press"]
        for k in ("a", "b", "Return", "Left", "Shift_L", "z", "Control_L", "Alt_L", "t"):
            self.assertIn(k, keys)
        z = [e for e in evs if e["kind"] == "key-press" and e["name"] == "z"][0]
        self.assertTrue(int(z["state"], 16) & 0x1, z)  # Shift held down by key_down
        self.assertEqual(xi.key_state(X)[1] & 0x1, 0)  # and released by key_up
        t = [e for e in evs if e["kind"] == "key-press" and e["name"] == "t"][0]
        self.assertEqual(int(t["state"], 16) & 0xd, 0xc)  # Control+Alt, no Shift
        frs = responses(second)
        self.assertEqual([f["name"] for f in frs], [c["name"] for c in calls])
        self.assertTrue(all("error" not in f["response"] for f in frs), frs)
        # Each executed action's response carries the screenshot taken after
        # it, as an inline PNG part (Google: "if the action was executed, the
        # client captures a new screenshot ... as part of the function_response"),
        # not only the batch's last.
        for f in frs:
            self.assertEqual([p["inlineData"]["mimeType"] for p in f.get("parts", [])],
                             ["image/png"], f["name"])
        shots = [b["image"]["path"] for m_ in r.conversation()["messages"]
                 for b in m_["content"] if b.get("type") == "tool_result" and b.get("image")]
        self.assertEqual(len(set(shots)), len(calls), shots)
        check_audit(self, r.audit_events())

    def test_every_function_of_the_legacy_set_drives_the_x_server(self):
        calls = [
            call("click_at", x=100, y=100),
            call("hover_at", x=150, y=150),
            call("type_text_at", x=200, y=200, text="hi"),
            call("type_text_at", x=210, y=200, text="yo", press_enter=False,
                 clear_before_typing=False),
            call("key_combination", keys="Control+A"),
            call("scroll_document", direction="down"),
            call("scroll_at", x=300, y=300, direction="up", magnitude=400),
            call("drag_and_drop", x=400, y=400, destination_x=500, destination_y=500),
            call("wait_5_seconds"),
            call("navigate", url="https://example.com"),
        ]
        turns = [{"calls": calls}, {"text": "done"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = run(r, srv, "--os-auto-approve", "-m", "go", model="gemini-3-flash-preview")
            self.assertEqual(p.returncode, 0, p.stderr)
            first, second = srv.requests[0]["body"], srv.requests[1]["body"]
        evs = self.settle()
        X_, Y_ = lambda v: deskhand_map(v, 1920), lambda v: deskhand_map(v, 1080)  # noqa: E731
        self.assertEqual(presses(evs), [
            ("1", X_(100), Y_(100)), ("1", X_(200), Y_(200)), ("1", X_(210), Y_(200)),
            # The document: at the centre by a whole screen, 1080 px = 11 clicks.
            *[("5", X_(500), Y_(500))] * 11,
            # 400/1000 of 1080 px = 432 px: 4 clicks up.
            *[("4", X_(300), Y_(300))] * 4,
            ("1", X_(400), Y_(400)),
        ])
        self.assertTrue(any(e["kind"] == "motion" and (int(e["x"]), int(e["y"])) ==
                            (X_(150), Y_(150)) for e in evs))
        keys = [e["name"] for e in evs if e["kind"] == "key-press"]
        # type_text_at: select all, delete, the text, Return; then without either.
        i = keys.index("h")
        self.assertEqual(keys[i - 3:i + 3], ["Control_L", "a", "BackSpace", "h", "i", "Return"])
        self.assertEqual(keys[i + 3:i + 7], ["y", "o", "Control_L", "a"])
        frs = responses(second)
        self.assertEqual(len(frs), len(calls))
        self.assertIn("browser-only", frs[-1]["response"]["error"])
        self.assertTrue(all("error" not in f["response"] for f in frs[:-1]), frs)
        cu = [t["computer_use"] for t in first["tools"] if "computer_use" in t][0]
        self.assertEqual(cu["environment"], "ENVIRONMENT_DESKTOP")
        self.assertIn("navigate", cu["excluded_predefined_functions"])

    # -- safety decisions

    def test_a_safety_decision_is_asked_even_under_auto_approve(self):
        turns = [{"calls": [call("click", x=100, y=100, safety_decision=SAFETY)]},
                 {"text": "ok"}]
        r = Run()
        with FakeLLM(turns) as srv:
            t = Pty(args(r, srv, "--os", "--os-auto-approve", "-m", "go"),
                    r.env(X, GEMINI_API_KEY=KEY))
            t.expect(rb"delete every file")
            t.expect(rb"Acknowledge this safety check")
            t.send("y\n")
            self.assertEqual(t.wait(), 0, t.shown())
            second = srv.requests[1]["body"]
        self.assertEqual(presses(self.settle()),
                         [("1", deskhand_map(100, 1920), deskhand_map(100, 1080))])
        fr = responses(second)[0]
        self.assertIs(fr["response"]["safety_acknowledgement"], True)
        ids = {e.get("id") for e in r.audit_events() if e["event"] == "asked"}
        ev = [e["event"] for e in r.audit_events() if e.get("id") in ids]
        self.assertEqual(ev[:3], ["proposed", "asked", "approved"])
        self.assertIn("require_confirmation", json.dumps(r.audit_events()))
        check_audit(self, r.audit_events())

    def test_a_declined_safety_decision_runs_nothing_and_the_model_is_told(self):
        turns = [{"calls": [call("click", x=100, y=100, safety_decision=SAFETY)]},
                 {"text": "understood"}]
        r = Run()
        with FakeLLM(turns) as srv:
            t = Pty(args(r, srv, "--os", "--os-auto-approve"), r.env(X, GEMINI_API_KEY=KEY))
            t.expect(rb"> ")
            t.send("go\n")
            t.expect(rb"Acknowledge this safety check")
            t.send("n\n")
            t.expect(rb"> ")
            self.assertEqual(len(srv.requests), 1)
            t.send("what now?\n")
            t.expect(rb"understood")
            t.expect(rb"> ")
            t.eof()
            self.assertEqual(t.wait(), 0, t.shown())
            second = srv.requests[1]["body"]
        self.assertEqual(presses(self.settle()), [])
        # The declined content and its answer are left out; the model is told in words.
        self.assertEqual([c["role"] for c in second["contents"]], ["user", "user", "user"])
        self.assertEqual(responses(second), [])
        self.assertIn("did not acknowledge Google's safety decision", user_texts(second))
        denied = [e for e in r.audit_events() if e["event"] == "denied"]
        self.assertEqual(len(denied), 1)
        check_audit(self, r.audit_events())

    # -- history, errors, configuration

    def test_thought_signatures_go_back_byte_for_byte_after_a_resume(self):
        turns = [{"thought": "look first", "calls": [call("take_screenshot")], "stream": False},
                 {"text": "looked", "text_chunks": 3, "net_chunk": 7},
                 {"text": "again"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = run(r, srv, "-m", "look")
            self.assertEqual(p.returncode, 0, p.stderr)
            p = run(r, srv, "--conversation", r.conv, "-m", "more")
            self.assertEqual(p.returncode, 0, p.stderr)
            last = srv.requests[2]["body"]
            issued = [text for _, text in srv.gemini.issued]
        # The strict fake checked the bytes; the file holds them too.
        self.assertEqual([c["role"] for c in last["contents"]],
                         ["user", "model", "user", "model", "user"])
        saved = json.dumps(r.conversation())
        for text in issued[:2]:
            self.assertIn(json.dumps(text), saved)
        self.assertIn("\n", issued[0])  # the whole answer's pretty-printed content

    def test_a_stream_split_anywhere_and_a_whole_answer(self):
        text = "h\u00e9llo \u2713 \U0001F600 done"
        code = 'print("\u00e9\U0001F600")'
        for extra in ({"net_chunk": 1}, {"net_chunk": 3, "text_chunks": 5}, {"stream": False}):
            with self.subTest(**extra):
                turns = [dict({"thought": "plan \u2713", "text": text,
                               "calls": [call("execute", language="python", code=code)]},
                              **extra),
                         dict({"text": "ok \U0001F600"}, **extra)]
                r = Run()
                with FakeLLM(turns) as srv:
                    e = r.env(None, GEMINI_API_KEY=KEY)
                    p = h.run(args(r, srv, "-m", "go"), env=e, input=b"n\n", timeout=120)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(len(srv.requests), 2)
                out = p.stdout.decode()
                self.assertIn(text, out)
                self.assertIn("plan \u2713", out)
                self.assertIn(code, out)
                msgs = r.conversation()["messages"]
                call_block = [b for b in msgs[1]["content"] if b["type"] == "tool_call"][0]
                self.assertEqual(json.loads(call_block["arguments"])["code"], code)
                self.assertIsNone(call_block.get("toolset"))

    def test_a_coordinate_outside_the_grid_is_refused(self):
        turns = [{"calls": [call("click", x=1000, y=10)], "unchecked": True}, {"text": "ok"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = run(r, srv, "--os-auto-approve", "-m", "go")
            self.assertEqual(p.returncode, 0, p.stderr)
            fr = responses(srv.requests[1]["body"])[0]
        self.assertIn("1000,10", fr["response"]["error"])
        self.assertIn("1000x1000", fr["response"]["error"])
        self.assertEqual(presses(self.settle()), [])

    def test_garbage_gives_a_clear_error_and_the_conversation_is_kept(self):
        r = Run()
        for fault, want in (({"garbage": "<html>oops</html>"}, b"not JSON"),
                            ({"garbage_stream": "{not json"}, b"not JSON"),
                            ({"status": 400}, b"HTTP 400: fake status 400")):
            with self.subTest(fault=fault), FakeLLM([{"faults": [fault], "text": "x"}]) as srv:
                p = run(r, srv, "--conversation", r.conv, "-m", "hi")
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(want, p.stderr)
        msgs = r.conversation()["messages"]
        self.assertEqual([m["role"] for m in msgs], ["user"] * 3)
        # And it goes on from there.
        with FakeLLM([{"text": "fine"}]) as srv:
            p = run(r, srv, "--conversation", r.conv, "-m", "again")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(b"fine", p.stdout)
        # An outage reported in the stream (Google's error shape) is retried.
        fault = {"stream_error": {"code": 503, "message": "The model is overloaded.",
                                  "status": "UNAVAILABLE"}}
        with FakeLLM([{"faults": [fault], "text": "later"}]) as srv:
            p = run(r, srv, "-m", "hi")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 2)

    def test_the_browser_only_model_is_refused_with_os(self):
        r = Run()
        with FakeLLM([{"text": "x"}]) as srv:
            p = run(r, srv, "-m", "go", model="gemini-2.5-computer-use-preview-10-2025")
            self.assertEqual(p.returncode, 2)
            self.assertIn(b"browser-only", p.stderr)
            self.assertEqual(srv.requests, [])

    def test_the_key_travels_in_its_header_from_either_variable(self):
        r = Run()
        for env, want in (({"GEMINI_API_KEY": "g-key"}, "g-key"),
                          ({"GOOGLE_API_KEY": "o-key", "GEMINI_API_KEY": "g-key"}, "o-key")):
            with FakeLLM([{"text": "hi"}]) as srv:
                e = r.env(None, GOOGLE_GEMINI_BASE_URL=srv.base_url("gemini"), **env)
                p = h.run(args(r, srv, "-m", "hello", base=False), env=e, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                req = srv.requests[0]
            self.assertEqual(req["headers"]["x-goog-api-key"], want)
            self.assertEqual(req["url"], "/v1beta/models/%s:streamGenerateContent?alt=sse" % MODEL)
            self.assertNotIn(want, json.dumps(r.conversation()))
        p = h.run(args(r, None, "-m", "hello", base=False), env=r.env(None), timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"GOOGLE_API_KEY or GEMINI_API_KEY", p.stderr)


class FakeIsStrict(unittest.TestCase):
    """The fake refuses what Google refuses (tests/fake_llm/gemini.py)."""

    PATH = "/v1beta/models/gemini-3.5-flash:generateContent"
    H = {"x-goog-api-key": "k"}

    def refused(self, body, want, query="", headers=None, state=None):
        raw = json.dumps(body).encode()
        got = fake_gemini.problem(self.PATH, query, self.H if headers is None else headers,
                                  body, raw, state or fake_gemini.State())
        self.assertIsNotNone(got, body)
        self.assertIn(want, got[1]["error"]["message"])
        self.assertEqual(set(got[1]["error"]), {"code", "message", "status"})

    def test_requests(self):
        user = {"role": "user", "parts": [{"text": "hi"}]}
        self.refused({"contents": [user]}, "not the URL", query="key=abc")
        self.refused({"contents": [user]}, "unregistered callers", headers={})
        self.refused({"contents": [user, {"role": "function", "parts": [{"text": "x"}]}]},
                     "valid role")
        fc = {"role": "model", "parts": [{"functionCall": {"name": "click", "args": {}}}]}
        self.refused({"contents": [user, fc, user]}, "missing a thought_signature")
        fc["parts"][0]["thoughtSignature"] = "made-up"
        self.refused({"contents": [user, fc, user]}, "Corrupted thought signature")
        fc["parts"][0]["thoughtSignature"] = fake_gemini.SKIP
        self.refused({"contents": [user, fc, user]}, "number of function response parts")
        fc["parts"][0]["functionCall"]["args"] = {"safety_decision": SAFETY}
        ans = {"role": "user", "parts": [{"functionResponse": {"name": "click",
                                                               "response": {"output": "ok"}}}]}
        self.refused({"contents": [user, fc, ans]}, "must be acknowledged")
        ans["parts"][0]["functionResponse"]["response"]["safety_acknowledgement"] = True
        self.assertIsNone(fake_gemini.problem(self.PATH, "", self.H,
                                              {"contents": [user, fc, ans]}, b"",
                                              fake_gemini.State()))
        tools = [{"computer_use": {"environment": "ENVIRONMENT_DESKTOP",
                                   "display_width": 1280}}]
        self.refused({"contents": [user], "tools": tools}, "Unknown name")
        state = fake_gemini.State()
        body = fake_gemini.whole({"calls": [call("click", x=1, y=2)]}, state, "m").decode()
        content = json.loads(body)["candidates"][0]["content"]
        # Re-serialized (same JSON, other bytes): refused.
        self.refused({"contents": [user, content, user]}, "byte for byte", state=state)
        with self.assertRaises(ValueError):
            fake_gemini.make_parts({"calls": [call("click", x=1000, y=0)]}, fake_gemini.State())


if __name__ == "__main__":
    h.main()
