"""The agent at a real terminal (a pty): the question's e (edit in $EDITOR)
and d (details: whole code, the OS action's target, window and preview),
magic commands typed at the prompt, Ctrl-C that interrupts running code and
returns to the prompt, Ctrl-D that quits, keys typed while deskhand works
(kept for the next prompt, never an answer to a question), and the terminal
left as it was found."""
import json
import os
import re
import signal
import subprocess
import termios
import threading
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Held, Pty, Run, call, check_audit, tool_results


def setUpModule():
    global X
    X = h.Xvfb(1280, 800)


def tearDownModule():
    X.stop()


class Tty(unittest.TestCase):
    def test_edit_then_run(self):
        r = Run()
        editor = os.path.join(r.dir, "editor.sh")
        with open(editor, "w") as f:
            # The file is the last argument; the flag shows that an editor
            # setting with arguments ("code -w") works.
            f.write("#!/bin/sh\nfor f; do :; done\nsed -i 's/original/edited/' \"$f\"\n")
        os.chmod(editor, 0o755)
        turns = [{"tool_calls": [call("execute", language="shell", code="echo original")]},
                 {"text": "ok"}]
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "openai", "-m", "go"), r.env(EDITOR=editor + " --flag-ignored"))
            t.expect(rb"Run this code\?")
            t.send("e\n")
            t.expect(rb"echo edited")           # the edited code is shown again
            t.expect(rb"Run this code\?")
            t.send("y\n")
            self.assertEqual(t.wait(), 0, t.shown())
            res = tool_results(srv.requests[1]["body"], "openai")
        self.assertIn("edited", res[0][1])
        self.assertNotIn("original", res[0][1])
        ev = r.audit_events()
        self.assertEqual([e["event"] for e in ev if e["event"] == "proposed"], ["proposed"] * 2)
        check_audit(self, ev)

    def test_details_of_a_click(self):
        rec = xi.Recorder(X)
        try:
            r = Run()
            turns = [{"tool_calls": [call("computer", action="left_click", coordinate=[100, 200])]},
                     {"text": "ok"}]
            with FakeLLM(turns) as srv:
                # A kitty terminal gets the preview inline as well.
                t = Pty(r.args(srv, "openai", "--os", "-m", "click"),
                        r.env(X, KITTY_WINDOW_ID="1"))
                t.expect(rb"Perform this action\?")
                t.send("d\n")
                m = t.expect(rb"preview: (\S+\.png)")
                preview = m.group(1).decode()
                t.expect(rb"\x1b_Ga=T,f=100,m=[01];iVBORw0KGgo")
                t.expect(rb"Perform this action\?")
                t.send("y\n")
                self.assertEqual(t.wait(), 0, t.shown())
            self.assertTrue(os.path.exists(preview), preview)
            with open(preview, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            evs = rec.wait_count(1, kinds=("press",))
            press = [e for e in evs if e["kind"] == "press"]
            self.assertEqual((press[0]["x"], press[0]["y"]), ("100", "200"))
        finally:
            rec.stop()

    def test_magic_commands_at_the_prompt(self):
        r = Run()
        marker = os.path.join(r.work, "ran")
        turns = [{"tool_calls": [call("execute", language="shell", code="touch '%s'" % marker)]},
                 {"text": "ok"}]
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "openai"), r.env())
            t.expect(rb"> ")
            t.send("%os_auto_approve true\n")
            t.expect(rb"only .*start|start-up|at start")
            t.send("%auto_run true\n")
            t.expect(rb"auto_run is on")         # the answer, not the echo
            t.expect(rb"> ")
            t.send("make the file\n")
            t.expect(rb"(?:\n|\x1b\[K)ok\r\n")   # the answer, not the path
            t.expect(rb"> ")
            t.send("%info\n")
            t.expect(rb"auto_run:\s+true")
            t.expect(rb"> ")
            t.eof()                              # Ctrl-D quits
            self.assertEqual(t.wait(), 0, t.shown())
        self.assertTrue(os.path.exists(marker), t.shown())

    def held(self, t):
        # While deskhand works, the terminal is held: no canonical input,
        # no echo, signals still on.
        m = t.mode()
        self.assertIsNotNone(m)
        self.assertFalse(m & termios.ICANON, "canonical input while working")
        self.assertFalse(m & termios.ECHO, "echo while working")
        self.assertTrue(m & termios.ISIG, "no signals while working")

    def restored(self, t):
        m = t.final_mode
        self.assertIsNotNone(m)
        for flag in ("ICANON", "ECHO", "ISIG"):
            self.assertTrue(m & getattr(termios, flag), "%s left off at exit" % flag)

    def test_ctrl_d_typed_while_the_model_thinks_quits_at_the_prompt(self):
        # The kernel's line discipline would make this Ctrl-D an end-of-file
        # marker and then a stray byte at the prompt, after which Ctrl-D
        # only rings the bell. Held, it is a plain key for the line editor.
        r = Run()
        slow = Held({"text": "answer"})
        with FakeLLM([slow]) as srv:
            t = Pty(r.args(srv, "openai"), r.env())
            t.expect(rb"> ")
            t.send("a question\n")
            self.assertEqual(srv.wait_requests(1, 30), 1)
            self.held(t)
            t.send(b"\x04")
            slow.release()
            t.expect(rb"answer")
            self.assertEqual(t.wait(), 0, t.shown())     # no other key was sent
        self.assertNotIn(b"\x07", t.transcript)          # no bell
        self.restored(t)

    def test_text_typed_while_the_model_thinks_is_the_next_task(self):
        r = Run()
        slow = Held({"text": "first answer"})
        with FakeLLM([slow, {"text": "second answer"}]) as srv:
            t = Pty(r.args(srv, "openai"), r.env())
            t.expect(rb"> ")
            t.send("one\n")
            self.assertEqual(srv.wait_requests(1, 30), 1)
            t.send("two\n")
            slow.release()
            t.expect(rb"first answer")
            t.expect(rb"> two")                          # shown by the line editor
            t.expect(rb"second answer")
            t.expect(rb"> ")
            t.eof()
            self.assertEqual(t.wait(), 0, t.shown())
            last = srv.requests[1]["body"]["messages"][-1]
        self.assertEqual(last["role"], "user")
        self.assertIn("two", json.dumps(last["content"]))
        # Not echoed into the first answer by the kernel.
        first = t.transcript.index(b"first answer")
        self.assertNotIn(b"two", t.transcript[:first], t.shown())
        self.restored(t)

    def test_a_y_typed_ahead_does_not_answer_a_question(self):
        r = Run()
        marker = os.path.join(r.work, "ran")
        slow = Held({"tool_calls": [call("execute", language="shell",
                                         code="touch '%s'" % marker)]})
        with FakeLLM([slow, {"text": "done"}]) as srv:
            t = Pty(r.args(srv, "openai"), r.env())
            t.expect(rb"> ")
            t.send("make the file\n")
            self.assertEqual(srv.wait_requests(1, 30), 1)
            t.send("y\n")                              # before the question
            slow.release()
            t.expect(rb"2 typed-ahead characters discarded")
            t.expect(rb"Run this code\?")
            self.assertEqual(srv.wait_requests(2, 0.5), 1)  # still waiting
            t.send("n\n")
            t.expect(rb"done")
            t.expect(rb"> ")
            t.eof()
            self.assertEqual(t.wait(), 0, t.shown())
            results = tool_results(srv.requests[1]["body"], "openai")
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(len(results), 1)
        self.assertIn("declined", results[0][1])
        check_audit(self, r.audit_events())

    def test_sigterm_while_working_leaves_the_terminal_as_found(self):
        r = Run()
        with FakeLLM([{"text": "never", "delay_headers": 60}]) as srv:
            t = Pty(r.args(srv, "openai"), r.env())
            t.expect(rb"> ")
            t.send("a question\n")
            self.assertEqual(srv.wait_requests(1, 30), 1)
            self.held(t)
            os.kill(t.pid, signal.SIGTERM)
            self.assertEqual(t.wait(), -signal.SIGTERM, t.shown())
        self.restored(t)

    def test_an_ignored_sighup_stays_ignored(self):
        # `nohup deskhand -m TASK`: the hang-up it was started to outlive must
        # not end it (it did: the agent put its own handler on SIGHUP).
        r = Run()
        with FakeLLM([{"text": "finished the task", "delay_headers": 2}]) as srv:
            p = subprocess.Popen(r.args(srv, "openai", "-m", "a task"), env=r.env(),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE,
                                 preexec_fn=lambda: signal.signal(signal.SIGHUP,
                                                                  signal.SIG_IGN))
            try:
                self.assertEqual(srv.wait_requests(1, 30), 1)
                p.send_signal(signal.SIGHUP)
                out, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        self.assertEqual(p.returncode, 0, err)
        self.assertIn(b"finished the task", out)

    def test_a_background_job_leaves_the_terminal_alone(self):
        # `deskhand -m TASK &` from an interactive shell: a background job
        # that set the terminal's modes (the line editor, the hold) would
        # be stopped by SIGTTOU instead of doing its task.
        r = Run()
        with FakeLLM([{"text": "done in the background"}]) as srv:
            cmd = " ".join("'%s'" % a for a in r.args(srv, "openai", "-m", "hi"))
            env = r.env(PS1="$ ")
            t = Pty(["/bin/bash", "--norc", "--noprofile", "-i"], env)
            t.expect(rb"\$ ")
            out = os.path.join(r.dir, "out.txt")
            t.send("%s > '%s' 2>&1 & wait $!; echo EXIT=$?\n" % (cmd, out))
            t.expect(rb"EXIT=(\d+)")
            code = int(re.search(rb"EXIT=(\d+)", t.transcript).group(1))
            # A stopped job would keep the shell from exiting: end it first.
            t.send("kill -KILL %1 2>/dev/null; wait; exit\n")
            try:
                t.wait()
            except AssertionError:
                pass                 # the shell, ended by pid; the code says why
        self.assertEqual(code, 0, t.shown())
        self.assertEqual(len(srv.requests), 1)

    def test_ctrl_c_cancels_a_request_and_history_is_kept(self):
        r = Run()
        os.makedirs(os.path.join(r.home, "data", "deskhand"))
        with FakeLLM([{"text": "too late", "delay_headers": 60}, {"text": "second"}]) as srv:
            t = Pty(r.args(srv, "openai"), r.env())
            t.expect(rb"> ")
            t.send("a slow question\n")
            self.assertEqual(srv.wait_requests(1, 30), 1)
            t.send(b"\x03")
            t.expect(rb"cancelled")
            t.expect(rb"> ")
            t.eof()
            self.assertEqual(t.wait(), 0, t.shown())
        self.assertNotIn(b"too late", t.buf)
        conv = r.conversation()
        self.assertEqual([m["role"] for m in conv["messages"]], ["user"])
        with open(os.path.join(r.home, "data", "deskhand", "history")) as f:
            # libedit writes blanks as octal escapes
            self.assertIn("a slow question", f.read().replace("\\040", " "))

    def test_ctrl_c_interrupts_code_and_returns_to_the_prompt(self):
        r = Run()
        turns = [{"tool_calls": [call("execute", language="python",
                                      code="import time\nprint('started', flush=True)\n"
                                           "time.sleep(60)\nprint('finished')")]},
                 {"text": "after"}]
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "openai", "-y"), r.env())
            t.expect(rb"> ")
            t.send("sleep a while\n")
            t.expect(rb"(?<!')started\r\n")       # the output, not the code shown
            t.send(b"\x03")                      # Ctrl-C
            t.expect(rb"interrupted")
            t.expect(rb"> ")
            t.eof(key=b"\x03")                   # at the prompt: quits
            code = t.wait()
        self.assertNotEqual(code, 0)
        self.assertNotIn(b"finished", t.buf)


if __name__ == "__main__":
    h.main()
