"""The accessibility tree beyond GTK 3 and Qt: a web page in Chromium and
GTK 4's widget factory, on the private Xvfb, openbox and session bus of
test_elements.py (its setUpModule, reused as is).

Chromium shows its tree only with --force-renderer-accessibility, and
registers on the bus only when GNOME_ACCESSIBILITY=1 (the tests' environment
sets it, as deskhand does for what it starts). GTK 4 speaks AT-SPI itself;
vision/a11y.c handles its differences (window-relative boxes, VISIBLE for
SHOWING, class names for names)."""
import http.server
import json
import os
import queue
import re
import shutil
import subprocess
import threading
import unittest

import harness as h
import pngread
import test_elements as te
from agentlib import FakeLLM, Run, call, tool_results

# A form with a labelled field, two look-alike buttons and a link (also the
# page of bench/elements --browser).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "form.html"),
          encoding="utf-8") as f:
    PAGE = f.read()


class PageServer(http.server.ThreadingHTTPServer):
    """The page on loopback, and what its buttons post (in `pressed`)."""

    def __init__(self):
        self.pressed = queue.Queue()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(hs):
                body = PAGE.encode() if hs.path == "/" else b"<title>Help</title>help"
                hs.send_response(200)
                hs.send_header("Content-Type", "text/html; charset=utf-8")
                hs.send_header("Content-Length", str(len(body)))
                hs.end_headers()
                hs.wfile.write(body)

            def do_POST(hs):
                n = int(hs.headers.get("Content-Length", "0"))
                self.pressed.put(hs.rfile.read(n).decode(errors="replace"))
                hs.send_response(204)
                hs.end_headers()

            def log_message(hs, *args):
                pass
        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def url(self):
        return "http://127.0.0.1:%d/" % self.server_address[1]

    def stop(self):
        self.shutdown()
        self.server_close()


def setUpModule():
    te.setUpModule()


def tearDownModule():
    te.tearDownModule()


def elements(*args):
    # GTK 4 answers each question by a D-Bus round trip (no cache): the
    # tests' own reads get a generous cap; the agent keeps its default.
    return te.elements("--timeout-ms", "30000", *args)


def wait_rows(pred, timeout):
    last = []

    def ready():
        p = elements()
        last[:] = te.parse(p.stdout) if p.returncode == 0 else []
        return pred(last)
    h.wait_for(ready, timeout=timeout, step=0.5)
    return last


def active_window():
    """The active window's box (x, y, w, h) from `deskhand windows`."""
    out = h.run([h.binary(), "windows"], env=te.ENV).stdout.decode()
    for line in out.splitlines():
        m = re.match(r"^\S+ \d+ \* (\d+)x(\d+)\+(-?\d+)\+(-?\d+) ", line)
        if m:
            w, hh, x, y = (int(v) for v in m.groups())
            return x, y, w, hh
    raise AssertionError("no active window in %r" % out)


def inside(inner, outer):
    x, y, w, hh = inner
    ox, oy, ow, oh = outer
    return w > 0 and hh > 0 and x >= ox and y >= oy and x + w <= ox + ow and y + hh <= oy + oh


def ocr(box):
    png = os.path.join(te.DIR, "crop.png")
    p = h.run([h.binary(), "screenshot", "--region", "%d,%d,%d,%d" % box, "-o", png],
              env=te.ENV)
    assert p.returncode == 0, p.stderr
    return h.run(["tesseract", png, "-", "--psm", "7"], env=te.ENV).stdout.decode().strip()


def pixels(box):
    png = os.path.join(te.DIR, "pixels.png")
    p = h.run([h.binary(), "screenshot", "--region", "%d,%d,%d,%d" % box, "-o", png],
              env=te.ENV)
    assert p.returncode == 0, p.stderr
    with open(png, "rb") as f:
        return pngread.read(f.read())[2]


def agent_env(r):
    return r.env(None, **{k: te.ENV[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")})


class Chromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("chromium") is None:
            raise unittest.SkipTest("chromium is not installed (.ci/install-deps)")

    def setUp(self):
        self.server = PageServer()
        profile = h.tmpdir()
        self.addCleanup(shutil.rmtree, profile, True)
        # Root under Xvfb: no sandbox (and --test-type drops the bar that
        # warns of it, which would push the page down), a private profile,
        # nothing that phones home or asks first.
        self.browser = h.Proc(["chromium", "--force-renderer-accessibility", "--no-sandbox",
                               "--test-type", "--user-data-dir=" + profile, "--no-first-run",
                               "--no-default-browser-check", "--disable-gpu",
                               "--disable-background-networking", "--disable-sync",
                               "--disable-component-update", "--password-store=basic",
                               "--window-position=40,40", "--window-size=900,600",
                               self.server.url()], env=te.ENV)
        self.addCleanup(self.server.stop)
        self.addCleanup(self.browser.stop, 20)

    def page_rows(self):
        # Chromium can take 10 s and more to start and register here.
        rows = wait_rows(lambda r: te.named(r, "push button", "Save") and
                         te.named(r, "entry", "Customer"), timeout=180)
        self.assertTrue(te.named(rows, "push button", "Save"), rows)
        return rows

    def test_page_controls_listed_with_their_boxes(self):
        rows = self.page_rows()
        win = active_window()
        doc = te.named(rows, "document web", "Order form")
        self.assertEqual(len(doc), 1, rows)
        self.assertTrue(inside(doc[0]["box"], win), (doc, win))
        entry = te.named(rows, "entry", "Customer")  # named by its <label>
        save = te.named(rows, "push button", "Save")
        save_as = te.named(rows, "push button", "Save as\u2026")
        link = te.named(rows, "link", "Help")
        for el in (entry, save, save_as, link):
            self.assertEqual(len(el), 1, rows)
            self.assertTrue(inside(el[0]["box"], doc[0]["box"]), (el, doc))
        self.assertIn("editable", entry[0]["states"])
        # The pixels at each box: the buttons and the link read as their
        # names, the field is its own yellow and the page white beside it.
        self.assertEqual(ocr(save[0]["box"]), "Save")
        self.assertIn(ocr(save_as[0]["box"]).replace("\u2026", "..."), ("Save as...", "Save as…"))
        self.assertEqual(ocr(link[0]["box"]), "Help")
        x, y, w, hh = entry[0]["box"]
        px = pixels((x - 4, y, w + 8, hh))
        yellow, white = (0xff, 0xe0, 0x8a), (0xff, 0xff, 0xff)
        for yy in (1, hh // 2, hh - 2):
            for xx in (5, w // 2, w + 2):
                self.assertEqual(px[yy][xx], yellow, (xx, yy))
            self.assertEqual(px[yy][1], white)
            self.assertEqual(px[yy][w + 6], white)
        # --json says whose they are: the browser's own process.
        j = json.loads(elements("--json").stdout)
        self.assertEqual({e["pid"] for e in j["elements"]}, {self.browser.pid})

    def test_fake_model_fills_the_form_and_saves_by_element_ids(self):
        self.page_rows()
        ids = {}

        def listing(body):
            return tool_results(body, "openai")[0][1]

        def type_name(body, fmt):
            text = listing(body)
            m = re.search(r'^(\d+) entry "Customer" ', text, re.M)
            ids["entry"] = int(m[1]) if m else 999
            return {"tool_calls": [call("computer", action="type", element=ids["entry"],
                                        text="Ada Lovelace")]}

        def click_save(body, fmt):
            # "Save", not its look-alike "Save as…": chosen by role and name.
            m = re.search(r'^(\d+) push button "Save" ', listing(body), re.M)
            ids["save"] = int(m[1]) if m else 999
            return {"tool_calls": [call("computer", action="left_click", element=ids["save"])]}
        turns = [{"tool_calls": [call("computer", action="elements")]}, type_name, click_save,
                 {"text": "saved"}]
        r = Run()
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "--os", "-m", "enter Ada Lovelace and save",
                      env=agent_env(r), input=b"y\ny\n", timeout=300)
            results = tool_results(srv.requests[-1]["body"], "openai")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(results[0][1], r'\d+ push button "Save as\u2026" ')
        for _, text, _ in results[1:]:
            self.assertNotIn("nothing was done", text)
        # The confirmations named the controls beside the points.
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        self.assertIn('entry "Customer" (element %d) at' % ids["entry"], out)
        self.assertIn('push button "Save" (element %d) at' % ids["save"], out)
        # The page's own word: Save, pressed first and alone, with the text.
        self.assertEqual(self.server.pressed.get(timeout=60), "1 Save:Ada Lovelace")
        self.assertTrue(self.server.pressed.empty())


class Gtk4Demo(unittest.TestCase):
    def test_boxes_follow_the_window(self):
        # GTK 4 gives boxes relative to its window: deskhand places them by
        # the window, so a moved window takes its boxes along.
        if shutil.which("gtk4-demo") is None or shutil.which("xdotool") is None:
            self.skipTest("gtk4-demo (gtk-4-examples) or xdotool is not installed")
        app = h.Proc(["gtk4-demo"], env=dict(te.ENV, GSK_RENDERER="cairo"))
        self.addCleanup(app.stop)
        rows = wait_rows(lambda r: te.named(r, "label", "Application Class"), timeout=120)
        label = te.named(rows, "label", "Application Class")
        self.assertEqual(len(label), 1, rows)
        win = active_window()
        self.assertTrue(inside(label[0]["box"], win), (label, win))
        self.assertEqual(ocr(label[0]["box"]), "Application Class")
        nx, ny = (60, 40) if win[0] > 200 else (300, 150)
        h.run(["xdotool", "getactivewindow", "windowmove", str(nx), str(ny)], env=te.ENV)
        self.assertTrue(h.wait_for(lambda: active_window()[:2] == (nx, ny), timeout=30,
                                   step=0.2))
        want = (label[0]["box"][0] + nx - win[0], label[0]["box"][1] + ny - win[1])
        rows = wait_rows(lambda r: any(e["box"][:2] == want for e in
                                       te.named(r, "label", "Application Class")), timeout=60)
        moved = [e for e in te.named(rows, "label", "Application Class") if e["box"][:2] == want]
        self.assertTrue(moved, (want, rows))
        self.assertEqual(ocr(moved[0]["box"]), "Application Class")
        # --all-windows has no window to place them by: left out, and said so.
        j = json.loads(elements("--all-windows", "--json").stdout)
        self.assertFalse([e for e in j["elements"] if e["pid"] == app.pid], j)
        self.assertIn("GTK 4 applications are listed only as the active window", j["note"])


class Gtk4(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("gtk4-widget-factory") is None:
            raise unittest.SkipTest("gtk4-widget-factory is not installed (gtk-4-examples)")

    def setUp(self):
        # GSK_RENDERER=cairo: with its default GL renderer (llvmpipe under
        # Xvfb) the widget factory redraws without pause, its main loop never
        # runs the idle source that registers it on the bus, and it is never
        # listed.
        env = dict(te.ENV, GSK_RENDERER="cairo")
        self.app = h.Proc(["gtk4-widget-factory"], env=env)
        self.addCleanup(self.app.stop)

    def factory_rows(self):
        return wait_rows(lambda r: len(te.named(r, "check box", "checkbutton")) == 6,
                         timeout=120)

    def test_widget_factory_controls_listed_with_their_boxes(self):
        rows = self.factory_rows()
        self.assertEqual(len(te.named(rows, "check box", "checkbutton")), 6, rows)
        # GTK 4.8's roles: radio buttons are check boxes, toggle buttons push
        # buttons (with "pressed"), tabs keep their mnemonic's underscore.
        self.assertEqual(len(te.named(rows, "check box", "radiobutton")), 6)
        toggles = te.named(rows, "push button", "togglebutton")
        self.assertEqual(len(toggles), 4)
        self.assertTrue(any("pressed" in t["states"] for t in toggles))
        self.assertTrue(te.named(rows, "page tab", "Page _1"))
        self.assertTrue(any(r["role"] == "text" and "editable" in r["states"] for r in rows))
        self.assertTrue(any(r["role"] == "spin button" for r in rows))
        self.assertTrue(any(r["role"] == "slider" for r in rows))
        self.assertTrue(any("disabled" in r["states"] for r in rows))
        # No class names standing in for names, no hidden page's widgets.
        self.assertFalse([r for r in rows if re.match(r"^Gtk[A-Z][A-Za-z]*$", r["name"])])
        self.assertFalse(te.named(rows, "label", "Expander"), rows)  # on page 2
        # Boxes in screen coordinates, inside the window, on the pixels.
        win = active_window()
        screen = (0, 0, 1280, 800)
        for r in rows:
            self.assertTrue(inside(r["box"], win) and inside(r["box"], screen), (r, win))
        self.assertEqual(ocr(toggles[0]["box"]), "togglebutton")
        label = te.named(rows, "label", "checkbutton")[0]
        self.assertEqual(ocr(label["box"]), "checkbutton")
        tab = te.named(rows, "label", "Page 1")[0]
        self.assertEqual(ocr(tab["box"]), "Page 1")

    def test_check_box_clicked_by_element(self):
        rows = self.factory_rows()
        target = [r for r in te.named(rows, "check box", "checkbutton")
                  if "checked" not in r["states"] and "disabled" not in r["states"]][0]
        chosen = {}

        def step(body, fmt):
            # As a model would: a list cut short by the time cap on a loaded
            # machine (GTK 4 answers each node on its own) is read again.
            if "id" in chosen:
                return {"text": "done"}
            text = tool_results(body, fmt)[-1][1]
            for m in re.finditer(r'^(\d+) check box "checkbutton" (\S+) ', text, re.M):
                if "checked" not in m[2] and "disabled" not in m[2]:
                    chosen["id"] = int(m[1])
                    return {"tool_calls": [call("computer", action="left_click",
                                                element=chosen["id"])]}
            return {"tool_calls": [call("computer", action="elements")]}
        turns = [{"tool_calls": [call("computer", action="elements")]}] + [step] * 6
        r = Run()
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "--os", "-m", "tick it", env=agent_env(r),
                      input=b"y\n", timeout=300)
            results = tool_results(srv.requests[-1]["body"], "openai")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("id", chosen, results[0][1])
        self.assertNotIn("nothing was done", results[-1][1])
        # The app's own state: the check box at that box is checked now.
        after = wait_rows(lambda r: any(e["box"] == target["box"] and "checked" in e["states"]
                                        for e in te.named(r, "check box", "checkbutton")),
                          timeout=60)
        self.assertTrue(any(e["box"] == target["box"] and "checked" in e["states"]
                            for e in te.named(after, "check box", "checkbutton")), after)


if __name__ == "__main__":
    h.main()
