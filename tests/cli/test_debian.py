"""debian/: what the package asks of a user's machine, checked against the
code. Depends holds runtime packages only (no -dev, no test or build
tools); every program deskhand starts and every library it loads at run
time is named in a relation field (Depends when nothing works without it);
Build-Depends names every pkg-config module meson asks for; the changelog's
version is meson.build's. When dpkg-buildpackage and lintian are installed,
the package is built from a copy of the tree and lintian may report no
error (DESKHAND_REQUIRE_DEB=1, which .ci/run sets, makes missing tools a
failure instead of a skip)."""
import glob
import os
import re
import shutil
import subprocess
import unittest

import harness as h

DEBIAN = os.path.join(h.SRCDIR, "debian")
# The C sources of the binary (tests/, bench/ and the fuzz targets are not
# installed).
ROOMS = ("base", "os", "vision", "executors", "agent")

# Packages that are for building or testing deskhand, never for running it.
BUILD_OR_TEST = {
    "build-essential", "gcc", "clang", "meson", "ninja-build", "pkg-config", "pkgconf",
    "scdoc", "debhelper", "dpkg-dev", "lintian", "strace", "libcmocka0", "xterm",
    "x11-apps", "x11-utils", "x11-xserver-utils", "xtrace", "socat", "openbox",
    "hyperfine", "imagemagick", "scrot", "maim", "xdotool", "weston", "sway", "foot",
    "grim", "wtype", "npm", "gtk-3-examples", "gtk-4-examples", "zenity", "time", "bc",
}

# Where deskhand starts a program: each exec-family call in the sources, by
# file, with what it starts and how often that is needed. A new call fails
# test_every_exec_site_is_known until it is entered here (and its package
# named in debian/control).
#   essential:   an Essential package's program (nothing to declare)
#   feature:     only some features need it (Recommends or Suggests)
#   always:      deskhand does not work without it (Depends)
EXEC_SITES = {
    # $DESKHAND_EDITOR through sh, when a human edits a proposal.
    "agent/safety/gate_proposal.c": [("/bin/sh", "essential")],
    # A private session bus when the display has none (accessibility).
    "os/bus.c": [("dbus-daemon", "feature")],
    # The interpreter of the language a block of code is in (exec_lang.c).
    "executors/exec_supervisor.c": [("interpreter", "feature")],
    # deskhand batch: each task's private X server ...
    "os/x11/server.c": [("Xvfb", "feature")],
    # ... and the commands its task file names (setup, apps, check, wm).
    "agent/batch/task_proc.c": [("the task's commands", "feature")],
}
PROGRAM_PACKAGE = {"/bin/sh": None, "dbus-daemon": "dbus-daemon", "Xvfb": "xvfb"}
# Programs no package of deskhand's provides: the user names them.
NAMED_BY_USER = ("interpreter", "the task's commands")
# exec_lang.c's interpreters (the first name of each language) and their
# packages; bash is Essential.
INTERPRETER_PACKAGE = {"python3": "python3", "bash": None, "node": "nodejs",
                       "ruby": "ruby", "Rscript": "r-base-core"}
# Libraries dlopen()ed by soname (config.h's DESKHAND_*_SONAME): shlibs
# cannot see them. The agent cannot reach a model without libcurl; the
# others are loaded by the commands that need them (the console's and
# mcp --http's server, OCR, the accessibility tree, the GNOME backend).
DLOPEN_PACKAGE = {"DESKHAND_CURL_SONAME": ("libcurl4", "always"),
                  "DESKHAND_MICROHTTPD_SONAME": ("libmicrohttpd12", "feature"),
                  "DESKHAND_GLIB_SONAME": ("libglib2.0-0", "feature"),
                  "DESKHAND_GOBJECT_SONAME": ("libglib2.0-0", "feature"),
                  "DESKHAND_GIO_SONAME": ("libglib2.0-0", "feature"),
                  "DESKHAND_PIPEWIRE_SONAME": ("libpipewire-0.3-0", "feature"),
                  "DESKHAND_DBUS_SONAME": ("libdbus-1-3", "feature"),
                  "DESKHAND_ATSPI_SONAME": ("libatspi2.0-0", "feature"),
                  "DESKHAND_EDIT_SONAME": ("libedit2", "feature"),
                  "DESKHAND_TESSERACT_SONAME": ("libtesseract5", "feature")}

EXEC_CALL = re.compile(r"\b(execv|execve|execvp|execvpe|execl|execlp|execle|fexecve|"
                       r"posix_spawnp?|popen|system)\s*\(")


def paragraphs(path):
    """deb822: a list of {Field: value} (continuation lines joined)."""
    out, cur, last = [], {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    out.append(cur)
                cur, last = {}, None
            elif line[0] in " \t" and last:
                cur[last] += "\n" + line.strip()
            else:
                k, _, v = line.partition(":")
                last = k.strip()
                cur[last] = v.strip()
    if cur:
        out.append(cur)
    return out


def relation_names(value):
    """Package names of a relation field: alternatives flattened, versions,
    architectures and build profiles dropped, substitution variables kept."""
    names = []
    for rel in value.replace("\n", " ").split(","):
        for alt in rel.split("|"):
            alt = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alt).strip()
            if alt:
                # python3:any names python3; ${shlibs:Depends} stays whole.
                names.append(alt if alt.startswith("${") else alt.split(":")[0])
    return names


def strip_comments(c):
    c = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), c, flags=re.S)
    return re.sub(r"//[^\n]*", "", c)


def _ignore(directory, names):
    skip = {".git", "node_modules"}
    for n in names:
        if os.path.isfile(os.path.join(directory, n, "meson-private", "coredata.dat")):
            skip.add(n)
    return skip & set(names)


def setUpModule():
    global SOURCE, BINARY
    paras = paragraphs(os.path.join(DEBIAN, "control"))
    SOURCE = paras[0]
    BINARY = [p for p in paras[1:] if p.get("Package") == "deskhand"][0]


def fields(*names):
    out = []
    for n in names:
        out += relation_names(BINARY.get(n, ""))
    return out


class Control(unittest.TestCase):
    def test_depends_are_runtime_packages(self):
        for name in fields("Depends", "Pre-Depends", "Recommends"):
            with self.subTest(package=name):
                self.assertFalse(name.endswith("-dev") or "-dev-" in name, name)
                self.assertNotIn(name, BUILD_OR_TEST)

    def test_depends_come_from_shlibs(self):
        deps = fields("Depends")
        self.assertIn("${shlibs:Depends}", deps)
        self.assertIn("${misc:Depends}", deps)
        # The rest is exactly what the code needs and shlibs cannot see.
        explicit = {d for d in deps if not d.startswith("${")}
        always = {p for p, how in DLOPEN_PACKAGE.values() if how == "always"}
        always |= {PROGRAM_PACKAGE[prog] for sites in EXEC_SITES.values()
                   for prog, how in sites if how == "always"}
        self.assertEqual(explicit, always)

    def test_every_exec_site_is_known(self):
        found = {}
        for room in ROOMS:
            for path in glob.glob(os.path.join(h.SRCDIR, room, "**", "*.c"), recursive=True):
                with open(path, errors="replace") as f:
                    n = len(EXEC_CALL.findall(strip_comments(f.read())))
                if n:
                    found[os.path.relpath(path, h.SRCDIR)] = n
        self.assertEqual(sorted(found), sorted(EXEC_SITES),
                         "a program started where EXEC_SITES does not say: "
                         "enter it there and name its package in debian/control")
        for rel, n in found.items():
            with self.subTest(file=rel):
                self.assertEqual(n, len(EXEC_SITES[rel]), rel)

    def test_started_programs_are_declared(self):
        depends = fields("Depends", "Pre-Depends")
        related = fields("Depends", "Pre-Depends", "Recommends", "Suggests")
        for sites in EXEC_SITES.values():
            for prog, how in sites:
                if prog in NAMED_BY_USER:
                    continue
                pkg = PROGRAM_PACKAGE[prog]
                with self.subTest(program=prog):
                    if how == "essential":
                        self.assertIsNone(pkg)
                    elif how == "always":
                        self.assertIn(pkg, depends)
                    else:
                        self.assertIn(pkg, related)

    def test_interpreters_are_declared(self):
        with open(os.path.join(h.SRCDIR, "executors", "exec_lang.c")) as f:
            text = f.read()
        # [EXEC_PYTHON] = {"python3", NULL}: the names searched on PATH.
        table = re.findall(r"\[EXEC_\w+\]\s*=\s*\{\s*\"([^\"]+)\"", text)
        self.assertGreaterEqual(len(table), 5, "exec_lang.c's table of interpreters moved")
        related = fields("Recommends", "Suggests")
        for prog in table:
            with self.subTest(interpreter=prog):
                self.assertIn(prog, INTERPRETER_PACKAGE,
                              "a new language: name its interpreter's package here "
                              "and in debian/control's Recommends or Suggests")
                pkg = INTERPRETER_PACKAGE[prog]
                if pkg is not None:
                    self.assertIn(pkg, related)
                    self.assertNotIn(pkg, fields("Depends"))

    def test_dlopened_libraries_are_declared(self):
        with open(os.path.join(h.SRCDIR, "meson.build")) as f:
            sonames = set(re.findall(r"'(DESKHAND_\w+_SONAME)'", f.read()))
        self.assertEqual(sonames, set(DLOPEN_PACKAGE))
        for define, (pkg, how) in DLOPEN_PACKAGE.items():
            with self.subTest(library=define):
                field = ("Depends",) if how == "always" else ("Recommends",)
                self.assertIn(pkg, fields(*field))

    def test_the_issue_s_recommends(self):
        # What only some features use: a private display, OCR's English
        # data, the accessibility bus, a browser for the console, python3.
        rec = fields("Recommends")
        for pkg in ("xvfb", "tesseract-ocr-eng", "at-spi2-core", "chromium", "python3"):
            self.assertIn(pkg, rec)

    def test_build_depends_cover_meson(self):
        bd = relation_names(SOURCE.get("Build-Depends", ""))
        for pkg in ("debhelper-compat", "meson", "ninja-build", "pkg-config", "python3"):
            self.assertIn(pkg, bd)
        self.assertFalse([p for p in bd if p in ("chromium", "xvfb", "sway", "npm")])
        if shutil.which("pkg-config") is None or shutil.which("dpkg") is None:
            self.skipTest("pkg-config or dpkg missing: modules not mapped to packages")
        modules = set()
        for path in glob.glob(os.path.join(h.SRCDIR, "**", "meson.build"), recursive=True):
            if "/node_modules/" in path:
                continue
            with open(path) as f:
                modules |= set(re.findall(r"\bdependency\('([^']+)'", f.read()))
        modules.discard("threads")  # meson's own, not a pkg-config module
        for mod in sorted(modules):
            with self.subTest(module=mod):
                r = h.run(["pkg-config", "--path", mod])
                if r.returncode != 0:
                    self.skipTest("%s.pc is not installed here" % mod)
                pc = os.path.realpath(r.stdout.decode().strip())
                r = h.run(["dpkg", "-S", pc])
                if r.returncode != 0:
                    self.skipTest("%s is in no package here" % pc)
                owner = r.stdout.decode().split(":")[0].strip()
                self.assertIn(owner, bd, "%s comes from %s" % (mod, owner))

    def test_changelog_version_is_meson_s(self):
        with open(os.path.join(DEBIAN, "changelog")) as f:
            head = f.readline()
        with open(os.path.join(h.SRCDIR, "meson.build")) as f:
            version = re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)
        m = re.match(r"deskhand \(([^)]+)\)", head)
        self.assertTrue(m, head)
        upstream = re.sub(r"-[^-]+$", "", m.group(1))
        self.assertEqual(upstream, version)

    def test_copyright_names_a_license(self):
        with open(os.path.join(DEBIAN, "copyright")) as f:
            text = f.read()
        self.assertIn("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
                      text)
        self.assertNotIn("TODO", text)
        self.assertRegex(text, r"(?m)^License: \S+")


def _missing_tools():
    missing = [t for t in ("dpkg-buildpackage", "dpkg-checkbuilddeps", "lintian")
               if shutil.which(t) is None]
    if missing:
        return "not installed: " + ", ".join(missing)
    r = h.run(["dpkg-checkbuilddeps", os.path.join(DEBIAN, "control")], timeout=120)
    if r.returncode != 0:
        return r.stderr.decode().strip()
    return None


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = _missing_tools()
        if why is not None:
            if os.environ.get("DESKHAND_REQUIRE_DEB"):
                raise AssertionError("cannot build the package: " + why)
            raise unittest.SkipTest(why)
        cls.top = h.tmpdir()
        tree = os.path.join(cls.top, "deskhand")
        shutil.copytree(h.SRCDIR, tree, ignore=_ignore, symlinks=True)
        env = dict(os.environ)
        for k in ("DESKHAND_BIN", "DESKHAND_BUILD", "MESON_BUILD_ROOT", "MESONINTROSPECT",
                  "DEB_BUILD_PROFILES", "DEB_BUILD_OPTIONS"):
            env.pop(k, None)
        r = h.run(["dpkg-buildpackage", "-us", "-uc", "-b", "-jauto"], env=env, cwd=tree,
                  timeout=900)
        cls.build = r
        cls.debs = sorted(glob.glob(os.path.join(cls.top, "deskhand_*.deb")))
        cls.changes = glob.glob(os.path.join(cls.top, "deskhand_*.changes"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.top, ignore_errors=True)

    def test_builds(self):
        self.assertEqual(self.build.returncode, 0,
                         (self.build.stdout + self.build.stderr).decode()[-6000:])
        self.assertEqual(len(self.debs), 1, self.debs)

    def test_contents(self):
        if not self.debs:
            self.skipTest("no package built")
        r = h.run(["dpkg-deb", "-c", self.debs[0]])
        paths = {line.split()[-1].lstrip(".") for line in r.stdout.decode().splitlines()}
        for p in ["/usr/bin/deskhand", "/usr/share/deskhand/scan-rules.json",
                  "/usr/share/doc/deskhand/README.md", "/usr/share/doc/deskhand/copyright"] + \
                 ["/usr/share/doc/deskhand/docs/" + n
                  for n in os.listdir(os.path.join(h.SRCDIR, "docs")) if n.endswith(".md")]:
            with self.subTest(path=p):
                self.assertIn(p, paths)
        r = h.run(["dpkg-deb", "-f", self.debs[0], "Depends"])
        depends = relation_names(r.stdout.decode())
        self.assertIn("libcurl4", depends)
        self.assertFalse([d for d in depends if d.endswith("-dev")], depends)

    def test_lintian_finds_no_error(self):
        if not self.changes:
            self.skipTest("no package built")
        r = h.run(["lintian", "--fail-on", "error", "--info", self.changes[0]],
                  timeout=600)
        out = r.stdout.decode()
        # The tags that remain, for the log (debian/README.source says why).
        for line in out.splitlines():
            if re.match(r"^[EWIPX]: ", line):
                print("# " + line)
        self.assertEqual(r.returncode, 0, out + r.stderr.decode())


if __name__ == "__main__":
    h.main()
