"""The accessibility tree on Wayland (a headless sway, tests/lib/wayland.py):
GTK 3 (GDK_BACKEND=wayland) and Qt 5 (QT_QPA_PLATFORM=wayland) give their
controls' boxes relative to their windows, since no Wayland client knows
where its window is; deskhand moves them by the window's place from sway's
IPC (GTK 4 too, as on X11). Each window is floating and moved away from 0,0, so that a box left
unmoved is wrong: the listed box is checked against the pixels (its crop
reads as the control's name), against the app (a click at its centre
presses that very button, the app says so) and through the agent's element
targets. Without sway's IPC the place is unknown: `elements` says why, and
the pixels and OCR still work.

The session bus is this test's own dbus-daemon, at $XDG_RUNTIME_DIR/bus
(where a Wayland desktop's user bus lives) and named in
DBUS_SESSION_BUS_ADDRESS for both deskhand and the apps; the accessibility
bus and registry are activated from it."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

import harness as h
import wayland
from agentlib import FakeLLM, Run, call, tool_results

# The listing's one parser, shared with the X11 tests beside this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_elements import parse  # noqa: E402

PYTHON = "/usr/bin/python3"
PLACE = (300, 200)  # where each window is moved: not 0,0, not tiled

HERE = os.path.dirname(os.path.abspath(__file__))


def named(rows, role, name):
    return [r for r in rows if r["role"] == role and r["name"] == name]


def centre(box):
    x, y, w, hh = box
    return x + w // 2, y + hh // 2


def has_module(code):
    return subprocess.run([PYTHON, "-c", code], stderr=subprocess.DEVNULL).returncode == 0


class App:
    """A toolkit app on the sway, its stdout (the buttons it saw pressed) in
    a file, its window floated and moved to PLACE once it maps."""

    def __init__(self, t, argv, env=None):
        self.t = t
        self.out = os.path.join(t.dir, "app-%d.out" % len(os.listdir(t.dir)))
        self.f = open(self.out, "wb")
        self.proc = t.sway.spawn(argv, env=dict(t.env, **(env or {})), stdout=self.f,
                                 stderr=subprocess.DEVNULL)
        t.addCleanup(self.stop)
        if not h.wait_for(lambda: self.window() is not None, timeout=30, step=0.1):
            raise AssertionError("the app's window did not map")
        t.sway.swaymsg("[pid=%d]" % self.proc.pid, "floating", "enable,", "move",
                       "position", *PLACE)
        if not h.wait_for(lambda: (self.window() or {}).get("x") == PLACE[0] and
                          self.window().get("y") == PLACE[1], timeout=10, step=0.05):
            raise AssertionError("the window did not move: %r" % self.window())

    def window(self):
        """The window's content rect (x, y, width, height) in sway's tree."""
        def walk(n):
            if n.get("pid") == self.proc.pid:
                r, wr = n["rect"], n["window_rect"]
                return dict(x=r["x"] + wr["x"], y=r["y"] + wr["y"], width=wr["width"],
                            height=wr["height"])
            for c in n.get("nodes", []) + n.get("floating_nodes", []):
                found = walk(c)
                if found:
                    return found
            return None
        return walk(self.t.sway.query("get_tree"))

    def said(self):
        with open(self.out, "rb") as f:
            return f.read().decode(errors="replace").splitlines()

    def stop(self):
        self.proc.stop()
        self.f.close()


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in ("dbus-daemon", "tesseract"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest("%s is not installed (.ci/install-deps)" % tool)
        cls.sway = wayland.Sway()
        cls.addClassCleanup(cls.sway.stop)
        s = cls.sway
        cls.dir = s.tmpdir(prefix="deskhand-a11y-")
        cls.bus_addr = "unix:path=" + os.path.join(s.runtime_dir, "bus")
        cls.bus = s.spawn(["dbus-daemon", "--session", "--nofork",
                           "--address=" + cls.bus_addr])
        if not h.wait_for(lambda: os.path.exists(os.path.join(s.runtime_dir, "bus")), 10):
            raise RuntimeError("dbus-daemon did not start")
        # What deskhand sets for what it starts (agent/cli/main.c), and the
        # toolkits' Wayland backends.
        cls.env = dict(DBUS_SESSION_BUS_ADDRESS=cls.bus_addr, GNOME_ACCESSIBILITY="1",
                       QT_ACCESSIBILITY="1", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
                       GDK_BACKEND="wayland", QT_QPA_PLATFORM="wayland",
                       GTK_THEME="Adwaita", NO_AT_BRIDGE=None)

    def deskhand(self, *args, env=None):
        return self.sway.run_as([h.binary()] + [str(a) for a in args],
                                env=dict(self.env, **(env or {})), timeout=90)

    def elements(self, *args, env=None):
        return self.deskhand("elements", "--timeout-ms", "20000", *args, env=env)

    def wait_rows(self, pred, timeout=60, env=None):
        """The element list once pred(rows) holds: an app registers on the
        bus a moment after its window maps (Qt only once asked)."""
        last = []

        def ready():
            p = self.elements(env=env)
            last[:] = parse(p.stdout) if p.returncode == 0 else []
            return pred(last)
        h.wait_for(ready, timeout=timeout, step=0.3)
        return last

    def ocr(self, box):
        """The text in the box, less its edges (a button's border would read
        as a '|')."""
        x, y, w, hh = box
        png = os.path.join(self.dir, "crop.png")
        p = self.deskhand("screenshot", "--region", "%d,%d,%d,%d" % (x + 3, y + 2, w - 6, hh - 4),
                          "-o", png)
        self.assertEqual(p.returncode, 0, p.stderr)
        return h.run(["tesseract", png, "-", "--psm", "7"]).stdout.decode().strip()

    def assert_inside(self, box, win):
        x, y, w, hh = box
        self.assertTrue(w > 0 and hh > 0 and x >= win["x"] and y >= win["y"] and
                        x + w <= win["x"] + win["width"] and
                        y + hh <= win["y"] + win["height"], (box, win))

    def click_and_hear(self, app, box, name):
        """`deskhand click` at the box's centre; the app says `name` was pressed."""
        before = len(app.said())
        p = self.deskhand("click", *centre(box))
        self.assertEqual(p.returncode, 0, p.stderr)
        h.wait_for(lambda: len(app.said()) > before, timeout=10, step=0.05)
        self.assertEqual(app.said()[before:], [name])


class Gtk3(Base):
    @classmethod
    def setUpClass(cls):
        if not has_module("import gi; gi.require_version('Gtk', '3.0')"):
            raise unittest.SkipTest("PyGObject with GTK 3 is not installed (python3-gi)")
        super().setUpClass()

    def form(self, *extra, env=None):
        app = App(self, [PYTHON, os.path.join(HERE, "gtkform.py")] + list(extra), env=env)
        rows = self.wait_rows(lambda r: named(r, "push button", "Reject"), env=env)
        return app, rows

    def check_form(self, app, rows):
        win = app.window()
        approve = named(rows, "push button", "Approve")
        reject = named(rows, "push button", "Reject")
        self.assertEqual((len(approve), len(reject)), (1, 1), rows)
        for el in (approve[0], reject[0]):
            self.assert_inside(el["box"], win)
            self.assertEqual(self.ocr(el["box"]), el["name"])
        # One under the other, at the window's left edge.
        self.assertEqual(approve[0]["box"][0], win["x"])
        self.assertLess(approve[0]["box"][1], reject[0]["box"][1])
        self.click_and_hear(app, reject[0]["box"], "Reject")
        self.click_and_hear(app, approve[0]["box"], "Approve")

    def test_boxes_are_on_the_moved_window(self):
        app, rows = self.form()
        self.check_form(app, rows)
        # No decoration: the first button starts at the window's corner.
        win = app.window()
        self.assertEqual(named(rows, "push button", "Approve")[0]["box"][:2],
                         (win["x"], win["y"]))
        j = json.loads(self.elements("--json").stdout)
        self.assertEqual({e["pid"] for e in j["elements"]}, {app.proc.pid})
        self.assertEqual(j["note"], "")

    def test_header_bar_window_with_its_shadow(self):
        # GTK's boxes count from its surface, whose shadow lies outside the
        # window sway places: the header bar's buttons sit where they show.
        app, rows = self.form("--header-bar")
        self.check_form(app, rows)
        win = app.window()
        close = named(rows, "push button", "Close")
        self.assertEqual(len(close), 1, rows)
        self.assert_inside(close[0]["box"], win)
        # The body (360x200, its default size) is the bottom of the window,
        # under the header bar; the surface's shadow is around both (split
        # evenly, this is 3 pixels off).
        self.assertEqual(named(rows, "push button", "Approve")[0]["box"][1],
                         win["y"] + win["height"] - 200)

    def test_bus_found_in_the_runtime_directory(self):
        # No DBUS_SESSION_BUS_ADDRESS anywhere: the app and deskhand both
        # find the user bus at $XDG_RUNTIME_DIR/bus.
        env = dict(DBUS_SESSION_BUS_ADDRESS=None)
        app, rows = self.form(env=env)
        p = self.elements(env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(b"started a private one", p.stderr)
        self.assertTrue(named(parse(p.stdout), "push button", "Approve"), p.stdout)

    def test_without_sway_ipc_elements_say_why_and_pixels_still_work(self):
        app, rows = self.form()
        env = dict(SWAYSOCK=None)
        p = self.elements(env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, b"")
        self.assertIn(b"does not say where the active window is", p.stderr)
        self.assertIn(b"cannot be placed on the screen", p.stderr)
        j = json.loads(self.elements("--json", env=env).stdout)
        self.assertEqual(j["elements"], [])
        self.assertIn("cannot be placed", j["note"])
        # The screenshot and OCR find the button where the tree put it.
        p = self.deskhand("find-text", "Reject", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.match(rb"(\d+) (\d+) ", p.stdout)  # the match's centre first
        self.assertTrue(m, p.stdout)
        cx, cy = int(m[1]), int(m[2])
        rx, ry, rw, rh = named(rows, "push button", "Reject")[0]["box"]
        self.assertTrue(rx <= cx < rx + rw and ry <= cy < ry + rh, (p.stdout, rows))

    def test_all_windows_says_only_the_active_one(self):
        self.form()
        j = json.loads(self.elements("--all-windows", "--json").stdout)
        self.assertTrue([e for e in j["elements"] if e["name"] == "Approve"], j)
        self.assertIn("only the active window is listed", j["note"])


class Qt5(Base):
    @classmethod
    def setUpClass(cls):
        if not has_module("import PyQt5.QtWidgets"):
            raise unittest.SkipTest("PyQt5 is not installed (python3-pyqt5)")
        if not glob.glob("/usr/lib/*/qt5/plugins/platforms/libqwayland-generic.so"):
            raise unittest.SkipTest("Qt's Wayland platform is not installed (qtwayland5)")
        super().setUpClass()

    def form(self):
        app = App(self, [PYTHON, os.path.join(HERE, "qtform.py")])
        rows = self.wait_rows(lambda r: named(r, "push button", "Discard"))
        return app, rows

    def test_boxes_are_on_the_moved_window(self):
        app, rows = self.form()
        win = app.window()
        for role, name in (("push button", "Save"), ("push button", "Discard"),
                           ("check box", "Express"), ("text", "Customer")):
            el = named(rows, role, name)
            self.assertEqual(len(el), 1, (name, rows))
            self.assert_inside(el[0]["box"], win)
        for name in ("Save", "Discard"):
            self.assertEqual(self.ocr(named(rows, "push button", name)[0]["box"]), name)
        self.click_and_hear(app, named(rows, "push button", "Discard")[0]["box"], "Discard")

    def test_agent_clicks_the_element(self):
        app, rows = self.form()

        def click(body, fmt):
            text = tool_results(body, fmt)[-1][1]
            m = re.search(r'^(\d+) push button "Save"', text, re.M)
            return {"tool_calls": [call("computer", action="left_click",
                                        element=int(m[1]) if m else 999)]}
        turns = [{"tool_calls": [call("computer", action="elements")]}, click,
                 {"text": "done"}]
        r = agent_run(self.sway)
        env = r.env(None, **{k: v for k, v in self.sway.environ(**self.env).items()
                             if k != "HOME"})
        with FakeLLM(turns) as srv:
            p = h.run(self.sway.prefix() + r.args(srv, "openai", "-y", "--os", "-m", "save"),
                      env=env, input=b"y\n", timeout=120, cwd=self.sway.home)
            results = tool_results(srv.requests[-1]["body"], "openai")
        self.assertEqual(p.returncode, 0, p.stderr)
        save = named(rows, "push button", "Save")[0]
        # The listing is in the model's screenshot coordinates: the box the
        # CLI gives, scaled as the screen is.
        m = re.search(r'^\d+ push button "Save" \S+ (\d+) (\d+) (\d+) (\d+)$', results[0][1],
                      re.M)
        self.assertTrue(m, results[0][1])
        scale = 1280 / 1920  # the 1920x1080 screen shown as 1280x720
        for got, want in zip((int(v) for v in m.groups()), save["box"]):
            self.assertLessEqual(abs(got - want * scale), 1.5, (m[0], save))
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        self.assertRegex(out, r'left_click push button "Save" \(element \d+\) at')
        self.assertTrue(h.wait_for(lambda: app.said() == ["Save"], timeout=10), app.said())


class Gtk4(Base):
    @classmethod
    def setUpClass(cls):
        if shutil.which("gtk4-widget-factory") is None:
            raise unittest.SkipTest("gtk4-widget-factory is not installed (gtk-4-examples)")
        super().setUpClass()

    def test_boxes_are_on_the_moved_window(self):
        # GTK 4 answers relative to its window on X11 too; here its window
        # is where sway put it. GSK_RENDERER=cairo: see test_toolkits.py.
        app = App(self, ["gtk4-widget-factory"], env=dict(GSK_RENDERER="cairo"))
        rows = self.wait_rows(lambda r: named(r, "label", "checkbutton"), timeout=120)
        win = app.window()
        labels = named(rows, "label", "checkbutton")
        self.assertGreaterEqual(len(labels), 3, rows)
        for el in labels + named(rows, "check box", "checkbutton"):
            self.assert_inside(el["box"], win)
        # A click at an unchecked box's centre checks that very box.
        box = next(r["box"] for r in named(rows, "check box", "checkbutton")
                   if r["states"] == "-")
        p = self.deskhand("click", *centre(box))
        self.assertEqual(p.returncode, 0, p.stderr)
        after = self.wait_rows(lambda r: any(e["box"] == box and "checked" in e["states"]
                                             for e in r), timeout=30)
        self.assertTrue([e for e in after if e["box"] == box and "checked" in e["states"]],
                        (box, after))


def agent_run(sway):
    """A Run whose home, conversation and audit the compositor's uid owns."""
    r = Run()
    shutil.rmtree(r.dir, ignore_errors=True)
    r.dir = sway.tmpdir(prefix="deskhand-agent-")
    r.home = os.path.join(r.dir, "home")
    r.work = os.path.join(r.dir, "work")
    r.conv = os.path.join(r.dir, "conv.json")
    r.audit = os.path.join(r.dir, "audit.jsonl")
    for d in (r.home, r.work):
        os.makedirs(d)
        if os.geteuid() == 0:
            os.chown(d, sway.uid, sway.gid)
    return r


if __name__ == "__main__":
    h.main()
