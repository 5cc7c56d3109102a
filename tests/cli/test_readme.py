"""The README is a newcomer's first page: it fits on a page (250 lines), its
table of contents leads to its own headings, every link to a file leads to
one that exists, every page of docs/ is linked from it and named by
`deskhand --help`'s last lines, and its demo command installs only the
demo's packages (`.ci/install-deps --demo`, whose list is a strict part of
the full one)."""
import os
import re
import subprocess
import unittest

import harness as h

README = os.path.join(h.SRCDIR, "README.md")
DOCS = os.path.join(h.SRCDIR, "docs")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


class Readme(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(README) as f:
            cls.text = f.read()

    def test_fits_on_a_page(self):
        self.assertLessEqual(self.text.count("\n"), 250)

    def test_contents_lead_to_headings(self):
        headings = {slug(m) for m in re.findall(r"^#{2,3} (.+)$", self.text, re.M)}
        contents = self.text.split("## Contents", 1)[1].split("\n## ", 1)[0]
        anchors = re.findall(r"\]\(#([^)]+)\)", contents)
        self.assertGreaterEqual(len(anchors), 6)
        for a in anchors:
            self.assertIn(a, headings, "contents link #%s has no heading" % a)

    def test_links_to_files_exist(self):
        for page in [README] + [os.path.join(DOCS, p) for p in os.listdir(DOCS)
                                if p.endswith(".md")]:
            with open(page) as f:
                text = f.read()
            for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
                path = os.path.normpath(os.path.join(os.path.dirname(page), target))
                self.assertTrue(os.path.exists(path), "%s links to %s, which does not exist"
                                % (os.path.relpath(page, h.SRCDIR), target))

    def test_every_page_is_linked_and_named_by_help(self):
        out = subprocess.run([h.binary(), "--help"], capture_output=True, text=True,
                             timeout=30).stdout
        tail = out[out.rindex("More:"):]
        for p in sorted(os.listdir(DOCS)):
            if not p.endswith(".md"):
                continue
            self.assertIn("docs/" + p, self.text, "README does not link docs/" + p)
            self.assertIn(p[:-3], tail, "deskhand --help does not name docs/" + p)

    def test_demo_installs_only_the_demo(self):
        self.assertIn("bash .ci/install-deps --demo && examples/demo.sh", self.text)
        script = os.path.join(h.SRCDIR, ".ci", "install-deps")
        lists = {}
        for mode in ("--demo", ""):
            # The lists as the script builds them (every package "missing"),
            # with apt-get and npm doing nothing.
            r = subprocess.run(["bash", "-c", 'dpkg-query() { return 1; }; '
                                'apt-get() { :; }; npm() { :; }; sudo() { "$@"; }; '
                                'export -f dpkg-query apt-get npm sudo; source "$0" "$1"',
                                script, mode],
                               capture_output=True, text=True, timeout=60, cwd=h.tmpdir())
            line = [ln for ln in r.stderr.splitlines() if ln.startswith("installing: ")]
            lists[mode] = set(line[0].split()[1:]) if line else set()
        self.assertTrue(lists["--demo"], "no package list for --demo")
        self.assertLess(lists["--demo"], lists[""])
        for heavy in ("chromium", "mutter", "sway", "r-base-core", "imagemagick",
                      "hyperfine", "libcmocka-dev"):
            self.assertNotIn(heavy, lists["--demo"])
        for needed in ("xvfb", "xterm", "meson", "libx11-dev"):
            self.assertIn(needed, lists["--demo"])

    def test_the_source_build_names_every_build_package_and_the_man_pages(self):
        """"From source" lists .ci/install-deps's build_pkgs and scdoc: a
        prefix built with that list alone got no man page (seen on a clean
        root: `meson install` put none in place without scdoc)."""
        block = self.text.split("**From source.**", 1)[1].split("meson setup", 1)[0]
        named = set(block.split("sudo apt-get install", 1)[1].replace("\\", " ").split())
        r = subprocess.run(["bash", "-c", "eval \"$(sed -n '/^build_pkgs=(/,/^)/p' "
                            ".ci/install-deps)\"; echo \"${build_pkgs[@]}\""],
                           capture_output=True, text=True, timeout=30, cwd=h.SRCDIR)
        want = set(r.stdout.split()) | {"scdoc"}
        self.assertIn("meson", want)
        self.assertEqual(named, want)


if __name__ == "__main__":
    h.main()
