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


if __name__ == "__main__":
    h.main()
