"""vision/'s settle on Wayland (a headless sway, tests/lib/wayland.py), through
tests/vision/vision-probe run as the compositor's uid. A check reads the
screen in 64-row strips, and every screencopy waits for the output's next
frame; os/wlroots takes the strips of one read from one frame: otherwise a
check costs 17 frames at 1080 rows, and a settled screenshot (the agent's
every step) 0.85 s instead of 0.05 s. The frames are counted (WAYLAND_DEBUG's
log of deskhand's requests), not timed: the machine is shared."""
import os
import sys
import unittest

import harness as h
import wayland

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "os"))
import wl_util  # noqa: E402


def probe(sway, *args):
    """The probe's key=value results, and how many screencopy frames it asked for."""
    r = sway.run_as([os.path.join(h.build_dir(), "tests", "vision", "vision-probe")] +
                    [str(a) for a in args], env={"WAYLAND_DEBUG": "client"}, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    out = dict(kv.split("=", 1) for kv in r.stdout.decode().split())
    out["frames"] = r.stderr.count(b"capture_output(")
    return out


class Settle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=1, size=(1920, 1080))
        cls.addClassCleanup(cls.sway.stop)

    def test_a_still_screen_settles_in_a_few_frames(self):
        foot = wl_util.noise_foot(self.sway, "still", 1)
        self.addCleanup(foot.stop)
        wl_util.wait_still(self.sway)
        runs = [probe(self.sway, "settle", 10, 2, 2000) for _ in range(3)]
        for r in runs:
            self.assertEqual((r["settled"], r["changed"], r["checks"]), ("1", "0", "3"), r)
            # One frame per check; read in strips it was 17 per check.
            self.assertEqual(r["frames"], 3, r)

    def test_a_changing_screen_never_settles(self):
        # A whole-screen check still sees a counter change in one corner.
        foot = wl_util.foot_showing(self.sway, "busy", "i=0; while :; do i=$((i+1)); "
                                    "printf '\\r%d' $i; sleep 0.02; done")
        self.addCleanup(foot.stop)
        wl_util.wait_view(self.sway, "busy", focused=True)
        r = probe(self.sway, "settle", 10, 2, 600)
        self.assertEqual((r["settled"], r["changed"]), ("0", "1"), r)
        self.assertGreaterEqual(int(r["waited_ms"]), 600, r)


if __name__ == "__main__":
    h.main()
