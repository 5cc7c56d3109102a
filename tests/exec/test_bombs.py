"""Fork bombs and memory bombs end cleanly, with a clear error, and leave
no process behind. They run as uid 65534 under an outer process limit (and
the root variant inside an outer pid namespace with its own pid_max), so
that a broken sandbox could not take the machine down; each is bounded by
a short timeout."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import (SYSTEM_PATH, as_nobody, deskhand_exec, env_with,  # noqa: E402
                     kernel_at_least, pids_in_namespace, shared_dir)

OUTER_NPROC = 4000
NS = "import os\nprint(os.readlink('/proc/self/ns/pid'), flush=True)\n"
# Forks sleepers until the kernel says no, then reports how many it got.
COUNT = NS + ("import time\nn = 0\ntry:\n"
              "    while True:\n"
              "        if os.fork() == 0:\n"
              "            time.sleep(30)\n"
              "            os._exit(0)\n"
              "        n += 1\n"
              "except OSError as e:\n"
              "    print('forked', n, 'then', e.strerror)\n")


def namespace_of(stdout):
    first = stdout.decode(errors="replace").splitlines()[0]
    assert first.startswith("pid:["), first
    return first


class Bombs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ws = shared_dir()
        cls.env = env_with(PATH=SYSTEM_PATH, HOME=cls.ws)

    def nobody(self, lang, code, *opts, data=None, timeout=60):
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

    def test_shell_fork_bomb(self):
        r = self.nobody("shell", "readlink /proc/self/ns/pid\nbomb() { bomb | bomb; }; bomb",
                        "--timeout", "5")
        self.assertEqual(r.returncode, 124, r.stderr[-500:])
        self.assertIn(b"Resource temporarily unavailable", r.stdout + r.stderr)
        self.assertIn(b"timed out after 5 s", r.stderr)
        self.assertNothingLeft(namespace_of(r.stdout))

    def test_python_fork_bomb(self):
        r = self.nobody("python", NS + "while True:\n    os.fork()\n", "--timeout", "5")
        self.assertIn(r.returncode, (1, 124), r.stderr[-500:])
        self.assertIn(b"Resource temporarily unavailable", r.stdout + r.stderr)
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
