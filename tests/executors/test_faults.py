"""The interpreter's faults for real (issue 27): its process killed with
SIGKILL from outside, killed by the kernel's out-of-memory killer (a real
memory limit: the memory cgroup the test puts the run in), refused memory
beyond the sandbox's own limit (RLIMIT_DATA), and stopped with SIGSTOP
from outside, each in the middle of a block. Each time the block's result
says what happened in one clear message, what the block printed before is
kept, the session of that language comes back fresh for the next block,
the set's other sessions keep their state, and no process of the broken
session is left behind. The code says through a file when it is running,
so no case depends on the machine's speed."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import alive, helper, parse_exec_run, pids_in_namespace  # noqa: E402

# The block writes who it is, then waits (60 s at most) for the test.
RUNNING = ("import json, os, time\n"
           "print('before-the-fault', flush=True)\n"
           "with open(%r, 'w') as f:\n"
           "    json.dump([os.readlink('/proc/self/ns/pid'), os.getpid()], f)\n")


READ_SYSCALL = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine, 0)


def oom_kills():
    with open("/proc/vmstat") as f:
        return [line for line in f if line.startswith("oom_kill ")]


def host_pid(ns, inner):
    """The host's pid of the process that is `inner` in pid namespace `ns`."""
    for pid in pids_in_namespace(ns):
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("NSpid:") and int(line.split()[-1]) == inner:
                        return pid
        except OSError:
            pass
    return None


class Faults(unittest.TestCase):
    def setUp(self):
        self.dir = h.tmpdir()
        self.info = os.path.join(self.dir, "running.json")

    def start(self, blocks, *opts, prefix=()):
        return subprocess.Popen(list(prefix) + [helper("exec-run"), "--workspace", self.dir] +
                                list(opts) + list(blocks),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def interpreter(self):
        """Waits for the block to say it runs; its host pid."""
        for _ in range(6000):
            if os.path.exists(self.info):
                try:
                    with open(self.info) as f:
                        ns, inner = json.load(f)
                    break
                except ValueError:
                    pass        # half written
            time.sleep(0.01)
        else:
            self.fail("the block never said it runs")
        pid = host_pid(ns, inner)
        self.assertIsNotNone(pid, "no host pid for %s %d" % (ns, inner))
        return pid

    def finish(self, proc):
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        res = parse_exec_run(out)
        for r in res:
            self.assertNotIn("error", r, r)
        return res

    def check_comes_back(self, res, victim):
        """Blocks: shell state, the broken block, python again, shell again."""
        broken, again, shell = res[1], res[2], res[3]
        self.assertTrue(broken["ended"], broken)
        self.assertIn("before-the-fault", broken["output"], broken)
        self.assertIn("the next block starts a fresh session", broken["message"], broken)
        self.assertTrue(again["restarted"], again)
        self.assertIn("a fresh python session was started", again["message"], again)
        self.assertEqual(again["output"], "after\n", again)
        self.assertFalse(shell["restarted"], shell)
        self.assertEqual(shell["output"], "[7]\n", shell)
        self.assertFalse(alive(victim), "the broken interpreter is still there")

    def blocks(self, middle):
        return ["shell:x=7", "python:" + (RUNNING % self.info) + middle,
                "python:print('after')", "shell:echo \"[$x]\""]

    def test_sigkill_from_outside(self):
        oom_before = oom_kills()
        proc = self.start(self.blocks("time.sleep(60)\n"))
        pid = self.interpreter()
        os.kill(pid, signal.SIGKILL)
        res = self.finish(proc)
        broken = res[1]
        self.assertEqual(broken["status"], 137, broken)
        self.assertIn("killed by signal 9 (SIGKILL)", broken["message"], broken)
        if oom_kills() == oom_before:   # the machine's count: another's kill would rise it
            self.assertNotIn("out-of-memory", broken["message"], broken)
        self.check_comes_back(res, pid)

    def test_sigstop_from_outside(self):
        # Today's code would wait for the block's timeout (60 s here) and
        # report a timeout: a stopped interpreter must be said to be one,
        # at once.
        proc = self.start(self.blocks("time.sleep(60)\n"), "--timeout-ms", "60000")
        pid = self.interpreter()
        os.kill(pid, signal.SIGSTOP)
        res = self.finish(proc)
        broken = res[1]
        self.assertFalse(broken["timed_out"], broken)
        self.assertEqual(broken["status"], 128 + signal.SIGSTOP, broken)
        self.assertIn("was stopped by signal %d (SIGSTOP)" % signal.SIGSTOP,
                      broken["message"], broken)
        self.check_comes_back(res, pid)

    def test_stopped_between_blocks(self):
        # Stopped while no block runs: the next block must not hang on it.
        proc = self.start(["shell:x=7", "python:" + (RUNNING % self.info),
                           "wait:" + os.path.join(self.dir, "stopped"),
                           "python:print('after')", "shell:echo \"[$x]\""],
                          "--timeout-ms", "60000")
        pid = self.interpreter()
        for _ in range(6000):       # until it reads its next block (fd 3)
            with open("/proc/%d/syscall" % pid) as f:
                if f.read().split()[:2] == [str(READ_SYSCALL), "0x3"]:
                    break
            time.sleep(0.01)
        os.kill(pid, signal.SIGSTOP)
        open(os.path.join(self.dir, "stopped"), "w").close()
        res = self.finish(proc)
        again = res[2]
        self.assertFalse(again["timed_out"], again)
        self.assertTrue(again["restarted"], again)
        self.assertIn("was stopped by signal %d (SIGSTOP)" % signal.SIGSTOP,
                      again["message"], again)
        self.assertEqual(again["output"], "after\n", again)
        self.assertEqual(res[3]["output"], "[7]\n", res[3])
        self.assertFalse(alive(pid), "the stopped interpreter is still there")

    def test_memory_beyond_the_sandbox_limit(self):
        # RLIMIT_DATA is the sandbox's memory limit: an allocation beyond
        # it fails inside the interpreter, which lives on.
        res = self.finish(self.start(
            ["python:x = 5", "python:y = b'a' * (1 << 30)", "python:print(x)",
             "shell:y=$(head -c 400000000 /dev/zero | tr '\\0' a); echo survived",
             "shell:echo after"],
            "--data-bytes", str(256 << 20)))
        self.assertEqual(res[1]["status"], 1, res[1])
        self.assertIn("MemoryError", res[1]["output"], res[1])
        self.assertFalse(res[1]["ended"], res[1])
        self.assertEqual(res[2]["output"], "5\n", res[2])
        # bash gives up when it cannot grow a string: its session ends
        # with a message, and the next shell block has a fresh one.
        shell, after = res[3], res[4]
        self.assertNotIn("survived", shell["output"], shell)
        self.assertTrue(shell["ended"], shell)
        self.assertIn("the next block starts a fresh session", shell["message"], shell)
        self.assertTrue(after["restarted"], after)
        self.assertEqual(after["output"], "after\n", after)


class FaultsWithoutSandbox(Faults):
    """The same under `--sandbox off`, where the supervisor is a subreaper
    in deskhand's own pid namespace rather than the init of its own."""

    def start(self, blocks, *opts, prefix=()):
        return super().start(blocks, "--sandbox", "off", *opts, prefix=prefix)

    def interpreter(self):
        pid = super().interpreter()
        self.assertEqual(os.readlink("/proc/%d/ns/pid" % pid), os.readlink("/proc/self/ns/pid"))
        return pid

    test_memory_beyond_the_sandbox_limit = None   # off sets no limit


def memory_cgroup(limit):
    """A fresh memory cgroup holding at most `limit` bytes, no swap: its
    directory, or None where this machine gives the test none."""
    name = "deskhand-test-%d" % os.getpid()
    for base, files in (("/sys/fs/cgroup", ("memory.max", "memory.swap.max")),
                        ("/sys/fs/cgroup/memory", ("memory.limit_in_bytes",
                                                   "memory.memsw.limit_in_bytes"))):
        d = os.path.join(base, name)
        try:
            if not os.path.exists(os.path.join(base, files[0])) and \
                    not os.path.exists(os.path.join(base, "cgroup.procs")):
                continue
            os.mkdir(d)
        except OSError:
            continue
        try:
            with open(os.path.join(d, files[0]), "w") as f:
                f.write(str(limit))
            try:
                with open(os.path.join(d, files[1]), "w") as f:
                    f.write("0" if files[1] == "memory.swap.max" else str(limit))
            except OSError:
                pass        # no swap accounting: no swap to fill either
            return d
        except OSError:
            os.rmdir(d)
    return None


class OutOfMemory(unittest.TestCase):
    def setUp(self):
        self.dir = h.tmpdir()
        self.cg = memory_cgroup(192 << 20) if os.geteuid() == 0 else None
        if self.cg is None:
            self.skipTest("no memory cgroup can be made here (needs root)")

    def tearDown(self):
        if self.cg is not None:
            for _ in range(500):
                try:
                    os.rmdir(self.cg)
                    break
                except OSError:
                    time.sleep(0.01)

    def test_oom_killed_mid_block(self):
        # The whole run lives in a memory cgroup of 192 MiB; the block
        # grows until the kernel's out-of-memory killer ends it.
        grow = ("print('before-the-fault', flush=True)\n"
                "chunks = []\n"
                "while True:\n"
                "    chunks.append(b'a' * (8 << 20))\n")
        prefix = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', self.cg]
        proc = subprocess.Popen(prefix + [helper("exec-run"), "--workspace", self.dir,
                                          "shell:x=7", "python:" + grow,
                                          "python:print('after')", "shell:echo \"[$x]\""],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        res = parse_exec_run(out)
        broken, again, shell = res[1], res[2], res[3]
        self.assertTrue(broken["ended"], broken)
        self.assertEqual(broken["status"], 137, broken)
        self.assertIn("before-the-fault", broken["output"], broken)
        self.assertIn("killed by signal 9 (SIGKILL)", broken["message"], broken)
        self.assertIn("out-of-memory killer", broken["message"], broken)
        self.assertTrue(again["restarted"], again)
        self.assertIn("out-of-memory killer", again["message"], again)
        self.assertEqual(again["output"], "after\n", again)
        self.assertEqual(shell["output"], "[7]\n", shell)


if __name__ == "__main__":
    h.main()
