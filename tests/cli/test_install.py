"""meson install as a user or a packager runs it: a copy of the source tree
is configured for a fresh prefix, built, installed with --destdir (as
dpkg-buildpackage does) and moved into that prefix; then the copy and its
build are deleted, and the installed deskhand must still work: --version,
scan with the installed rules, exec python. Under strace (when installed)
no path in either source tree or build directory is ever touched."""
import json
import os
import re
import shutil
import subprocess
import unittest

import harness as h


def _ignore(directory, names):
    """What a copy of the source tree leaves out: git's data, npm's
    packages, and every meson build directory (whatever its name)."""
    skip = {".git", "node_modules"}
    for n in names:
        if os.path.isfile(os.path.join(directory, n, "meson-private", "coredata.dat")):
            skip.add(n)
    return skip & set(names)


def _version():
    with open(os.path.join(h.SRCDIR, "meson.build")) as f:
        return re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)


def setUpModule():
    global TOP, PREFIX, GONE, PLAN, ENV, WORK
    if shutil.which("meson") is None or shutil.which("ninja") is None:
        raise unittest.SkipTest("meson and ninja are not installed")
    TOP = h.tmpdir()
    src, build = os.path.join(TOP, "src"), os.path.join(TOP, "build")
    stage, PREFIX = os.path.join(TOP, "stage"), os.path.join(TOP, "prefix")
    shutil.copytree(h.SRCDIR, src, ignore=_ignore, symlinks=True)
    # -Dtests=false: what a package builds; it needs no cmocka and is quicker.
    for cmd in (["meson", "setup", "-Dtests=false", "--prefix", PREFIX, build, src],
                ["ninja", "-C", build],
                # --strip, as a package's install is: what remains is what
                # the program itself holds (debug information names the build).
                ["meson", "install", "-C", build, "--no-rebuild", "--strip",
                 "--destdir", stage]):
        r = h.run(cmd, timeout=900, cwd=TOP)
        if r.returncode != 0:
            raise AssertionError("%s failed (%d):\n%s%s" % (
                " ".join(cmd), r.returncode, r.stdout.decode()[-4000:],
                r.stderr.decode()[-4000:]))
    r = h.run(["meson", "introspect", "--installed", build], timeout=120, cwd=TOP)
    PLAN = json.loads(r.stdout)
    # The staged tree lands where it was configured to live: the prefix
    # exists only now, as on a machine where a package was unpacked.
    os.rename(stage + PREFIX, PREFIX)
    shutil.rmtree(stage)
    shutil.rmtree(src)
    shutil.rmtree(build)
    # Every tree deskhand must not touch: the copy and its build (gone now,
    # so a lookup there would fail, not silently succeed) and the checkout
    # and build this test runs from (still present).
    global SRC
    SRC = src
    GONE = [src, build, h.SRCDIR, os.path.realpath(h.SRCDIR),
            os.path.realpath(h.build_dir())]
    WORK = os.path.join(TOP, "work")
    home = os.path.join(TOP, "home")
    os.makedirs(WORK)
    os.makedirs(os.path.join(home, ".config"))
    # A user's environment: none of the harness's variables (DESKHAND_BIN,
    # PYTHONPATH into tests/lib), no path into the checkout.
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(":")
            if p and not any(p == g or p.startswith(g + "/") for g in GONE)]
    ENV = {"PATH": ":".join(path), "HOME": home, "LANG": "C.UTF-8",
           "XDG_CONFIG_HOME": os.path.join(home, ".config")}


def tearDownModule():
    shutil.rmtree(TOP, ignore_errors=True)


def installed(*parts):
    return os.path.join(PREFIX, *parts)


# Every path a syscall names in strace's output: "..." arguments.
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


class Installed(unittest.TestCase):
    def run_installed(self, args, input=None):
        """Runs the installed deskhand from a directory of its own; under
        strace -f (when installed) checks that no path of the source trees or
        build directories is named by any file syscall of the whole process
        tree (the sandboxed child too)."""
        cmd = [installed("bin", "deskhand")] + list(args)
        log = None
        if shutil.which("strace"):
            log = os.path.join(TOP, "strace.log")
            cmd = ["strace", "-f", "-qq", "-s", "4096", "-e", "trace=%file",
                   "-o", log] + cmd
        r = h.run(cmd, env=ENV, input=input, timeout=120, cwd=WORK)
        if log is not None:
            with open(log, errors="replace") as f:
                text = f.read()
            os.unlink(log)
            touched = sorted({p for p in QUOTED.findall(text)
                              if any(p == g or p.startswith(g + "/") for g in GONE)})
            self.assertEqual(touched, [], "the installed deskhand looked in a source tree")
            self.assertIn(installed("bin", "deskhand"), text)  # strace saw the run
        else:
            print("# strace not installed: the source trees are gone, not watched")
        return r

    def test_everything_planned_is_installed(self):
        # meson's own list of what it installs: a man page or a completion
        # added later with an install rule is checked here with no change.
        self.assertGreater(len(PLAN), 0)
        for dest in PLAN.values():
            with self.subTest(dest=dest):
                self.assertTrue(os.path.exists(dest), dest)

    def test_what_a_user_needs(self):
        self.assertTrue(os.access(installed("bin", "deskhand"), os.X_OK))
        self.assertTrue(os.path.isfile(installed("share", "deskhand", "scan-rules.json")))
        doc = installed("share", "doc", "deskhand")
        self.assertTrue(os.path.isfile(os.path.join(doc, "README.md")))
        pages = sorted(n for n in os.listdir(os.path.join(h.SRCDIR, "docs"))
                       if n.endswith(".md"))
        self.assertGreater(len(pages), 0)
        for n in pages:
            with self.subTest(page=n):
                # docs/ keeps its name, so the README's links resolve.
                self.assertTrue(os.path.isfile(os.path.join(doc, "docs", n)))

    def test_no_source_path_compiled_in(self):
        # A path into the tree it was built from would be a lookup that
        # works only on the developer's machine.
        with open(installed("bin", "deskhand"), "rb") as f:
            data = f.read()
        self.assertNotIn(SRC.encode(), data)

    def test_version(self):
        r = self.run_installed(["--version"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), "deskhand %s\n" % _version())

    def test_scan_reads_the_installed_rules(self):
        snippet = os.path.join(WORK, "clean-up.sh")
        with open(snippet, "w") as f:
            f.write('rm -rf "$HOME"\n')
        r = self.run_installed(["scan", "--check-rules", "--no-user-rules", snippet])
        self.assertEqual(r.returncode, 1, r.stderr)  # 1: findings
        out = r.stdout.decode()
        # --check-rules names where the rules came from: the installed copy,
        # not the compiled-in one (nor a source tree's).
        self.assertIn("(%s)\n" % installed("share", "deskhand", "scan-rules.json"), out)
        self.assertRegex(out, r"(?m)^1:critical:destroy\.rm-home: ")

    def test_exec_python(self):
        if shutil.which("python3", path=ENV["PATH"]) is None:
            self.skipTest("python3 is not installed")
        r = self.run_installed(["exec", "python"], input="print(1)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"1\n")


if __name__ == "__main__":
    h.main()
