"""What deskhand maps at start: every command pays for each shared library
the binary links (mapping, and binding its symbols), so the libraries only
some commands use are loaded by those commands (base/dlib) and must not be
among the binary's start-up set. Read from the dynamic loader itself
(LD_TRACE_LOADED_OBJECTS, what ldd prints): the whole set, what the
linked libraries pull in included. The time it costs is measured in
bench/startup, not here."""
import os
import re
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


if __name__ == "__main__":
    h.main()
