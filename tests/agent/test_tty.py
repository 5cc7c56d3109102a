"""The agent at a real terminal (a pty): the question's e (edit in $EDITOR)
and d (details: whole code, the OS action's target, window and preview),
magic commands typed at the prompt, Ctrl-C that interrupts running code and
returns to the prompt, and Ctrl-D that quits."""
import os
import pty
import re
import select
import signal
import time
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Run, call, check_audit, tool_results


def setUpModule():
    global X
    X = h.Xvfb(1280, 800)


def tearDownModule():
    X.stop()


class Pty:
    """deskhand on a pseudo-terminal, driven like a person would."""

    def __init__(self, args, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(args[0], args, env)
        self.buf = b""

    def expect(self, pattern, timeout=30):
        """Reads until `pattern` (regex on bytes) appears; returns the match."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %r in %r" % (pattern, self.buf[-800:]))
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError("ended before %r: %r" % (pattern, self.buf[-800:]))
                self.buf += data

    def send(self, text):
        os.write(self.fd, text if isinstance(text, bytes) else text.encode())

    def eof(self, tries=40, key=b"\x04"):
        """Ctrl-D at the prompt. A key typed while the line editor switches
        the terminal's mode can be lost, as it can for a person: repeat it
        (bounded) until deskhand has gone."""
        for _ in range(tries):
            self.send(key)
            r, _, _ = select.select([self.fd], [], [], 0.25)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return
            if r:
                try:
                    self.buf += os.read(self.fd, 4096)
                except OSError:
                    return

    def wait(self, timeout=30):
        if hasattr(self, "status"):
            return self.status
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                try:
                    while os.read(self.fd, 4096):
                        pass
                except OSError:
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            try:
                r, _, _ = select.select([self.fd], [], [], 0.05)
                if r:
                    self.buf += os.read(self.fd, 4096)
            except OSError:
                time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError("deskhand did not exit")


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
            self.assertEqual(t.wait(), 0)
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
                self.assertEqual(t.wait(), 0)
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
            t.expect(rb"auto_run")
            t.send("make the file\n")
            t.expect(rb"ok")
            t.expect(rb"> ")
            t.send("%info\n")
            t.expect(rb"auto_run:\s+true")
            t.expect(rb"> ")
            t.eof()                              # Ctrl-D quits
            self.assertEqual(t.wait(), 0)
        self.assertTrue(os.path.exists(marker))

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
            self.assertEqual(t.wait(), 0)
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
