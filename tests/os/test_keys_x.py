"""Key combinations through deskhand, as a real X client records them:
press order, release in reverse, modifier state on every event, and no key
left down afterwards (also when the command is killed while holding)."""
import signal
import subprocess
import unittest

import harness as h
from xinput_util import Recorder, default_signals, deskhand, key_state, keymap

CONTROL, SHIFT, ALT, SUPER = 0x4, 0x1, 0x8, 0x40


def setUpModule():
    global X, REC
    X = h.Xvfb(1280, 800)
    REC = Recorder(X)


def tearDownModule():
    REC.stop()
    X.stop()


def keys(evs):
    """[(kind, base keysym name, state)] of the key events."""
    return [(e["kind"], e["name"], int(e["state"], 16))
            for e in evs if e["kind"] in ("key-press", "key-release")]


class Keys(unittest.TestCase):
    def setUp(self):
        REC.reset()

    def tearDown(self):
        down, mods, _, _ = key_state(X)
        self.assertEqual(down, [], "keys left down")
        self.assertEqual(mods, 0, "modifiers left active")

    def combo(self, *args):
        r = deskhand(X, "key", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def wait_keys(self, n):
        return keys(REC.wait_count(n, ["key-press", "key-release"]))

    def test_ctrl_shift_t(self):
        self.combo("ctrl+shift+t")
        self.assertEqual(self.wait_keys(6), [
            ("key-press", "Control_L", 0),
            ("key-press", "Shift_L", CONTROL),
            ("key-press", "t", CONTROL | SHIFT),
            ("key-release", "t", CONTROL | SHIFT),
            ("key-release", "Shift_L", CONTROL | SHIFT),
            ("key-release", "Control_L", CONTROL),
        ])

    def test_alt_f4(self):
        self.combo("alt+F4")
        self.assertEqual(self.wait_keys(4), [
            ("key-press", "Alt_L", 0),
            ("key-press", "F4", ALT),
            ("key-release", "F4", ALT),
            ("key-release", "Alt_L", ALT),
        ])

    def test_return(self):
        self.combo("Return")
        self.assertEqual(self.wait_keys(2), [("key-press", "Return", 0),
                                             ("key-release", "Return", 0)])

    def test_super(self):
        self.combo("super")
        self.assertEqual(self.wait_keys(2), [("key-press", "Super_L", 0),
                                             ("key-release", "Super_L", SUPER)])

    def test_ctrl_plus(self):
        for spelling in ("ctrl++", "ctrl+plus"):
            REC.reset()
            self.combo(spelling)
            evs = REC.wait_count(6, ["key-press", "key-release"])
            self.assertEqual(keys(evs), [
                ("key-press", "Control_L", 0),
                ("key-press", "Shift_L", CONTROL),
                ("key-press", "equal", CONTROL | SHIFT),
                ("key-release", "equal", CONTROL | SHIFT),
                ("key-release", "Shift_L", CONTROL | SHIFT),
                ("key-release", "Control_L", CONTROL),
            ], spelling)
            plus = [e for e in evs if e["kind"] == "key-press" and e["name"] == "equal"]
            self.assertEqual(plus[0]["symname"], "plus")

    def test_aliases_reach_the_same_keys(self):
        self.combo("CONTROL+Esc", "win", "pgdn", "KP_Enter")
        self.assertEqual([k for k in self.wait_keys(10) if k[0] == "key-press"], [
            ("key-press", "Control_L", 0),
            ("key-press", "Escape", CONTROL),
            ("key-press", "Super_L", 0),
            ("key-press", "Next", 0),
            ("key-press", "KP_Enter", 0),
        ])

    def test_sequence_of_combos(self):
        self.combo("a", "B", "ctrl+c")
        evs = self.wait_keys(10)
        presses = [(k[1], k[2]) for k in evs if k[0] == "key-press"]
        self.assertEqual(presses, [("a", 0), ("Shift_L", 0), ("b", SHIFT),
                                   ("Control_L", 0), ("c", CONTROL)])

    def test_character_outside_the_keymap(self):
        before = keymap(X)
        self.combo("ctrl+ж")
        evs = REC.wait_count(4, ["key-press", "key-release"])
        presses = [e for e in evs if e["kind"] == "key-press"]
        self.assertEqual(presses[1]["symname"], "U0436")
        self.assertEqual(int(presses[1]["state"], 16), CONTROL)
        self.assertEqual(keymap(X), before)

    def test_hold(self):
        self.combo("--hold", 100, "shift+a")
        self.assertEqual(self.wait_keys(4), [
            ("key-press", "Shift_L", 0),
            ("key-press", "a", SHIFT),
            ("key-release", "a", SHIFT),
            ("key-release", "Shift_L", SHIFT),
        ])

    def test_down_then_up(self):
        self.combo("--down", "ctrl", "alt")
        down, mods, _, _ = key_state(X)
        self.assertEqual(mods, CONTROL | ALT)
        self.assertEqual(len(down), 2)
        self.combo("--up", "ctrl", "alt")
        evs = self.wait_keys(4)
        self.assertEqual([k[1] for k in evs], ["Control_L", "Alt_L", "Alt_L", "Control_L"])

    def test_down_needs_a_key_of_the_keymap(self):
        r = deskhand(X, "key", "--down", "ж")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"not in the keymap", r.stderr)

    def test_sigterm_while_holding_releases(self):
        p = subprocess.Popen([h.binary(), "key", "--hold", "600000", "ctrl+shift+alt+x"],
                             env=X.env(), stderr=subprocess.PIPE,
                             preexec_fn=default_signals)
        try:
            REC.wait_count(4, ["key-press"])
            down, mods, _, _ = key_state(X)
            self.assertEqual(mods, CONTROL | SHIFT | ALT)
            p.send_signal(signal.SIGTERM)
            p.wait(20)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, -signal.SIGTERM)
        evs = self.wait_keys(8)
        self.assertEqual([k[1] for k in evs if k[0] == "key-release"],
                         ["x", "Alt_L", "Shift_L", "Control_L"])

    def test_sigint_while_holding_releases(self):
        p = subprocess.Popen([h.binary(), "key", "--hold", "600000", "super"],
                             env=X.env(), stderr=subprocess.PIPE,
                             preexec_fn=default_signals)
        try:
            REC.wait_count(1, ["key-press"])
            p.send_signal(signal.SIGINT)
            p.wait(20)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, -signal.SIGINT)
        self.assertEqual(self.wait_keys(2)[-1][:2], ("key-release", "Super_L"))


if __name__ == "__main__":
    h.main()
