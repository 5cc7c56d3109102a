"""deskhand doctor's container section, outside a container: the runtime
found (or none), whether seccomp filters deskhand, the paths of /proc that
are mounted over, and each of the sandbox's needs as the probe found it.
A masked /proc is made for real (a tmpfs over a /proc folder, in a user and
mount namespace of the test's own): the pid namespace is then refused by
the kernel, and doctor names the flags that unmask /proc. What it says
inside podman is tests/batch/test_container.py's."""
import os
import re
import unittest

import harness as h

NEEDS = ("user namespace", "pid namespace", "mount namespace")


def section(out):
    """The container line and its three need lines, by name."""
    m = re.search(r"^container {2,}(.*)$", out, re.M)
    if m is None:
        return None, {}
    rows = {}
    for line in out[m.end():].splitlines()[1:4]:
        name, _, rest = line.strip().partition("  ")
        rows[name] = rest.strip()
    return m.group(1), rows


class DoctorContainer(unittest.TestCase):
    def doctor(self, prefix=()):
        d = h.tmpdir()
        env = dict(os.environ, HOME=d, XDG_DATA_HOME=d, XDG_CONFIG_HOME=d)
        env.pop("DISPLAY", None)
        r = h.run(list(prefix) + [h.binary(), "doctor"], env=env, timeout=120)
        return r, r.stdout.decode(errors="replace")

    def test_the_section_agrees_with_the_probe(self):
        r, out = self.doctor()
        head, rows = section(out)
        self.assertIsNotNone(head, out)
        self.assertRegex(head, r"^(none found \(|\S.* \(.+\); )")
        self.assertRegex(head, r"; seccomp filter (loaded|none); /proc (unmasked|masked at /proc/)")
        for need in NEEDS:
            layer = re.search(r"^%s {2,}(.*)$" % need, out, re.M).group(1)
            state = "REFUSED" if layer.startswith("no: ") else "granted"
            self.assertIn(": " + state, rows[need], out)

    def test_a_masked_proc_names_the_flags_that_unmask_it(self):
        target = next((p for p in ("/proc/acpi", "/proc/driver", "/proc/tty")
                       if os.path.isdir(p)), None)
        if target is None:
            self.skipTest("no folder under /proc to mount over")
        probe = h.run(["unshare", "-Urm", "true"], timeout=30)
        if probe.returncode != 0:
            self.skipTest("no user namespaces here: %s" % probe.stderr.decode(errors="replace"))
        # The rest of doctor's arguments follow the script's own ($0 is sh).
        r, out = self.doctor(["unshare", "-Urm", "sh", "-c",
                              'mount -t tmpfs tmpfs "$0" && exec "$@"', target])
        head, rows = section(out)
        self.assertIn("/proc masked at " + target, head, out)
        pid = rows["pid namespace"]
        self.assertIn("REFUSED; fix: ", pid, out)
        for flag in ("--security-opt unmask=ALL", "systempaths=unconfined",
                     "procMount: Unmasked"):
            self.assertIn(flag, pid)
        self.assertIn(": granted", rows["user namespace"], out)
        # The first part: the profiles cannot run, and the fix is the same.
        self.assertRegex(out, r"sandbox standard +no: pid namespace: mounting its /proc")
        self.assertIn("fix: paths of /proc are masked", out)
        self.assertEqual(r.returncode, 1, out)


if __name__ == "__main__":
    h.main()
