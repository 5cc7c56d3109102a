"""deskhand's input commands on a real headless sway 1.7, as a Wayland
client receives them: every button at exact surface coordinates, click
counts, each scroll direction with its discrete steps and amounts, drags,
key combinations with their modifier masks, --down/--up/--hold; points
off the screen refused with nothing sent. Typing: byte for byte into a
freshly started foot running `cat > FILE` (mixed scripts, emoji beyond
the BMP, tabs, newlines, more distinct characters than one keymap holds,
standard input). A compositor killed during a command or between two:
a clear failure, never a crash. Skipped without sway."""
import os
import subprocess
import time
import unittest

import harness as h
import wayland
from mixed_text import mixed_text
from wl_util import FootCat, deskhand, kill

W, H = 1920, 1080
BUTTONS = (("left", "272"), ("middle", "274"), ("right", "273"), ("back", "275"),
           ("forward", "276"))


def pointer(evs):
    """(kind, x, y) of where each press/release happened: the last
    enter/motion before it."""
    out, at = [], None
    for e in evs:
        if e["kind"] in ("enter", "motion"):
            at = (int(e["x"]), int(e["y"]))
        elif e["kind"] in ("press", "release"):
            out.append((e["kind"], e["button"]) + at)
    return out


class InputCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=1, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)
        cls.rec = wayland.Recorder(cls.sway, output="HEADLESS-1")

    def setUp(self):
        self.rec.reset()

    def run_ok(self, *args):
        r = deskhand(self.sway, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def until(self, kind, n=1):
        """The events once n of `kind` have arrived (and the device that
        sent them has gone: its "seat caps=" line ends every command)."""
        return self.rec.wait_events(
            lambda e: len([x for x in e if x["kind"] == kind]) >= n and
            e[-1] == {"kind": "seat", "caps": ""})


class Pointer(InputCase):
    def test_click_each_button(self):
        for i, (name, code) in enumerate(BUTTONS):
            with self.subTest(button=name):
                self.rec.reset()
                x, y = 301 + 17 * i, 402 + 9 * i
                self.run_ok("click", x, y, "--button", name)
                evs = self.until("release")
                self.assertEqual(pointer(evs), [("press", code, x, y), ("release", code, x, y)])
                # Exact: the surface's fixed-point coordinates are whole.
                m = [e for e in evs if e["kind"] in ("enter", "motion")][-1]
                self.assertEqual((m["fx"], m["fy"]), (str(256 * x), str(256 * y)))

    def test_click_counts(self):
        for count in (1, 2, 3):
            with self.subTest(count=count):
                self.rec.reset()
                self.run_ok("click", 500, 600, "--count", count)
                evs = self.until("release", count)
                self.assertEqual(pointer(evs),
                                 [("press", "272", 500, 600), ("release", "272", 500, 600)] * count)
                # One burst, no motion between: a double click to a toolkit.
                first = [e["kind"] for e in evs].index("press")
                self.assertTrue(all(e["kind"] in ("press", "release", "frame")
                                    for e in evs[first:] if e["kind"] not in ("leave", "seat")))
                # The events' own times, as the toolkit judges a double click
                # (GTK's and Qt's interval is 400 ms by default): deskhand
                # stamps a burst as sent at once, whatever the machine's load.
                times = [int(e["time"]) for e in evs if e["kind"] in ("press", "release")]
                self.assertLess(times[-1] - times[0], 400, times)

    def test_move_then_click_here(self):
        self.run_ok("move", 1234, 567)
        evs = self.until("motion")
        self.assertEqual([(e["x"], e["y"]) for e in evs if e["kind"] == "motion"],
                         [("1234", "567")])
        self.assertEqual(pointer(evs), [])
        self.rec.reset()
        self.run_ok("click", "--button", "right")
        evs = self.until("release")
        self.assertEqual(pointer(evs), [("press", "273", 1234, 567), ("release", "273", 1234, 567)])

    def test_scroll_each_direction_and_amount(self):
        for direction, axis, sign in (("up", "vertical", -1), ("down", "vertical", 1),
                                      ("left", "horizontal", -1), ("right", "horizontal", 1)):
            for amount in (1, 3, 7):
                with self.subTest(direction=direction, amount=amount):
                    self.rec.reset()
                    self.run_ok("scroll", direction, amount)
                    evs = self.until("axis", amount)
                    axes = [(e["axis"], int(e["value"])) for e in evs if e["kind"] == "axis"]
                    steps = [(e["axis"], int(e["discrete"])) for e in evs
                             if e["kind"] == "axis-discrete"]
                    self.assertEqual(axes, [(axis, 15 * sign)] * amount)
                    self.assertEqual(steps, [(axis, sign)] * amount)
                    self.assertEqual([e["source"] for e in evs if e["kind"] == "axis-source"],
                                     ["wheel"] * amount)
                    self.assertEqual(pointer(evs), [])

    def test_scroll_default_amount_at_a_point(self):
        self.run_ok("scroll", "down", "--at", 640, 300)
        evs = self.until("axis", 3)
        self.assertEqual([e["value"] for e in evs if e["kind"] == "axis"], ["15"] * 3)
        first_axis = [e["kind"] for e in evs].index("axis")
        moved = [e for e in evs[:first_axis] if e["kind"] in ("enter", "motion")][-1]
        self.assertEqual((moved["x"], moved["y"]), ("640", "300"))

    def test_drag(self):
        for name, code in (("left", "272"), ("right", "273")):
            with self.subTest(button=name):
                self.rec.reset()
                self.run_ok("drag", 100, 900, 1700, 150, "--button", name)
                evs = self.until("release")
                seq = [e for e in evs if e["kind"] in ("enter", "motion", "press", "release")]
                kinds = [e["kind"] for e in seq]
                self.assertEqual((kinds.count("press"), kinds.count("release")), (1, 1))
                p, q = kinds.index("press"), kinds.index("release")
                self.assertEqual((seq[p - 1]["x"], seq[p - 1]["y"]), ("100", "900"))
                self.assertEqual((seq[q - 1]["x"], seq[q - 1]["y"]), ("1700", "150"))
                self.assertEqual((seq[p]["button"], seq[q]["button"]), (code, code))
                between = seq[p + 1:q]
                self.assertGreaterEqual(len(between), 3)
                self.assertTrue(all(e["kind"] == "motion" for e in between))
                xs = [int(e["x"]) for e in between]
                ys = [int(e["y"]) for e in between]
                self.assertEqual(xs, sorted(xs))
                self.assertEqual(ys, sorted(ys, reverse=True))
                self.assertTrue(any(100 < x < 1700 for x in xs))

    def test_points_off_the_screen_refused_and_nothing_sent(self):
        for args in (["click", W, 0], ["click", 0, H], ["click", -1, 5], ["move", 5, -1],
                     ["move", W + 100, 10], ["drag", 10, 10, W, 10], ["drag", -3, 10, 10, 10],
                     ["scroll", "up", "--at", 10, H]):
            with self.subTest(args=args):
                r = deskhand(self.sway, *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(b"off the screen", r.stderr)
        # Not even a device appeared: the refusal comes before the connection
        # does anything. (Waited for: a late event would show within this.)
        time.sleep(0.5)
        self.assertEqual(self.rec.new_events(), [])


class Keys(InputCase):
    def keys(self, evs):
        """(press|release, keysym name, modifiers depressed at that moment)."""
        out, mods = [], "0x0"
        for e in evs:
            if e["kind"] == "modifiers":
                mods = e["depressed"]
            elif e["kind"] in ("key-press", "key-release"):
                out.append((e["kind"][4:], e["name"], mods))
        return out

    def test_combos_with_their_modifier_masks(self):
        for combo, want in (
                ("ctrl+shift+t", [("press", "Control_L", "0x0"), ("press", "Shift_L", "0x4"),
                                  ("press", "T", "0x5"), ("release", "T", "0x5"),
                                  ("release", "Shift_L", "0x5"),
                                  ("release", "Control_L", "0x4")]),
                ("alt+F4", [("press", "Alt_L", "0x0"), ("press", "F4", "0x8"),
                            ("release", "F4", "0x8"), ("release", "Alt_L", "0x8")]),
                ("super", [("press", "Super_L", "0x0"), ("release", "Super_L", "0x40")]),
                # deskhand's own keymap has "plus" on a key of its own: no
                # Shift, unlike a US layout's shifted "=".
                ("ctrl++", [("press", "Control_L", "0x0"), ("press", "plus", "0x4"),
                            ("release", "plus", "0x4"), ("release", "Control_L", "0x4")]),
                ("Return", [("press", "Return", "0x0"), ("release", "Return", "0x0")])):
            with self.subTest(combo=combo):
                self.rec.reset()
                self.run_ok("key", combo)
                evs = self.until("key-release", len(want) // 2)
                self.assertEqual(self.keys(evs), want)
                # Nothing left held: the last state the client saw is clear.
                self.assertEqual([e["depressed"] for e in evs if e["kind"] == "modifiers"][-1],
                                 "0x0")
                # The keymap came before the first key, on this connection.
                kinds = [e["kind"] for e in evs]
                self.assertLess(kinds.index("keymap"), kinds.index("key-press"))

    def test_several_combos_in_order(self):
        self.run_ok("key", "a", "shift+b", "ctrl+c")
        evs = self.until("key-release", 5)
        presses = [(e["name"], e["text"]) for e in evs if e["kind"] == "key-press"]
        self.assertEqual(presses, [("a", "a"), ("Shift_L", ""), ("B", "B"),
                                   ("Control_L", ""), ("c", "\x03")])

    def test_hold(self):
        self.run_ok("key", "--hold", 400, "shift+x")
        evs = self.until("key-release", 2)
        t = {(e["kind"], e["name"]): int(e["time"]) for e in evs
             if e["kind"] in ("key-press", "key-release")}
        self.assertEqual(self.keys(evs), [("press", "Shift_L", "0x0"), ("press", "X", "0x1"),
                                          ("release", "X", "0x1"),
                                          ("release", "Shift_L", "0x1")])
        self.assertGreaterEqual(t[("key-release", "X")] - t[("key-press", "X")], 400)

    def test_down_and_up(self):
        # Pressed and kept while the process lives. A Wayland virtual
        # keyboard's keys end with it, so they are released as deskhand
        # exits (the client sees the release), and deskhand says so.
        r = self.run_ok("key", "--down", "ctrl+alt")
        self.assertIn(b"released when deskhand exits", r.stderr)
        evs = self.until("key-release", 2)
        self.assertEqual(self.keys(evs), [("press", "Control_L", "0x0"), ("press", "Alt_L", "0x4"),
                                          ("release", "Alt_L", "0xc"),
                                          ("release", "Control_L", "0x4")])
        self.rec.reset()
        r = self.run_ok("key", "--up", "ctrl+alt")
        self.assertEqual(r.stderr, b"")
        self.until("seat")
        self.assertEqual(self.keys(self.rec.new_events()), [])

    def test_bad_combos_refused_and_nothing_sent(self):
        for args in (["key", "ctrl+nosuchkey"], ["key"], ["key", "--hold", "-1", "a"],
                     ["key", "--down", "--up", "a"]):
            with self.subTest(args=args):
                r = deskhand(self.sway, *args)
                self.assertEqual(r.returncode, 2, r.stderr)
        time.sleep(0.5)
        self.assertEqual(self.rec.new_events(), [])


# Starts with "Grüße": the first word typed into a fresh client is where a
# lost first key shows (wtype once delivered "rüße").
MIXED = ("Grüße, Zoë! Ærø Ñandú déjà vu\tΕλληνικά Γειά σου\tРусский ЁЖЩ\n"
         "中文 你好 日本語 こんにちは 한국어\tمرحبا بالعالم\n"
         "😀🎉🚀💡🔥🧪🐍 𝄞 x²+y²=z² → ∞ ≠ €\n"
         "$(rm -rf /) `id` 'single' \"double\" ;|&<>*?~ #!{}[]^%=+\\\n")


class Typing(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=1, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)

    def type_into_fresh_foot(self, *args, input=None):
        term = FootCat(self.sway)
        try:
            r = deskhand(self.sway, "type", *args, input=input, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            return term.finish()
        finally:
            term.stop()

    def test_mixed_scripts_into_a_fresh_foot_five_times(self):
        for i in range(5):
            with self.subTest(run=i):
                self.assertEqual(self.type_into_fresh_foot(MIXED), MIXED.encode())

    def test_more_distinct_characters_than_one_keymap(self):
        # 320 distinct CJK characters plus Latin, Greek and emoji: over the
        # 200 a keymap holds, so the keymap changes while typing. Lines stay
        # short (a terminal's line buffer is 4 KiB).
        cjk = "".join(chr(0x4e00 + 7 * i) for i in range(320))
        text = "Grüße " + "\n".join(cjk[i:i + 40] for i in range(0, len(cjk), 40)) + \
            "\nαβγδ 😀🎉 done\n"
        self.assertGreater(len(set(text)), 300)
        self.assertEqual(self.type_into_fresh_foot("-", input=text.encode()), text.encode())
        # The same text into wlrecord: more than one keymap arrived, and
        # every key decodes with the keymap in force.
        rec = wayland.Recorder(self.sway, app_id="typed-keymaps")
        try:
            r = deskhand(self.sway, "type", "-", input=text.encode(), timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            evs = rec.wait_events(lambda e: "".join(x["text"] for x in e
                                                    if x["kind"] == "key-press")
                                  .replace("\r", "\n") == text)
            typed = "".join(e["text"] for e in evs if e["kind"] == "key-press")
            self.assertEqual(typed.replace("\r", "\n"), text)
            self.assertGreaterEqual(len([e for e in evs if e["kind"] == "keymap"]), 2)
        finally:
            rec.stop()

    def test_long_text_from_standard_input(self):
        text = mixed_text(3000)
        self.assertEqual(self.type_into_fresh_foot("-", input=text.encode()), text.encode())

    def test_text_argument_with_delay(self):
        text = "Grüße -ok ñ 😀\tx\n"
        self.assertEqual(self.type_into_fresh_foot("--delay-ms", "5", "--", text),
                         text.encode())

    def test_refused_text_sends_nothing(self):
        # A control character other than tab and newline: refused before
        # any key (foot would show it in the file otherwise).
        term = FootCat(self.sway)
        try:
            r = deskhand(self.sway, "type", "abc\x01def")
            self.assertEqual(r.returncode, 2, r.stderr)
            r = deskhand(self.sway, "type", "-", input=b"ab\xff\xfe\n")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(term.finish(), b"")
        finally:
            term.stop()


class DeadCompositor(unittest.TestCase):
    """sway killed (SIGKILL, by its pid) under deskhand: a failure below
    128 (no signal, no crash) with a message that says what happened."""

    def setUp(self):
        self.sway = wayland.Sway(outputs=1, size=(W, H))
        self.addCleanup(self.sway.stop)

    def assertClearFailure(self, rc, err, *words):
        self.assertTrue(0 < rc < 128, (rc, err))
        self.assertTrue(err.startswith(b"deskhand: "), err)
        self.assertEqual(len(err.splitlines()), 1, err)
        for w in words:
            self.assertIn(w, err)

    def test_killed_while_typing(self):
        term = FootCat(self.sway)
        text = mixed_text(6000)
        p = self.sway.spawn([h.binary(), "type", "--delay-ms", "2", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
        p.p.stdin.write(text.encode())
        p.p.stdin.close()
        # Typing has begun: cat has written the first line.
        self.assertTrue(h.wait_for(lambda: os.path.getsize(term.file) > 0
                                   if os.path.exists(term.file) else False, 60))
        kill(self.sway.proc)
        try:
            rc = p.p.wait(60)
        finally:
            p.stop()
        self.assertClearFailure(rc, p.p.stderr.read(), b"Wayland", b"connection was lost")
        with open(term.file, "rb") as f:
            got = f.read()
        self.assertTrue(text.encode().startswith(got))
        self.assertLess(len(got), len(text.encode()))

    def test_killed_while_holding_a_key(self):
        p = self.sway.spawn([h.binary(), "key", "--hold", "2000", "a"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)
        kill(self.sway.proc)
        try:
            rc = p.p.wait(60)
        finally:
            p.stop()
        self.assertClearFailure(rc, p.p.stderr.read(), b"Wayland")

    def test_killed_between_commands(self):
        r = deskhand(self.sway, "click", 10, 10)
        self.assertEqual(r.returncode, 0, r.stderr)
        kill(self.sway.proc)
        self.sway.proc.p.wait(30)
        for args in (["click", 10, 10], ["type", "x"], ["screenshot", "-o", "-"],
                     ["windows"], ["screen"]):
            with self.subTest(args=args):
                r = deskhand(self.sway, *args)
                self.assertClearFailure(r.returncode, r.stderr, b"cannot connect",
                                        self.sway.display.encode())
                self.assertEqual(r.stdout, b"")


if __name__ == "__main__":
    h.main()
