"""Where deskhand cannot drive a Wayland desktop it refuses, and says why:
under a real headless weston 10 (no screencopy, no virtual pointer, no
virtual keyboard) every display command and the agent with --os exit 2
naming the compositor and the protocols it lacks, and the agent sends the
model nothing. On a Wayland session whose DISPLAY is an X server (as
XWayland is), X input is not used in silence: a click is refused and the
X server receives nothing; --display-backend x11 drives it, with the
warning that only XWayland's windows receive input.

The X server is a private Xvfb started (as root when the tests are)
without -auth: X then admits every local client, so deskhand running as
the compositor's unprivileged uid can connect, as a user's own XWayland
admits that user. The successful --display-backend x11 click is the
proof that it can: the refusal is deskhand's, not the X server's.
Skipped without weston."""
import json
import os
import sys
import time
import unittest

import harness as h
import wayland
from wl_util import deskhand
from xinput_util import Recorder

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
from fakellm import FakeLLM  # noqa: E402

LACKS = (b"weston", b"zwlr_screencopy_manager_v1", b"zwlr_virtual_pointer_manager_v1",
         b"zwp_virtual_keyboard_manager_v1")
WARNING = b"only XWayland's windows receive input"


def setUpModule():
    global WESTON
    WESTON = wayland.Weston(size=(1280, 800))


def tearDownModule():
    WESTON.stop()


class UnderWeston(unittest.TestCase):
    def assertRefused(self, r):
        self.assertEqual(r.returncode, 2, r.stderr)
        for word in LACKS:
            self.assertIn(word, r.stderr)
        self.assertIn(b"pid %d" % WESTON.proc.pid, r.stderr)

    def test_display_commands_refused(self):
        d = WESTON.tmpdir()
        shot = os.path.join(d, "shot.png")
        for args in (["screenshot", "-o", shot], ["click", 10, 10], ["type", "hi"],
                     ["key", "ctrl+c"], ["move", 5, 5], ["scroll", "down"],
                     ["drag", 1, 1, 9, 9], ["windows"], ["screen"], ["cursor"],
                     ["find-text", "hi"]):
            with self.subTest(args=args):
                self.assertRefused(deskhand(WESTON, *args))
        self.assertFalse(os.path.exists(shot))

    def test_doctor_says_why(self):
        r = deskhand(WESTON, "doctor")
        self.assertEqual(r.returncode, 0, r.stderr)
        line = [l for l in r.stdout.splitlines() if l.strip().startswith(b"display ")]
        self.assertEqual(len(line), 1, r.stdout)
        self.assertIn(b"not driven", line[0])
        for word in LACKS:
            self.assertIn(word, line[0])

    def agent(self, *args):
        """The agent with --os as the compositor's uid, its files in a
        directory of that uid's."""
        d = WESTON.tmpdir(prefix="deskhand-wl-agent-")
        env = {"XDG_DATA_HOME": os.path.join(d, "data"),
               "XDG_CONFIG_HOME": os.path.join(d, "config")}
        argv = [h.binary()] + list(args) + [
            "--os", "--conversation", os.path.join(d, "conv.json"),
            "--audit", os.path.join(d, "audit.jsonl"), "--workspace", d, "-m", "hi"]
        return WESTON.run_as(argv, env=env, timeout=60), d

    def test_agent_with_os_refused_before_asking_the_model(self):
        click = {"tool_calls": [{"id": "call_1", "name": "computer",
                                 "arguments": {"action": "left_click",
                                               "coordinate": [10, 10]}}]}
        with FakeLLM([click, {"text": "done"}]) as srv:
            r, d = self.agent("--provider", "openai", "--api-base", srv.base_url("openai"),
                              "--api-key", "k", "--model", "fake")
            self.assertRefused(r)
            self.assertIn(b"--os needs a desktop", r.stderr)
            # Given time, nothing comes: the refusal was before any request.
            time.sleep(0.5)
            self.assertEqual(srv.requests, [])

    def test_agent_with_os_refused_script_provider(self):
        d = WESTON.tmpdir()
        script = os.path.join(d, "script.json")
        with open(script, "w") as f:
            json.dump({"turns": [{"text": "hello"}]}, f)
        os.chmod(script, 0o644)
        r, _ = self.agent("--provider", "script", "--script", script)
        self.assertRefused(r)
        self.assertNotIn(b"hello", r.stdout)

    def test_the_same_agent_runs_without_os(self):
        # The control: it is the desktop that is refused, not the run.
        with FakeLLM([{"text": "done here"}]) as srv:
            d = WESTON.tmpdir(prefix="deskhand-wl-agent-")
            r = WESTON.run_as([h.binary(), "--provider", "openai", "--api-base",
                               srv.base_url("openai"), "--api-key", "k", "--model", "fake",
                               "--conversation", os.path.join(d, "conv.json"),
                               "--audit", os.path.join(d, "audit.jsonl"),
                               "--workspace", d, "-m", "hi"],
                              env={"XDG_DATA_HOME": os.path.join(d, "data"),
                                   "XDG_CONFIG_HOME": os.path.join(d, "config")})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(b"done here", r.stdout)
            self.assertEqual(len(srv.requests), 1)


class XWaylandDisplay(unittest.TestCase):
    """DISPLAY names an X server and WAYLAND_DISPLAY the weston session, as
    on a GNOME or KDE desktop whose X clients run on XWayland."""

    @classmethod
    def setUpClass(cls):
        cls.X = h.Xvfb(1280, 800)
        cls.addClassCleanup(cls.X.stop)
        cls.rec = Recorder(cls.X)
        cls.addClassCleanup(cls.rec.stop)
        cls.env = {"DISPLAY": cls.X.display}

    def setUp(self):
        self.rec.reset()

    def nothing_arrives(self):
        # A stray event would have arrived within this (the X server is
        # local and idle).
        time.sleep(0.7)
        self.assertEqual(self.rec.new_events(), [])

    def test_click_refused_and_nothing_reaches_x(self):
        for args in (["click", 10, 10], ["type", "abc"], ["key", "Return"], ["move", 50, 50]):
            with self.subTest(args=args):
                r = deskhand(WESTON, *args, env=self.env)
                self.assertEqual(r.returncode, 2, r.stderr)
                for word in LACKS:
                    self.assertIn(word, r.stderr)
                self.assertIn(b"--display-backend x11", r.stderr)
        self.nothing_arrives()

    def test_session_type_alone_means_wayland(self):
        # XDG_SESSION_TYPE=wayland without WAYLAND_DISPLAY: still not X.
        env = dict(self.env, XDG_SESSION_TYPE="wayland", WAYLAND_DISPLAY=None)
        r = deskhand(WESTON, "click", 10, 10, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"no Wayland display", r.stderr)
        self.nothing_arrives()

    def test_forced_x11_backend_clicks_and_warns(self):
        r = deskhand(WESTON, "--display-backend", "x11", "click", 10, 10, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(WARNING, r.stderr)
        evs = self.rec.wait_count(2, ["press", "release"])
        self.assertEqual([(e["kind"], e["button"], e["x"], e["y"]) for e in evs
                          if e["kind"] in ("press", "release")],
                         [("press", "1", "10", "10"), ("release", "1", "10", "10")])


if __name__ == "__main__":
    h.main()
