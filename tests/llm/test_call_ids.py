"""Tool-call ids are the model's text (issue 10, class 13): a hostile model
repeats an id so that a denied click borrows the result of a harmless block
("it ran"), or sends an id made of path pieces that becomes part of the
preview's file name. Each call must get its own result, in the conversation,
the audit log and the next request, in both wire formats (the fake server
refuses what the real ones refuse: repeated or odd Anthropic ids, OpenAI
calls left unanswered), and nothing is written outside the conversation's
directory."""
import os
import re
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Pty, Run, check_audit, tool_results


def setUpModule():
    global X
    X = h.Xvfb(1920, 1080)


def tearDownModule():
    X.stop()


def calls_of(body, fmt):
    """The tool calls a request carries, in order: [(id, name)]."""
    out = []
    for m in body.get("messages", []):
        if fmt == "openai":
            for c in m.get("tool_calls") or []:
                out.append((c["id"], c["function"]["name"]))
        elif isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_use":
                    out.append((b["id"], b["name"]))
    return out


HARMLESS = {"name": "execute", "arguments": {"language": "shell", "code": "echo harmless-ran"}}
CLICK = {"name": "computer", "arguments": {"action": "left_click", "coordinate": [640, 360]}}


class CallIds(unittest.TestCase):
    def setUp(self):
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 101)
        self.rec.reset()

    def tearDown(self):
        self.rec.stop()

    def assert_no_click(self):
        evs = xi.marker(self.rec, X, 202)
        self.assertEqual([e for e in evs if e["kind"] == "press"], [])

    def run_turns(self, fmt, turns, answers):
        r = Run()
        with FakeLLM(turns) as srv:
            p = r.run(srv, fmt, "-y", "--os", "-m", "go", X=X, input=answers)
            reqs = [q["body"] for q in srv.requests]
            statuses = len(srv.requests), srv.turns_left()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(statuses[1], 0, "the fake server refused a request: %s" % p.stderr)
        return r, reqs

    def check_denied_click_is_told(self, fmt, body, r):
        calls = calls_of(body, fmt)
        answers = tool_results(body, fmt)
        self.assertEqual(len(calls), len(answers))
        # What the model is told about each call, in order: the click's
        # own answer, never the block's.
        told = dict(zip([name for _, name in calls], [text for _, text, _ in answers]))
        self.assertIn("declined", told["computer"])
        self.assertNotIn("harmless-ran", told["computer"])
        self.assertIn("harmless-ran", told["execute"])
        ids = [i for i, _ in calls]
        self.assertEqual(len(ids), len(set(ids)), calls)
        self.assertEqual([i for i, _, _ in answers], ids)
        clicks = [i for i, name in calls if name == "computer"]
        runs = [i for i, name in calls if name == "execute"]
        self.assert_no_click()
        ev = r.audit_events()
        check_audit(self, ev)
        denied = [e["id"] for e in ev if e["event"] == "denied"]
        executed = [e["id"] for e in ev if e["event"] == "executed"]
        self.assertEqual(denied, clicks)
        self.assertEqual(executed, runs)
        conv_ids = [b["id"] for m in r.conversation()["messages"]
                    for b in m.get("content", []) if b.get("type") == "tool_call"]
        self.assertEqual(sorted(conv_ids), sorted(ids))

    def test_duplicate_ids_in_one_turn_openai(self):
        turns = [{"tool_calls": [dict(HARMLESS, id="dup"), dict(CLICK, id="dup")]},
                 {"text": "ok"}]
        r, reqs = self.run_turns("openai", turns, b"n\n")
        self.check_denied_click_is_told("openai", reqs[1], r)

    def test_duplicate_ids_in_one_turn_anthropic(self):
        turns = [{"tool_calls": [dict(HARMLESS, id="toolu_dup"), dict(CLICK, id="toolu_dup")]},
                 {"text": "ok"}]
        r, reqs = self.run_turns("anthropic", turns, b"n\n")
        self.check_denied_click_is_told("anthropic", reqs[1], r)

    def test_id_reused_across_turns(self):
        for fmt in ("openai", "anthropic"):
            with self.subTest(fmt=fmt):
                self.rec.reset()
                turns = [{"tool_calls": [dict(HARMLESS, id="toolu_same")]},
                         {"tool_calls": [dict(CLICK, id="toolu_same")]},
                         {"text": "ok"}]
                r, reqs = self.run_turns(fmt, turns, b"n\n")
                self.check_denied_click_is_told(fmt, reqs[2], r)

    def test_id_cannot_steer_the_preview_file(self):
        # A planted "preview-.." directory turns "preview-" + "../../../x"
        # into a path above the conversation's directory.
        r = Run()
        planted = os.path.join(r.dir, "preview-..")
        os.makedirs(planted)
        name = "escaped-%d-%s" % (os.getpid(), os.path.basename(r.dir))
        outside = os.path.join(os.path.dirname(r.dir), name + ".png")
        turns = [{"tool_calls": [dict(CLICK, id="../../../" + name)]}, {"text": "ok"}]
        try:
            with FakeLLM(turns) as srv:
                # d (details) writes the preview; it needs a terminal.
                t = Pty(r.args(srv, "openai", "-y", "--os", "-m", "go"), r.env(X))
                t.expect(rb"Perform this action\?")
                t.send("d\n")
                shown = t.expect(rb"preview: (\S+\.png)")
                t.expect(rb"Perform this action\?")
                t.send("n\n")
                self.assertEqual(t.wait(), 0, t.shown())
                left = srv.turns_left()
                body = srv.requests[-1]["body"]
            self.assertEqual(left, 0, t.shown())
            self.assertFalse(os.path.exists(outside), outside)
            self.assertEqual(os.listdir(planted), [])
            preview = os.path.realpath(shown.group(1).decode())
            self.assertEqual(os.path.dirname(preview), os.path.realpath(r.dir))
            with open(preview, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            ids = [i for i, _ in calls_of(body, "openai")]
            self.assertTrue(all(re.match(r"^[A-Za-z0-9_-]+$", i) for i in ids), ids)
            self.assert_no_click()
        finally:
            if os.path.exists(outside):
                os.unlink(outside)


if __name__ == "__main__":
    h.main()
