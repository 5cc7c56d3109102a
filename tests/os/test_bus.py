"""The session bus deskhand starts when the display has none
(agent/session/bus.c, os/bus.c): on a private Xvfb with openbox and no bus
at all (no DBUS_SESSION_BUS_ADDRESS, no XDG_RUNTIME_DIR, no AT_SPI_BUS),
the agent, `deskhand elements` and `doctor` start a private dbus-daemon,
say so once, publish the accessibility bus on the root window so that an
application started afterwards registers its tree, keep both buses away
from sandboxed code, and end the daemon when they exit. With a bus that
answers, nothing is started."""
import os
import re
import shutil
import signal
import stat
import subprocess
import unittest

import harness as h
from agentlib import FakeLLM, Run, call, tool_results

# The Qt form of the accessibility tests (tests/vision) is the application here too.
QTFORM = os.path.join(h.SRCDIR, "tests", "vision", "qtform.py")
STARTED = "started a private one until deskhand exits"
PROBE = """import os, socket
def probe(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        return "open"
    except OSError:
        return "refused"
    finally:
        s.close()
print(probe(%r), probe(%r), os.environ.get("DBUS_SESSION_BUS_ADDRESS", "-"))
"""


def setUpModule():
    global X, WM, DIR, ENV
    for tool in ("openbox", "dbus-daemon", "zenity", "xprop"):
        if shutil.which(tool) is None:
            raise unittest.SkipTest("%s is not installed (.ci/install-deps)" % tool)
    X = h.Xvfb(1024, 700)
    DIR = h.tmpdir()
    ENV = X.env(HOME=DIR, XDG_CONFIG_HOME=DIR, GTK_THEME="Adwaita", LANG="C.UTF-8")
    for k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "AT_SPI_BUS_ADDRESS",
              "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE"):
        ENV.pop(k, None)
    flag = os.path.join(DIR, "ready")
    WM = h.Proc(["openbox", "--sm-disable", "--startup", "touch " + flag], env=ENV)
    if not h.wait_for(lambda: os.path.exists(flag), timeout=30):
        raise RuntimeError("openbox did not start")


def tearDownModule():
    WM.stop()
    X.stop()
    shutil.rmtree(DIR, ignore_errors=True)


def our_daemons():
    """{pid: socket path} of the dbus-daemons deskhand started for this
    display (its private directory is on the command line, the display
    in the environment)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if not argv or os.path.basename(argv[0]) != b"dbus-daemon":
            continue
        addr = [a for a in argv if a.startswith(b"--address=unix:path=")]
        if addr and b"/deskhand-bus-" in addr[0] and \
                ("DISPLAY=" + X.display).encode() in env:
            found[int(pid)] = addr[0].split(b"=", 2)[2].decode()
    return found


def alive(pid):
    """A process that runs (not gone, not a zombie waiting for a parent)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def root_bus():
    """The AT_SPI_BUS address on the root window, or None."""
    p = h.run(["xprop", "-root", "AT_SPI_BUS"], env=ENV)
    m = re.search(rb'= "([^"]*)"', p.stdout)
    return m[1].decode() if m else None


def a11y_socket(addr):
    m = re.search(r"unix:path=([^,;]+)", addr or "")
    return m[1] if m else None


def agent_env(r, **extra):
    """A run's environment on this display, with no bus but `extra`'s."""
    env = r.env(None, DISPLAY=X.display, PATH=ENV["PATH"])
    for k in ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "AT_SPI_BUS_ADDRESS"):
        env.pop(k, None)
    env.update(extra)
    return env


def elements(env=None, *args):
    return h.run([h.binary(), "elements"] + list(args), env=env or ENV, timeout=60)


def approve_listed():
    p = elements()
    return p.returncode == 0 and re.search(rb'^\d+ push button "Approve" ', p.stdout, re.M)


class NoBus(unittest.TestCase):
    def setUp(self):
        self.assertEqual(our_daemons(), {})
        self.assertIsNone(root_bus())

    def tearDown(self):
        # Nothing stays behind: no daemon, no address on the root window
        # (at-spi-bus-launcher removes it when its session bus goes).
        self.assertEqual(our_daemons(), {})
        self.assertTrue(h.wait_for(lambda: root_bus() is None, timeout=30), root_bus())

    def agent_run(self, profile, turns):
        r = Run()
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "--os", "--sandbox", profile, "-m", "go",
                      env=agent_env(r), input=b"y\n")
            results = tool_results(srv.requests[-1]["body"], "openai")
        self.assertEqual(p.returncode, 0, p.stderr)
        return p, results

    def test_the_agent_starts_a_bus_an_app_started_later_registers_on(self):
        seen = {}
        z = []

        def while_running(body, fmt):
            daemons = our_daemons()
            self.assertEqual(len(daemons), 1, daemons)
            (pid, path), = daemons.items()
            seen.update(pid=pid, path=path, a11y=root_bus())
            st = os.stat(os.path.dirname(path))
            seen["mode"] = stat.S_IMODE(st.st_mode)
            # Started by someone else, with no bus in its environment:
            # zenity finds the accessibility bus on the root window.
            z.append(h.Proc(["zenity", "--question", "--title", "Order", "--text", "Send?",
                             "--ok-label", "Approve"], env=ENV))
            seen["listed"] = h.wait_for(approve_listed, timeout=30, step=0.2)
            code = PROBE % (path, a11y_socket(seen["a11y"]) or "/nonexistent")
            return {"tool_calls": [call("execute", language="python", code=code)]}
        try:
            p, results = self.agent_run("standard", [while_running, {"text": "done"}])
        finally:
            for proc in z:
                proc.stop()
        out = (p.stdout + p.stderr).decode(errors="replace")
        self.assertEqual(out.count(STARTED), 1, out)       # said once
        self.assertIn("expose no elements until restarted", out)
        self.assertEqual(seen["mode"], 0o700)
        self.assertTrue(a11y_socket(seen["a11y"]), seen)    # published on the root window
        self.assertTrue(seen["listed"], "zenity's Approve was not listed")
        # Sandboxed code reaches neither bus and is not told the address.
        self.assertEqual(results[0][1].split()[:3], ["refused", "refused", "-"], results)
        # deskhand ended its daemon and removed the directory.
        self.assertFalse(alive(seen["pid"]))
        self.assertFalse(os.path.exists(os.path.dirname(seen["path"])))

    def test_strict_code_cannot_reach_it_unsandboxed_code_is_given_it(self):
        for profile, want in (("strict", ["refused", "refused", "-"]),
                              ("off", ["open", "open", "unix:path="])):
            seen = {}

            def probe(body, fmt):
                (pid, path), = our_daemons().items()
                seen.update(pid=pid, path=path)
                a11y = a11y_socket(root_bus()) or "/nonexistent"
                return {"tool_calls": [call("execute", language="python",
                                            code=PROBE % (path, a11y))]}
            p, results = self.agent_run(profile, [probe, {"text": "done"}])
            got = results[0][1].split()[:3]
            self.assertEqual(got[:2], want[:2], (profile, results))
            self.assertTrue(got[2].startswith(want[2]), (profile, results))
            if profile == "off":
                self.assertIn(seen["path"], got[2])
            self.assertFalse(alive(seen["pid"]))
            self.assertTrue(h.wait_for(lambda: root_bus() is None, timeout=30))

    def test_elements_and_doctor_say_so_and_leave_nothing(self):
        for cmd in ("elements", "doctor"):
            p = h.run([h.binary(), cmd], env=ENV, timeout=120)
            out = (p.stdout + p.stderr).decode(errors="replace")
            self.assertEqual(out.count(STARTED), 1, out)
            m = re.search(r"unix:path=(/[^,)]+/deskhand-bus-\w+)/bus", out)
            self.assertTrue(m, out)
            self.assertFalse(os.path.exists(m[1]))
            if cmd == "doctor":
                self.assertRegex(out, r"(?m)^session bus +no session D-Bus bus for :\d+: started")
                self.assertRegex(out, r"(?m)^accessibility bus +reachable")
            self.assertEqual(our_daemons(), {})
            self.assertTrue(h.wait_for(lambda: root_bus() is None, timeout=30))

    def test_without_dbus_daemon_the_absence_is_a_note(self):
        empty = os.path.join(DIR, "empty-path")
        os.makedirs(empty, exist_ok=True)
        p = elements(dict(ENV, PATH=empty))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, b"")
        self.assertIn(b"none could be started: dbus-daemon is not installed", p.stderr)
        self.assertIn(b"no accessibility bus", p.stderr)

    def test_a_stale_address_counts_as_none(self):
        # A bus that ended leaves its address in the environment.
        gone = os.path.join(DIR, "gone-bus")
        p = elements(dict(ENV, DBUS_SESSION_BUS_ADDRESS="unix:path=%s,guid=0" % gone))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(STARTED.encode(), p.stderr)


class PrivateBus:
    """A session bus started by the test, on this display, ended by pid."""

    def __init__(self):
        self.p = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV,
                                  start_new_session=True)
        self.env = dict(ENV, DBUS_SESSION_BUS_ADDRESS=self.p.stdout.readline().decode().strip())

    def stop(self):
        os.killpg(self.p.pid, signal.SIGTERM)
        self.p.wait(10)
        self.p.stdout.close()


def qt_form(env):
    return subprocess.Popen(["/usr/bin/python3", QTFORM], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def listed(env, name):
    p = elements(env)
    return p.returncode == 0 and re.search(rb'^\d+ push button "%s" ' % name.encode(),
                                           p.stdout, re.M)


# What deskhand sets for the programs it starts (agent/cli/main.c).
SWITCHES = {"QT_ACCESSIBILITY": "1", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
            "GNOME_ACCESSIBILITY": "1"}


class QtAfterGtk(unittest.TestCase):
    """Qt 5 decides once, as it starts, how to reach the accessibility bus
    (see docs/tools.md, elements): these are the orders of events
    that decide whether it registers."""

    def setUp(self):
        if subprocess.run(["/usr/bin/python3", "-c", "import PyQt5.QtWidgets"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("PyQt5 is not installed (python3-pyqt5)")
        self.bus = PrivateBus()
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
            p.wait(10)
        self.bus.stop()
        self.assertTrue(h.wait_for(lambda: root_bus() is None, timeout=30), root_bus())

    def start(self, p):
        self.procs.append(p)
        return p

    def test_qt_registers_after_a_gtk_app_exited(self):
        env = dict(self.bus.env, **SWITCHES)
        z = self.start(subprocess.Popen(["zenity", "--question", "--ok-label", "Approve"],
                                        env=env, stderr=subprocess.DEVNULL,
                                        start_new_session=True))
        self.assertTrue(h.wait_for(lambda: listed(env, "Approve"), timeout=30, step=0.2))
        os.killpg(z.pid, signal.SIGTERM)
        z.wait(10)
        # With deskhand's switches and without them: the root window names
        # the accessibility bus, and Qt takes it from there.
        for qenv in (env, self.bus.env):
            q = self.start(qt_form(qenv))
            self.assertTrue(h.wait_for(lambda: listed(env, "Save"), timeout=30, step=0.2),
                            elements(env).stderr)
            os.killpg(q.pid, signal.SIGTERM)
            q.wait(10)
            self.assertTrue(h.wait_for(lambda: not listed(env, "Save"), timeout=30, step=0.2))

    def test_qt_started_before_the_accessibility_bus_needs_the_switch(self):
        # No launcher yet, no address on the root window: Qt waits for
        # org.a11y.Bus and, when deskhand's read brings it up, registers
        # because QT_LINUX_ACCESSIBILITY_ALWAYS_ON says so (org.a11y.Status
        # IsEnabled is false without a screen reader).
        env = dict(self.bus.env, **SWITCHES)
        self.start(qt_form(env))

        def mapped():
            out = h.run([h.binary(), "windows"], env=env).stdout.decode()
            return "qtform" in out
        self.assertTrue(h.wait_for(mapped, timeout=30, step=0.1))
        self.assertIsNone(root_bus())
        self.assertTrue(h.wait_for(lambda: listed(env, "Save"), timeout=30, step=0.2))

    def test_a_dead_root_address_is_replaced(self):
        # An at-spi-bus-launcher that was killed leaves its address on the
        # root window: libatspi and Qt take it over the session bus's.
        dead = "unix:path=%s,guid=0" % os.path.join(DIR, "dead-a11y-bus")
        p = h.run(["xprop", "-root", "-f", "AT_SPI_BUS", "8s", "-set", "AT_SPI_BUS", dead],
                  env=ENV)
        self.assertEqual(p.returncode, 0, p.stderr)
        env = dict(self.bus.env, **SWITCHES)
        p = elements(env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(b"unreachable", p.stderr)
        # The launcher, brought up through the session bus, published its own.
        fresh = root_bus()
        self.assertNotEqual(fresh, dead)
        self.assertTrue(os.path.exists(a11y_socket(fresh)), fresh)
        self.start(qt_form(env))
        self.assertTrue(h.wait_for(lambda: listed(env, "Save"), timeout=30, step=0.2))


class WithBus(unittest.TestCase):
    def test_an_answering_bus_is_used_and_nothing_started(self):
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV,
                               start_new_session=True)
        try:
            addr = bus.stdout.readline().decode().strip()
            env = dict(ENV, DBUS_SESSION_BUS_ADDRESS=addr)
            p = h.run([h.binary(), "doctor"], env=env, timeout=120)
            self.assertNotRegex(p.stdout.decode(), r"(?m)^session bus")
            self.assertNotIn(STARTED.encode(), p.stdout + p.stderr)
            self.assertRegex(p.stdout.decode(), r"(?m)^accessibility bus +reachable")
            p = elements(env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn(STARTED.encode(), p.stderr)
            seen = {}

            def none_started(body, fmt):
                seen["daemons"] = our_daemons()
                return {"text": "done"}
            r = Run()
            with FakeLLM([none_started]) as srv:
                p = r.run(srv, "openai", "-y", "--os", "-m", "go",
                          env=agent_env(r, DBUS_SESSION_BUS_ADDRESS=addr))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(seen["daemons"], {})
            self.assertNotIn(STARTED.encode(), p.stdout + p.stderr)
        finally:
            os.killpg(bus.pid, signal.SIGTERM)
            bus.wait(10)
            bus.stdout.close()


if __name__ == "__main__":
    h.main()
