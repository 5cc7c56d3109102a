"""The sandbox against a real headless sway (tests/lib/wayland.py): code in
standard and strict cannot connect to the Wayland socket, to sway's IPC
(whose `exec` runs anything outside every sandbox: tried for real with
swaymsg from inside), to Hyprland's sockets or to PipeWire's (stand-in
listeners where no such server runs here), and does not learn their names
from the environment; code granted the display reaches all of them. Both
for a private runtime directory (hidden whole) and for one that is not
private (each socket hidden). deskhand runs as sway's uid, as the user's
agent would."""
import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import wayland  # noqa: E402
from execlib import SYSTEM_PATH, deskhand_exec  # noqa: E402

HYPR_SIG = "deskhandtest_1_2"
PROBE = """import os, socket, sys
for label, path in zip(("wayland", "sway-ipc", "pipewire", "pipewire-manager", "hypr",
                        "hypr-events"), sys.argv[1:] or %r):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path); print(label, "open")
    except OSError as e:
        print(label, "refused")
for name in ("WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE"):
    print(name, "set" if name in os.environ else "unset")
"""
OPEN = ["wayland open", "sway-ipc open", "pipewire open", "pipewire-manager open",
        "hypr open", "hypr-events open"]
ENV_SET = ["%s set" % n for n in ("WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK",
                                  "HYPRLAND_INSTANCE_SIGNATURE")]
CLOSED = [l.replace("open", "refused") for l in OPEN]
ENV_UNSET = [l.replace("set", "unset") for l in ENV_SET]


def listen(path, uid, gid):
    """A stand-in server socket at path that the uid may connect to."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(16)
    os.chmod(path, 0o777)
    if os.geteuid() == 0:
        os.chown(path, uid, gid)
    return s


class Base:
    """The cases, for one kind of runtime directory (`private`)."""
    private = True

    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway()
        cls.addClassCleanup(cls.sway.stop)
        s = cls.sway
        rt = s.runtime_dir
        cls.paths = [s.socket, s.swaysock, os.path.join(rt, "pipewire-0"),
                     os.path.join(rt, "pipewire-0-manager"),
                     os.path.join(rt, "hypr", HYPR_SIG, ".socket.sock"),
                     os.path.join(rt, "hypr", HYPR_SIG, ".socket2.sock")]
        cls.servers = [listen(p, s.uid, s.gid) for p in cls.paths[2:]]
        for d in (os.path.join(rt, "hypr"), os.path.join(rt, "hypr", HYPR_SIG)):
            os.chmod(d, 0o755)
            if os.geteuid() == 0:
                os.chown(d, s.uid, s.gid)
        if not cls.private:
            # A runtime directory others may list (some setups, or one
            # shared with another user): it cannot be covered whole.
            os.chmod(rt, 0o755)
        cls.ws = s.tmpdir(prefix="deskhand-ws-")
        cls.out = s.tmpdir(prefix="deskhand-out-")
        os.chmod(cls.out, 0o755)

    @classmethod
    def tearDownClass(cls):
        for srv in cls.servers:
            srv.close()
        cls.sway.stop()

    def exec(self, lang, code, *opts):
        s = self.sway
        env = s.environ(PATH=SYSTEM_PATH, I3SOCK=s.swaysock,
                        HYPRLAND_INSTANCE_SIGNATURE=HYPR_SIG)
        prefix = ["prlimit", "--nproc=4000"] + s.prefix()
        r = deskhand_exec(lang, code, "--workspace", self.ws, *opts, env=env,
                          prefix=prefix, timeout=120)
        self.assertEqual(r.returncode, 0, (r.stdout, r.stderr))
        return r.stdout.decode().splitlines()

    def probe(self, *opts):
        return self.exec("python", PROBE % (self.paths,), *opts)

    def test_standard_and_strict_cannot_connect(self):
        for profile in ("standard", "strict"):
            self.assertEqual(self.probe("--sandbox", profile), CLOSED + ENV_UNSET, profile)

    def test_granted_code_reaches_the_desktop(self):
        for profile in ("standard", "strict"):
            self.assertEqual(self.probe("--sandbox", profile, "--display"),
                             OPEN + ENV_SET, profile)
        # And speaks Wayland there: a real client, through WAYLAND_DISPLAY.
        out = self.exec("shell", "wayland-info | grep -c zwlr_virtual_pointer_manager_v1",
                        "--display")
        self.assertEqual(out, ["1"])

    def swaymsg_exec(self, name, *opts):
        """Asks sway from inside to run `touch FILE`; whether FILE appears."""
        target = os.path.join(self.out, name)
        code = "swaymsg -s %s exec 'touch %s' 2>&1; echo status $?" % (
            self.sway.swaysock, target)
        self.exec("shell", code, *opts)
        # sway runs it at once (fork, exec): a second is plenty; the
        # positive control below proves the same wait sees it.
        h.wait_for(lambda: os.path.exists(target), 3)
        return os.path.exists(target)

    def test_swaymsg_exec_from_inside(self):
        for profile in ("standard", "strict"):
            self.assertFalse(self.swaymsg_exec("escaped-" + profile, "--sandbox", profile),
                             "sway ran a command sent from %s" % profile)

    def test_swaymsg_exec_with_the_grant(self):
        # The control: the same request, the same wait, does run it.
        self.assertTrue(self.swaymsg_exec("granted", "--display"))


class PrivateRuntimeDir(Base, unittest.TestCase):
    private = True


class SharedRuntimeDir(Base, unittest.TestCase):
    private = False

    def test_doctor_lists_the_sockets_hidden(self):
        s = self.sway
        env = s.environ(PATH=SYSTEM_PATH, HYPRLAND_INSTANCE_SIGNATURE=HYPR_SIG)
        r = h.run(s.prefix() + [os.path.abspath(h.binary()), "doctor"], env=env,
                  cwd=self.ws)
        out = r.stdout.decode()
        self.assertIn("Wayland socket       %s: hidden" % s.socket, out)
        self.assertIn("compositor IPC       %s: hidden" % s.swaysock, out)
        self.assertIn("PipeWire             %s: hidden" % self.paths[2], out)


class PrivateRuntimeDoctor(unittest.TestCase):
    def test_doctor_lists_the_sockets_hidden(self):
        with wayland.Sway() as s:
            r = h.run(s.prefix() + [os.path.abspath(h.binary()), "doctor"],
                      env=s.environ(PATH=SYSTEM_PATH), cwd=s.tmpdir())
            out = r.stdout.decode()
            self.assertIn("Wayland socket       %s: hidden" % s.socket, out)
            self.assertIn("compositor IPC       %s: hidden" % s.swaysock, out)
            self.assertIn("PipeWire             %s/pipewire-0: hidden (not there now)"
                          % s.runtime_dir, out)


if __name__ == "__main__":
    h.main()
