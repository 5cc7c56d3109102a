"""OpenAI's Responses API end to end: deskhand against the strict fake
(tests/fake_llm/responses.py) on a private Xvfb with the recording client.
Every computer action type reaches the X server as the model meant it; a
batch stops at a denial with exactly the approved prefix delivered; a
vendor's safety check goes to the human even under --os-auto-approve and
only a yes is acknowledged; reasoning items go back byte for byte, also
after a resumed conversation; --api and the base URL pick the API; Ctrl-C
in a batch; errors become clear messages. And the fake itself refuses what
the real API refuses."""
import json
import os
import signal
import subprocess
import sys
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Pty, Run, check_audit

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
import responses as fake_responses  # noqa: E402

NOT_EXECUTED = "Not executed: an earlier computer action in this turn failed."
CHECK = {"id": "cu_sc_1", "code": "malicious_instructions",
         "message": "The screen holds instructions the user did not give."}


def setUpModule():
    global X
    X = h.Xvfb(1920, 1080)


def tearDownModule():
    X.stop()


def cc(actions, call_id="call_a", **more):
    return dict({"call_id": call_id, "actions": actions}, **more)


def items(body, typ):
    return [it for it in body.get("input", []) if it.get("type") == typ]


def user_texts(body):
    out = []
    for it in body.get("input", []):
        if it.get("role") == "user":
            out += [p.get("text", "") for p in it.get("content", []) if isinstance(p, dict)]
    return "\n".join(out)


def presses(evs):
    return [(e["button"], e["x"], e["y"]) for e in evs if e["kind"] == "press"]


def S(v):
    # 1920x1080 is shown to the model at 1280x720: even model pixels map x1.5.
    return str(v * 3 // 2)


class Responses(unittest.TestCase):
    def setUp(self):
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 101)
        self.rec.reset()

    def tearDown(self):
        self.rec.stop()

    def run_agent(self, r, srv, *flags, input=b"", env=None):
        return r.run(srv, "responses", "--api", "responses", "--os", *flags, X=X, input=input,
                     env=env)

    def settle(self):
        """Every event before this point has been recorded."""
        return xi.marker(self.rec, X, 202)

    def test_every_action_type_reaches_the_x_server(self):
        actions = [
            {"type": "click", "button": "left", "x": 100, "y": 100},
            {"type": "click", "button": "right", "x": 102, "y": 100},
            {"type": "click", "button": "wheel", "x": 104, "y": 100},
            {"type": "click", "button": "back", "x": 106, "y": 100},
            {"type": "click", "button": "forward", "x": 108, "y": 100, "keys": ["CTRL"]},
            {"type": "double_click", "x": 110, "y": 120},
            {"type": "drag", "path": [{"x": 200, "y": 200}, {"x": 300, "y": 200},
                                      {"x": 300, "y": 300}]},
            {"type": "keypress", "keys": ["CTRL", "A"]},
            {"type": "move", "x": 400, "y": 400, "keys": ["SHIFT"]},
            {"type": "scroll", "x": 400, "y": 400, "scroll_x": 0, "scroll_y": 300},
            {"type": "type", "text": "hi"},
            {"type": "screenshot"},
            {"type": "wait"},
        ]
        turns = [{"reasoning": [{"summary": "plan"}], "computer_call": cc(actions)},
                 {"text": "done", "phase": "final_answer"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = self.run_agent(r, srv, "--os-auto-approve", "-m", "go")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 2, p.stderr)
            first, second = srv.requests[0]["body"], srv.requests[1]["body"]
        evs = self.settle()
        self.assertEqual(presses(evs), [
            ("1", S(100), S(100)), ("3", S(102), S(100)), ("2", S(104), S(100)),
            ("8", S(106), S(100)), ("9", S(108), S(100)),
            ("1", S(110), S(120)), ("1", S(110), S(120)),
            ("1", S(200), S(200)),
            ("5", S(400), S(400)), ("5", S(400), S(400)), ("5", S(400), S(400)),
        ])
        # The drag went through its middle point, with the button held.
        self.assertTrue(any(e["kind"] == "motion" and (e["x"], e["y"]) == (S(300), S(200))
                            and int(e["state"], 16) & 0x100 for e in evs))
        rel = [e for e in evs if e["kind"] == "release" and e["button"] == "1"]
        self.assertIn((S(300), S(300)), [(e["x"], e["y"]) for e in rel])
        keys = [e.get("name") for e in evs if e["kind"] == "key-press"]
        for k in ("Control_L", "a", "Shift_L", "h", "i"):
            self.assertIn(k, keys)
        # The forward click held CTRL.
        fwd = [e for e in evs if e["kind"] == "press" and e["button"] == "9"][0]
        self.assertTrue(int(fwd["state"], 16) & 0x4)
        # What went out: function tools top level with strict:false, the GA tool.
        tools = first["tools"]
        self.assertIn({"type": "computer"}, tools)
        fn = [t for t in tools if t["type"] == "function"]
        self.assertTrue(fn and all(t["strict"] is False and "function" not in t for t in fn))
        self.assertIs(first["store"], False)
        self.assertEqual(first["include"], ["reasoning.encrypted_content"])
        # One output for the call: the settled screenshot, nothing else.
        outs = items(second, "computer_call_output")
        self.assertEqual(len(outs), 1)
        self.assertEqual(outs[0]["call_id"], "call_a")
        self.assertTrue(outs[0]["output"]["image_url"].startswith("data:image/png;base64,iVBOR"))
        self.assertNotIn("acknowledged_safety_checks", outs[0])
        self.assertEqual(len(items(second, "reasoning")), 1)
        self.assertEqual(user_texts(second), "go")
        check_audit(self, r.audit_events())

    def test_a_denial_mid_batch_stops_it(self):
        actions = [{"type": "click", "button": "left", "x": 100, "y": 100},
                   {"type": "click", "button": "left", "x": 200, "y": 200},
                   {"type": "click", "button": "left", "x": 300, "y": 300}]
        turns = [{"computer_call": cc(actions)}, {"text": "ok"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = self.run_agent(r, srv, "-m", "go", input=b"y\nn\n")
            self.assertEqual(p.returncode, 0, p.stderr)
            second = srv.requests[1]["body"]
        self.assertEqual(p.stdout.count(b"Perform this action?"), 2)
        self.assertEqual(presses(self.settle()), [("1", S(100), S(100))])
        outs = items(second, "computer_call_output")
        self.assertEqual([o["call_id"] for o in outs], ["call_a"])
        note = user_texts(second)
        self.assertIn("declined", note)
        self.assertIn(NOT_EXECUTED, note)
        check_audit(self, r.audit_events())

    def test_a_safety_check_is_asked_even_under_auto_approve(self):
        actions = [{"type": "click", "button": "left", "x": 100, "y": 100}]
        turns = [{"reasoning": [{"summary": "hm"}],
                  "computer_call": cc(actions, checks=[CHECK])}, {"text": "ok"}]
        r = Run()
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "responses", "--api", "responses", "--os", "--os-auto-approve",
                           "-m", "go"), r.env(X))
            t.expect(rb"malicious_instructions")
            t.expect(rb"Acknowledge this safety check")
            t.send("y\n")
            self.assertEqual(t.wait(), 0, t.shown())
            second = srv.requests[1]["body"]
        self.assertEqual(presses(self.settle()), [("1", S(100), S(100))])
        self.assertEqual(items(second, "computer_call_output")[0]["acknowledged_safety_checks"],
                         [CHECK])
        ev = [e["event"] for e in r.audit_events() if e.get("id") == "call_a"]
        self.assertEqual(ev[:3], ["proposed", "asked", "approved"])
        self.assertIn("malicious_instructions", json.dumps(r.audit_events()))
        check_audit(self, r.audit_events())

    def test_a_declined_check_runs_nothing_and_the_model_is_told(self):
        actions = [{"type": "click", "button": "left", "x": 100, "y": 100}]
        turns = [{"reasoning": [{"summary": "hm"}], "computer_call": cc(actions, checks=[CHECK])},
                 {"text": "understood"}]
        r = Run()
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "responses", "--api", "responses", "--os", "--os-auto-approve"),
                    r.env(X))
            t.expect(rb"> ")
            t.send("go\n")
            t.expect(rb"Acknowledge this safety check")
            t.send("n\n")
            t.expect(rb"turn ends here")
            t.expect(rb"> ")
            self.assertEqual(len(srv.requests), 1)
            t.send("what now?\n")
            t.expect(rb"understood")
            t.expect(rb"> ")
            t.eof()
            self.assertEqual(t.wait(), 0, t.shown())
            second = srv.requests[1]["body"]
        self.assertEqual(presses(self.settle()), [])
        # The call and its reasoning are left out; the model is told why.
        self.assertEqual(items(second, "computer_call"), [])
        self.assertEqual(items(second, "computer_call_output"), [])
        self.assertEqual(items(second, "reasoning"), [])
        self.assertIn("did not acknowledge", user_texts(second))
        self.assertIn("malicious_instructions", user_texts(second))
        denied = [e for e in r.audit_events() if e["event"] == "denied"]
        self.assertEqual(len(denied), 1)
        check_audit(self, r.audit_events())

    def test_without_a_terminal_a_check_is_refused(self):
        actions = [{"type": "click", "button": "left", "x": 100, "y": 100}]
        turns = [{"computer_call": cc(actions, checks=[CHECK])}, {"text": "fine"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = self.run_agent(r, srv, "--os-auto-approve", "-m", "go", input=b"y\n")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 1)
            self.assertEqual(presses(self.settle()), [])
            # The next message tells the model; the strict fake accepts it.
            p = self.run_agent(r, srv, "--conversation", r.conv, "-m", "and?")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("did not acknowledge", user_texts(srv.requests[1]["body"]))
        blocked = [e for e in r.audit_events() if e["event"] == "blocked"]
        self.assertEqual(len(blocked), 1)

    def test_reasoning_goes_back_byte_for_byte_after_a_resume(self):
        turns = [{"reasoning": [{"summary": "s1", "encrypted": "gAAA\u00e9/+=="}],
                  "computer_call": cc([{"type": "screenshot"}])},
                 {"reasoning": [{"summary": "s2"}], "text": "looked", "phase": "final_answer"},
                 {"text": "again"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = self.run_agent(r, srv, "-m", "look")
            self.assertEqual(p.returncode, 0, p.stderr)
            p = self.run_agent(r, srv, "--conversation", r.conv, "-m", "more")
            self.assertEqual(p.returncode, 0, p.stderr)
            last = srv.requests[2]["body"]
            sent = srv.responses.raw
        # The strict fake checked every reasoning item's bytes; the message kept its phase.
        self.assertEqual(len(items(last, "reasoning")), 2)
        msg = [it for it in last["input"] if it.get("type") == "message"]
        self.assertEqual(msg[0]["phase"], "final_answer")
        saved = json.dumps(r.conversation())
        for rid, raw in sent.items():
            if rid.startswith("rs_"):
                self.assertIn(json.dumps(raw.decode()), saved)

    def test_api_and_base_pick_the_wire_format(self):
        r = Run()
        for flags, path in ((["--api", "chat"], "/v1/chat/completions"),
                            ([], "/v1/chat/completions"),
                            (["--api", "responses"], "/v1/responses")):
            with FakeLLM([{"text": "hi"}]) as srv:
                p = r.run(srv, "openai", *flags, "-m", "hello", X=X)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(srv.requests[0]["path"], path, flags)

    def test_legacy_preview_model(self):
        turns = [{"computer_call": cc([{"type": "click", "button": "left", "x": 50, "y": 60}],
                                      legacy=True)}, {"text": "ok"}]
        r = Run()
        with FakeLLM(turns) as srv:
            a = r.args(srv, "responses", "--api", "responses", "--os", "--os-auto-approve",
                       "-m", "go")
            a[a.index("--model") + 1] = "computer-use-preview"
            p = h.run(a, env=r.env(X), timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            first = srv.requests[0]["body"]
        self.assertEqual(first["truncation"], "auto")
        self.assertIn({"type": "computer_use_preview", "display_width": 1280,
                       "display_height": 720, "environment": "linux"}, first["tools"])
        self.assertEqual(presses(self.settle()), [("1", S(50), S(60))])

    def test_store_continues_from_the_previous_response(self):
        turns = [{"computer_call": cc([{"type": "screenshot"}])}, {"text": "ok"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = self.run_agent(r, srv, "--store", "-m", "go")
            self.assertEqual(p.returncode, 0, p.stderr)
            first, second = srv.requests[0]["body"], srv.requests[1]["body"]
        self.assertIs(first["store"], True)
        self.assertNotIn("previous_response_id", first)
        self.assertTrue(second["previous_response_id"].startswith("resp_"))
        self.assertEqual([it["type"] for it in second["input"]], ["computer_call_output"])

    def test_ctrl_c_mid_batch(self):
        actions = [{"type": "wait"}, {"type": "click", "button": "left", "x": 100, "y": 100}]
        r = Run()
        with FakeLLM([{"computer_call": cc(actions)}, {"text": "ok"}]) as srv:
            a = r.args(srv, "responses", "--api", "responses", "--os", "--os-auto-approve",
                       "-m", "go")
            proc = subprocess.Popen(a, env=r.env(X), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                self.assertTrue(h.wait_for(lambda: any(
                    e["event"] == "approved" and e.get("id") == "call_a"
                    for e in r.audit_events()), 60))
                proc.send_signal(signal.SIGINT)
                out, err = proc.communicate(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.assertEqual(proc.returncode, 130, err)
            self.assertEqual(len(srv.requests), 1)
        self.assertEqual(presses(self.settle()), [])
        tool = [m for m in r.conversation()["messages"] if m["role"] == "tool"][0]
        texts = [b["text"] for b in tool["content"]]
        self.assertIn("interrupted", texts[0])
        self.assertTrue(texts[1] in (NOT_EXECUTED, "not run: the user interrupted"), texts)

    def test_errors_are_clear(self):
        r = Run()
        cases = [
            ({"faults": [{"status": 400, "body": {"error": {
                "message": "Invalid value for 'input[1]'.", "type": "invalid_request_error",
                "param": "input", "code": None}}}], "text": "x"},
             b"HTTP 400: Invalid value for 'input[1]'."),
            ({"fail": {"code": "invalid_prompt", "message": "The prompt was refused."}},
             b"the response failed: The prompt was refused. [invalid_prompt]"),
        ]
        for turn, want in cases:
            with FakeLLM([turn]) as srv:
                p = r.run(srv, "openai", "--api", "responses", "-m", "hi", X=X)
                self.assertEqual(p.returncode, 1)
                self.assertIn(want, p.stderr)
        # An error event for an overload is retried.
        turn = {"faults": [{"stream_error": {"code": "rate_limit_exceeded",
                                             "message": "Slow down."}}], "text": "fine"}
        with FakeLLM([turn]) as srv:
            p = r.run(srv, "openai", "--api", "responses", "-m", "hi", X=X)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(b"fine", p.stdout)
            self.assertEqual(len(srv.requests), 2)
        # Whole (non-streamed) answers too.
        with FakeLLM([{"stream": False, "reasoning": [{}], "text": "whole"}]) as srv:
            p = r.run(srv, "openai", "--api", "responses", "-m", "hi", X=X)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(b"whole", p.stdout)


class FakeIsStrict(unittest.TestCase):
    """The fake refuses what the real API refuses (tests/fake_llm/responses.py)."""

    def body(self, inp, tools=None, **more):
        return dict({"model": "gpt-5.4", "input": inp, "tools": tools or []}, **more)

    def refused(self, body, want, state=None):
        p = fake_responses.problem(body, json.dumps(body).encode(),
                                   state or fake_responses.State())
        self.assertIsNotNone(p, body)
        self.assertIn(want, p["error"]["message"])

    def test_requests(self):
        opt = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]}
        self.refused(self.body([], messages=[]), "Unknown parameter: 'messages'")
        self.refused(self.body([], [{"type": "function", "function": {"name": "x"}}]),
                     "tools[0].function")
        self.refused(self.body([], [{"type": "function", "name": "x", "parameters": opt}]),
                     "Missing 'b'")
        self.refused(self.body([], [{"type": "computer", "display_width": 1}]),
                     "display_width")
        self.refused(self.body([], previous_response_id="resp_x"), "not found")

    def test_items(self):
        st = fake_responses.State()
        made = fake_responses.build_items(
            {"reasoning": [{}], "computer_call": cc([{"type": "wait"}], checks=[CHECK])}, st)
        rs, call = made[0][0], made[1][0]
        shot = {"type": "computer_screenshot", "image_url": "data:image/png;base64,AA"}
        out = {"type": "computer_call_output", "call_id": "call_a", "output": shot,
               "acknowledged_safety_checks": [CHECK]}
        ok = self.body([rs, call, out])
        raw = b"[" + made[0][1] + b"," + made[1][1] + b"]"
        self.assertIsNone(fake_responses.problem(ok, raw, st))
        self.refused(self.body([dict(out, call_id="nope")]), "No tool call found")
        self.refused(self.body([rs, call, {"role": "user", "content": "x"}]),
                     "No tool output found", st)
        self.refused(self.body([call, out]), "without its required 'reasoning' item", st)
        self.refused(self.body([rs, call, dict(out, acknowledged_safety_checks=[])]),
                     "unacknowledged safety check", st)
        self.refused(self.body([rs, call, dict(out, acknowledged_safety_checks=[
            CHECK, {"id": "other"}])]), "never pending", st)
        self.refused(self.body([rs, call, dict(out, output=dict(shot, detail="original"))]),
                     "output.detail", st)
        edited = dict(rs, encrypted_content="changed")
        p = fake_responses.problem(self.body([edited, call, out]), json.dumps(edited).encode(), st)
        self.assertIn("modified", p["error"]["message"])


if __name__ == "__main__":
    h.main()
