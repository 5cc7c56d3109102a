"""Mouse input through deskhand, as a real X client records it: motion,
every button, click counts, every scroll direction and amount, drags."""
import unittest

import harness as h
from xinput_util import Recorder, deskhand, key_state


def setUpModule():
    global X, REC
    X = h.Xvfb(1280, 800)
    REC = Recorder(X)


def tearDownModule():
    REC.stop()
    X.stop()


def buttons(evs):
    return [(e["kind"], int(e["button"]), int(e["x"]), int(e["y"]))
            for e in evs if e["kind"] in ("press", "release")]


class Mouse(unittest.TestCase):
    def setUp(self):
        REC.reset()

    def tearDown(self):
        _, _, _, held = key_state(X)
        self.assertEqual(held, 0, "a button was left held")

    def test_move(self):
        r = deskhand(X, "move", 100, 200)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = REC.wait_count(1, ["motion"])
        self.assertEqual([(e["x"], e["y"]) for e in evs if e["kind"] == "motion"],
                         [("100", "200")])
        r = deskhand(X, "cursor")
        self.assertEqual(r.stdout.decode(), "100 200\n")

    def test_move_corners(self):
        for x, y in ((0, 0), (1279, 799), (1279, 0), (0, 799)):
            REC.reset()
            r = deskhand(X, "move", x, y)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(deskhand(X, "cursor").stdout.decode(), "%d %d\n" % (x, y))

    def test_click_each_button(self):
        for i, (name, num) in enumerate((("left", 1), ("middle", 2), ("right", 3),
                                         ("back", 8), ("forward", 9))):
            REC.reset()
            x, y = 300 + i, 400 + i
            r = deskhand(X, "click", x, y, "--button", name)
            self.assertEqual(r.returncode, 0, r.stderr)
            evs = REC.wait_count(2, ["press", "release"])
            self.assertEqual(buttons(evs), [("press", num, x, y), ("release", num, x, y)])
            # Motion to the spot comes before the press.
            kinds = [e["kind"] for e in evs]
            self.assertLess(kinds.index("motion"), kinds.index("press"))

    def test_click_here_default_left(self):
        deskhand(X, "move", 50, 60)
        REC.reset()
        r = deskhand(X, "click")
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = REC.wait_count(2, ["press", "release"])
        self.assertEqual(buttons(evs), [("press", 1, 50, 60), ("release", 1, 50, 60)])

    def test_click_counts(self):
        for count in (1, 2, 3):
            REC.reset()
            r = deskhand(X, "click", 500, 500, "--count", count)
            self.assertEqual(r.returncode, 0, r.stderr)
            evs = REC.wait_count(2 * count, ["press", "release"])
            got = buttons(evs)
            self.assertEqual(got, [("press", 1, 500, 500), ("release", 1, 500, 500)] * count)
            # One burst: no other event between the pairs, server times in order.
            times = [int(e["time"]) for e in evs if e["kind"] in ("press", "release")]
            self.assertEqual(times, sorted(times))
            first = [e["kind"] for e in evs].index("press")
            self.assertTrue(all(e["kind"] in ("press", "release") for e in evs[first:]))

    def test_scroll_each_direction_and_amount(self):
        for direction, button in (("up", 4), ("down", 5), ("left", 6), ("right", 7)):
            for amount in (1, 3, 7):
                REC.reset()
                r = deskhand(X, "scroll", direction, amount)
                self.assertEqual(r.returncode, 0, r.stderr)
                evs = REC.wait_count(2 * amount, ["press", "release"])
                got = [(k, b) for k, b, _, _ in buttons(evs)]
                self.assertEqual(got, [("press", button), ("release", button)] * amount,
                                 "%s %d" % (direction, amount))

    def test_scroll_default_amount_and_at(self):
        r = deskhand(X, "scroll", "down", "--at", 640, 300)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = REC.wait_count(6, ["press", "release"])
        self.assertEqual(buttons(evs), [("press", 5, 640, 300), ("release", 5, 640, 300)] * 3)

    def test_drag(self):
        r = deskhand(X, "drag", 100, 100, 700, 400)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = REC.wait_count(1, ["release"])
        seq = [e for e in evs if e["kind"] in ("press", "release", "motion")]
        press = [i for i, e in enumerate(seq) if e["kind"] == "press"]
        release = [i for i, e in enumerate(seq) if e["kind"] == "release"]
        self.assertEqual(len(press), 1)
        self.assertEqual(len(release), 1)
        p, q = press[0], release[0]
        self.assertEqual((seq[p]["button"], seq[p]["x"], seq[p]["y"]), ("1", "100", "100"))
        self.assertEqual((seq[q]["button"], seq[q]["x"], seq[q]["y"]), ("1", "700", "400"))
        between = seq[p + 1:q]
        self.assertGreaterEqual(len(between), 3)
        self.assertTrue(all(e["kind"] == "motion" for e in between))
        # Button 1 held during the motion, moving monotonically towards B.
        self.assertTrue(all(int(e["state"], 16) & 0x100 for e in between))
        xs = [int(e["x"]) for e in between]
        self.assertEqual(xs, sorted(xs))
        self.assertTrue(any(100 < x < 700 for x in xs))

    def test_drag_right_button(self):
        r = deskhand(X, "drag", 10, 10, 20, 30, "--button", "right")
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = REC.wait_count(2, ["press", "release"])
        self.assertEqual(buttons(evs), [("press", 3, 10, 10), ("release", 3, 20, 30)])


if __name__ == "__main__":
    h.main()
