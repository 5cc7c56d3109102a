"""The accessibility tree (deskhand elements, the elements action and
element: targets) on real GTK3 applications, on a private Xvfb with openbox
and a private session bus started by this test (the accessibility bus and
registry are activated from it, as on a desktop)."""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import unittest

import harness as h
from agentlib import FakeLLM, Run, call, last_image, tool_results

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r'^(\d+) (.+?) "((?:[^"\\]|\\.)*)" (\S+) (-?\d+) (-?\d+) (\d+) (\d+)$')


def parse(out):
    rows = []
    for line in out.decode().splitlines():
        m = LINE.match(line)
        assert m, "bad line %r" % line
        rows.append({"id": int(m[1]), "role": m[2], "name": m[3], "states": m[4],
                     "box": tuple(int(m[k]) for k in range(5, 9))})
    return rows


def setUpModule():
    global X, BUS, WM, DIR, ENV
    for tool in ("openbox", "dbus-daemon", "zenity", "gtk3-widget-factory", "tesseract"):
        if shutil.which(tool) is None:
            raise unittest.SkipTest("%s is not installed (.ci/install-deps)" % tool)
    X = h.Xvfb(1280, 800)
    DIR = h.tmpdir()
    BUS = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           env=X.env(), start_new_session=True)
    addr = BUS.stdout.readline().decode().strip()
    ENV = X.env(DBUS_SESSION_BUS_ADDRESS=addr, HOME=DIR, XDG_CONFIG_HOME=DIR,
                GNOME_ACCESSIBILITY="1", GTK_THEME="Adwaita", LANG="C.UTF-8")
    ENV.pop("XDG_RUNTIME_DIR", None)
    ENV.pop("AT_SPI_BUS_ADDRESS", None)
    flag = os.path.join(DIR, "ready")
    WM = h.Proc(["openbox", "--sm-disable", "--startup", "touch " + flag], env=ENV)
    if not h.wait_for(lambda: os.path.exists(flag), timeout=30):
        raise RuntimeError("openbox did not start")


def tearDownModule():
    WM.stop()
    try:
        os.killpg(BUS.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    BUS.wait(10)
    X.stop()
    shutil.rmtree(DIR, ignore_errors=True)


def elements(*args, env=None):
    return h.run([h.binary(), "elements"] + list(args), env=env or ENV, timeout=60)


def wait_elements(pred, timeout=30):
    """The element list once pred(rows) holds (an app registers a moment
    after its window maps)."""
    last = []

    def ready():
        p = elements()
        rows = parse(p.stdout) if p.returncode == 0 else []
        last[:] = rows
        return pred(rows)
    h.wait_for(ready, timeout=timeout, step=0.2)
    return last


def named(rows, role, name):
    return [r for r in rows if r["role"] == role and r["name"] == name]


class Zenity:
    def __init__(self, *args):
        self.p = subprocess.Popen(["zenity"] + list(args), env=ENV, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGCONT)
            os.killpg(self.p.pid, signal.SIGTERM)
        self.p.wait(10)
        self.p.stdout.close()


def question():
    return Zenity("--question", "--title", "Order", "--text", "Send the order now?",
                  "--ok-label", "Approve", "--cancel-label", "Reject")


class Cli(unittest.TestCase):
    def test_widget_factory_controls_listed(self):
        app = h.Proc(["gtk3-widget-factory"], env=ENV)
        try:
            rows = wait_elements(lambda r: named(r, "radio button", "Page 1"))
            self.assertTrue(named(rows, "radio button", "Page 1"), rows)
            self.assertTrue(named(rows, "toggle button", "togglebutton"))
            self.assertTrue(named(rows, "check box", "checkbutton"))
            self.assertTrue(any(r["role"] == "text" and "editable" in r["states"]
                                for r in rows))
            self.assertTrue(any("disabled" in r["states"] for r in rows))
            for r in rows:
                x, y, w, hh = r["box"]
                self.assertTrue(w > 0 and hh > 0 and x >= 0 and y >= 0, r)
                self.assertTrue(x + w <= 1280 and y + hh <= 800, r)
            ids = [r["id"] for r in rows]
            self.assertEqual(ids, list(range(1, len(rows) + 1)))
            # --json: the same elements.
            p = elements("--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            j = json.loads(p.stdout)
            self.assertFalse(j["partial"])
            page = [e for e in j["elements"] if e["name"] == "Page 1"]
            self.assertEqual(page[0]["role"], "radio button")
            self.assertEqual(page[0]["pid"], app.pid)
        finally:
            app.stop()

    def test_a_3000_row_list_yields_the_rows_on_screen(self):
        if subprocess.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("PyGObject with GTK 3 is not installed (gir1.2-gtk-3.0)")
        app = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "biglist.py"), "3000",
                                "1500"], env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            self.assertEqual(app.stdout.readline(), b"ready\n")
            rows = wait_elements(lambda r: named(r, "table cell", "row 1500"))
            cells = [r["name"] for r in rows if r["role"] == "table cell"]
            self.assertEqual(cells[0], "row 1500", rows)
            # Scrolled out, above and below: not listed.
            for gone in ("row 0", "row 1499", "row 2999"):
                self.assertNotIn(gone, cells)
            self.assertTrue(named(rows, "push button", "Refresh"))
            p = elements("--json")
            j = json.loads(p.stdout)
            self.assertFalse(j["partial"], j["note"])
            self.assertEqual(j["note"], "")
            # Each visible row's box is inside the list, one under the other.
            ys = [r["box"][1] for r in rows if r["role"] == "table cell"]
            self.assertEqual(ys, sorted(ys))
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            app.wait(10)
            app.stdout.close()

    def test_box_matches_the_pixels(self):
        z = question()
        try:
            rows = wait_elements(lambda r: named(r, "push button", "Approve"))
            for name in ("Approve", "Reject"):
                el = named(rows, "push button", name)
                self.assertTrue(el, rows)
                # The pixels inside the box the tree gives read as its name.
                png = os.path.join(DIR, "crop.png")
                p = h.run([h.binary(), "screenshot", "--region",
                           "%d,%d,%d,%d" % el[0]["box"], "-o", png], env=ENV)
                self.assertEqual(p.returncode, 0, p.stderr)
                p = h.run(["tesseract", png, "-", "--psm", "7"], env=ENV)
                self.assertEqual(p.stdout.decode().strip(), name)
        finally:
            z.stop()

    def test_xterm_has_no_tree(self):
        if shutil.which("xterm") is None:
            self.skipTest("xterm is not installed")
        t = h.Proc(["xterm", "-title", "plain"], env=ENV)
        try:
            def active():
                out = h.run([h.binary(), "windows"], env=ENV).stdout.decode()
                return any(" * " in l and "plain" in l for l in out.splitlines())
            self.assertTrue(h.wait_for(active, timeout=30, step=0.1))
            p = elements()
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, b"")
            self.assertIn(b"exposes no accessibility tree", p.stderr)
        finally:
            t.stop()

    def test_no_bus_is_a_note(self):
        with h.Xvfb(640, 480) as x2:
            env = x2.env(HOME=DIR)
            for k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "AT_SPI_BUS_ADDRESS"):
                env.pop(k, None)
            t = h.Proc(["xterm"], env=env)
            try:
                p = elements(env=env)
            finally:
                t.stop()
        # deskhand starts a bus of its own and says so (tests/os/test_bus.py):
        # what runs already, like this xterm, was started without one.
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, b"")
        self.assertIn(b"started a private one until deskhand exits", p.stderr)
        self.assertIn(b"applications already running were started without a bus", p.stderr)

    def test_doctor_reports_the_bus_and_the_applications(self):
        z = question()
        try:
            wait_elements(lambda r: named(r, "push button", "Approve"))
            p = h.run([h.binary(), "doctor"], env=ENV, timeout=120)
            line = [l for l in p.stdout.decode().splitlines()
                    if l.startswith("accessibility bus")]
            self.assertEqual(len(line), 1, p.stdout)
            self.assertIn("reachable", line[0])
            self.assertIn("zenity (pid %d)" % z.p.pid, line[0])
        finally:
            z.stop()
        env = dict(ENV)
        env.pop("DBUS_SESSION_BUS_ADDRESS")
        with h.Xvfb(320, 240) as x2:
            env["DISPLAY"] = x2.display
            p = h.run([h.binary(), "doctor"], env=env, timeout=120)
        self.assertRegex(p.stdout.decode(), r"(?m)^session bus +no session D-Bus bus for :\d+: "
                                            r"started a private one")
        self.assertRegex(p.stdout.decode(), r"(?m)^accessibility bus +reachable")

    def test_hanging_app_returns_within_the_cap(self):
        z = question()
        try:
            wait_elements(lambda r: named(r, "push button", "Approve"))
            os.killpg(z.p.pid, signal.SIGSTOP)
            p = elements("--timeout-ms", "300")
            self.assertEqual(p.returncode, 0, p.stderr)
            # Named, not only "the time cap ran out" (tests/vision/test_faults.py).
            self.assertIn(b"zenity (pid %d) did not answer" % z.p.pid, p.stderr)
        finally:
            z.stop()


def agent(r, srv, *args, fmt="openai"):
    """deskhand -y --os on this test's display and bus, each question answered yes."""
    return r.run(srv, fmt, "-y", "--os", *args,
                 env=r.env(None, **{k: ENV[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}),
                 input=b"y\n")


class Agent(unittest.TestCase):
    def element_turns(self, name, before_click=None):
        """elements, then a left_click on the push button `name` by its ID."""
        def click(body, fmt):
            text = tool_results(body, fmt)[-1][1]
            m = re.search(r'^(\d+) push button "%s"' % name, text, re.M)
            if before_click:
                before_click()
            return {"tool_calls": [call("computer", action="left_click",
                                        element=int(m[1]) if m else 999)]}
        return [{"tool_calls": [call("computer", action="elements")]}, click,
                {"text": "done"}]

    def test_click_by_element_presses_the_button(self):
        z = question()
        try:
            wait_elements(lambda r: named(r, "push button", "Approve"))
            r = Run()
            with FakeLLM(self.element_turns("Approve")) as srv:
                p = agent(r, srv, "-m", "approve the order")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            listing = results[0][1]
            self.assertRegex(listing, r'\d+ push button "Approve" \S+ \d+ \d+ \d+ \d+')
            # The question names the control beside the point.
            out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
            self.assertRegex(out, r'left_click push button "Approve" \(element \d+\) at')
            self.assertEqual(z.p.wait(30), 0)  # zenity: Approve answers 0
        finally:
            z.stop()

    def test_marks_outline_the_controls_and_their_ids_act(self):
        # --marks: the screenshot carries the outlines, and an ID from it is
        # a target without an elements call.
        z = question()
        try:
            rows = wait_elements(lambda r: named(r, "push button", "Approve"))
            ok = named(rows, "push button", "Approve")[0]
            seen = {}

            def click(body, fmt):
                seen["image"] = last_image(body)
                return {"tool_calls": [call("computer", action="left_click", element=ok["id"])]}
            r = Run()
            with FakeLLM([{"tool_calls": [call("computer", action="screenshot")]}, click,
                          {"text": "done"}]) as srv:
                p = agent(r, srv, "--marks", "-m", "approve")
            self.assertEqual(p.returncode, 0, p.stderr)
            w, hh, px = seen["image"]
            self.assertEqual((w, hh), (1280, 800))  # the model's image is the screen here
            x, y, bw, bh = ok["box"]
            magenta = (230, 0, 180)
            # The outline runs along the box's edges, and only there.
            for xx in (x + 3, x + bw // 2, x + bw - 4):
                self.assertEqual(px[y + bh - 1][xx], magenta, (xx, y + bh - 1))
            self.assertEqual(px[y + bh // 2][x], magenta)
            self.assertNotEqual(px[y + bh // 2][x + bw // 2], magenta)
            self.assertEqual(z.p.wait(30), 0)  # Approve pressed
        finally:
            z.stop()

    def test_qt_button_clicked_by_element(self):
        if subprocess.run(["/usr/bin/python3", "-c", "import PyQt5.QtWidgets"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("PyQt5 is not installed (python3-pyqt5)")
        # The switches deskhand sets for what it starts (agent/cli/main.c).
        env = dict(ENV, QT_ACCESSIBILITY="1", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1")
        app = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "qtform.py")], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        try:
            rows = wait_elements(lambda r: named(r, "push button", "Save"))
            self.assertTrue(named(rows, "push button", "Discard"), rows)
            self.assertTrue(named(rows, "check box", "Express"))
            self.assertTrue(any(r["role"] == "text" and r["name"] == "Customer" and
                                "editable" in r["states"] for r in rows))
            r = Run()
            with FakeLLM(self.element_turns("Save")) as srv:
                p = agent(r, srv, "-m", "save")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(app.stdout.readline(), b"Save\n")  # the app's own word
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            app.wait(10)
            app.stdout.close()

    def test_states_follow_the_app_in_one_agent(self):
        # One deskhand process reads the tree twice: the check box it
        # clicked by ID is "checked" in the second list (no stale cache).
        app = h.Proc(["gtk3-widget-factory"], env=ENV)
        try:
            wait_elements(lambda r: named(r, "check box", "checkbutton"))
            chosen = {}

            def click(body, fmt):
                text = tool_results(body, fmt)[-1][1]
                for m in re.finditer(r'^(\d+) check box "checkbutton" (\S+) ', text, re.M):
                    if m[2] == "-":
                        chosen["id"] = int(m[1])
                        break
                return {"tool_calls": [call("computer", action="left_click",
                                            element=chosen.get("id", 999))]}
            turns = [{"tool_calls": [call("computer", action="elements")]}, click,
                     {"tool_calls": [call("computer", action="elements")]}, {"text": "done"}]
            r = Run()
            with FakeLLM(turns) as srv:
                p = agent(r, srv, "-m", "tick it")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("id", chosen)
            self.assertFalse(results[1][2])
            after = re.search(r'^%d check box "checkbutton" (\S+) ' % chosen["id"],
                              results[-1][1], re.M)
            self.assertTrue(after, results[-1][1])
            self.assertIn("checked", after[1].split(","))
        finally:
            app.stop()

    def test_new_control_is_listed_in_one_agent(self):
        # One deskhand process reads the tree, has a button clicked that adds
        # a control, and reads again: the new control is there (nothing of
        # the first read's tree is reused).
        if subprocess.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("PyGObject with GTK 3 is not installed (gir1.2-gtk-3.0)")
        app = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "grow.py")], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        try:
            wait_elements(lambda r: named(r, "push button", "Add"))
            seen = {}

            def after_click(body, fmt):
                # The second read once the app says it added the control.
                ready, _, _ = select.select([app.stdout], [], [], 30)
                seen["added"] = app.stdout.readline() if ready else b""
                return {"tool_calls": [call("computer", action="elements")]}
            turns = self.element_turns("Add")[:2] + [after_click, {"text": "done"}]
            r = Run()
            with FakeLLM(turns) as srv:
                p = agent(r, srv, "-m", "add one")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(seen.get("added"), b"added 1\n")
            self.assertNotIn('"Added 1"', results[0][1])
            self.assertRegex(results[-1][1], r'\d+ push button "Added 1" \S+ \d+ \d+ \d+ \d+')
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            app.wait(10)
            app.stdout.close()

    def test_moved_element_is_not_clicked(self):
        if shutil.which("xdotool") is None:
            self.skipTest("xdotool is not installed")
        z = question()
        try:
            rows = wait_elements(lambda r: named(r, "push button", "Approve"))
            old = named(rows, "push button", "Approve")[0]["box"]

            def move():
                h.run(["xdotool", "getactivewindow", "windowmove", "20", "30"], env=ENV)
                h.wait_for(lambda: named(parse(elements().stdout), "push button", "Approve")
                           and named(parse(elements().stdout), "push button",
                                     "Approve")[0]["box"] != old, timeout=20, step=0.1)
            r = Run()
            with FakeLLM(self.element_turns("Approve", before_click=move)) as srv:
                p = agent(r, srv, "-m", "approve")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("moved", results[-1][1])
            self.assertIn("nothing was done", results[-1][1])
            self.assertIsNone(z.p.poll())  # still asking: nothing was clicked
        finally:
            z.stop()

    def renamed_case(self, new_label):
        """elements, then the app renames its button, then a click on the
        button by its old ID: refused, and the app saw no click."""
        if subprocess.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("PyGObject with GTK 3 is not installed (gir1.2-gtk-3.0)")
        folder = h.tmpdir()
        app = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "renamer.py"), folder],
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        try:
            self.assertEqual(app.stdout.readline(), b"ready\n")
            wait_elements(lambda r: named(r, "push button", "Approve"))

            def rename():
                with open(os.path.join(folder, "rename.tmp"), "w") as f:
                    f.write(new_label)
                os.rename(os.path.join(folder, "rename.tmp"), os.path.join(folder, "rename"))
                self.assertEqual(app.stdout.readline(), b"renamed\n")
                self.assertTrue(wait_elements(lambda r: named(r, "push button", new_label)))
            r = Run()
            with FakeLLM(self.element_turns("Approve", before_click=rename)) as srv:
                p = agent(r, srv, "-m", "approve")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("changed its name", results[-1][1])
            self.assertIn("nothing was done", results[-1][1])
            # The app's own account, closed by its "bye": no click between.
            open(os.path.join(folder, "quit"), "w").close()
            self.assertEqual(app.stdout.read(), b"bye\n")
            self.assertEqual(app.wait(30), 0)
        finally:
            if app.poll() is None:
                os.killpg(app.pid, signal.SIGTERM)
            app.wait(10)
            app.stdout.close()
            shutil.rmtree(folder, ignore_errors=True)

    def test_renamed_element_is_not_clicked(self):
        # Same size: the label's width does not change ("Approve" -> "Deletes").
        self.renamed_case("Deletes")

    def test_renamed_and_resized_element_is_not_clicked(self):
        # A longer name makes the button wider: still the same control,
        # renamed, not "vanished".
        self.renamed_case("Delete all the records of this customer")

    def test_vendor_toolsets_get_elements_and_click_element(self):
        # Anthropic's computer toolset (the strict fake) and OpenAI's
        # Responses computer tool cannot take new actions: elements and
        # click_element ride beside them as functions, through the same gate.
        def listing_of(body, fmt):
            if fmt == "responses":
                outs = [it for it in body["input"] if it.get("type") == "function_call_output"]
                return outs[-1]["output"] if outs else ""
            return tool_results(body, "anthropic")[-1][1]

        def click(fmt):
            def turn(body, fmt_=None):
                m = re.search(r'^(\d+) push button "Approve"', listing_of(body, fmt), re.M)
                args = {"element": int(m[1]) if m else 999}
                if fmt == "responses":
                    return {"tool_calls": [dict(call("click_element", **args), id="call_c")]}
                return {"blocks": [{"name": "click_element", "input": args}]}
            return turn
        runs = {
            "anthropic": ([{"blocks": [{"name": "elements", "input": {}}]}, click("anthropic"),
                           {"blocks": [{"text": "done"}]}],
                          ("--model", "claude-sonnet-5-5"), {"type": "computer_toolset_20260801"}),
            "responses": ([{"tool_calls": [dict(call("elements"), id="call_e")]},
                           click("responses"),
                           {"text": "done"}], ("--api", "responses"), {"type": "computer"}),
        }
        for fmt, (turns, flags, native) in runs.items():
            with self.subTest(fmt=fmt):
                z = question()
                try:
                    wait_elements(lambda r: named(r, "push button", "Approve"))
                    r = Run()
                    with FakeLLM(turns) as srv:
                        p = agent(r, srv, *flags, "-m", "approve", fmt=fmt)
                        tools = srv.requests[0]["body"]["tools"]
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn(native, tools)
                    names = [t.get("name") for t in tools]
                    self.assertIn("elements", names)
                    self.assertIn("click_element", names)
                    out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
                    self.assertRegex(out, r'left_click push button "Approve" \(element \d+\) at')
                    self.assertEqual(z.p.wait(30), 0)  # zenity: Approve answers 0
                finally:
                    z.stop()

    def test_click_element_needs_an_element_and_a_pointer_action(self):
        # Never a click wherever the pointer is, never another kind of action.
        z = question()
        try:
            wait_elements(lambda r: named(r, "push button", "Approve"))
            turns = [{"tool_calls": [call("elements")]},
                     {"tool_calls": [call("click_element")]},
                     {"tool_calls": [call("click_element", element=1, action="type")]},
                     {"text": "done"}]
            r = Run()
            with FakeLLM(turns) as srv:
                p = agent(r, srv, "-m", "approve")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn('needs "element"', results[1][1])
            self.assertIn('"action" must be left_click', results[2][1])
            self.assertIsNone(z.p.poll())  # still asking: nothing was clicked
        finally:
            z.stop()

    def test_listing_in_the_models_coordinates(self):
        # The model sees the screen at half size: the list answers in its
        # image's pixels, and the click still lands on the control.
        z = question()
        try:
            rows = wait_elements(lambda r: named(r, "push button", "Approve"))
            x, y, w, hh = named(rows, "push button", "Approve")[0]["box"]
            r = Run()
            with FakeLLM(self.element_turns("Approve")) as srv:
                p = agent(r, srv, "--screen-max", "640x400", "-m", "ok")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            m = re.search(r'^\d+ push button "Approve" \S+ (\d+) (\d+) (\d+) (\d+)$',
                          results[0][1], re.M)
            self.assertTrue(m, results[0][1])
            # The model pixels the box covers: from its first to its last.
            self.assertEqual([int(v) for v in m.groups()],
                             [x // 2, y // 2, (x + w - 1) // 2 - x // 2 + 1,
                              (y + hh - 1) // 2 - y // 2 + 1])
            out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
            self.assertIn('push button "Approve" (element', out)
            self.assertIn("(screen %d,%d)" % (x + w // 2, y + hh // 2), out)
            self.assertEqual(z.p.wait(30), 0)
        finally:
            z.stop()

    def test_vanished_element_is_not_clicked(self):
        z = question()
        try:
            wait_elements(lambda r: named(r, "push button", "Reject"))

            def close():
                z.stop()
            r = Run()
            with FakeLLM(self.element_turns("Reject", before_click=close)) as srv:
                p = agent(r, srv, "-m", "reject")
                results = tool_results(srv.requests[-1]["body"], "openai")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("vanished", results[-1][1])
            self.assertIn("nothing was done", results[-1][1])
        finally:
            z.stop()


if __name__ == "__main__":
    h.main()
