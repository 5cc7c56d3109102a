"""Who controls the desktop, tried as an attacker would (issue 10, classes
7, 8 and 9), each attack performed for real: a hostile model turn through
the fake model server, real code in the real sandbox, a private Xvfb.

- 9: with --sandbox off every block can reach the display, so -y does not
  run it unasked;
- 8: the kill switch (the pointer pushed into a screen corner) ends a
  display block that is already running, with its whole process tree;
- 7: under --os-auto-approve, input aimed at deskhand's own terminal is
  still asked, and what deskhand's own action types there never reads as
  the user's line."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Held, Run, call, check_audit, tool_results


def setUpModule():
    global X
    X = h.Xvfb(1280, 800)


def tearDownModule():
    X.stop()


def events_of(r, call_id):
    return [e["event"] for e in r.audit_events() if e.get("id") == call_id]


class SandboxOff(unittest.TestCase):
    """Class 9: --sandbox off -y drives the display unasked."""

    def setUp(self):
        # Away from the corners, where the kill switch would find it.
        r = xi.deskhand(X, "move", 640, 400)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_unsandboxed_block_is_asked_under_auto_run(self):
        r = Run()
        marker = os.path.join(r.work, "ran")
        turns = [{"tool_calls": [call("execute", language="python",
                                      code="open(%r, 'w').write('x')" % marker)]},
                 {"text": "ok"}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "--sandbox", "off", "-y", "--safe-mode", "off",
                      "-m", "go", X=X, input=b"n\n")
            res = tool_results(srv.requests[-1]["body"], "openai")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"Run this code?", p.stdout)
        self.assertIn(b"(with the display)", p.stdout)
        self.assertFalse(os.path.exists(marker), "the block ran without a yes")
        self.assertIn("declined", res[0][1])
        self.assertEqual(events_of(r, res[0][0]), ["proposed", "asked", "denied"])
        asked = [e for e in r.audit_events() if e["event"] == "asked"]
        self.assertIn("sandbox off", asked[0].get("reason", ""))
        check_audit(self, r.audit_events())

    def test_unsandboxed_block_runs_on_a_yes(self):
        r = Run()
        marker = os.path.join(r.work, "ran")
        turns = [{"tool_calls": [call("execute", language="python",
                                      code="open(%r, 'w').write('x')" % marker)]},
                 {"text": "ok"}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "--sandbox", "off", "-y", "--safe-mode", "off",
                      "-m", "go", X=X, input=b"y\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(marker))
        check_audit(self, r.audit_events())



# Clicks where the pointer is, for as long as it lives, and leaves a
# process behind that only the end of the whole session tree ends.
CLICKER = """import subprocess, time
subprocess.Popen(["sleep", "%d"])
while True:
    subprocess.run(["xdotool", "click", "1"])
    time.sleep(0.1)
"""


def lingering(tag):
    """Processes whose command line is `sleep TAG`, wherever they run."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", str(tag).encode()]:
            found.append(int(pid))
    return found


@unittest.skipUnless(shutil.which("xdotool"), "xdotool is not installed")
class KillSwitchDuringRun(unittest.TestCase):
    """Class 8: the kill switch does not stop code already running."""

    def setUp(self):
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 101)
        self.rec.reset()

    def tearDown(self):
        self.rec.stop()

    def corner_stops(self, tag, *flags, batch=()):
        r = Run()
        turns = [{"tool_calls": [call("execute", language="python", display=True,
                                      code=CLICKER % tag)] + list(batch)},
                 {"text": "never"}]
        answers = os.path.join(r.dir, "answers")
        with open(answers, "wb") as f:
            f.write(b"y\n")
        outp, errp = os.path.join(r.dir, "out"), os.path.join(r.dir, "err")
        with FakeLLM(turns) as srv, open(answers, "rb") as fin, \
                open(outp, "wb") as fout, open(errp, "wb") as ferr:
            proc = subprocess.Popen(r.args(srv, "openai", *flags, "-m", "go"),
                                    env=r.env(X), stdin=fin, stdout=fout, stderr=ferr)
            try:
                # The approved block is clicking...
                self.rec.wait_count(3, kinds=("press",), timeout=60)
                # ...when the person pushes the pointer into a corner.
                xi.deskhand(X, "move", 1279, 0)
                # The block loops until its 120 s timeout unless stopped.
                proc.wait(timeout=90)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        with open(outp, "rb") as f:
            out = f.read()
        with open(errp, "rb") as f:
            err = f.read()
        self.assertIn(b"Run this code?", out)
        self.assertIn(b"kill switch", err)
        self.assertIn(b"corner", err)
        # A run nobody can take over ends, with a clear status.
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(proc.returncode, 128)
        # Its whole process tree is gone, the background child included.
        self.assertEqual(lingering(tag), [])
        # No click after the switch: deskhand and its sandbox are gone.
        before = len([e for e in xi.marker(self.rec, X, 202) if e["kind"] == "press"])
        after = len([e for e in xi.marker(self.rec, X, 303) if e["kind"] == "press"])
        self.assertEqual(before, after)
        text = json_text(r.conversation())
        self.assertIn("stopped by the kill switch", text)
        ev = r.audit_events()
        executed = [e for e in ev if e["event"] == "executed"]
        self.assertEqual(len(executed), 1)
        self.assertIn("kill switch", json_text(executed))
        check_audit(self, ev)
        return r, ev, text

    def test_corner_stops_a_running_display_block(self):
        # No --os: the gate watches through a connection of its own.
        self.corner_stops(987601)

    def test_corner_stops_the_block_and_the_rest_of_the_batch(self):
        # Under the override, the click after the block would run unasked.
        click = call("computer", action="left_click", coordinate=[100, 100])
        r, ev, text = self.corner_stops(987602, "--os", "--os-auto-approve", batch=[click])
        self.assertEqual([e["event"] for e in ev if e["event"] == "executed"], ["executed"])
        self.assertIn("not run", text)


class TermLog:
    """deskhand in a real xterm (no window manager) whose output xterm logs
    to a file: what the person at that terminal sees, to wait on."""

    def __init__(self, r, srv, *flags, title="deskhand-own-term", display=None, **env):
        """`display`: the one deskhand (not its xterm) connects to; `env`:
        more of deskhand's environment."""
        self.log = os.path.join(r.dir, "xterm.log")
        self.pos = 0
        # A shell in between, as when deskhand is started from a prompt:
        # the terminal is found by walking up the process tree.
        args = ["xterm", "-u8", "-T", title, "-geometry", "80x24+0+0", "-l",
                "-lf", self.log, "-e", "sh", "-c", '"$@"; :', "sh"] + \
            (["env", "DISPLAY=" + display] if display else []) + \
            r.args(srv, "openai", *flags)
        self.proc = h.Proc(args, env=r.env(X, LC_ALL="C.UTF-8", **env))
        f = h.run([h.binary("xrecord"), "--focus", title], env=X.env(), timeout=60)
        if f.returncode != 0:
            self.proc.stop()
            raise RuntimeError("xterm did not map: %r" % f.stderr)

    def text(self):
        try:
            with open(self.log, "rb") as f:
                return f.read()
        except OSError:
            return b""

    def expect(self, pattern, timeout=60):
        """Waits for `pattern` (bytes regex) after what was expected before."""
        rx = re.compile(pattern)
        found = h.wait_for(lambda: rx.search(self.text(), self.pos), timeout)
        if not found:
            raise AssertionError("no %r in deskhand's terminal; it shows:\n%s" %
                                 (pattern, self.text()[-3000:].decode("utf-8", "replace")))
        self.pos = found.end()
        return found

    def type(self, text):
        """A person typing at deskhand's terminal (it has the focus)."""
        t = xi.deskhand(X, "type", text)
        assert t.returncode == 0, t.stderr

    def finish(self):
        t = xi.deskhand(X, "key", "ctrl+d")
        assert t.returncode == 0, t.stderr
        try:
            self.proc.p.wait(60)
        finally:
            self.proc.stop()


def user_lines(srv):
    """Every user message the model was sent, as text."""
    out = []
    for req in srv.requests:
        for m in req["body"].get("messages", []):
            if m.get("role") == "user":
                c = m.get("content")
                if isinstance(c, list):
                    c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
                out.append(c or "")
    return out


class OwnTerminal(unittest.TestCase):
    """Class 7: with --os-auto-approve the model types into deskhand's own
    terminal: it clicks deskhand's xterm and types a magic command and a
    task there, which the prompt would read as the user's own lines."""

    def setUp(self):
        r = xi.deskhand(X, "move", 640, 600)     # below the xterm, no corner
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_input_into_own_terminal_is_asked_and_never_read_as_the_users(self):
        r = Run()
        marker = os.path.join(r.work, "ran-unasked")
        turns = [
            {"tool_calls": [call("computer", action="left_click", coordinate=[100, 100])]},
            {"tool_calls": [call("computer", action="type",
                                 text="%auto_run true\nnow continue\n")]},
            {"text": "ok"},
            # What the attack wants: a display block run with nobody asked.
            {"tool_calls": [call("execute", language="shell", display=True,
                                 code="touch '%s'" % marker)]},
            {"text": "done"},
        ]
        with FakeLLM(turns) as srv:
            term = TermLog(r, srv, "--os", "--os-auto-approve")
            try:
                term.expect(rb"Type a task")
                term.expect(rb"> ")
                term.type("go\n")
                # The click lands on deskhand's own window: asked anyway.
                term.expect(rb"Perform this action\?")
                term.type("y\n")
                # So is typing into it; the person lets it happen.
                term.expect(rb"Perform this action\?")
                term.type("y\n")
                # What that typed arrived while deskhand's action ran.
                term.expect(rb"discarded")
                term.expect(rb"ok")
                term.expect(rb"> ")
                term.type("finish\n")
                term.expect(rb"Run this code\?")
                term.type("n\n")
                term.expect(rb"done")
                term.expect(rb"> ")
            finally:
                term.finish()
            users = user_lines(srv)
        self.assertFalse(os.path.exists(marker), "the display block ran unasked")
        self.assertNotIn("now continue", " ".join(users))
        self.assertIn("finish", users)
        ev = r.audit_events()
        check_audit(self, ev)
        asked = [e for e in ev if e["event"] == "asked"]
        self.assertEqual(len(asked), 3, asked)
        for a in asked[:2]:
            self.assertIn("own terminal", a.get("reason", ""))
        # %auto_run true never took effect: the block needed a yes for its code.
        self.assertIn("auto_run is off", asked[2].get("reason", ""))
        self.assertEqual(len([e for e in ev if e["event"] == "denied"]), 1)

    @unittest.skipUnless(shutil.which("xprop"), "xprop is not installed")
    def test_a_terminal_without_net_wm_pid_is_found_through_x_resource(self):
        # Many terminals never set _NET_WM_PID; the X server still knows
        # which process each client is.
        r = Run()
        turns = [
            {"tool_calls": [call("computer", action="left_click", coordinate=[100, 100])]},
            {"text": "ok"},
        ]
        title = "deskhand-no-pid"
        with FakeLLM(turns) as srv:
            term = TermLog(r, srv, "--os", "--os-auto-approve", title=title)
            try:
                rm = h.run(["xprop", "-name", title, "-remove", "_NET_WM_PID"], env=X.env())
                self.assertEqual(rm.returncode, 0, rm.stderr)
                got = h.run(["xprop", "-name", title, "_NET_WM_PID"], env=X.env())
                self.assertIn(b"not found", got.stdout)
                term.expect(rb"Type a task")
                term.expect(rb"> ")
                term.type("go\n")
                term.expect(rb"Perform this action\?")
                term.type("n\n")
                term.expect(rb"ok")
                term.expect(rb"> ")
            finally:
                term.finish()
        ev = r.audit_events()
        check_audit(self, ev)
        self.assertEqual([e["event"] for e in ev if e.get("event") in
                          ("asked", "denied", "executed")], ["asked", "denied"])
        self.assertIn("own terminal", [e for e in ev if e["event"] == "asked"][0]["reason"])


class XTrace:
    """An X proxy (Debian's xtrace) on a display of its own, logging every
    request that passes: deskhand talks to the server through it."""

    def __init__(self, X):
        self.log = os.path.join(h.tmpdir(), "xtrace.log")
        for n in range(X.number + 100, X.number + 400):
            if not os.path.exists("/tmp/.X11-unix/X%d" % n):
                break
        self.display = ":%d" % n
        self.proc = h.Proc(["xtrace", "-n", "-k", "-d", X.display, "-D", self.display,
                            "-o", self.log], env=X.env())
        if not h.wait_for(lambda: os.path.exists("/tmp/.X11-unix/X%d" % n), 30):
            self.proc.stop()
            raise RuntimeError("xtrace did not listen on %s" % self.display)

    def count(self, request):
        """How many requests named `request` ("X-Resource-Request(N,4)")
        the log shows, by extension and minor opcode."""
        with open(self.log, errors="replace") as f:
            return len(re.findall(request, f.read()))

    def stop(self):
        self.proc.stop()


class OwnTerminalQueries(unittest.TestCase):
    """The own-terminal test (an X-Resource query for the clients, the
    window list, a walk up /proc) is made once per proposal: a click
    answered d (details), then e (an edit, which is a new proposal), then
    y asks the X server about its clients twice, not once per round of
    the question."""

    @unittest.skipUnless(shutil.which("xtrace"), "xtrace is not installed")
    def test_one_approved_click_after_d_and_e_asks_the_server_once_per_proposal(self):
        r = Run()
        turns = [
            {"tool_calls": [call("computer", action="left_click", coordinate=[900, 700])]},
            {"text": "ok"},
        ]
        trace = XTrace(X)
        try:
            with FakeLLM(turns) as srv:
                # deskhand (not its xterm) connects through the proxy.
                term = TermLog(r, srv, "--os", title="deskhand-queries",
                               display=trace.display, EDITOR="true", VISUAL="")
                try:
                    term.expect(rb"Type a task")
                    term.expect(rb"> ")
                    term.type("go\n")
                    term.expect(rb"Perform this action\?")
                    term.type("d\n")
                    term.expect(rb"window:")
                    term.expect(rb"Perform this action\?")
                    term.type("e\n")
                    term.expect(rb"Perform this action\?")
                    term.type("y\n")
                    term.expect(rb"ok")
                    term.expect(rb"> ")
                finally:
                    term.finish()
        finally:
            trace.stop()
        ev = r.audit_events()
        check_audit(self, ev)
        self.assertEqual([e["event"] for e in ev if e["event"] in ("proposed", "executed")],
                         ["proposed", "proposed", "executed"])
        # QueryClientIds is X-Resource's request 4; one per proposal.
        self.assertEqual(trace.count(r"X-Resource-Request\(\d+,4\)"), 2)


def json_text(o):
    return json.dumps(o)


if __name__ == "__main__":
    h.main()
