"""Every bad input to the input commands: a clear message, exit 2 (usage)
and nothing at all reaching the X server's clients, checked with a real
recording client and a marker event after each attempt."""
import unittest

import harness as h
from xinput_util import Recorder, deskhand, keymap, marker

W, H = 1280, 800

BAD = [
    # (arguments, stdin, text expected in the message)
    (["move"], None, "move needs X and Y"),
    (["move", "10"], None, "move needs X and Y"),
    (["move", "10", "20", "30"], None, "too many arguments"),
    (["move", "abc", "20"], None, "'abc' is not a whole number"),
    (["move", "1e3", "20"], None, "not a whole number"),
    (["move", "10", "20px"], None, "not a whole number"),
    (["move", "", "20"], None, "expected a number"),
    (["move", "10", "-5"], None, "off the screen"),
    (["move", str(W), "0"], None, "off the screen"),
    (["move", "0", str(H)], None, "off the screen"),
    (["move", "99999999999999999999", "0"], None, "out of range"),
    (["move", "--fast", "1", "2"], None, "unknown option '--fast'"),
    (["click", "--button", "foo"], None, "unknown button 'foo'"),
    (["click", "--button"], None, "--button needs a value"),
    (["click", "--count", "0"], None, "out of range"),
    (["click", "--count", "11"], None, "out of range"),
    (["click", "--count", "two"], None, "not a whole number"),
    (["click", "10"], None, "both X and Y"),
    (["click", "10", "20", "30"], None, "too many arguments"),
    (["click", "5000", "20"], None, "off the screen"),
    (["click", "-1", "20", "--button", "right"], None, "off the screen"),
    (["click", "--double"], None, "unknown option '--double'"),
    (["drag", "1", "2", "3"], None, "drag needs X1 Y1 X2 Y2"),
    (["drag", "1", "2", "3", "4", "5"], None, "too many arguments"),
    (["drag", "1", "2", "3", "9000"], None, "off the screen"),
    (["drag", "9000", "2", "3", "4"], None, "off the screen"),
    (["drag", "1", "2", "3", "4", "--button", "wheel"], None, "unknown button"),
    (["scroll"], None, "needs a direction"),
    (["scroll", "sideways"], None, "unknown direction 'sideways'"),
    (["scroll", "up", "0"], None, "out of range"),
    (["scroll", "up", "1001"], None, "out of range"),
    (["scroll", "up", "many"], None, "not a whole number"),
    (["scroll", "up", "--at", "5"], None, "--at needs X and Y"),
    (["scroll", "up", "--at", "5", "9000"], None, "off the screen"),
    (["scroll", "up", "2", "3"], None, "too many arguments"),
    (["type"], None, "type needs a TEXT"),
    (["type", "a", "b"], None, "type takes one TEXT"),
    (["type", "--delay-ms", "-1", "x"], None, "out of range"),
    (["type", "--delay-ms", "fast", "x"], None, "not a whole number"),
    (["type", "--slow", "x"], None, "unknown option '--slow'"),
    (["type", "bell\x07"], None, "U+0007"),
    (["type", "cr\r"], None, "U+000D"),
    (["type", "-"], b"ok\xff", "not valid UTF-8"),
    (["type", "-"], b"ok\xed\xa0\x80", "not valid UTF-8"),
    (["type", "-"], b"nul\x00", "U+0000"),
    (["type", "-"], b"\xe2\x82", "not valid UTF-8"),
    (["key"], None, "at least one COMBO"),
    (["key", "ctrl+"], None, "ends with '+'"),
    (["key", "ctrl+foo"], None, "unknown key name 'foo'"),
    (["key", "a", "ctrl+nope"], None, "unknown key name 'nope'"),
    (["key", "ab"], None, "unknown key name 'ab'"),
    (["key", ""], None, "empty key combination"),
    (["key", "--hold", "x", "a"], None, "not a whole number"),
    (["key", "--hold"], None, "--hold needs a value"),
    (["key", "--down", "--up", "a"], None, "exclude each other"),
    (["key", "--press", "a"], None, "unknown option '--press'"),
    (["key", "a+b+c+d+e+f+g+h+i"], None, "too many keys"),
]


def setUpModule():
    global X, REC
    X = h.Xvfb(W, H)
    REC = Recorder(X)


def tearDownModule():
    REC.stop()
    X.stop()


class Usage(unittest.TestCase):
    def test_bad_inputs_exit_2_and_send_nothing(self):
        before = keymap(X)
        for n, (args, stdin, needle) in enumerate(BAD):
            with self.subTest(args=args):
                REC.reset()
                r = deskhand(X, *args, input=stdin)
                err = r.stderr.decode("utf-8", "replace")
                self.assertEqual(r.returncode, 2, "%r: %s" % (args, err))
                self.assertIn(needle, err, args)
                self.assertIn("usage: deskhand %s" % args[0], err)
                # One line says what is wrong, one how to call it.
                self.assertEqual(len(err.strip().split("\n")), 2, err)
                evs = marker(REC, X, n)
                # Only the marker's own motion event arrived.
                self.assertEqual([e["kind"] for e in evs], ["motion"], args)
        self.assertEqual(keymap(X), before)

    def test_invalid_utf8_argument(self):
        REC.reset()
        r = h.run([h.binary().encode(), b"type", b"caf\xc3"], env=X.env())
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"not valid UTF-8 (bad byte 0xc3 at offset 3)", r.stderr)
        self.assertEqual([e["kind"] for e in marker(REC, X, 999)], ["motion"])

    def test_no_display(self):
        env = X.env()
        del env["DISPLAY"]
        for args in (["move", "1", "1"], ["click"], ["type", "x"], ["key", "a"],
                     ["scroll", "up"], ["drag", "1", "1", "2", "2"]):
            r = h.run([h.binary()] + args, env=env)
            self.assertEqual(r.returncode, 1, args)
            self.assertIn(b"no display", r.stderr)

    def test_usage_errors_win_over_a_missing_display(self):
        # Arguments are checked before the display is opened.
        env = X.env()
        del env["DISPLAY"]
        r = h.run([h.binary(), "key", "ctrl+nope"], env=env)
        self.assertEqual(r.returncode, 2)
        r = h.run([h.binary(), "type", "-"], env=env, input=b"\xff")
        self.assertEqual(r.returncode, 2)

    def test_help_lists_the_input_commands(self):
        r = h.run([h.binary(), "--help"])
        for cmd in (b"move", b"click", b"drag", b"scroll", b"type", b"key"):
            self.assertIn(b"deskhand " + cmd, r.stdout)


if __name__ == "__main__":
    h.main()
