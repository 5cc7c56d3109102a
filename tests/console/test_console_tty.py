"""The console beside a real terminal (a pty): the question is asked in
both places, the first answer wins and the other place is told, and Ctrl-C
at a question is still the terminal's no."""
import json
import os
import re
import signal
import unittest

import harness as h
from consolelib import Events, FakeLLM, call, login, post
from agentlib import Pty, Run


def code_turns(mark):
    return [{"tool_calls": [call("execute", language="python",
                                 code="open(%r, 'w').write('x')" % mark)]}, {"text": "ok"}]


class Session:
    """deskhand --console 0 on a pty; the links from the 0600 file."""

    def __init__(self, srv):
        self.run = Run()
        self.t = Pty(self.run.args(srv, "openai", "--console", "0", "-m", "go"), self.run.env())
        path = self.run.audit + ".console"
        h.wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, 30)
        with open(path) as f:
            links = json.load(f)
        self.approver, self.observer, self.port = links["approver"], links["observer"], links["port"]
        self.host = "127.0.0.1:%d" % self.port
        self.origin = "http://" + self.host


class Tty(unittest.TestCase):
    def test_the_terminal_answers_first_and_the_console_is_told(self):
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark)) as srv:
            s = Session(srv)
            cookie, _ = login(s)
            ev = Events(s, cookie)
            s.t.expect(rb"Run this code\?")
            self.assertTrue(ev.question())
            s.t.send("y\n")
            done = ev.wait(lambda e: e.get("type") == "answered")
            self.assertEqual(done[0]["who"], "terminal")
            self.assertEqual(s.t.wait(), 0, s.t.shown())
            ev.close()
        self.assertTrue(os.path.exists(mark))
        approved = [e for e in s.run.audit_events() if e["event"] == "approved"]
        self.assertEqual([e.get("from") for e in approved], ["terminal"])

    def test_the_console_answers_first_and_the_terminal_is_told(self):
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark)) as srv:
            s = Session(srv)
            cookie, csrf = login(s)
            ev = Events(s, cookie)
            s.t.expect(rb"Run this code\?")
            q = ev.question()
            st, _, _ = post(s, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
            self.assertEqual(st, 200)
            s.t.expect(rb"answered in the console:approver: yes")
            self.assertEqual(s.t.wait(), 0, s.t.shown())
            ev.close()
        self.assertTrue(os.path.exists(mark))

    def test_ctrl_c_at_a_question_is_a_no(self):
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark)) as srv:
            s = Session(srv)
            cookie, _ = login(s)
            ev = Events(s, cookie)
            s.t.expect(rb"Run this code\?")
            ev.question()
            s.t.send(b"\x03")
            done = ev.wait(lambda e: e.get("type") == "answered")
            self.assertEqual((done[0]["who"], done[0]["answer"]), ("terminal", "none"))
            s.t.wait()
            ev.close()
        self.assertFalse(os.path.exists(mark))
        denied = [e for e in s.run.audit_events() if e["event"] == "denied"]
        self.assertEqual(len(denied), 1)

    def test_the_consoles_threads_leave_ctrl_c_to_the_terminal(self):
        # A process's SIGINT goes to any of its threads that does not block
        # it. Taken by one of the console's, it interrupted no wait of the
        # question, which waited for ever (seen in a fresh-machine run): the
        # console's threads block the terminal's signals, so the main thread
        # takes them, and Ctrl-C at a question is still the terminal's no.
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark)) as srv:
            s = Session(srv)
            cookie, _ = login(s)
            ev = Events(s, cookie)
            s.t.expect(rb"Run this code\?")
            ev.question()
            pid = s.t.pid
            others = [t for t in os.listdir("/proc/%d/task" % pid) if int(t) != pid]
            self.assertTrue(others, "the console runs no thread of its own")
            for tid in others:
                with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                    blocked = int(re.search(r"^SigBlk:\s*([0-9a-f]+)", f.read(), re.M)[1], 16)
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    self.assertTrue(blocked & (1 << (sig - 1)), (tid, sig))
            os.kill(pid, signal.SIGINT)
            done = ev.wait(lambda e: e.get("type") == "answered")
            self.assertTrue(done, s.t.shown())
            self.assertEqual((done[0]["who"], done[0]["answer"]), ("terminal", "none"))
            s.t.wait()
            ev.close()
        self.assertFalse(os.path.exists(mark))

if __name__ == "__main__":
    h.main()
