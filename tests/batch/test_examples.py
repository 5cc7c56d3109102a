"""The example suite (examples/tasks/) under `deskhand batch`, replayed by
the script provider: every checker passes the scripted solution
(solutions/pass/ID.json) and fails the wrong one (solutions/fail/ID.json).

The wrong solutions do something plausible (type the wrong text, forget to
save, keep the old extension, pick the wrong item), so a checker that looked
at anything but the application's real state (the file saved, the form's
output, the order the page POSTed, the number on the calculator) could not
tell them apart. A failure must come from the checker: the agent ended
normally (agent_exit 0) and the checker ran (check_exit not null).

The apps come from Debian (.ci/install-deps, the example suite's block);
where one is missing the test is skipped with its name, except when
DESKHAND_REQUIRE_TASKS=1 (.ci/run), where that is a failure."""
import json
import os
import shutil
import subprocess
import unittest

import harness as h
import reportlib as rl

SUITE = os.path.join(h.SRCDIR, "examples", "tasks")
TASKS = os.path.join(SUITE, "tasks.jsonl")
# What the tasks, their solutions and checkers run (the package in brackets).
NEEDED = {
    "Xvfb": "xvfb", "dbus-daemon": "dbus-daemon", "openbox": "openbox",
    "xterm": "xterm", "mousepad": "mousepad", "zenity": "zenity",
    "chromium": "chromium", "xcalc": "x11-apps", "pcmanfm": "pcmanfm",
    "xdotool": "xdotool", "xwininfo": "x11-utils", "xclip": "xclip",
}
# The whole batch of six tasks, twice over, on two shared cores: a bound
# for a hang, not a measure of speed.
BATCH_TIMEOUT = 900


def missing():
    return ["%s (%s)" % (p, pkg) for p, pkg in sorted(NEEDED.items())
            if shutil.which(p) is None]


def task_ids():
    ids = []
    with open(TASKS, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                ids.append(json.loads(line)["id"])
    return ids


def read_results(out):
    with open(os.path.join(out, "results.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class ExampleSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        gone = missing()
        if gone:
            why = "the example suite needs " + ", ".join(gone)
            if os.environ.get("DESKHAND_REQUIRE_TASKS") == "1":
                raise AssertionError(why + " (DESKHAND_REQUIRE_TASKS=1)")
            raise unittest.SkipTest(why)
        cls.ids = task_ids()

    def batch_args(self, kind, root=None):
        root = root or h.tmpdir()
        out = os.path.join(root, "out")
        home = os.path.join(root, "home")
        os.makedirs(home, exist_ok=True)
        # The user's dotfiles and config are not the test's.
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_DATA_HOME=os.path.join(home, ".local", "share"))
        for k in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY",
                  "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            env.pop(k, None)
        argv = [h.binary(), "batch", TASKS, "--out", out, "--parallel", "2",
                "-y", "--os-auto-approve", "--provider", "script",
                "--script", "{tasks}/solutions/%s/{id}.json" % kind]
        return argv, env, root, out

    def batch(self, kind, root=None):
        """Runs the suite with the scripted solutions of KIND; returns
        (exit status, output, {id: result line}, out dir, its parent)."""
        argv, env, root, out = self.batch_args(kind, root)
        r = h.run(argv, env=env, cwd=root, timeout=BATCH_TIMEOUT)
        text = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
        self.assertTrue(os.path.exists(os.path.join(out, "results.jsonl")),
                        "deskhand batch exited %d and wrote no results.jsonl:\n%s"
                        % (r.returncode, text[-3000:]))
        results = {}
        for line in read_results(out):
            self.assertNotIn(line["id"], results, "a task recorded twice:\n" + text)
            results[line["id"]] = line
        self.assertEqual(sorted(results), sorted(self.ids), text)
        return r.returncode, text, results, out, root

    def report_opens(self, out):
        if rl.browser_missing():
            if os.environ.get("DESKHAND_REQUIRE_BROWSER") == "1":
                raise AssertionError(rl.browser_missing())
            return
        b = rl.Browser()
        try:
            b.do("open", page="r", url="file://" + os.path.join(out, "report.html"))
            b.wait("r", rl.IMAGES_LOADED)
            sizes = b.eval("r", rl.IMAGE_SIZES)
            self.assertGreater(len(sizes), len(self.ids))
            self.assertTrue(all(w > 0 for _, w in sizes), sizes)
            text = b.eval("r", "document.body.innerText")
            for tid in self.ids:
                self.assertIn(tid, text)
        finally:
            b.stop()

    def clean(self, root, ok):
        """The batch's folders (Chromium's profile among them) are removed
        when everything held, and kept for a look when something did not."""
        if ok:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print("# the batch's folders are kept in %s" % root)

    def check_out(self, out, tid):
        try:
            with open(os.path.join(out, tid, "check.out"), encoding="utf-8",
                      errors="replace") as f:
                return f.read()
        except OSError as e:
            return "(no check.out: %s)" % e

    def killed_halfway(self, kind):
        """The batch killed (SIGKILL) once two tasks are recorded; the folder."""
        argv, env, root, out = self.batch_args(kind)
        p = subprocess.Popen(argv, env=env, cwd=root, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        path = os.path.join(out, "results.jsonl")

        def two():
            try:
                with open(path) as f:
                    return len(f.readlines()) >= 2
            except OSError:
                return False
        done = h.wait_for(two, timeout=BATCH_TIMEOUT)
        p.kill()
        p.wait(60)
        self.assertTrue(done, "no two tasks finished")
        self.assertLess(len(read_results(out)), len(self.ids), "all done before the kill")
        return root

    def test_pass_solutions_pass(self):
        """Killed halfway and run again, the batch records every task once
        (batch() checks), every checker passes, and the report opens in
        Chromium with every screenshot."""
        root = self.killed_halfway("pass")
        status, text, results, out, root = self.batch("pass", root)
        self.assertIn("are done already", text)
        self.report_opens(out)
        self.clean(root, status == 0 and all(
            r["success"] is True and r["check_exit"] == 0 and r["agent_exit"] == 0
            for r in results.values()))
        for tid in self.ids:
            res = results[tid]
            with self.subTest(task=tid):
                why = "%s\ncheck.out: %s\n%s" % (res, self.check_out(out, tid), text[-3000:])
                self.assertIs(res["success"], True, why)
                self.assertEqual(res["check_exit"], 0, why)
                self.assertEqual(res["agent_exit"], 0, why)
                self.assertIsNone(res["error"], why)
                self.assertGreater(res["actions"], 0, why)
        self.assertEqual(status, 0, text[-3000:])

    def test_fail_solutions_fail(self):
        status, text, results, out, root = self.batch("fail")
        self.clean(root, status == 1 and all(
            r["success"] is False and r["agent_exit"] == 0 and r["check_exit"] not in (None, 0)
            for r in results.values()))
        for tid in self.ids:
            res = results[tid]
            with self.subTest(task=tid):
                why = "%s\ncheck.out: %s\n%s" % (res, self.check_out(out, tid), text[-3000:])
                self.assertIs(res["success"], False, why)
                # The agent did its (wrong) work to the end, and the checker,
                # reading the app's state, said no: not a crash, not a timeout.
                self.assertEqual(res["agent_exit"], 0, why)
                self.assertIsNotNone(res["check_exit"], why)
                self.assertNotEqual(res["check_exit"], 0, why)
                self.assertGreater(res["actions"], 0, why)
                # The checker says what it found.
                self.assertTrue(self.check_out(out, tid).strip(), why)
        self.assertEqual(status, 1, text[-3000:])


if __name__ == "__main__":
    h.main()
