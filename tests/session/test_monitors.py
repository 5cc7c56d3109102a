"""Two monitors: the agent shows the model one of them (--monitor N, or the
pointer's at start) and maps its clicks with that monitor's origin."""
import subprocess
import unittest

import harness as h
import xinput_util as xi
from agentlib import FakeLLM, Run, call, last_image


def setUpModule():
    global X
    X = h.Xvfb(1920, 1080)
    for name, geo in (("left", "960/254x1080/286+0+0"), ("right", "960/254x1080/286+960+0")):
        subprocess.run(["xrandr", "--setmonitor", name, geo, "none"], env=X.env(),
                       check=True, timeout=30, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def tearDownModule():
    X.stop()


def to_screen(m, origin, screen, model):
    """The mapping deskhand documents: the centre of the model pixel's span."""
    return origin + (2 * m + 1) * screen // (2 * model)


class Monitors(unittest.TestCase):
    def run_click(self, flags, pointer):
        rec = xi.Recorder(X)
        try:
            xi.deskhand(X, "move", *pointer)
            rec.reset()
            seen = {}

            def look(body, fmt):
                seen["size"] = last_image(body)[:2]
                return {"tool_calls": [call("computer", action="left_click",
                                            coordinate=[100, 100])]}
            turns = [{"tool_calls": [call("computer", action="screenshot")]}, look,
                     {"text": "ok"}]
            r = Run()
            with FakeLLM(turns) as srv:
                # A single computer tool (Sonnet 4.5's) declares the size it is shown.
                p = r.run(srv, "anthropic", "--os", "--model", "claude-sonnet-4-5", *flags,
                          "-m", "click", X=X, input=b"y\n")
                self.assertEqual(p.returncode, 0, p.stderr)
                comp = [t for t in srv.requests[0]["body"]["tools"] if t["name"] == "computer"][0]
            evs = rec.wait_count(1, kinds=("press",))
            press = [e for e in evs if e["kind"] == "press"][0]
            return seen["size"], (comp["display_width_px"], comp["display_height_px"]), \
                (int(press["x"]), int(press["y"]))
        finally:
            rec.stop()

    def test_monitor_flag(self):
        size, declared, (x, y) = self.run_click(["--monitor", "1"], (100, 100))
        self.assertEqual(size, (711, 800))      # 960x1080 fitted into 1280x800
        self.assertEqual(declared, size)
        self.assertEqual((x, y), (to_screen(100, 960, 960, 711), to_screen(100, 0, 1080, 800)))

    def test_the_pointers_monitor_by_default(self):
        size, _, (x, y) = self.run_click([], (1500, 500))
        self.assertEqual(size, (711, 800))
        self.assertGreaterEqual(x, 960)
        self.assertEqual(x, to_screen(100, 960, 960, 711))

    def test_no_such_monitor(self):
        r = Run()
        with FakeLLM([{"text": "never"}]) as srv:
            p = r.run(srv, "openai", "--os", "--monitor", "7", "-m", "x", X=X)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"no such monitor", p.stderr)


if __name__ == "__main__":
    h.main()
