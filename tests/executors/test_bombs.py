"""Fork bombs and memory bombs end cleanly, with a clear error, and leave
no process behind. They run as uid 65534 under an outer process limit (and
the root variant inside an outer pid namespace with its own pid_max), so
that a broken sandbox could not take the machine down.

No outcome depends on the machine's speed: a bomb that must reach the task
cap runs until the cap is provably hit (the kernel's EAGAIN is seen), then
ends; a generous --timeout only bounds a broken run. The one test whose
point is the timeout asserts nothing about how far the bomb got before it."""
import os
import signal
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import (SYSTEM_PATH, as_nobody, deskhand_exec, env_with,  # noqa: E402
                     kernel_at_least, pids_in_namespace, shared_dir)

OUTER_NPROC = 4000
NS = "import os\nprint(os.readlink('/proc/self/ns/pid'), flush=True)\n"
# Forks sleepers until the kernel says no, then reports how many it got. The
# sleepers outlive any machine's forking (the session's end kills them), so
# the count is the cap's, not how many fit in some time.
COUNT = NS + ("import time\nn = 0\ntry:\n"
              "    while True:\n"
              "        if os.fork() == 0:\n"
              "            time.sleep(1000)\n"
              "            os._exit(0)\n"
              "        n += 1\n"
              "except OSError as e:\n"
              "    print('forked', n, 'then', e.strerror)\n")
# A real bomb (every process forks forever) that ends itself once the cap
# is proven: the first process refused a fork says so (in one write, as many
# may say it at once), then kills its whole process group at once (a group
# signal cannot be outrun by a racing fork).
PY_BOMB = NS + ("import signal\n"
                "while True:\n"
                "    try:\n"
                "        os.fork()\n"
                "    except OSError as e:\n"
                "        os.write(1, ('refused: %s\\n' % e.strerror).encode())\n"
                "        os.killpg(0, signal.SIGKILL)\n")
SH_BOMB = "readlink /proc/self/ns/pid\nbomb() { bomb | bomb; }; bomb\n"
EAGAIN = b"Resource temporarily unavailable"
# Bounds a broken run only; a working one ends as soon as the cap is seen.
GENEROUS = 120


def namespace_of(stdout):
    first = stdout.decode(errors="replace").splitlines()[0]
    assert first.startswith("pid:["), first
    return first


class Bombs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = shared_dir()
        cls.env = env_with(PATH=SYSTEM_PATH, HOME=cls.ws)

    def nobody(self, lang, code, *opts, data=None, timeout=GENEROUS):
        return deskhand_exec(lang, code, "--workspace", self.ws, *opts, env=self.env,
                             prefix=as_nobody(OUTER_NPROC, data), timeout=timeout)

    def assertNothingLeft(self, ns):
        self.assertTrue(h.wait_for(lambda: not pids_in_namespace(ns), 30),
                        "processes of %s survived" % ns)

    def test_fork_count_is_capped(self):
        r = self.nobody("python", COUNT)
        self.assertEqual(r.returncode, 0, r.stderr)
        last = r.stdout.decode().splitlines()[-1].split()
        self.assertEqual(last[0], "forked")
        # The session's cap (1024 tasks), far below the outer limit.
        self.assertLess(int(last[1]), 1030)
        self.assertGreater(int(last[1]), 500)
        self.assertEqual(" ".join(last[3:]), "Resource temporarily unavailable")
        self.assertNothingLeft(namespace_of(r.stdout))

    def test_shell_fork_bomb_times_out(self):
        # Only the timeout is asserted here: how far the bomb got in 5 s
        # depends on the machine.
        r = self.nobody("shell", SH_BOMB, "--timeout", "5")
        self.assertEqual(r.returncode, 124, r.stderr[-500:])
        self.assertIn(b"timed out after 5 s", r.stderr)
        self.assertNothingLeft(namespace_of(r.stdout))

    def test_shell_fork_bomb_hits_cap(self):
        # Runs until bash is refused a fork (however long that takes on this
        # machine, within GENEROUS), then is interrupted as Ctrl-C would.
        p = subprocess.Popen(
            as_nobody(OUTER_NPROC) + [h.binary(), "exec", "--workspace", self.ws,
                                     "--timeout", str(GENEROUS), "shell"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=self.env)
        out = bytearray()

        def drain():
            for chunk in iter(lambda: p.stdout.read1(65536), b""):
                out.extend(chunk)
        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            p.stdin.write(SH_BOMB.encode())
            p.stdin.close()
            seen = h.wait_for(lambda: EAGAIN in out, GENEROUS)
            os.kill(p.pid, signal.SIGINT)
            p.wait(GENEROUS)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        reader.join(30)
        self.assertTrue(seen, bytes(out[-500:]))
        self.assertEqual(p.returncode, 130, bytes(out[-500:]))
        self.assertIn(b"interrupted", out[-1000:])
        self.assertNothingLeft(namespace_of(bytes(out)))

    def test_python_fork_bomb(self):
        r = self.nobody("python", PY_BOMB, "--timeout", str(GENEROUS),
                        timeout=GENEROUS + 60)
        self.assertEqual(r.returncode, 128 + signal.SIGKILL, r.stderr[-500:])
        self.assertIn(b"refused: " + EAGAIN, r.stdout)
        self.assertIn(b"killed by signal 9", r.stderr)
        self.assertNothingLeft(namespace_of(r.stdout))

    def test_64_gib_allocation(self):
        r = self.nobody("python", NS + "b = bytearray(64 << 30)\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"MemoryError", r.stderr)
        self.assertNothingLeft(namespace_of(r.stdout))
        r = self.nobody("javascript", "const b = new ArrayBuffer(64 * 2 ** 30)")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"RangeError", r.stderr)

    def test_growing_allocation(self):
        # Grows until the data limit says no (an outer 1 GiB keeps the
        # machine safe; inside, the sandbox never raises a limit).
        code = NS + ("x = []\ntry:\n"
                     "    while True:\n"
                     "        x.append(bytearray(64 << 20))\n"
                     "except MemoryError:\n"
                     "    print('stopped at', len(x) * 64, 'MiB')\n")
        r = self.nobody("python", code, data=1 << 30)
        self.assertEqual(r.returncode, 0, r.stderr)
        last = r.stdout.decode().splitlines()[-1].split()
        self.assertEqual(last[:2], ["stopped", "at"])
        self.assertLessEqual(int(last[2]), 1024)
        self.assertNothingLeft(namespace_of(r.stdout))

    @unittest.skipUnless(os.geteuid() == 0 and kernel_at_least(6, 14),
                         "needs root and a per-namespace pid_max (Linux 6.14)")
    def test_fork_count_is_capped_for_root(self):
        # RLIMIT_NPROC does not bind root: the session's own pid_max must.
        # An outer pid namespace with pid_max 3000 bounds a broken sandbox.
        outer = ["unshare", "--pid", "--fork", "--kill-child", "--", "sh", "-c",
                 'echo 3000 > /proc/sys/kernel/pid_max && exec "$@"', "sh"]
        r = deskhand_exec("python", COUNT, "--workspace", self.ws, env=self.env,
                          prefix=outer)
        self.assertEqual(r.returncode, 0, r.stderr)
        last = r.stdout.decode().splitlines()[-1].split()
        self.assertEqual(last[0], "forked")
        self.assertLess(int(last[1]), 1030)
        self.assertNothingLeft(namespace_of(r.stdout))


if __name__ == "__main__":
    h.main()
