"""Programs with a terminal inside the sandbox: xterm runs its command
under standard and strict with the display granted (as root, whose code is
uid 0 without capabilities, and as an ordinary user), a GUI program started
in the background by one block is still on screen in the next block — even
after a later block was interrupted — and is gone once the session ends,
ptys work (python's pty.openpty with a child reading the terminal), and the
sandbox's terminals are its own: a terminal of the host cannot be opened by
its name."""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import (SYSTEM_PATH, as_nobody, deskhand_exec, env_with,  # noqa: E402
                     run_blocks, shared_dir)

# Waits (bounded) until a top-level window with this title is mapped.
SHELL_WAIT_MAPPED = ("for i in $(seq 300); do\n"
                     "  xwininfo -root -tree | grep -q '\"%s\"' && break; sleep 0.1\n"
                     "done\n")
PY_MAPPED = ("import subprocess, time\n"
             "def mapped(title):\n"
             "    tree = subprocess.run(['xwininfo', '-root', '-tree'], capture_output=True,\n"
             "                          text=True).stdout\n"
             "    return '\"%s\"' % title in tree\n"
             "def wait_mapped(title):\n"
             "    deadline = time.monotonic() + 30\n"
             "    while not mapped(title) and time.monotonic() < deadline:\n"
             "        time.sleep(0.1)\n"
             "    return mapped(title)\n")


def stdout(block):
    """What a block wrote on stdout (xterm, as root, warns on stderr that it
    cannot give its terminal to the tty group)."""
    return b"".join(data for stream, data in block["chunks"] if stream == 1).decode()


def window_titles(x):
    r = h.run(["xwininfo", "-root", "-tree"], env=x.env(), timeout=30)
    return r.stdout.decode(errors="replace")


@unittest.skipUnless(shutil.which("xterm") and shutil.which("xwininfo"),
                     "xterm and xwininfo are needed")
class Xterm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.x = h.Xvfb(800, 600)

    @classmethod
    def tearDownClass(cls):
        cls.x.stop()

    def runs_its_command(self, *opts):
        ws = h.tmpdir()
        res = run_blocks(["shell+display:xterm -e sh -c 'echo ok > file'; echo rc=$?; "
                          "cat file"], "--workspace", ws, *opts, env=self.x.env())
        self.assertEqual(res[0]["status"], 0, res[0])
        self.assertEqual(stdout(res[0]), "rc=0\nok\n", res[0])
        with open(os.path.join(ws, "file")) as f:
            self.assertEqual(f.read(), "ok\n")

    def test_xterm_runs_its_command_under_standard(self):
        self.runs_its_command()

    def test_xterm_runs_its_command_under_strict(self):
        self.runs_its_command("--sandbox", "strict")

    @unittest.skipUnless(os.geteuid() == 0, "the run as another uid needs root")
    def test_xterm_runs_its_command_as_an_ordinary_user(self):
        ws = shared_dir()
        env = env_with(PATH=SYSTEM_PATH, HOME=ws, DISPLAY=self.x.display)
        env.pop("XAUTHORITY", None)
        r = deskhand_exec("shell", "xterm -e sh -c 'id -u > file'; cat file", "--display",
                          "--workspace", ws, env=env, prefix=as_nobody())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"65534\n")

    def test_background_xterm_outlives_its_block_not_its_session(self):
        title = "deskhand-bg-sh-%d" % os.getpid()
        res = run_blocks(["shell+display:xterm -title %s &\n" % title +
                          SHELL_WAIT_MAPPED % title,
                          "shell+display:sleep 0.5; xwininfo -root -tree | grep -c '\"%s\"'; "
                          "jobs" % title],
                         env=self.x.env())
        self.assertEqual(res[0]["status"], 0, res[0])
        self.assertEqual(res[1]["status"], 0, res[1])
        self.assertRegex(stdout(res[1]), r"^1\n\[1\]\+ +Running +xterm")
        # The session ended with exec-run: its xterm went with it.
        self.assertTrue(h.wait_for(lambda: title not in window_titles(self.x), 30))

    def test_interrupting_a_later_block_spares_it(self):
        title = "deskhand-bg-py-%d" % os.getpid()
        res = run_blocks(["python+display:" + PY_MAPPED +
                          "p = subprocess.Popen(['xterm', '-title', %r])\n" % title +
                          "print(wait_mapped(%r))" % title,
                          "python+display!/waiting:print('waiting', flush=True)\n"
                          "subprocess.run(['sleep', '60'])",
                          "python+display:time.sleep(0.5)\nprint(p.poll(), mapped(%r))"
                          % title],
                         env=self.x.env())
        self.assertEqual(stdout(res[0]), "True\n", res[0])
        self.assertTrue(res[1]["interrupted"], res[1])
        self.assertEqual(res[1]["status"], 130, res[1])
        self.assertIn("KeyboardInterrupt", res[1]["output"])
        self.assertFalse(res[1]["ended"])
        self.assertEqual(stdout(res[2]), "None True\n", res[2])
        self.assertTrue(h.wait_for(lambda: title not in window_titles(self.x), 30))


# A pty, a child that makes it its controlling terminal (opened again by
# name, as terminal emulators do) and answers what it reads.
PTY_ROUND_TRIP = r"""
import os, pty, select, time
m, s = pty.openpty()
name = os.ttyname(s)
pid = os.fork()
if pid == 0:
    try:
        os.close(m)
        os.setsid()
        fd = os.open(name, os.O_RDWR)
        line = os.read(fd, 100)
        os.write(fd, b'got ' + line)
    finally:
        os._exit(0)
os.close(s)
os.write(m, b'hello\n')
data, deadline = b'', time.monotonic() + 30
while b'got hello' not in data and time.monotonic() < deadline:
    if select.select([m], [], [], 1)[0]:
        try:
            data += os.read(m, 100)
        except OSError:
            break
os.waitpid(pid, 0)
print(name.startswith('/dev/pts/'), b'got hello' in data)
"""


class Ptys(unittest.TestCase):
    def test_openpty_and_a_child_reading_it(self):
        for profile in ("standard", "strict"):
            r = deskhand_exec("python", PTY_ROUND_TRIP, "--sandbox", profile)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, b"True True\n", profile)

    def test_terminals_of_the_host_are_out_of_reach(self):
        # A terminal the test holds (as deskhand's own terminal would be):
        # inside, /dev/pts is a fresh instance where its name does not exist.
        m, s = os.openpty()
        try:
            name = os.ttyname(s)
            code = ("import errno, os\n"
                    "print(sorted(os.listdir('/dev/pts')))\n"
                    "try:\n"
                    "    os.open(%r, os.O_RDWR | os.O_NOCTTY)\n"
                    "    print('opened')\n"
                    "except OSError as e:\n"
                    "    print(errno.errorcode[e.errno])\n" % name)
            for profile in ("standard", "strict"):
                r = deskhand_exec("python", code, "--sandbox", profile)
                self.assertEqual(r.stdout, b"['ptmx']\nENOENT\n", profile)
            # The same name opens without the sandbox: the test means something.
            r = deskhand_exec("python", code, "--sandbox", "off")
            self.assertTrue(r.stdout.endswith(b"opened\n"), r.stdout)
        finally:
            os.close(m)
            os.close(s)


if __name__ == "__main__":
    h.main()
