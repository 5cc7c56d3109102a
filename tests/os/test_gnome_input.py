"""deskhand's input commands on a real headless Mutter 43 (the GNOME
backend: Mutter's RemoteDesktop session), as a Wayland client receives
them: every button at exact surface coordinates, click counts as one
burst, scrolls on both axes with discrete steps, drags, key combinations
with their modifier masks, holds, keys held by --down released as
deskhand exits; points off the screen refused with nothing sent. Typing:
byte for byte into a GTK 3 entry (mixed scripts, emoji, characters
outside Mutter's keymap pasted from the clipboard) with the user's
clipboard the same afterwards; into foot running `cat > FILE` (whose
ctrl+v does not paste) keymap text arrives exactly and a character
outside the keymap is an error, never a silent loss. Skipped without
mutter."""
import os
import subprocess
import sys
import time
import unittest

import harness as h
import mutter
import wayland
from wl_util import deskhand

W, H = 1280, 800
BUTTONS = (("left", "272"), ("middle", "274"), ("right", "273"), ("back", "275"),
           ("forward", "276"))
# GTK's default gtk-double-click-time: a burst within it is one double click.
DOUBLE_CLICK_MS = 400
PY = "/usr/bin/python3"     # python3-gi is the system's
HERE = os.path.dirname(os.path.abspath(__file__))

ENTRY_APP = r'''
import os, sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib
out = sys.argv[1]
w = Gtk.Window(); e = Gtk.Entry(); w.add(e)
def changed(_):
    with open(out + ".tmp", "w") as f:
        f.write(e.get_text())
    os.rename(out + ".tmp", out)
e.connect("changed", changed)
w.connect("destroy", Gtk.main_quit)
w.connect("map-event", lambda *a: GLib.timeout_add(300, lambda: print("ready", flush=True)))
w.fullscreen(); w.show_all()
Gtk.main()
'''


def pointer(evs):
    """(kind, button, x, y) of each press/release: where the last
    enter/motion before it put the pointer."""
    out, at = [], None
    for e in evs:
        if e["kind"] in ("enter", "motion"):
            at = (int(e["x"]), int(e["y"]))
        elif e["kind"] in ("press", "release"):
            out.append((e["kind"], e["button"]) + at)
    return out


def keys(evs):
    """(press|release, name, modifiers depressed before it)."""
    out, mods = [], "0x0"
    for e in evs:
        if e["kind"] == "modifiers":
            mods = e["depressed"]
        elif e["kind"] in ("key-press", "key-release"):
            out.append((e["kind"][4:], e["name"], mods))
    return out


class Session(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = mutter.Mutter(monitors=1, size=(W, H))
        cls.addClassCleanup(cls.m.stop)

    def run_ok(self, *args, **kw):
        r = deskhand(self.m, *args, **kw)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r


class Input(Session):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.rec = wayland.Recorder(cls.m)

    def setUp(self):
        self.rec.reset()

    def until(self, kind, n=1):
        """The events once n of `kind` came and the session's devices left
        the seat (its "seat caps=" line ends every command)."""
        return self.rec.wait_events(
            lambda e: len([x for x in e if x["kind"] == kind]) >= n and bool(e) and
            e[-1] == {"kind": "seat", "caps": ""})

    def test_click_each_button(self):
        for i, (name, code) in enumerate(BUTTONS):
            with self.subTest(button=name):
                self.rec.reset()
                x, y = 301 + 17 * i, 402 + 9 * i
                self.run_ok("click", x, y, "--button", name)
                evs = self.until("release")
                self.assertEqual(pointer(evs), [("press", code, x, y), ("release", code, x, y)])
                m = [e for e in evs if e["kind"] in ("enter", "motion")][-1]
                self.assertEqual((m["fx"], m["fy"]), (str(256 * x), str(256 * y)))

    def test_click_counts_one_burst(self):
        for count in (1, 2, 3):
            with self.subTest(count=count):
                self.rec.reset()
                self.run_ok("click", 500, 600, "--count", count)
                evs = self.until("release", count)
                self.assertEqual(pointer(evs), [("press", "272", 500, 600),
                                                ("release", "272", 500, 600)] * count)
                t = [int(e["time"]) for e in evs if e["kind"] in ("press", "release")]
                self.assertLess(t[-1] - t[0], DOUBLE_CLICK_MS)

    def test_scroll_both_axes_discrete(self):
        for d, axis, sign in (("down", "vertical", 1), ("up", "vertical", -1),
                              ("right", "horizontal", 1), ("left", "horizontal", -1)):
            for amount in (1, 4):
                with self.subTest(direction=d, amount=amount):
                    self.rec.reset()
                    self.run_ok("scroll", d, amount, "--at", 640, 400)
                    evs = self.until("axis-discrete", amount)
                    disc = [(e["axis"], int(e["discrete"])) for e in evs
                            if e["kind"] == "axis-discrete"]
                    self.assertEqual(disc, [(axis, sign)] * amount)

    def test_click_latency(self):
        # Not a threshold: the figure, for the report.
        t0 = time.monotonic()
        for _ in range(5):
            self.run_ok("click", 200, 200)
        print("# click command: %.0f ms each (a process, a session, the click)"
              % ((time.monotonic() - t0) * 200))
        self.until("release", 5)

    def test_drag(self):
        self.run_ok("drag", 100, 120, 700, 520)
        evs = self.until("release")
        self.assertEqual(pointer(evs), [("press", "272", 100, 120), ("release", "272", 700, 520)])
        i = [k for k, e in enumerate(evs) if e["kind"] == "press"][0]
        moves = [e for e in evs[i:] if e["kind"] == "motion"]
        self.assertGreaterEqual(len(moves), 10)       # paced, not one jump

    def test_combo_modifier_masks(self):
        self.run_ok("key", "ctrl+shift+a")
        evs = self.until("key-release", 3)
        self.assertEqual(keys(evs), [("press", "Control_L", "0x0"), ("press", "Shift_L", "0x4"),
                                     ("press", "A", "0x5"), ("release", "A", "0x5"),
                                     ("release", "Shift_L", "0x5"),
                                     ("release", "Control_L", "0x4")])

    def test_upper_case_gets_shift_from_mutter(self):
        self.run_ok("key", "ctrl+A", "Return")
        evs = self.until("key-release", 4)
        names = [(k, n) for k, n, _ in keys(evs)]
        self.assertEqual(names, [("press", "Control_L"), ("press", "Shift_L"), ("press", "A"),
                                 ("release", "A"), ("release", "Shift_L"),
                                 ("release", "Control_L"), ("press", "Return"),
                                 ("release", "Return")])

    def test_hold(self):
        self.run_ok("key", "--hold", 400, "shift+x")
        evs = self.until("key-release", 2)
        t = {(e["kind"], e["name"]): int(e["time"]) for e in evs
             if e["kind"] in ("key-press", "key-release")}
        self.assertEqual(keys(evs), [("press", "Shift_L", "0x0"), ("press", "X", "0x1"),
                                     ("release", "X", "0x1"), ("release", "Shift_L", "0x1")])
        self.assertGreaterEqual(t[("key-release", "X")] - t[("key-press", "X")], 400)

    def test_down_released_as_deskhand_exits(self):
        # A RemoteDesktop session's keys end with it: held while the
        # process lives, released (the client sees it) as it exits.
        self.run_ok("key", "--down", "ctrl+alt")
        evs = self.until("key-release", 2)
        self.assertEqual([(k, n) for k, n, _ in keys(evs)],
                         [("press", "Control_L"), ("press", "Alt_L"),
                          ("release", "Alt_L"), ("release", "Control_L")])

    def test_key_outside_keymap_refused(self):
        r = deskhand(self.m, "key", "ctrl+udiaeresis")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"not in GNOME's keyboard layout", r.stderr)
        time.sleep(0.5)
        self.assertEqual(keys(self.rec.new_events()), [])

    def test_off_screen_refused_nothing_sent(self):
        for args in (["click", W, 10], ["click", -1, 10], ["move", 10, H],
                     ["drag", 10, 10, W + 5, 10]):
            with self.subTest(args=args):
                r = deskhand(self.m, *args)
                self.assertNotEqual(r.returncode, 0, r.stdout)
        time.sleep(0.5)
        self.assertEqual([e for e in self.rec.new_events()
                          if e["kind"] in ("motion", "press", "release", "enter")], [])


class Clipboard:
    """tests/os/gnome_clip.py: the user's clipboard, from a session of its own."""

    def __init__(self, m):
        self.proc = m.spawn([PY, os.path.join(HERE, "gnome_clip.py")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
        assert self.ask(None) == "ready"

    def ask(self, cmd):
        if cmd is not None:
            self.proc.p.stdin.write((cmd + "\n").encode())
            self.proc.p.stdin.flush()
        return self.proc.p.stdout.readline().decode().strip()

    def set(self, data):
        assert self.ask("set " + data.hex()) == "ok"

    def read(self):
        return bytes.fromhex(self.ask("read"))


class Typing(Session):
    def entry(self):
        d = self.m.tmpdir(prefix="deskhand-gnome-entry-")
        app = os.path.join(d, "entry.py")
        with open(app, "w") as f:
            f.write(ENTRY_APP)
        out = os.path.join(d, "text")
        p = self.m.spawn([PY, app, out], env={"GDK_BACKEND": "wayland"},
                         stdout=subprocess.PIPE)
        self.addCleanup(p.stop)
        self.assertEqual(p.p.stdout.readline().strip(), b"ready")
        return out

    def entry_text(self, path, want):
        h.wait_for(lambda: os.path.exists(path) and open(path, "rb").read() == want, 10)
        return open(path, "rb").read() if os.path.exists(path) else b""

    def test_gtk_entry_exact_with_clipboard_kept(self):
        clip = Clipboard(self.m)
        self.addCleanup(clip.proc.stop)
        mine = "the user's own: Ærø 😀".encode()
        clip.set(mine)
        out = self.entry()
        # 60 characters: keymap text, and runs Mutter's "us" keymap lacks.
        text = "Grüße, Zoë! Ελληνικά Русский 中文 日本語 😀🎉 x²+y² → € ok $(id) do"
        self.assertEqual(len(text), 60)
        t0 = time.monotonic()
        self.run_ok("type", text)
        took = time.monotonic() - t0
        got = self.entry_text(out, text.encode())
        self.assertEqual(got.decode(), text)
        self.assertEqual(clip.read(), mine)
        print("# typed 60 mixed characters into GTK in %.2f s" % took)

    def test_gtk_entry_keymap_only(self):
        out = self.entry()
        text = "Plain ASCII: The quick brown fox 0123456789 ;|&<>*?~#!{}[]^%=+\\"
        self.run_ok("type", text)
        self.assertEqual(self.entry_text(out, text.encode()).decode(), text)

    def test_foot_keymap_text_exact_and_paste_refused(self):
        clip = Clipboard(self.m)
        self.addCleanup(clip.proc.stop)
        clip.set(b"kept")
        d = self.m.tmpdir(prefix="deskhand-gnome-foot-")
        path = os.path.join(d, "typed")
        term = self.m.spawn(["foot", "sh", "-c", 'exec cat > "$0"', path])
        self.addCleanup(term.stop)
        h.wait_for(lambda: os.path.exists(path), 20)
        time.sleep(1.0)     # foot maps its window after creating the file
        text = "echo 'tab\there' $(id) ~/x;|&<>*?\n"
        self.run_ok("type", text)
        # foot's ctrl+v is ^V to the program, not a paste: refused, said so.
        r = deskhand(self.m, "type", "Ω")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"ctrl+shift+v", r.stderr)
        # The refused paste's ^V reached the terminal: its line discipline
        # takes the next key literally (Return as a bare CR, not a line
        # end), which the error says; two ctrl+d then end cat.
        self.run_ok("key", "Return", "ctrl+d", "ctrl+d")
        term.p.wait(20)
        with open(path, "rb") as f:
            got = f.read()
        self.assertEqual(got, (text + "\r").encode())
        self.assertEqual(clip.read(), b"kept")


if __name__ == "__main__":
    h.main()
