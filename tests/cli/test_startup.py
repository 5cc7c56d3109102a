"""What deskhand maps at start: every command pays for each shared library
the binary links (mapping, and binding its symbols), so the libraries only
some commands use are loaded by those commands (base/dlib) and must not be
among the binary's start-up set. Read from the dynamic loader itself
(LD_TRACE_LOADED_OBJECTS, what ldd prints): the whole set, what the
linked libraries pull in included. A library that cannot be loaded when a
command needs it (hidden for real: /dev/null bound over it in a mount
namespace of the test's own) is said in one line, and doctor says so too.
The time it costs is measured in bench/startup, not here."""
import ctypes
import os
import re
import shutil
import subprocess
import unittest

import harness as h

# soname prefix: who loads it, and when.
LOADED_ON_USE = {
    "libmicrohttpd.so": "the console and mcp --http, when their server starts",
    "libgnutls.so": "libmicrohttpd's",
    "libcurl.so": "the model providers, at the first connection",
    "libtesseract.so": "OCR, at its first use",
    "libatspi.so": "the accessibility tree, when first asked for",
    "libdbus-1.so": "the accessibility tree's",
    "libsystemd.so": "libdbus's",
    "libglib-2.0.so": "the GNOME backend and the accessibility tree",
    "libgio-2.0.so": "the GNOME backend, when its display opens",
    "libpipewire-0.3.so": "the GNOME backend's",
    "libedit.so": "the line editor, at the first prompt on a terminal",
    "libtinfo.so": "libedit's",
}


def start_up_set():
    env = dict(os.environ, LD_TRACE_LOADED_OBJECTS="1")
    r = h.run([h.binary(), "--version"], env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    names = re.findall(r"^\s*(\S+\.so[.\d]*)", r.stdout.decode(), re.M)
    assert names, r.stdout
    return [os.path.basename(n) for n in names]


def library_path(soname):
    """Where the dynamic loader finds soname here (it is loaded into this
    process to ask: the maps name the file)."""
    ctypes.CDLL(soname)
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if os.path.basename(path).startswith(soname):
                return path
    return None


def without(soname, argv, env=None, timeout=60):
    """argv run with soname unloadable: /dev/null bound over its file in a
    private mount namespace (root only; None when that cannot be had)."""
    path = library_path(soname)
    if path is None or shutil.which("unshare") is None or os.geteuid() != 0:
        return None
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        return None
    script = 'mount --bind /dev/null "$0" && exec "$@"'
    return h.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, path]
                 + argv, env=env, timeout=timeout)


class StartUp(unittest.TestCase):
    def test_libraries_of_some_commands_are_not_mapped_at_start(self):
        mapped = start_up_set()
        for prefix, who in LOADED_ON_USE.items():
            with self.subTest(library=prefix):
                self.assertFalse([m for m in mapped if m.startswith(prefix)],
                                 "%s is for %s, yet mapped at start: %s"
                                 % (prefix, who, " ".join(mapped)))

    def test_version_still_runs(self):
        r = h.run([h.binary(), "--version"], timeout=60)
        self.assertEqual(r.returncode, 0)
        self.assertTrue(r.stdout.decode().startswith("deskhand "))


    def test_the_console_without_libmicrohttpd(self):
        home = h.tmpdir()
        env = dict(os.environ, HOME=home, XDG_DATA_HOME=home, XDG_CONFIG_HOME=home,
                   XDG_STATE_HOME=home)
        r = without("libmicrohttpd.so.12", [h.binary(), "doctor"], env=env, timeout=120)
        if r is None:
            self.skipTest("no private mount namespace here (needs root and unshare)")
        out = r.stdout.decode(errors="replace").partition("\n\n")[0]  # the ready part
        row = [l for l in out.splitlines() if l.strip().startswith("console ")]
        self.assertEqual(len(row), 1, out)
        self.assertIn("no: cannot load libmicrohttpd.so.12 (install libmicrohttpd12)", row[0])
        with h.Xvfb(640, 480) as x:
            r = without("libmicrohttpd.so.12", [h.binary(), "mcp", "--http", "127.0.0.1:0"],
                        env=dict(x.env(), HOME=home, XDG_DATA_HOME=home,
                                 XDG_CONFIG_HOME=home, XDG_STATE_HOME=home))
        err = r.stderr.decode(errors="replace")
        self.assertTrue(0 < r.returncode < 128, (r.returncode, err))
        last = err.strip().splitlines()[-1]
        self.assertIn("--http: cannot load libmicrohttpd.so.12 (install libmicrohttpd12)", last)


    def test_the_accessibility_tree_without_libatspi(self):
        with h.Xvfb(640, 480) as x:
            home = h.tmpdir()
            env = dict(x.env(), HOME=home, XDG_DATA_HOME=home, XDG_CONFIG_HOME=home,
                       XDG_STATE_HOME=home)
            r = without("libatspi.so.0", [h.binary(), "doctor"], env=env, timeout=120)
            if r is None:
                self.skipTest("no private mount namespace here (needs root and unshare)")
            out = r.stdout.decode(errors="replace").partition("\n\n")[0]  # the ready part
            row = [l for l in out.splitlines() if l.strip().startswith("accessibility ")]
            self.assertEqual(len(row), 1, out)
            self.assertIn("no: cannot load libatspi.so.0 (install libatspi2.0-0)", row[0])
            self.assertNotIn("at-spi2-core", row[0])  # not the bus: the library
            r = without("libatspi.so.0", [h.binary(), "elements"], env=env)
            self.assertIn("cannot load libatspi.so.0 (install libatspi2.0-0)",
                          r.stderr.decode(errors="replace"))


if __name__ == "__main__":
    h.main()
