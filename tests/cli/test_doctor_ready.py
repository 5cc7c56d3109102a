"""deskhand doctor as a new user's first stop: its first part names every
feature (the agent, OS control on this desktop, OCR, accessibility, the
console, code in each language, each sandbox profile) as ready or not, and
for each that is not, the Debian package or setting that fixes it — each
broken here for real: no desktop, no English OCR data, an interpreter off
PATH."""
import os
import unittest

import harness as h

FEATURES = ("agent", "OS control", "OCR", "accessibility", "console", "code: python",
            "code: shell", "code: javascript", "code: ruby", "code: r", "sandbox standard",
            "sandbox strict", "batch")


def ready_part(out):
    head, _, _ = out.partition("\n\n")
    rows = {}
    for line in head.splitlines()[1:]:
        name, _, state = line.strip().partition("  ")
        if name and not name.startswith("fix:"):
            rows[name] = state.strip()
    return rows


class DoctorReady(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.X = h.Xvfb(640, 480)

    @classmethod
    def tearDownClass(cls):
        cls.X.stop()

    def doctor(self, env):
        d = h.tmpdir()
        env = dict(env, HOME=d, XDG_DATA_HOME=d, XDG_CONFIG_HOME=d)
        r = h.run([h.binary(), "doctor"], env=env, timeout=120)
        return r.stdout.decode(errors="replace"), ready_part(r.stdout.decode(errors="replace"))

    def test_every_feature_has_a_row(self):
        out, rows = self.doctor(self.X.env())
        for f in FEATURES:
            self.assertIn(f, rows, out)
            self.assertTrue(rows[f].startswith(("ready", "no: ")), rows[f])
        self.assertTrue(rows["OS control"].startswith("ready: x11 backend"), out)

    def test_no_desktop_says_how_to_get_one(self):
        env = dict(self.X.env())
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        out, rows = self.doctor(env)
        self.assertIn("apt install xvfb", rows["OS control"], out)
        self.assertIn("no:", rows["accessibility"], out)

    def test_batch_names_what_it_lacks(self):
        out, rows = self.doctor(self.X.env())
        self.assertEqual(rows["batch"], "ready (each task in user, mount and pid namespaces "
                         "of its own)", out)
        # A PATH without Xvfb (only what doctor itself needs beside it).
        bin_dir = h.tmpdir()
        out, rows = self.doctor(dict(self.X.env(), PATH=bin_dir))
        self.assertEqual(rows["batch"], "no: Xvfb is not installed: apt install xvfb", out)

    def test_missing_ocr_data_names_its_package(self):
        out, rows = self.doctor(dict(self.X.env(), TESSDATA_PREFIX=h.tmpdir()))
        if "built without OCR" in rows["OCR"]:
            self.assertIn("libtesseract-dev", rows["OCR"])
            return
        self.assertTrue(rows["OCR"].startswith("no: "), out)
        self.assertIn("tesseract-ocr-eng", rows["OCR"], out)

    def test_an_interpreter_off_path_names_its_package(self):
        # A PATH with the shell's and python's directories but no node.
        d = h.tmpdir()
        for prog in ("bash", "sh", "python3"):
            for p in ("/usr/bin", "/bin"):
                if os.path.exists(os.path.join(p, prog)):
                    os.symlink(os.path.join(p, prog), os.path.join(d, prog))
                    break
        out, rows = self.doctor(dict(self.X.env(), PATH=d))
        self.assertEqual(rows["code: javascript"], "no: apt install nodejs", out)
        self.assertEqual(rows["code: ruby"], "no: apt install ruby", out)


if __name__ == "__main__":
    h.main()
