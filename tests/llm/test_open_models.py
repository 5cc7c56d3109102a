"""Open grounding models end to end on a private Xvfb of an odd size:
Qwen2.5-VL and UI-TARS (smart-resize pixels), Qwen3-VL (a 0..999 grid) and
Ollama's native /api/chat. The fake finds a red target (the recording
client's own window) in the very image deskhand sent, answers in its
family's convention, and the click must land within one screen pixel of
where it meant. Also: a UI-TARS reply with every action kind drives the X
server; Qwen's <tool_call> text; garbage replies are answered with a clear
error and the conversation goes on; presets chosen from model names; the
strict fakes refuse what the real servers refuse."""
import json
import os
import sys
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Run, check_audit

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
import ollama as fake_ollama  # noqa: E402
import open_models as om  # noqa: E402

W, H = 1366, 771                      # odd on purpose
TX, TY, TW, TH = 601, 299, 31, 29     # the red target (odd place and size)


def setUpModule():
    global X
    X = h.Xvfb(W, H)


def tearDownModule():
    X.stop()


class Target:
    """tests/xrecord as a red window: it records the clicks that reach it."""

    def __init__(self):
        self.rec = xi.Recorder.__new__(xi.Recorder)
        r = self.rec
        r.X, r.dir = X, h.tmpdir()
        r.path = os.path.join(r.dir, "events")
        r.out = open(r.path, "w")
        r.proc = h.Proc([h.binary("xrecord"), "--geometry", "%dx%d+%d+%d" % (TW, TH, TX, TY),
                         "--color", "ff0000"], env=X.env(), stdout=r.out)
        if not h.wait_for(lambda: "ready" in r.text(), 30):
            r.stop()
            raise RuntimeError("xrecord did not become ready")
        r.mark = len(r.lines())

    def presses(self, n=1):
        evs = self.rec.wait_count(n, kinds=("press",))
        return [e for e in evs if e["kind"] == "press"]

    def stop(self):
        self.rec.stop()


def user_images(body):
    return [u for _, u in om.images(body)]


class OpenModels(unittest.TestCase):
    def agent(self, r, srv, model, *flags, provider="openai", input=b""):
        base = srv.base_url("ollama" if provider == "ollama" else "openai")
        return r.run(srv, "openai", "--provider", provider, "--api-base", base,
                     "--model", model, "--os", "--os-auto-approve", *flags, X=X, input=input)

    def click_case(self, model, first, last, provider="openai", flags=()):
        """Runs one click; returns (press x, y), what the fake saw, the requests."""
        seen = {}
        target = Target()
        try:
            r = Run()
            with FakeLLM([first(seen), last]) as srv:
                p = self.agent(r, srv, model, *flags, "-m", "click the red window",
                               provider=provider)
                self.assertEqual(p.returncode, 0, p.stderr.decode())
                reqs = [q["body"] for q in srv.requests]
            press = target.presses()
        finally:
            target.stop()
        self.assertEqual(len(press), 1, press)
        check_audit(self, r.audit_events())
        return (int(press[0]["x"]), int(press[0]["y"])), seen, reqs, r

    def assert_lands(self, at, seen):
        """Within one screen pixel of the spot the model meant, on the target."""
        (x, y), (mx, my) = at, seen["point"]
        gw, gh = (seen["grid"], seen["grid"]) if seen["grid"] else seen["size"]
        want = ((mx + 0.5) * W / gw, (my + 0.5) * H / gh)
        self.assertLessEqual(abs(x + 0.5 - want[0]), 1.0, (at, want, seen))
        self.assertLessEqual(abs(y + 0.5 - want[1]), 1.0, (at, want, seen))
        self.assertTrue(TX <= x < TX + TW and TY <= y < TY + TH, (at, seen))
        print("# %s: meant %.2f,%.2f, landed %d,%d (centre %.1f,%.1f)" % (
            seen.get("label", ""), want[0], want[1], x, y, x + 0.5, y + 0.5))

    # ---- each family clicks a target it located in its own coordinates ------

    def test_qwen25_vl_smart_resize_tool_calls(self):
        at, seen, reqs, _ = self.click_case("Qwen/Qwen2.5-VL-7B-Instruct",
                                           lambda s: om.aim_qwen(s), {"text": "Done."})
        seen["label"] = "qwen2.5-vl"
        hb, wb = om.smart_resize(H, W, min_pixels=3136, max_pixels=1280 * 800)
        self.assertEqual(seen["size"], (wb, hb))
        self.assert_lands(at, seen)
        tools = [t["function"]["name"] for t in reqs[0]["tools"]]
        self.assertIn("computer_use", tools)
        self.assertNotIn("computer", tools)
        desc = [t["function"] for t in reqs[0]["tools"] if t["function"]["name"] ==
                "computer_use"][0]["description"]
        self.assertIn("%dx%d" % (wb, hb), desc)
        # The screenshot went with the task, and unasked after the click.
        self.assertEqual(len(user_images(reqs[0])), 1)
        self.assertEqual(len(user_images(reqs[1])), 2)

    def test_uitars_smart_resize_text_actions(self):
        def last(body, fmt):
            return {"text": "Thought: it is clicked.\nAction: finished(content='clicked it')"}
        at, seen, reqs, r = self.click_case("ui-tars-1.5-7b", lambda s: om.aim_uitars(s), last)
        seen["label"] = "ui-tars"
        hb, wb = om.smart_resize(H, W, min_pixels=100 * 28 * 28, max_pixels=1280 * 800)
        self.assertEqual(seen["size"], (wb, hb))
        self.assert_lands(at, seen)
        self.assertNotIn("tools", reqs[0])
        self.assertIn("Action Space", reqs[0]["messages"][0]["content"])
        # Its own text went back as the assistant's, the result as the user's.
        m = reqs[1]["messages"]
        self.assertTrue(any(x["role"] == "assistant" and "Action: click(" in x["content"]
                            for x in m))
        self.assertEqual(len(reqs), 2)
        conv = r.conversation()
        self.assertIn("clicked it", json.dumps(conv["messages"][-1]))

    def test_uitars_newer_point_syntax(self):
        at, seen, _, _ = self.click_case("UI-TARS-1.5-7B",
                                         lambda s: om.aim_uitars(s, newer=True),
                                         {"text": "Thought: ok\nAction: finished()"})
        seen["label"] = "ui-tars <point>"
        self.assert_lands(at, seen)

    def test_qwen3_vl_relative_1000(self):
        at, seen, reqs, _ = self.click_case("qwen3-vl-8b-instruct",
                                           lambda s: om.aim_qwen(s, grid=1000),
                                           {"tool_calls": [{"name": "computer_use", "arguments":
                                                            {"action": "terminate",
                                                             "status": "success"}}]})
        seen["label"] = "qwen3-vl"
        self.assert_lands(at, seen)
        self.assertEqual(seen["size"], (1280, 722))
        self.assertIn("1000x1000", json.dumps(reqs[0]["tools"]))
        self.assertIn("(999, 999)", reqs[0]["messages"][0]["content"])
        self.assertEqual(len(reqs), 2)   # terminate ended the task

    def test_qwen_tool_call_in_text(self):
        at, seen, reqs, _ = self.click_case("qwen2.5-vl-72b",
                                           lambda s: om.aim_qwen(s, as_text=True),
                                           {"text": "All done."})
        seen["label"] = "qwen <tool_call> text"
        self.assert_lands(at, seen)
        asst = [m for m in reqs[1]["messages"] if m["role"] == "assistant"][0]
        self.assertEqual(asst["tool_calls"][0]["function"]["name"], "computer_use")
        self.assertNotIn("<tool_call>", asst["content"] or "")

    def test_ollama_native(self):
        def split(seen):
            aim = om.aim_qwen(seen)
            # Lines cut every 3 bytes on the wire: the parser joins them.
            return lambda body, fmt: dict(aim(body, fmt), net_chunk=3)
        at, seen, reqs, _ = self.click_case("qwen2.5vl:7b", split,
                                           {"text": "Done.", "net_chunk": 7},
                                           provider="ollama", flags=("--think", "low"))
        seen["label"] = "ollama qwen2.5vl"
        self.assert_lands(at, seen)
        first, second = reqs
        self.assertEqual(first["think"], "low")
        self.assertTrue(first["messages"][-1]["images"][0].startswith("iVBOR"))
        tool = [m for m in second["messages"] if m["role"] == "tool"][0]
        self.assertEqual(tool["tool_name"], "computer_use")
        asst = [m for m in second["messages"] if m["role"] == "assistant"][0]
        self.assertIsInstance(asst["tool_calls"][0]["function"]["arguments"], dict)
        self.assertEqual(len(second["messages"][-1]["images"]), 1)

    # ---- every UI-TARS action kind reaches the X server ---------------------------

    def test_uitars_every_action_kind(self):
        rec = xi.Recorder(X)
        xi.marker(rec, X, 101)
        rec.reset()
        try:
            acts = ["click(start_box='(100,100)')", "left_double(start_box='(120,100)')",
                    "right_single(start_box='(140,100)')", "hover(start_box='(160,100)')",
                    "drag(start_box='(200,200)', end_box='(300,250)')",
                    "hotkey(key='ctrl a')", "press(key='enter')",
                    "type(content='hi\\n')", "scroll(start_box='(400,300)', direction='down')",
                    "select(start_point='<point>10 10</point>', end_point='<point>20 20</point>')",
                    "wait()"]
            turns = [{"text": "Thought: all of them.\nAction: " + "\n\n".join(acts)},
                     {"text": "Thought: done\nAction: finished(content='ok')"}]
            r = Run()
            with FakeLLM(turns) as srv:
                p = self.agent(r, srv, "ui-tars-1.5", "-m", "go")
                self.assertEqual(p.returncode, 0, p.stderr.decode())
                self.assertEqual(len(srv.requests), 2)
                results = srv.requests[1]["body"]["messages"][-1]
            evs = xi.marker(rec, X, 202)
        finally:
            rec.stop()
        hb, wb = om.smart_resize(H, W, min_pixels=78400, max_pixels=1280 * 800)

        def S(mx, my):
            return (str((2 * mx + 1) * W // (2 * wb)), str((2 * my + 1) * H // (2 * hb)))
        presses = [(e["button"],) + (e["x"], e["y"]) for e in evs if e["kind"] == "press"]
        self.assertEqual(presses[:4], [("1",) + S(100, 100), ("1",) + S(120, 100),
                                       ("1",) + S(120, 100), ("3",) + S(140, 100)])
        self.assertIn(("1",) + S(200, 200), presses)
        self.assertIn(("1",) + S(10, 10), presses)
        self.assertEqual([b for b, _, _ in presses].count("5"), 5)
        self.assertTrue(any(e["kind"] == "motion" and (e["x"], e["y"]) == S(160, 100)
                            for e in evs))
        keys = [e.get("name") for e in evs if e["kind"] == "key-press"]
        for k in ("Control_L", "a", "Return", "h", "i"):
            self.assertIn(k, keys)
        self.assertEqual(keys.count("Return"), 2)   # press(enter) and type's trailing \n
        self.assertNotIn("[error]", json.dumps(results))

    # ---- garbage is answered, the conversation goes on ----------------------------

    def test_garbage_replies_are_answered_with_an_error(self):
        cases = [
            ("ui-tars-1.5-7b", {"text": "Thought: hm\nAction: clik(start_box='(1,2)')"},
             "unknown action \\\"clik\\\""),
            ("ui-tars-1.5-7b", {"text": "Thought: hm\nAction: click(start_box='(1,2)"},
             "cannot read the action"),
            ("ui-tars-1.5-7b", {"text": "Thought: hm\nAction: click(start_box='here')"},
             "is not a point"),
            ("qwen2.5-vl-7b", {"text": "<tool_call>{\"name\": computer_use}</tool_call>"},
             "<tool_call> text is not a JSON object"),
            ("qwen2.5-vl-7b", {"tool_calls": [{"name": "computer_use",
                                               "arguments": {"action": "fly"}}]},
             "unknown computer_use action"),
        ]
        for model, bad, want in cases:
            with self.subTest(model=model, want=want):
                r = Run()
                fin = ({"text": "Thought: ok\nAction: finished()"} if model.startswith("ui")
                       else {"text": "ok"})
                with FakeLLM([bad, fin]) as srv:
                    p = self.agent(r, srv, model, "-m", "do it")
                    self.assertEqual(p.returncode, 0, p.stderr.decode())
                    self.assertEqual(len(srv.requests), 2)
                    second = json.dumps(srv.requests[1]["body"]["messages"])
                self.assertIn(want, second)
                self.assertIn("[error]", second)
                msgs = r.conversation()["messages"]
                # UI-TARS's finished() is a call of its own, answered too.
                self.assertEqual([m["role"] for m in msgs],
                                 ["user", "assistant", "tool", "assistant"] +
                                 (["tool"] if model.startswith("ui") else []))

    # ---- presets from model names, and --grounding -------------------------------

    def test_presets_from_model_names(self):
        fitted = (1280, 722)
        for model, size, grid in (("llama3.2-vision", fitted, None),
                                  ("Qwen/Qwen2.5-VL-3B-Instruct", (1344, 756), None),
                                  ("ui-tars-72b-dpo", (1344, 756), None),
                                  ("qwen3-vl:4b", fitted, "1000x1000"),
                                  ("qwen3-coder", fitted, None)):
            with self.subTest(model=model):
                r = Run()
                with FakeLLM([{"text": "Thought: x\nAction: finished()"
                               if model.startswith("ui") else "ok"}]) as srv:
                    p = self.agent(r, srv, model, "-m", "look")
                    self.assertEqual(p.returncode, 0, p.stderr.decode())
                    body = srv.requests[0]["body"]
                prompt = body["messages"][0]["content"]
                self.assertIn("%dx%d" % size, prompt)
                if grid:
                    self.assertIn(grid + " grid", prompt)
                else:
                    self.assertNotIn(" grid over", prompt)
        r = Run()
        with FakeLLM([{"text": "ok"}]) as srv:
            p = self.agent(r, srv, "llama3.2-vision", "--grounding", "smart-resize", "-m", "x")
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            self.assertIn("1344x756", srv.requests[0]["body"]["messages"][0]["content"])

    # ---- the fakes refuse what the real servers refuse ----------------------------

    def test_ollama_fake_is_strict(self):
        ok = {"model": "m", "messages": [{"role": "user", "content": "hi", "images": ["iVBORw=="]}]}
        self.assertIsNone(fake_ollama.problem(ok))
        bad = [
            {"model": "m", "messages": [{"role": "user", "content": "x",
                                         "images": ["data:image/png;base64,iVBORw=="]}]},
            {"model": "m", "messages": [{"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "f", "arguments": "{}"}}]}]},
            {"model": "m", "messages": [{"role": "tool", "content": "r"}]},
            {"model": "m", "messages": [], "max_tokens": 5},
            {"model": "m", "messages": [{"role": "user", "content": "x", "name": "y"}]},
            {"model": "m", "messages": [], "think": "very"},
        ]
        for b in bad:
            self.assertIsNotNone(fake_ollama.problem(b), b)

    def test_ollama_errors_are_clear(self):
        r = Run()
        with FakeLLM([{"text": "x", "faults": [{"status": 404, "body": {
                "error": "model \"nope\" not found, try pulling it first"}}]}]) as srv:
            p = self.agent(r, srv, "nope", provider="ollama", *("-m", "hi"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("HTTP 404: model \"nope\" not found", p.stderr.decode())
        r = Run()
        with FakeLLM([{"text": "x", "faults": [{"stream_error": "out of memory"}]},
                      {"text": "x"}]) as srv:
            p = self.agent(r, srv, "llava", provider="ollama", *("-m", "hi"))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("the server reported an error: out of memory", p.stderr.decode())
        self.assertEqual([m["role"] for m in r.conversation()["messages"]], ["user"])


if __name__ == "__main__":
    h.main()
