"""The X server dies mid-run (a private Xvfb, killed by its pid): between
two actions, in the middle of a long `type`, during a drag with the button
held. deskhand says so on one line, records the action as failed (the audit
log's executed line and the tool result the conversation keeps), saves and
exits below 128 without asking the model again, leaves no process behind;
resumed on a new Xvfb, the model gets the history with the failed result.
The same for a headless sway killed by its pid."""
import json
import os
import signal
import threading
import time
import unittest

import harness as h
import wayland
import xinput_util as xi
from agentlib import FakeLLM, Run, call, check_audit, marked, texts, tool_results

LONG = "".join(chr(0x4e00 + i) for i in range(6000))   # spare keycodes: paced rounds
PATH = [[100 + 10 * k, 100 + 5 * (k % 20)] for k in range(64)]   # the most: ~3 s


class DisplayLoss(unittest.TestCase):
    def setUp(self):
        self.X = h.Xvfb(1280, 800)
        self.rec = xi.Recorder(self.X)
        self.r = Run()
        self.mark = "xloss-%d-%s" % (os.getpid(), self.id().rsplit(".", 1)[-1])

    def tearDown(self):
        self.rec.stop()
        self.X.stop()

    def kill_x(self):
        os.kill(self.X.proc.pid, signal.SIGKILL)
        self.X.proc.wait()

    def kill_x_when(self, pred):
        """Kills the X server once the recorder's events satisfy pred."""
        def watch():
            if self.rec.wait_events(pred, 60) and pred(self.rec.new_events()):
                self.kill_x()
        t = threading.Thread(target=watch, daemon=True)
        t.start()
        return t

    def run_until_lost(self, turns):
        with FakeLLM(turns) as srv:
            p = self.r.run(srv, "openai", "--os", "--os-auto-approve", "-m", "do it",
                           X=self.X, env=self.r.env(self.X, DESKHAND_TEST_MARK=self.mark),
                           timeout=120)
            asked = len(srv.requests)
        err = p.stderr.decode()
        self.assertIsNotNone(self.X.proc.poll(), "the X server outlived the action: %s" % err)
        self.assertEqual(p.returncode, 1, err)
        gone = [l for l in err.splitlines() if "is gone" in l]
        self.assertEqual(len(gone), 1, err)
        self.assertIn("the display %s is gone" % self.X.display, gone[0])
        self.assertIn("--conversation %s" % self.r.conv, gone[0])
        self.assertTrue(h.wait_for(lambda: not marked(self.mark), 30),
                        "processes left behind: %r" % marked(self.mark))
        return asked, err

    def failed_as_recorded(self, needle):
        """The last action: failed in the audit log and in the saved result."""
        events = self.r.audit_events()
        check_audit(self, events)
        executed = [e for e in events if e["event"] == "executed"]
        self.assertNotEqual(executed[-1]["status"], 0, executed[-1])
        self.assertIn(needle, executed[-1].get("error", ""))
        v = h.run([h.binary(), "audit", "verify", self.r.audit])
        self.assertEqual(v.returncode, 0, v.stdout)
        msgs = self.r.conversation()["messages"]
        self.assertEqual(msgs[-1]["role"], "tool")
        result = msgs[-1]["content"][-1]
        self.assertTrue(result.get("is_error"), result)
        self.assertIn(needle, result.get("text", ""))
        self.assertNotIn("done:", result.get("text", ""))
        return result["text"], len(msgs)

    def resumes_on_a_new_display(self, failed_text, n_msgs):
        with h.Xvfb(1280, 800) as X2, FakeLLM([{"text": "carrying on"}]) as srv:
            p = self.r.run(srv, "openai", "--os", "-m", "the display is back", X=X2)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(b"carrying on", p.stdout)
            body = srv.requests[0]["body"]
        self.assertIn(failed_text, [t for _, t, _ in tool_results(body, "openai")][-1])
        self.assertIn("do it", texts(body))
        self.assertIn("the display is back", texts(body))
        self.assertNotIn(b"WAS CHANGED", p.stderr)
        msgs = self.r.conversation()["messages"]
        self.assertEqual([m["role"] for m in msgs[n_msgs:]], ["user", "assistant"])
        v = h.run([h.binary(), "audit", "verify", self.r.audit])
        self.assertEqual(v.returncode, 0, v.stdout)

    def test_between_actions(self):
        def second(body, fmt):
            self.kill_x()     # while the model "thinks": after one action, before the next
            return {"tool_calls": [call("computer", action="left_click", coordinate=[50, 60])]}
        turns = [{"tool_calls": [call("computer", action="left_click", coordinate=[100, 200])]},
                 second, {"text": "never asked for"}]
        asked, _ = self.run_until_lost(turns)
        self.assertEqual(asked, 2, "the model was asked again on a dead display")
        text, n = self.failed_as_recorded("lost the connection to the X server")
        events = self.r.audit_events()
        self.assertEqual([e["status"] for e in events if e["event"] == "executed"], [0, 1])
        self.resumes_on_a_new_display(text, n)

    def test_during_typing(self):
        def keys(evs):
            return [e for e in evs if e["kind"] == "key-press" and e.get("name") != "Shift_L"]
        self.kill_x_when(lambda evs: len(keys(evs)) >= 20)
        turns = [{"tool_calls": [call("computer", action="type", text=LONG)]},
                 {"text": "never asked for"}]
        asked, _ = self.run_until_lost(turns)
        self.assertEqual(asked, 1)
        text, n = self.failed_as_recorded("typing stopped: lost the connection")
        got = int(text.split(" after ", 1)[1].split(" of ")[0])
        self.assertIn("of %d characters" % len(LONG), text)
        self.assertLess(got, len(LONG))
        # What the server acknowledged did reach the client, in order.
        typed = "".join(chr(int(e["sym"], 16) - 0x1000000) for e in keys(self.rec.new_events()))
        self.assertGreaterEqual(len(typed), got)
        self.assertEqual(typed, LONG[:len(typed)])
        self.resumes_on_a_new_display(text, n)

    def test_during_a_drag_with_the_button_held(self):
        def held(evs):
            return len([e for e in evs if e["kind"] == "motion" and
                        int(e.get("state", "0"), 16) & 0x100]) >= 3
        self.kill_x_when(held)
        turns = [{"tool_calls": [call("computer", action="left_click_drag", path=PATH)]},
                 {"text": "never asked for"}]
        asked, _ = self.run_until_lost(turns)
        self.assertEqual(asked, 1)
        evs = self.rec.new_events()
        self.assertTrue([e for e in evs if e["kind"] == "press"])
        self.assertFalse([e for e in evs if e["kind"] == "release"],
                         "the drag ended before the server died")
        text, n = self.failed_as_recorded("lost the connection to the X server")
        self.resumes_on_a_new_display(text, n)


class CompositorLoss(unittest.TestCase):
    """sway (tests/lib/wayland.py) dies between two actions, in the
    middle of a long `type` and during a drag; deskhand runs as the compositor's uid, its
    files in a directory that uid owns."""

    def run_until_lost(self, comp, turns, when_approved=None):
        """Runs the agent on comp; when_approved() is called on a thread once
        the audit log holds the first approval. Returns (stderr, requests)."""
        d = comp.tmpdir(prefix="deskhand-wlloss-")
        home = os.path.join(d, "home")
        os.makedirs(home)
        if os.geteuid() == 0:
            os.chown(home, comp.uid, comp.gid)
        self.conv, self.audit = os.path.join(d, "conv.json"), os.path.join(d, "audit.jsonl")
        mark = "wlloss-%d-%s" % (os.getpid(), self.id().rsplit(".", 1)[-1])
        env = dict(HOME=home, XDG_DATA_HOME=os.path.join(home, "data"),
                   XDG_CONFIG_HOME=os.path.join(home, "config"), DESKHAND_TEST_MARK=mark)

        def approved():
            try:
                with open(self.audit) as f:
                    return '"approved"' in f.read()
            except OSError:
                return False
        if when_approved is not None:
            threading.Thread(target=lambda: h.wait_for(approved, 60) and when_approved(),
                             daemon=True).start()
        with FakeLLM(turns) as srv:
            p = comp.run_as([h.binary(), "--provider", "openai", "--api-base",
                             srv.base_url("openai"), "--model", "fake", "--os",
                             "--os-auto-approve", "--conversation", self.conv,
                             "--audit", self.audit, "-m", "do it"], env=env, timeout=120)
            asked = len(srv.requests)
        err = p.stderr.decode()
        self.assertIsNotNone(comp.proc.p.poll(), "sway outlived the action: %s" % err)
        self.assertEqual(p.returncode, 1, err)
        gone = [l for l in err.splitlines() if "is gone" in l]
        self.assertEqual(len(gone), 1, err)
        self.assertTrue(h.wait_for(lambda: not marked(mark), 30), marked(mark))
        return err, asked

    def failed_as_recorded(self, statuses):
        with open(self.audit) as f:
            executed = [e for e in map(json.loads, f) if e["event"] == "executed"]
        self.assertEqual([e["status"] for e in executed], statuses)
        with open(self.conv) as f:
            last = json.load(f)["messages"][-1]
        self.assertEqual(last["role"], "tool")
        self.assertTrue(last["content"][-1].get("is_error"), last)
        v = h.run([h.binary(), "audit", "verify", self.audit])
        self.assertEqual(v.returncode, 0, v.stdout)

    def test_between_actions(self):
        with wayland.Sway() as comp:
            def second(body, fmt):
                os.kill(comp.proc.pid, signal.SIGKILL)
                comp.proc.p.wait()
                return {"tool_calls": [call("computer", action="left_click",
                                            coordinate=[50, 60])]}
            turns = [{"tool_calls": [call("computer", action="left_click",
                                          coordinate=[100, 200])]},
                     second, {"text": "never asked for"}]
            err, asked = self.run_until_lost(comp, turns)
            self.assertEqual(asked, 2, err)
            self.failed_as_recorded([0, 1])

    def test_during_typing(self):
        with wayland.Sway() as comp:
            def kill():
                time.sleep(0.3)     # into the text: it takes seconds on sway
                os.kill(comp.proc.pid, signal.SIGKILL)
            turns = [{"tool_calls": [call("computer", action="type", text=LONG)]},
                     {"text": "never asked for"}]
            err, asked = self.run_until_lost(comp, turns, kill)
            self.assertEqual(asked, 1, err)
            self.failed_as_recorded([1])
            # The result says how much the compositor had taken, never all.
            with open(self.conv) as f:
                result = json.dumps(json.load(f)["messages"][-1]["content"])
            self.assertIn("typing stopped: Wayland display", result)
            self.assertIn("the connection was lost", result)
            got = int(result.split(" after ", 1)[1].split(" of ")[0])
            self.assertIn("of %d characters" % len(LONG), result)
            self.assertLess(got, len(LONG))

    def test_during_a_drag_with_the_button_held(self):
        with wayland.Sway() as comp:
            def kill():
                time.sleep(0.3)     # into the path: it takes seconds
                os.kill(comp.proc.pid, signal.SIGKILL)
            turns = [{"tool_calls": [call("computer", action="left_click_drag", path=PATH)]},
                     {"text": "never asked for"}]
            err, asked = self.run_until_lost(comp, turns, kill)
            self.assertEqual(asked, 1, err)
            self.failed_as_recorded([1])


if __name__ == "__main__":
    h.main()
