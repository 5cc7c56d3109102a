"""The sandbox's promises, each tried for real: the denied system calls
answer EPERM/ENOSYS while allowed ones keep their usual errors, a loopback
server is out of reach under strict, writes outside the workspace fail,
the X server's sockets cannot be opened, nor the session's sockets in the
runtime directory, secrets do not leak, /proc shows only the session, and
a sandbox that cannot be built refuses to run."""
import os
import socket
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import Listener, as_nobody, deskhand_exec, env_with, helper, run_blocks  # noqa: E402

DENIED_EPERM = [
    "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount2", "pivot_root", "chroot",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns", "clone-newuser", "clone-newns", "clone-newpid", "clone-newnet",
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "userfaultfd", "open_by_handle_at", "reboot", "swapon", "swapoff",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "personality-linux32", "personality-norandom",
    "ioctl-tiocsti", "ioctl-tiocsti-high", "ioctl-tioclinux",
]
DENIED_ENOSYS = ["clone3", "io_uring_setup", "io_uring_enter", "io_uring_register"]
# Allowed calls keep the answer the kernel gives them anywhere.
ALLOWED = {
    "open-missing": "ENOENT", "ioctl-tiocgwinsz": "ENOTTY", "clone-plain": "EINVAL",
    "personality-query": "OK", "personality-default": "OK", "getpid": "OK",
}
# Calls the kernel itself refuses with EPERM to an unprivileged caller.
KERNEL_EPERM_UNPRIVILEGED = {"bpf", "userfaultfd", "open_by_handle_at", "reboot", "swapon",
                             "swapoff", "kexec_load", "kexec_file_load", "init_module",
                             "finit_module", "delete_module", "perf_event_open", "mount",
                             "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
                             "fsopen", "fsmount", "fspick", "mount_setattr", "setns",
                             "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
                             "ptrace"}


def try_syscalls(profile, names):
    code = " ".join([helper("try-syscall")] + names)
    r = deskhand_exec("shell", code, "--sandbox", profile)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return dict(line.split() for line in r.stdout.decode().splitlines())


class Seccomp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        names = DENIED_EPERM + DENIED_ENOSYS + list(ALLOWED)
        r = h.run([helper("try-syscall")] + names)
        cls.host = dict(line.split() for line in r.stdout.decode().splitlines())
        cls.names = names

    def check(self, profile):
        got = try_syscalls(profile, self.names)
        for name in DENIED_EPERM:
            self.assertEqual(got[name], "EPERM", name)
            if os.geteuid() == 0 or name not in KERNEL_EPERM_UNPRIVILEGED:
                self.assertNotEqual(self.host[name], "EPERM",
                                    "%s: the kernel alone says EPERM" % name)
        for name in DENIED_ENOSYS:
            self.assertEqual(got[name], "ENOSYS", name)
            self.assertNotEqual(self.host[name], "ENOSYS", name)
        for name, errno_name in ALLOWED.items():
            self.assertEqual(got[name], errno_name, name)
            self.assertEqual(self.host[name], errno_name, name)

    def test_standard(self):
        self.check("standard")

    def test_strict(self):
        self.check("strict")

    def test_off_filters_nothing(self):
        got = try_syscalls("off", ["unshare", "clone3", "personality-linux32"])
        self.assertEqual(got, {"unshare": "OK", "clone3": "EINVAL",
                               "personality-linux32": "OK"})

    def test_setgroups_is_a_no_op_for_roots_code(self):
        # deskhand run as root: the code is uid 0 without capabilities, and
        # programs that believe they are root (xterm) reset their groups
        # first. setgroups() then succeeds and changes nothing; an ordinary
        # user's code keeps the kernel's EPERM.
        got = try_syscalls("standard", ["setgroups"])["setgroups"]
        if os.geteuid() != 0:
            self.assertEqual(got, "EPERM")
            return
        self.assertEqual(got, "OK")
        self.assertEqual(self.host_setgroups(), "EFAULT")
        r = deskhand_exec("python", "import os\nbefore = os.getgroups()\n"
                          "os.setgroups([0, 4242])\n"
                          "print(os.getgroups() == before, 4242 in os.getgroups())")
        self.assertEqual(r.stdout, b"True False\n", r.stderr)
        r = deskhand_exec("shell", "%s setgroups" % helper("try-syscall"),
                          prefix=as_nobody())
        self.assertEqual(r.stdout, b"setgroups EPERM\n", r.stderr)

    @staticmethod
    def host_setgroups():
        r = h.run([helper("try-syscall"), "setgroups"])
        return r.stdout.decode().split()[1]

    def test_process_state(self):
        r = deskhand_exec("shell", "grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd):' "
                          "/proc/self/status; cat /proc/self/limits")
        out = r.stdout.decode()
        self.assertIn("NoNewPrivs:\t1", out)
        self.assertIn("Seccomp:\t2", out)
        self.assertIn("CapEff:\t0000000000000000", out)
        self.assertIn("CapBnd:\t0000000000000000", out)
        limits = {line[:26].strip(): line[26:].split() for line in out.splitlines()
                  if line.startswith("Max ")}
        self.assertEqual(limits["Max core file size"][:2], ["0", "0"])
        self.assertEqual(limits["Max open files"][:2], ["4096", "4096"])
        data = int(limits["Max data size"][0])
        self.assertLessEqual(data, 8 << 30)
        self.assertGreaterEqual(data, 512 << 20)
        self.assertEqual(limits["Max processes"][:2], ["1024", "1024"])
        self.assertNotEqual(limits["Max file size"][0], "unlimited")


class Network(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Listener(greeting=b"hello from the host\n")

    @classmethod
    def tearDownClass(cls):
        cls.server.sock.close()

    def connect(self, profile):
        code = ("import socket\n"
                "try:\n"
                "    s = socket.create_connection(('127.0.0.1', %d), timeout=30)\n"
                "    print('got', s.recv(100).decode().strip())\n"
                "except OSError as e:\n"
                "    print('failed', e.errno)\n" % self.server.port)
        return deskhand_exec("python", code, "--sandbox", profile).stdout.decode()

    def test_standard_reaches_loopback(self):
        self.assertEqual(self.connect("standard"), "got hello from the host\n")

    def test_strict_cannot(self):
        before = self.server.accepted
        out = self.connect("strict")
        self.assertTrue(out.startswith("failed"), out)
        self.assertEqual(self.server.accepted, before)

    def test_strict_has_a_private_loopback(self):
        code = ("import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                "c = socket.create_connection(s.getsockname()); a, _ = s.accept()\n"
                "a.sendall(b'inside'); print(c.recv(10).decode())\n")
        r = deskhand_exec("python", code, "--sandbox", "strict")
        self.assertEqual(r.stdout, b"inside\n", r.stderr)


class Files(unittest.TestCase):
    def test_strict_writes_only_in_workspace_and_private_tmp(self):
        ws, outside = h.tmpdir(), h.tmpdir()
        target = os.path.join(outside, "escaped")
        code = ("echo a > in-workspace && echo ws-ok\n"
                "mkdir -p sub/dir && mv in-workspace sub/dir/ && echo mv-ok\n"
                "echo b > /tmp/private && echo tmp-ok\n"
                "echo c > %s || echo outside-denied\n"
                "touch $HOME/deskhand-strict-probe || echo home-denied\n"
                "echo d > /dev/null && echo devnull-ok\n"
                "ls /tmp\n" % target)
        r = deskhand_exec("shell", code, "--sandbox", "strict", "--workspace", ws)
        out = r.stdout.decode().split()
        for word in ("ws-ok", "mv-ok", "tmp-ok", "outside-denied", "home-denied",
                     "devnull-ok"):
            self.assertIn(word, out, r.stderr)
        self.assertIn(b"Permission denied", r.stderr)
        self.assertFalse(os.path.exists(target))
        self.assertFalse(os.path.exists(os.path.expanduser("~/deskhand-strict-probe")))
        self.assertTrue(os.path.exists(os.path.join(ws, "sub/dir/in-workspace")))
        # The private /tmp is not the host's.
        self.assertNotIn("private", os.listdir("/tmp"))
        self.assertIn("private", out)

    def test_standard_may_write_outside(self):
        outside = h.tmpdir()
        r = deskhand_exec("shell", "echo x > %s/f && echo ok" % outside)
        self.assertEqual(r.stdout, b"ok\n")


class Display(unittest.TestCase):
    """The X server's path and abstract sockets, from inside."""

    @classmethod
    def setUpClass(cls):
        cls.x = h.Xvfb(640, 480)

    @classmethod
    def tearDownClass(cls):
        cls.x.stop()

    def probe(self, *opts):
        code = ("import socket, os\n"
                "for label, addr in (('path', %r), ('abstract', '\\0' + %r)):\n"
                "    s = socket.socket(socket.AF_UNIX)\n"
                "    try:\n"
                "        s.connect(addr); print(label, 'open')\n"
                "    except OSError as e:\n"
                "        print(label, 'refused')\n"
                "print('DISPLAY', os.environ.get('DISPLAY'))\n"
                % (self.x.socket, self.x.socket))
        r = deskhand_exec("python", code, *opts, env=self.x.env(XAUTHORITY="/nonexistent"))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.decode()

    def test_unreachable_without_grant(self):
        for profile in ("standard", "strict"):
            self.assertEqual(self.probe("--sandbox", profile),
                             "path refused\nabstract refused\nDISPLAY None\n", profile)

    def test_reachable_with_grant(self):
        self.assertEqual(self.probe("--display"),
                         "path open\nabstract open\nDISPLAY %s\n" % self.x.display)
        # strict keeps its network namespace, where the host's abstract
        # sockets do not exist; the path socket is there.
        self.assertEqual(self.probe("--sandbox", "strict", "--display"),
                         "path open\nabstract refused\nDISPLAY %s\n" % self.x.display)

    def test_tcp_display_is_refused_by_standard(self):
        # A forwarded display (ssh -X) is a TCP port that standard's network
        # reaches: it refuses rather than pretend; strict or a grant run.
        env = env_with(DISPLAY="localhost:10.0")
        r = deskhand_exec("python", "print(1)", env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"reached over TCP", r.stderr)
        self.assertEqual(deskhand_exec("python", "print(1)", "--sandbox", "strict",
                                       env=env).stdout, b"1\n")
        self.assertEqual(deskhand_exec("python", "print(1)", "--display", env=env).stdout,
                         b"1\n")

    def test_display_sessions_are_separate(self):
        res = run_blocks(["python:x = 1", "python+display:print('x' in globals())",
                          "python:print(x)"], env=self.x.env())
        self.assertEqual(res[1]["output"], "False\n")
        self.assertEqual(res[2]["output"], "1\n")


class RuntimeDir(unittest.TestCase):
    """The user's runtime directory holds the session's sockets (D-Bus,
    Wayland, PipeWire, the accessibility bus): a way to the desktop that
    never touches the X socket. Without the display grant it is an empty
    private directory; a listening socket in it is the thing tried."""

    @classmethod
    def setUpClass(cls):
        cls.x = h.Xvfb(320, 240)
        cls.dir = h.tmpdir()
        os.chmod(cls.dir, 0o700)
        cls.srv = socket.socket(socket.AF_UNIX)
        cls.srv.bind(os.path.join(cls.dir, "bus"))
        cls.srv.listen(8)
        with open(os.path.join(cls.dir, "secret"), "w") as f:
            f.write("cookie")

    @classmethod
    def tearDownClass(cls):
        cls.srv.close()
        cls.x.stop()

    def probe(self, *opts, runtime=None):
        code = ("import os, socket\n"
                "d = os.environ.get('XDG_RUNTIME_DIR')\n"
                "print(sorted(os.listdir(d)) if os.path.isdir(d) else 'missing')\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                "try:\n"
                "    s.connect(os.path.join(d, 'bus')); print('open')\n"
                "except OSError as e:\n"
                "    print('refused')\n")
        r = deskhand_exec("python", code, *opts,
                          env=self.x.env(XDG_RUNTIME_DIR=runtime or self.dir))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.decode()

    def test_hidden_without_grant(self):
        self.assertEqual(self.probe("--sandbox", "standard"), "[]\nrefused\n")
        # strict's private /tmp has hidden this one (it lives below /tmp).
        self.assertEqual(self.probe("--sandbox", "strict"), "missing\nrefused\n")

    def test_there_with_the_grant_and_without_a_sandbox(self):
        there = "['bus', 'secret']\nopen\n"
        self.assertEqual(self.probe("--display"), there)
        self.assertEqual(self.probe("--sandbox", "off"), there)

    def test_a_directory_that_is_not_private_is_not_hidden(self):
        # XDG_RUNTIME_DIR=/tmp must not hide /tmp: only a 0700 directory
        # of the user's own is a runtime directory.
        shared = h.tmpdir()
        os.chmod(shared, 0o755)
        self.assertEqual(self.probe("--sandbox", "standard", runtime=shared),
                         "[]\nrefused\n")     # empty and no socket: but there
        with open(os.path.join(shared, "file"), "w"):
            pass
        self.assertEqual(self.probe("--sandbox", "standard", runtime=shared),
                         "['file']\nrefused\n")

    def test_a_workspace_inside_is_refused(self):
        runtime = h.tmpdir()
        os.chmod(runtime, 0o700)
        ws = os.path.join(runtime, "ws")
        os.makedirs(ws)
        r = deskhand_exec("python", "print(1)", "--workspace", ws,
                          env=self.x.env(XDG_RUNTIME_DIR=runtime))
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"inside the runtime directory", r.stderr)
        self.assertEqual(r.stdout, b"")


class Secrets(unittest.TestCase):
    SECRETS = dict(OPENAI_API_KEY="sk-test", ANTHROPIC_API_KEY="ant-test",
                   OPENAI_BASE_URL="http://secret.invalid", DESKHAND_API_KEY="dk",
                   GITHUB_TOKEN="ghp", MY_SECRET="s", DB_PASSWORD="p",
                   AWS_SECRET_ACCESS_KEY="aws", SSH_AUTH_SOCK="/tmp/agent",
                   DISPLAY=":99", XAUTHORITY="/tmp/xauth", WAYLAND_DISPLAY="wayland-0")

    def test_keys_are_absent(self):
        r = deskhand_exec("shell", "env", "--max-output", "1000000",
                          env=env_with(DESKHAND_KEEP_ME="no", FOO="bar", **self.SECRETS))
        names = {line.split("=", 1)[0] for line in r.stdout.decode().splitlines() if "=" in line}
        for name in self.SECRETS:
            self.assertNotIn(name, names)
        self.assertIn("FOO", names)
        self.assertIn("PATH", names)
        self.assertNotIn("DESKHAND_KEEP_ME", names)
        self.assertNotIn(b"sk-test", r.stdout)

    def test_off_keeps_the_environment(self):
        r = deskhand_exec("shell", "echo $OPENAI_API_KEY", "--sandbox", "off",
                          env=env_with(**self.SECRETS))
        self.assertEqual(r.stdout, b"sk-test\n")

    def test_host_processes_are_invisible(self):
        # deskhand itself holds the keys in its environment and memory: the
        # code sees only its own pid namespace, and not even the supervisor's
        # environment.
        code = ("ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo\n"
                "cat /proc/1/environ >/dev/null 2>&1 && echo readable || echo unreadable\n"
                "head -c 1 /proc/1/mem >/dev/null 2>&1 && echo mem || echo no-mem\n")
        r = deskhand_exec("shell", code, env=env_with(**self.SECRETS))
        lines = r.stdout.decode().splitlines()
        pids = [int(p) for p in lines[0].split()]
        self.assertEqual(pids[:2], [1, 2])
        self.assertLess(len(pids), 10)
        self.assertNotIn(os.getpid(), pids[2:] if os.getpid() > 10 else [])
        self.assertEqual(lines[1:], ["unreadable", "no-mem"])


class Lifecycle(unittest.TestCase):
    def test_dies_with_deskhand(self):
        # deskhand killed outright (no chance to clean up): the session's
        # processes go with it.
        import subprocess
        p = subprocess.Popen([h.binary(), "exec", "shell"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        p.stdin.write(b"readlink /proc/self/ns/pid; sleep 1000 & sleep 1000")
        p.stdin.close()
        ns = p.stdout.readline().decode().strip()
        self.assertTrue(ns.startswith("pid:["), ns)
        from execlib import pids_in_namespace
        self.assertTrue(pids_in_namespace(ns))
        p.kill()
        p.wait()
        self.assertTrue(h.wait_for(lambda: not pids_in_namespace(ns), 30))

    def test_inherited_descriptors_are_closed(self):
        import subprocess
        r, w = os.pipe()
        os.dup2(r, 42)
        try:
            res = subprocess.run([h.binary(), "exec", "python"], pass_fds=(42,),
                                 input=b"import os\nprint(sorted(int(f) for f in "
                                       b"os.listdir('/proc/self/fd')))",
                                 capture_output=True, timeout=60)
        finally:
            os.close(42)
            os.close(r)
            os.close(w)
        fds = eval(res.stdout)
        # stdin, stdout, stderr, the driver's two channels, listdir's own.
        self.assertEqual(fds[:5], [0, 1, 2, 3, 4])
        self.assertNotIn(42, fds)
        self.assertLessEqual(len(fds), 6)


class Refusal(unittest.TestCase):
    def test_doctor(self):
        r = h.run([h.binary(), "doctor"])
        self.assertEqual(r.returncode, 0, r.stdout)
        out = r.stdout.decode()
        for layer in ("user namespace", "pid namespace", "mount namespace",
                      "network namespace", "seccomp", "landlock", "abstract-socket scoping",
                      "task limit"):
            self.assertRegex(out, r"(?m)^%s +ok" % layer)
        self.assertRegex(out, r"(?m)^landlock +ok \(ABI \d+\)")
        self.assertRegex(out, r"(?m)^profile standard +can run")
        self.assertRegex(out, r"(?m)^profile strict +can run")
        self.assertEqual(h.run([h.binary(), "doctor", "x"]).returncode, 2)

    def test_refuses_rather_than_running_weaker(self):
        # Inside a sandbox no namespace can be created: a deskhand started
        # there must refuse the standard profile and say why, while `off`
        # still runs, and its doctor says what is missing.
        inner = h.binary()
        code = ("echo 'print(1)' | %s exec python; echo rc=$?\n"
                "echo 'print(2)' | %s exec --sandbox off python; echo rc=$?\n"
                # (only the lines asked about: the whole report is longer
                # than the output a block keeps)
                "%s doctor | grep -E '^(user namespace|profile standard) '; "
                "echo rc=${PIPESTATUS[0]}\n" % (inner, inner, inner))
        r = deskhand_exec("shell", code)
        out, err = r.stdout.decode(), r.stderr.decode()
        self.assertIn("rc=1\n2\nrc=0\n", out)
        self.assertIn("cannot start the standard sandbox", err)
        self.assertIn("Operation not permitted", err)
        self.assertRegex(out, r"(?m)^user namespace +no: ")
        self.assertRegex(out, r"(?m)^profile standard +cannot run \(")
        self.assertTrue(out.endswith("rc=1\n"), out)


if __name__ == "__main__":
    h.main()
