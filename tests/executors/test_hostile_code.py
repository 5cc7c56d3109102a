"""Hostile code against the sandbox (issue 10), each attack performed for
real: a script planted where deskhand looks for interpreters (class 1),
deskhand's command line and environment read from /proc/1 (class 3), a
module planted for the code that is granted the display (class 6), the
desktop's other doors — the X server on TCP, the session bus on a path
socket, on TCP or named in ~/.dbus, the X authority file (class 10) — and
the system's directories changed by code of a deskhand run as root."""
import os
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import SYSTEM_PATH, Listener, deskhand_exec, env_with, have, run_blocks  # noqa: E402

SECRET = "sk-hostile-0123456789"


def planted_interpreter(folder, name, log, real):
    """A '#!' script standing for `name` that records, each time it runs,
    whether it runs confined (its seccomp mode) and what environment it
    got, then becomes the real interpreter."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                "echo \"ran $(grep '^Seccomp:' /proc/self/status | tr -d '\\t ')"
                " key=$OPENAI_API_KEY display=$DISPLAY\" >> %s\n"
                "exec %s \"$@\"\n" % (log, real))
    os.chmod(path, 0o755)
    return path


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


class InterpreterLookup(unittest.TestCase):
    """Class 1: nothing found on PATH runs outside the sandbox."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="deskhand-plant-")
        self.log = os.path.join(self.dir, "log")
        self.bin = os.path.join(self.dir, "bin")
        os.makedirs(self.bin)

    def test_a_planted_script_runs_only_inside(self):
        planted_interpreter(self.bin, "python3", self.log, "/usr/bin/python3")
        env = env_with(PATH=self.bin + ":" + SYSTEM_PATH, OPENAI_API_KEY=SECRET)
        r = deskhand_exec("python", "print('hi')", env=env)
        self.assertEqual(r.stdout, b"hi\n", r.stderr)
        runs = read_lines(self.log)
        self.assertTrue(runs, "the script stood for python3 and ran")
        for line in runs:
            # Seccomp:2 is the filter; the key and the display are scrubbed.
            self.assertEqual(line, "ran Seccomp:2 key= display=", runs)

    def test_interpreters_are_resolved_before_any_code_runs(self):
        # The first block plants python3 in a PATH folder ahead of the real
        # one; the python session starts only after it. It must be the
        # interpreter deskhand found before any code ran.
        env = env_with(PATH=self.bin + ":" + SYSTEM_PATH)
        plant = ("printf '#!/bin/sh\\necho planted >> %s\\nexec /usr/bin/python3 \"$@\"\\n'"
                 " > %s/python3 && chmod +x %s/python3 && echo planted-it"
                 % (self.log, self.bin, self.bin))
        res = run_blocks(["shell:" + plant, "python:import sys; print(sys.executable)"],
                         env=env)
        self.assertEqual(res[0]["output"], "planted-it\n")
        self.assertEqual(res[1]["output"], "/usr/bin/python3\n")
        self.assertEqual(read_lines(self.log), [])

    def test_the_display_gets_only_a_trusted_interpreter(self):
        planted_interpreter(self.bin, "python3", self.log, "/usr/bin/python3")
        x = h.Xvfb(320, 240)
        try:
            env = x.env(PATH=self.bin + ":" + SYSTEM_PATH)
            res = run_blocks(["python+display:import sys, os; print(sys.executable); "
                              "print(os.environ['PATH'].split(':')[0])"], env=env)
        finally:
            x.stop()
        exe, first = res[0]["output"].split()
        self.assertEqual(exe, "/usr/bin/python3")
        self.assertNotEqual(first, self.bin, "the display's PATH holds only trusted folders")
        self.assertEqual(read_lines(self.log), [])


class CommandLine(unittest.TestCase):
    """Class 3: the session's first process is a copy of deskhand; its
    command line and environment are not the code's to read."""

    def test_proc_1_shows_no_argument_and_no_environment(self):
        work = os.path.join(tempfile.mkdtemp(prefix="deskhand-cmd-"), SECRET)
        os.makedirs(work)
        code = ("import sys\n"
                "print(repr(open('/proc/1/cmdline', 'rb').read().strip(b'\\0')))\n"
                "try:\n"
                "    open('/proc/1/environ', 'rb').read(); print('environ readable')\n"
                "except OSError as e:\n"
                "    print('environ', e.strerror)\n")
        for profile in ("standard", "strict"):
            r = deskhand_exec("python", code, "--sandbox", profile, "--workspace", work,
                              env=env_with(OPENAI_API_KEY=SECRET))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn(SECRET.encode(), r.stdout, profile)
            self.assertEqual(r.stdout, b"b''\nenviron Permission denied\n", profile)


    def test_deskhand_exec_hides_deskhands_directories(self):
        home = tempfile.mkdtemp(prefix="deskhand-home-")
        os.makedirs(os.path.join(home, ".config", "deskhand"))
        with open(os.path.join(home, ".config", "deskhand", "config.json"), "w") as f:
            f.write('{"api_key": "%s"}' % SECRET)
        env = env_with(HOME=home)
        env.pop("XDG_CONFIG_HOME", None)
        r = deskhand_exec("shell", "ls -A ~/.config/deskhand; cat ~/.config/deskhand/*; "
                          "echo end", env=env)
        self.assertEqual(r.stdout, b"end\n", r.stderr)


class DisplayIsolation(unittest.TestCase):
    """Class 6: code granted the display imports nothing planted in the
    workspace or the user's folders unless the shown code asks for it."""

    @classmethod
    def setUpClass(cls):
        cls.x = h.Xvfb(320, 240)

    @classmethod
    def tearDownClass(cls):
        cls.x.stop()

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="deskhand-iso-")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        self.marker = os.path.join(self.dir, "imported")

    def plant(self, name, text):
        with open(os.path.join(self.work, name), "w") as f:
            f.write(text)

    def test_python_does_not_import_a_planted_module(self):
        # The driver itself imports ast: a planted ast.py in the workspace
        # would run with the display before the approved code.
        self.plant("ast.py", "open(%r, 'w').write('ast')\nraise SystemExit(0)\n" % self.marker)
        self.plant("helper.py", "open(%r, 'a').write('helper')\nX = 5\n" % self.marker)
        res = run_blocks(["python+display:print(1)"], "--workspace", self.work,
                         env=self.x.env())
        self.assertEqual(res[0]["output"], "1\n")
        self.assertFalse(os.path.exists(self.marker), "the planted ast.py ran")
        # Asked for explicitly, the workspace's module is the code's choice.
        res = run_blocks(["python+display:import sys; sys.path.insert(0, '.'); "
                          "import helper; print(helper.X)"], "--workspace", self.work,
                         env=self.x.env())
        self.assertEqual(res[0]["output"], "5\n")

    def test_shell_finds_only_the_systems_programs(self):
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir)
        fake = os.path.join(bin_dir, "ls")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho planted > %s\n" % self.marker)
        os.chmod(fake, 0o755)
        env = self.x.env(PATH=bin_dir + ":" + SYSTEM_PATH)
        res = run_blocks(["shell+display:ls / > /dev/null; echo done"],
                         "--workspace", self.work, env=env)
        self.assertEqual(res[0]["output"], "done\n")
        self.assertFalse(os.path.exists(self.marker))

    @unittest.skipUnless(have("Rscript"), "R is not installed")
    def test_r_reads_no_planted_profile(self):
        self.plant(".Rprofile", "cat('planted', file=%r)\n" % self.marker)
        res = run_blocks(["r+display:cat(1)"], "--workspace", self.work, env=self.x.env())
        self.assertEqual(res[0]["output"], "1")
        self.assertFalse(os.path.exists(self.marker))


def connect_code(kind, addr):
    return ("import socket\n"
            "s = socket.socket(socket.%s)\n"
            "try:\n"
            "    s.connect(%r); print('open')\n"
            "except OSError as e:\n"
            "    print('refused')\n" % (kind, addr))


class OtherDoors(unittest.TestCase):
    """Class 10: X on TCP and the session bus are out of reach without the
    grant, whatever their address."""

    def test_x_over_tcp(self):
        x = h.Xvfb(320, 240, extra_args=("-listen", "tcp"))
        try:
            port = 6000 + x.number
            probe = socket.create_connection(("127.0.0.1", port), timeout=10)
            probe.close()           # the server does listen on TCP
            code = connect_code("AF_INET", ("127.0.0.1", port))
            env = x.env()
            self.assertEqual(deskhand_exec("python", code, env=env).stdout, b"refused\n")
            self.assertEqual(deskhand_exec("python", code, "--sandbox", "strict",
                                           env=env).stdout, b"refused\n")
            self.assertEqual(deskhand_exec("python", code, "--display", env=env).stdout,
                             b"open\n")
        finally:
            x.stop()

    def test_other_tcp_ports_stay_reachable(self):
        srv = Listener()
        code = connect_code("AF_INET", ("127.0.0.1", srv.port))
        self.assertEqual(deskhand_exec("python", code).stdout, b"open\n")
        srv.sock.close()

    def test_session_bus_on_a_path_socket(self):
        d = tempfile.mkdtemp(prefix="deskhand-bus-")
        path = os.path.join(d, "bus")
        bus = h.Proc(["dbus-daemon", "--session", "--nofork", "--address=unix:path=" + path],
                     env=env_with(HOME=d))
        try:
            self.assertTrue(h.wait_for(lambda: os.path.exists(path), 30),
                            "dbus-daemon did not start")
            env = env_with(DBUS_SESSION_BUS_ADDRESS="unix:path=%s,guid=0" % path)
            code = connect_code("AF_UNIX", path)
            self.assertEqual(deskhand_exec("python", code, env=env).stdout, b"refused\n")
            self.assertEqual(deskhand_exec("python", code, "--sandbox", "strict",
                                           env=env).stdout, b"refused\n")
            self.assertEqual(deskhand_exec("python", code, "--sandbox", "off",
                                           env=env).stdout, b"open\n")
        finally:
            bus.stop()

    def test_session_bus_named_in_dbus_files_and_on_tcp(self):
        home = tempfile.mkdtemp(prefix="deskhand-home-")
        path = os.path.join(home, "other-bus")
        unix = socket.socket(socket.AF_UNIX)
        unix.bind(path)
        unix.listen(4)
        Listener(unix)
        tcp = Listener()
        port = tcp.port
        os.makedirs(os.path.join(home, ".dbus", "session-bus"))
        with open(os.path.join(home, ".dbus", "session-bus", "0123-0"), "w") as f:
            f.write("DBUS_SESSION_BUS_ADDRESS='unix:path=%s,guid=1'\n" % path)
        env = env_with(HOME=home,
                       DBUS_SESSION_BUS_ADDRESS="tcp:host=127.0.0.1,port=%d" % port)
        self.assertEqual(deskhand_exec("python", connect_code("AF_UNIX", path),
                                       env=env).stdout, b"refused\n")
        self.assertEqual(deskhand_exec("python", connect_code("AF_INET", ("127.0.0.1", port)),
                                       env=env).stdout, b"refused\n")
        unix.close()
        tcp.sock.close()

    def test_accessibility_bus_without_a_runtime_directory(self):
        # With no XDG_RUNTIME_DIR, at-spi puts its bus in ~/.cache/at-spi;
        # through it code could read and drive every application.
        home = tempfile.mkdtemp(prefix="deskhand-home-")
        os.makedirs(os.path.join(home, ".cache", "at-spi"))
        path = os.path.join(home, ".cache", "at-spi", "bus_0")
        bus = socket.socket(socket.AF_UNIX)
        bus.bind(path)
        bus.listen(4)
        Listener(bus)
        other = os.path.join(home, "a11y-elsewhere")
        bus2 = socket.socket(socket.AF_UNIX)
        bus2.bind(other)
        bus2.listen(4)
        Listener(bus2)
        env = env_with(HOME=home, AT_SPI_BUS_ADDRESS="unix:path=" + other)
        env.pop("XDG_RUNTIME_DIR", None)
        for target in (path, other):
            self.assertEqual(deskhand_exec("python", connect_code("AF_UNIX", target),
                                           env=env).stdout, b"refused\n", target)
            self.assertEqual(deskhand_exec("python", connect_code("AF_UNIX", target),
                                           "--sandbox", "off", env=env).stdout,
                             b"open\n", target)
        bus.close()
        bus2.close()

    def test_accessibility_bus_named_on_the_root_window(self):
        # at-spi-bus-launcher publishes its bus in the AT_SPI_BUS property of
        # the root window; reading it takes a connection to the display,
        # which code without the grant cannot open, whatever display it names.
        if not have("xprop"):
            self.skipTest("xprop is not installed")
        x = h.Xvfb(320, 240)
        try:
            addr = "unix:path=/nonexistent/a11y-bus,guid=0"
            r = h.run(["xprop", "-root", "-f", "AT_SPI_BUS", "8s", "-set", "AT_SPI_BUS", addr],
                      env=x.env())
            self.assertEqual(r.returncode, 0, r.stderr)
            code = ("import subprocess\n"
                    "r = subprocess.run(['xprop', '-display', %r, '-root', 'AT_SPI_BUS'],\n"
                    "                   capture_output=True, text=True)\n"
                    "print('read' if %r in r.stdout else 'unreadable')\n" % (x.display, addr))
            env = x.env()
            self.assertEqual(deskhand_exec("python", code, env=env).stdout, b"unreadable\n")
            self.assertEqual(deskhand_exec("python", code, "--sandbox", "strict",
                                           env=env).stdout, b"unreadable\n")
            self.assertEqual(deskhand_exec("python", code, "--sandbox", "off",
                                           env=env).stdout, b"read\n")
        finally:
            x.stop()

    def test_toolkit_accessibility_switches_only_outside_the_sandbox(self):
        # deskhand asks the programs it starts to expose their tree; code
        # in the sandbox gets neither the switches nor the bus address.
        code = ("import os\n"
                "print(sorted(k for k in os.environ if 'ACCESSIBILITY' in k or 'AT_SPI' in k))\n")
        env = env_with(AT_SPI_BUS_ADDRESS="unix:path=/nonexistent/bus")
        for k in ("QT_ACCESSIBILITY", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "GNOME_ACCESSIBILITY"):
            env.pop(k, None)
        self.assertEqual(deskhand_exec("python", code, env=env).stdout, b"[]\n")
        self.assertEqual(deskhand_exec("python", code, "--sandbox", "strict", env=env).stdout,
                         b"[]\n")
        self.assertEqual(deskhand_exec("python", code, "--sandbox", "off", env=env).stdout,
                         b"['AT_SPI_BUS_ADDRESS', 'GNOME_ACCESSIBILITY', 'QT_ACCESSIBILITY', "
                         b"'QT_LINUX_ACCESSIBILITY_ALWAYS_ON']\n")

    def test_x_authority_file_is_hidden(self):
        home = tempfile.mkdtemp(prefix="deskhand-home-")
        cookie = os.path.join(home, ".Xauthority")
        with open(cookie, "w") as f:
            f.write(SECRET)
        code = ("try:\n"
                "    print(repr(open(%r).read()))\n"
                "except OSError as e:\n"
                "    print(e.strerror)\n" % cookie)
        r = deskhand_exec("python", code, env=env_with(HOME=home))
        self.assertEqual(r.stdout, b"Permission denied\n", r.stderr)


class Doctor(unittest.TestCase):
    def test_doctor_reports_the_doors_it_closes(self):
        home = tempfile.mkdtemp(prefix="deskhand-home-")
        for d in (".config/deskhand", ".local/share/deskhand"):
            os.makedirs(os.path.join(home, d))
        bus = os.path.join(home, "bus")
        socket.socket(socket.AF_UNIX).bind(bus)
        env = env_with(HOME=home, DBUS_SESSION_BUS_ADDRESS="unix:path=" + bus)
        env.pop("XDG_CONFIG_HOME", None)
        env.pop("XDG_DATA_HOME", None)
        r = h.run([h.binary(), "doctor"], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        self.assertIn("X over TCP", out)
        self.assertIn("6000-6063", out)
        for path in (bus, home + "/.config/deskhand", home + "/.local/share/deskhand"):
            self.assertRegex(out, r"hidden +%s\n" % path)
        self.assertRegex(out, r"read-only +/usr")


class SystemFiles(unittest.TestCase):
    """Standard promises code cannot change the system; as root the usual
    permissions do not stop it, the read-only system directories do."""

    def test_system_directories_are_read_only(self):
        target = "/usr/local/bin/deskhand-planted-%d" % os.getpid()
        code = ("import errno\n"
                "try:\n"
                "    open(%r, 'w').write('x'); print('written')\n"
                "except OSError as e:\n"
                "    print(errno.errorcode[e.errno])\n" % target)
        try:
            r = deskhand_exec("python", code)
            self.assertIn(r.stdout, (b"EROFS\n", b"EACCES\n"), r.stderr)
            self.assertFalse(os.path.exists(target))
        finally:
            if os.path.exists(target):
                os.unlink(target)


if __name__ == "__main__":
    h.main()
