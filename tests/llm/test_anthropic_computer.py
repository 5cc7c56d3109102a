"""Anthropic's 2026 computer use end to end: the real deskhand, a private
Xvfb with the recording client, the strict Anthropic fake
(tests/fake_llm/anthropic_strict.py, which refuses what the real API
refuses). Every toolset member reaches the X server as itself; a batch is
confirmed one action at a time and a denial in the middle lets exactly the
approved prefix through, the rest answered with the exact "Not executed"
text; a refused tool type steps down and says so; the older single tools
keep working; thinking blocks survive a resumed conversation byte for byte
and pruned screenshots take the binding remedy; Ctrl-C in the middle of a
batch answers every call; zoom answers with display-resolution pixels."""
import base64
import json
import os
import signal
import subprocess
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Run, check_audit, tool_results
import pngread

NOT_EXECUTED = "Not executed: an earlier computer action in this turn failed."
MODEL = "claude-sonnet-5-5"


def setUpModule():
    global X
    X = h.Xvfb(1920, 1080)


def tearDownModule():
    X.stop()


def member(name, **inp):
    return {"tool": name, "input": inp}


def results_by_id(body):
    out = {}
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                out[b["tool_use_id"]] = b
    return out


def result_text(r):
    c = r.get("content")
    if isinstance(c, str):
        return c
    return "".join(p.get("text", "") for p in c or [] if p.get("type") == "text")


def result_image(r):
    for p in r.get("content") or []:
        if isinstance(p, dict) and p.get("type") == "image":
            return pngread.read(base64.b64decode(p["source"]["data"]))
    return None


def tool_use_ids(srv, n):
    """The tool_use ids the fake sent in its n-th answer (0-based)."""
    sent = list(srv.anthropic.responses.values())
    ids = []
    for content in sent:
        ids_here = [b["id"] for b in content if b["type"] == "tool_use"]
        if ids_here and ids_here not in ids:
            ids.append(ids_here)
    return ids[n]


class Toolset(unittest.TestCase):
    def setUp(self):
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 101)
        self.rec.reset()

    def tearDown(self):
        self.rec.stop()

    def run_agent(self, r, turns, *flags, answers=b"", model=MODEL, setup=None):
        with FakeLLM(turns) as srv:
            if setup:
                setup(srv)
            p = r.run(srv, "anthropic", "--model", model, "--os", *flags, "-m", "do it", X=X,
                      input=answers)
        return p, srv

    def assert_request_rules(self, srv):
        """What every request to a 5.5 model must be (the fake checks the rest)."""
        for req in srv.requests:
            body = req["body"]
            self.assertNotIn("tool_choice", body)
            self.assertEqual(body["thinking"]["type"], "adaptive")
            self.assertEqual(body["thinking"]["display"], "summarized")
            self.assertNotIn("budget_tokens", body["thinking"])
            self.assertIn({"type": "computer_toolset_20260801"}, body["tools"])
            self.assertNotIn("computer-use", req["headers"].get("anthropic-beta", ""))

    def test_every_member_reaches_the_x_server(self):
        r = Run()
        batch = [member("mouse_move", coordinate=[100, 100]),
                 member("left_click", coordinate=[200, 100], text="shift"),
                 member("right_click", coordinate=[210, 100]),
                 member("middle_click", coordinate=[220, 100]),
                 member("double_click", coordinate=[230, 100]),
                 member("triple_click", coordinate=[240, 100]),
                 member("mouse_move", coordinate=[500, 500]),
                 member("left_mouse_down"), member("left_mouse_up"),
                 member("left_click_drag", start_coordinate=[300, 300], coordinate=[400, 300]),
                 member("scroll", scroll_direction="down", scroll_amount=2,
                        coordinate=[640, 360], text="ctrl"),
                 member("type", text="hi"),
                 member("key", text="Down", repeat=3),
                 member("hold_key", text="shift", duration=0.2),
                 member("wait", duration=0.1),
                 member("cursor_position"),
                 member("screenshot"),
                 member("zoom", region=[0, 0, 320, 180])]
        self.assertEqual(len({b["tool"] for b in batch}), 17)
        turns = [{"blocks": [{"thinking": "Trying every member."}] + batch},
                 {"blocks": [{"text": "all done"}]}]
        p, srv = self.run_agent(r, turns, "--os-auto-approve")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_request_rules(srv)
        ids = tool_use_ids(srv, 0)
        res = results_by_id(srv.requests[1]["body"])
        self.assertEqual(sorted(res), sorted(ids))
        for i in ids:
            self.assertEqual(res[i]["toolset_name"], "computer")
            self.assertFalse(res[i].get("is_error"), res[i])
        by_name = dict(zip([b["tool"] for b in batch], ids))
        self.assertEqual(len(ids), 18)
        self.assertEqual(result_text(res[by_name["cursor_position"]]), "X=640,Y=360")  # after the scroll
        # zoom: the region is 480x270 screen pixels; the answer shows at
        # least every one of them (captured at display resolution, enlarged).
        w, hgt, _ = result_image(res[by_name["zoom"]])
        self.assertGreaterEqual(w, 480)
        self.assertGreaterEqual(hgt, 270)
        self.assertEqual(w * 270, hgt * 480)
        evs = xi.marker(self.rec, X, 202)
        press = [(e["button"], e["x"], e["y"]) for e in evs if e["kind"] == "press"]
        self.assertIn(("1", "300", "150"), press)            # left_click (model 200,100)
        self.assertIn(("3", "315", "150"), press)            # right_click
        self.assertIn(("2", "330", "150"), press)            # middle_click
        self.assertEqual(press.count(("1", "345", "150")), 2)  # double_click
        self.assertEqual(press.count(("1", "360", "150")), 3)  # triple_click
        self.assertIn(("1", "750", "750"), press)            # left_mouse_down
        self.assertIn(("1", "450", "450"), press)            # drag start
        self.assertEqual([b for b, _, _ in press if b in ("4", "5")], ["5", "5"])
        rel = [(e["button"], e["x"], e["y"]) for e in evs if e["kind"] == "release"]
        self.assertIn(("1", "600", "450"), rel)              # drag end
        # Modifiers held during the click and the scroll.
        shift_click = [e for e in evs if e["kind"] == "press" and e["x"] == "300"]
        self.assertTrue(int(shift_click[0]["state"], 16) & 1)
        wheel = [e for e in evs if e["kind"] == "press" and e["button"] == "5"]
        self.assertTrue(all(int(e["state"], 16) & 4 for e in wheel))
        keys = [e["name"] for e in evs if e["kind"] == "key-press"]
        self.assertEqual(keys.count("Down"), 3)
        self.assertIn("h", keys)
        self.assertIn("Shift_L", keys)
        check_audit(self, r.audit_events())

    def test_a_denial_mid_batch_lets_exactly_the_approved_prefix_through(self):
        r = Run()
        batch = [member("left_click", coordinate=[100, 100]),
                 member("left_click", coordinate=[200, 200]),
                 member("left_click", coordinate=[300, 300]),
                 member("key", text="a")]
        turns = [{"blocks": [{"thinking": "Three clicks."}, {"text": "Clicking."}] + batch},
                 {"blocks": [{"text": "understood"}]}]
        p, srv = self.run_agent(r, turns, "-y", answers=b"y\nn\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        # Asked one by one: two questions, the second answered no.
        self.assertEqual(p.stdout.count(b"Perform this action?"), 2)
        evs = xi.marker(self.rec, X, 303)
        press = [(e["x"], e["y"]) for e in evs if e["kind"] == "press"]
        self.assertEqual(press, [("150", "150")])
        self.assertEqual([e for e in evs if e["kind"] == "key-press"], [])
        ids = tool_use_ids(srv, 0)
        res = results_by_id(srv.requests[1]["body"])
        self.assertEqual([res[i]["toolset_name"] for i in ids], ["computer"] * 4)
        self.assertFalse(res[ids[0]].get("is_error"))
        self.assertTrue(res[ids[1]]["is_error"])
        self.assertIn("declined", result_text(res[ids[1]]))
        for i in ids[2:]:
            self.assertTrue(res[i]["is_error"])
            self.assertEqual(result_text(res[i]).split("\n")[0], NOT_EXECUTED)
        # One fresh screenshot, with the last result of the batch.
        self.assertIsNotNone(result_image(res[ids[-1]]))
        self.assertEqual([i for i in ids if result_image(res[i])], [ids[-1]])
        ev = r.audit_events()
        self.assertEqual(len([e for e in ev if e["event"] == "executed"]), 1)
        self.assertEqual(len([e for e in ev if e["event"] == "denied"]), 1)
        check_audit(self, ev)

    def test_ctrl_c_mid_batch_answers_every_call(self):
        r = Run()
        batch = [member("left_click", coordinate=[100, 100]),
                 member("wait", duration=60),
                 member("left_click", coordinate=[300, 300])]
        turns = [{"blocks": batch}, {"blocks": [{"text": "never"}]}]
        with FakeLLM(turns) as srv:
            proc = subprocess.Popen(r.args(srv, "anthropic", "--model", MODEL, "--os",
                                           "--os-auto-approve", "-m", "go"),
                                    env=r.env(X), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                self.rec.wait_count(1, kinds=("press",), timeout=60)
                # The wait is approved, so running (no wall clock: the audit log says so).
                h.wait_for(lambda: len([e for e in r.audit_events()
                                        if e["event"] == "approved"]) >= 2, 30)
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.assertEqual(len(srv.requests), 1)
        self.assertEqual(proc.returncode, 130)
        evs = xi.marker(self.rec, X, 404)
        self.assertEqual([(e["x"], e["y"]) for e in evs if e["kind"] == "press"],
                         [("150", "150")])
        conv = r.conversation()
        results = [b for b in conv["messages"][-1]["content"] if b["type"] == "tool_result"]
        self.assertEqual(len(results), 3)
        self.assertTrue(results[1]["is_error"])
        self.assertEqual(results[2]["text"].split("\n")[0], NOT_EXECUTED)
        # Resumed, the strict fake accepts the history: every tool_use answered.
        with FakeLLM([{"blocks": [{"text": "resumed"}]}]) as srv:
            p = r.run(srv, "anthropic", "--model", MODEL, "--os", "-m", "again", X=X)
            self.assertEqual(p.returncode, 0, p.stderr)
            res = results_by_id(srv.requests[0]["body"])
            self.assertEqual(len(res), 3)
            self.assertTrue(all(v["toolset_name"] == "computer" for v in res.values()))

    def test_thinking_is_byte_exact_after_resume_and_pruning_takes_the_remedy(self):
        r = Run()
        think = 'I see a "terminal" \u00e9\u2713\U0001F600 \\ and \ttabs.\n'
        turns = [{"blocks": [{"thinking": think}, {"text": "Looking."},
                             {"redacted": "EmwKAhgBEgy3va+/=="},
                             member("screenshot")], "thinking_chunk": 3},
                 {"blocks": [{"thinking": "Seen it."}, {"text": "done"}]}]
        p, srv = self.run_agent(r, turns)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"I see a", p.stdout)   # the summary is shown
        stored = [b["raw"] for m in r.conversation()["messages"] for b in m["content"]
                  if b["type"] == "vendor"]
        self.assertEqual(len(stored), 3)
        self.assertEqual(json.loads(stored[0])["thinking"], think)
        first_answers = list(srv.anthropic.responses.values())
        # A second run resumes the file: everything goes back as it came.
        srv2_state = srv.anthropic
        with FakeLLM([{"blocks": [{"text": "again"}]}]) as srv2:
            srv2.anthropic = srv2_state       # the same "server": it knows its signatures
            p = r.run(srv2, "anthropic", "--model", MODEL, "--os", "-m", "and again", X=X)
            self.assertEqual(p.returncode, 0, p.stderr)
            body = srv2.requests[0]["body"]
            assistants = [[{k: v for k, v in b.items() if k != "cache_control"}
                           for b in m["content"]]
                          for m in body["messages"] if m["role"] == "assistant"]
            self.assertEqual(assistants, [first_answers[0], first_answers[-1]])
            raw = json.dumps(body, ensure_ascii=False)
            self.assertNotIn("block_binding", raw)
        # Pruned screenshots (--keep-images 0) edit the history: the remedy is asked for.
        dropped = srv2_state.dropped
        with FakeLLM([{"blocks": [{"text": "pruned"}]}]) as srv3:
            srv3.anthropic = srv2_state
            p = r.run(srv3, "anthropic", "--model", MODEL, "--os", "--keep-images", "0",
                      "-m", "once more", X=X)
            self.assertEqual(p.returncode, 0, p.stderr)
            req = srv3.requests[0]
            self.assertEqual(req["body"]["thinking"]["block_binding"],
                             {"prefix_mismatch_behavior": "drop_block"})
            self.assertIn("thinking-binding-controls-2026-08-01",
                          req["headers"]["anthropic-beta"])
        self.assertGreater(srv2_state.dropped, dropped)


class OlderTools(unittest.TestCase):
    def setUp(self):
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 111)
        self.rec.reset()

    def tearDown(self):
        self.rec.stop()

    def single_tool_run(self, model, setup=None):
        r = Run()
        turns = [{"tool_calls": [{"id": "toolu_a", "name": "computer", "arguments": {
                     "action": "left_click", "coordinate": [640, 360]}},
                                 {"id": "toolu_b", "name": "computer", "arguments": {
                                     "action": "zoom", "region": [0, 0, 640, 360]}}]},
                 {"text": "clicked"}]
        with FakeLLM(turns) as srv:
            if setup:
                setup(srv)
            p = r.run(srv, "anthropic", "--model", model, "--os", "--os-auto-approve",
                      "-m", "click", X=X)
        self.assertEqual(p.returncode, 0, p.stderr)
        evs = xi.marker(self.rec, X, 222)
        self.assertEqual([(e["x"], e["y"]) for e in evs if e["kind"] == "press"],
                         [("960", "540")])
        res = tool_results(srv.requests[-1]["body"], "anthropic")
        self.assertEqual([i for i, _, _ in res], ["toolu_a", "toolu_b"])
        self.assertFalse(any(e for _, _, e in res))
        for b in results_by_id(srv.requests[-1]["body"]).values():
            self.assertNotIn("toolset_name", b)
        return p, srv

    def test_20251124_keeps_working(self):
        p, srv = self.single_tool_run("claude-opus-4-6")
        tool = [t for t in srv.requests[0]["body"]["tools"] if "type" in t][0]
        self.assertEqual(tool["type"], "computer_20251124")
        self.assertTrue(tool["enable_zoom"])
        self.assertEqual(srv.requests[0]["headers"]["anthropic-beta"], "computer-use-2025-11-24")

    def test_20250124_keeps_working(self):
        p, srv = self.single_tool_run("claude-sonnet-4-5")
        tool = [t for t in srv.requests[0]["body"]["tools"] if "type" in t][0]
        self.assertEqual(tool["type"], "computer_20250124")
        self.assertEqual(srv.requests[0]["headers"]["anthropic-beta"], "computer-use-2025-01-24")

    def test_a_refused_toolset_steps_down_and_the_user_is_told(self):
        def only_1124(srv):
            srv.anthropic.models["claude-labs-z"] = {"computer_20251124"}
        p, srv = self.single_tool_run("claude-labs-z", setup=only_1124)
        types = [[t["type"] for t in req["body"]["tools"] if "type" in t][0]
                 for req in srv.requests]
        # Refused once, then the older version for the rest of the session.
        self.assertEqual(types, ["computer_toolset_20260801", "computer_20251124",
                                 "computer_20251124"])
        self.assertIn(b"computer_20251124 worked", p.stdout + p.stderr)


if __name__ == "__main__":
    h.main()
