"""The command line as a whole: help, version, unknown commands, no display,
and the geometry read-outs on a private Xvfb."""
import os
import unittest

import harness as h


def setUpModule():
    global X
    X = h.Xvfb(1920, 1080)


def tearDownModule():
    X.stop()


class Cli(unittest.TestCase):
    def test_version(self):
        r = h.run([h.binary(), "--version"])
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout.decode(), r"^deskhand \d+\.\d+\.\d+\n$")

    def test_help_lists_commands(self):
        r = h.run([h.binary(), "--help"])
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"screen", r.stdout)

    def test_unknown_option_is_usage_error(self):
        # Words that name no command are the agent's message; unknown
        # options are refused before anything starts.
        r = h.run([h.binary(), "--frobnicate"])
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"unknown option --frobnicate", r.stderr)

    def test_no_display_set(self):
        env = X.env()
        del env["DISPLAY"]
        r = h.run([h.binary(), "screen"], env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"no display", r.stderr)

    def test_cannot_open_display(self):
        # A display number nobody serves: one past the highest socket present.
        used = [int(n[1:]) for n in os.listdir("/tmp/.X11-unix")
                if n[1:].isdigit()]
        free = max(used + [0]) + 17
        r = h.run([h.binary(), "cursor"], env=X.env(DISPLAY=":%d" % free))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode(),
                         "deskhand: cannot open display :%d\n" % free)

    def test_screen(self):
        r = h.run([h.binary(), "screen"], env=X.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual(lines[0], "1920x1080")
        self.assertEqual(lines[1], "monitor 0: 1920x1080+0+0")

    def test_screen_rejects_arguments(self):
        r = h.run([h.binary(), "screen", "extra"], env=X.env())
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"usage: deskhand screen", r.stderr)

    def test_cursor_starts_centred(self):
        r = h.run([h.binary(), "cursor"], env=X.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        x, y = map(int, r.stdout.split())
        self.assertTrue(0 <= x < 1920 and 0 <= y < 1080)


if __name__ == "__main__":
    h.main()
