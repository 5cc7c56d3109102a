"""deskhand batch (issue 26) for real: tasks on private X servers in
enclosures of their own, driven by the script provider, with their setup,
apps and checks; results.jsonl, the resume after a kill -9, the timeout
that ends a task's whole tree, and the walls between tasks tried from
inside a task (another task's folder, display, processes; the model's key
in any process's environment)."""
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import harness as h

KEY = "sk-batch-test-0123456789abcdef"


def script(*turns):
    """A script provider file: each turn a text and its tool calls."""
    out = []
    for t in turns:
        text, calls = (t, []) if isinstance(t, str) else (t[0], t[1:])
        out.append({"text": text, "tool_calls": list(calls)})
    return {"turns": out}


def shell(code, display=False):
    return {"name": "execute", "arguments": {"language": "shell", "code": code,
                                             "display": display}}


def computer(action, **kw):
    return {"name": "computer", "arguments": dict(action=action, **kw)}


def processes_with(marker):
    """Pids of this machine's processes whose command line holds marker."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if marker.encode() in f.read().replace(b"\0", b" "):
                    found.append(int(p))
        except OSError:
            pass
    return found


class Batch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="deskhand-batch-", dir="/var/tmp")
        self.out = os.path.join(self.dir, "out")
        self.env = dict(os.environ, OPENAI_API_KEY=KEY)
        for k in ("DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS"):
            self.env.pop(k, None)

    def tearDown(self):
        if os.environ.get("DESKHAND_TEST_KEEP"):
            print("# kept", self.dir)
            return
        subprocess.run(["rm", "-rf", self.dir])

    def tasks(self, tasks, scripts):
        """Writes tasks.jsonl and a script per task id (s-ID.json)."""
        path = os.path.join(self.dir, "tasks.jsonl")
        with open(path, "w") as f:
            for t in tasks:
                f.write(json.dumps(t) + "\n")
        for tid, s in scripts.items():
            with open(os.path.join(self.dir, "s-%s.json" % tid), "w") as f:
                json.dump(s, f)
        return path

    def argv(self, *extra, approve=True):
        a = [h.binary(), "batch", os.path.join(self.dir, "tasks.jsonl"), "--out", self.out,
             "--provider", "script", "--script", os.path.join(self.dir, "s-{id}.json"), "-y"]
        return a + (["--os-auto-approve"] if approve else []) + list(extra)

    def batch(self, *extra, approve=True, timeout=240):
        r = h.run(self.argv(*extra, approve=approve), env=self.env, cwd=self.dir,
                  timeout=timeout)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def results(self):
        with open(os.path.join(self.out, "results.jsonl")) as f:
            return [json.loads(line) for line in f if line.strip()]

    def by_id(self):
        return {r["id"]: r for r in self.results()}

    def read(self, tid, name):
        with open(os.path.join(self.out, tid, name), errors="replace") as f:
            return f.read()

    def test_tasks_run_in_parallel_and_each_is_one_result_line(self):
        self.tasks([
            {"id": "writes", "instruction": "write out.txt", "screen": "1024x768",
             "setup": [["sh", "-c", "echo seed > seed.txt"]],
             "check": ["sh", "-c", "cat out.txt; grep -qx 'seed done' out.txt"]},
            {"id": "wrong", "instruction": "write nothing", "check": ["test", "-e", "out.txt"]},
            {"id": "sized", "instruction": "show the screen", "screen": "800x600",
             "check": ["sh", "-c", "xwininfo -root | grep -q 'Width: 800'"]},
        ], {
            "writes": script(("I'll write it.", shell("echo \"$(cat seed.txt) done\" > out.txt")),
                             "Done."),
            "wrong": script(("Looking.", computer("screenshot")), "Done."),
            "sized": script("Nothing to do."),
        })
        code, out, err = self.batch("--parallel", "2")
        self.assertEqual(code, 1, out + err)
        last = out.strip().splitlines()[-1]
        self.assertRegex(last, r"^3 tasks, 2 succeeded \(67 %\), median \d+\.\d s$")
        rs = self.results()
        self.assertEqual(sorted(r["id"] for r in rs), ["sized", "writes", "wrong"])
        fields = {"id", "success", "check_exit", "agent_exit", "steps", "actions", "seconds",
                  "error", "started", "ended", "screen"}
        for r in rs:
            self.assertEqual(set(r), fields, r)
        r = self.by_id()
        self.assertEqual((r["writes"]["success"], r["writes"]["check_exit"],
                          r["writes"]["agent_exit"], r["writes"]["error"]), (True, 0, 0, None))
        self.assertEqual((r["writes"]["steps"], r["writes"]["actions"]), (2, 1))
        self.assertIn("seed done", self.read("writes", "check.out"))
        self.assertEqual(r["wrong"]["success"], False)
        self.assertEqual(r["wrong"]["error"], "the check failed (exit 1)")
        self.assertEqual(r["wrong"]["actions"], 1)
        self.assertTrue(r["sized"]["success"], r["sized"])
        self.assertEqual(r["sized"]["screen"], "800x600")
        for tid in ("writes", "wrong", "sized"):
            for name in ("task.json", "conversation.json", "audit.jsonl", "agent.jsonl",
                         "check.out", "setup.log"):
                self.assertTrue(os.path.exists(os.path.join(self.out, tid, name)), (tid, name))
            r2 = h.run([h.binary(), "audit", "verify", os.path.join(self.out, tid,
                                                                    "audit.jsonl")])
            self.assertEqual(r2.returncode, 0, r2.stdout + r2.stderr)
        self.assertRegex(err, r"batch: \d/3 done \(\d failed\), \d running, \d+s elapsed")
        self.assertIn("FAIL wrong", err)

    def test_a_run_again_resumes_after_kill_9_and_records_every_task_once(self):
        ids = ["t%d" % i for i in range(5)]
        # Each task's app is a marked process: none may outlive the batch.
        tasks = [{"id": t, "instruction": "wait a little",
                  "apps": [["sh", "-c", "exec sleep 600.%d" % (4242 + i)]],
                  "check": ["true"], "timeout_s": 120} for i, t in enumerate(ids)]
        waits = {t: script(("Waiting.", shell("sleep 1.5")), "Done.") for t in ids}
        self.tasks(tasks, waits)
        p = subprocess.Popen(self.argv("--parallel", "2"), env=self.env, cwd=self.dir,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        path = os.path.join(self.out, "results.jsonl")

        def some_done():
            try:
                with open(path) as f:
                    return len(f.readlines()) >= 2
            except OSError:
                return False
        self.assertTrue(h.wait_for(some_done, timeout=120), "no task finished")
        p.kill()
        p.communicate(timeout=30)
        first = len(self.results())
        self.assertLess(first, 5)
        # The tasks that were running died with the batch, apps and all.
        gone = h.wait_for(lambda: not any(processes_with("sleep 600.%d" % (4242 + i))
                                          for i in range(5)), timeout=20)
        self.assertTrue(gone, "a task's process outlived the batch")
        # An unfinished task's folder holds a link its code planted: the
        # fresh start removes the folder, never what the link points to.
        keep = os.path.join(self.dir, "keep")
        os.makedirs(keep)
        with open(os.path.join(keep, "precious"), "w") as f:
            f.write("mine")
        unfinished = [t for t in ids if t not in self.by_id()]
        ws = os.path.join(self.out, unfinished[-1], "workspace")
        os.makedirs(ws, exist_ok=True)
        os.symlink(keep, os.path.join(ws, "link"))
        locked = os.path.join(ws, "locked")
        os.makedirs(os.path.join(locked, "inner"))
        os.chmod(locked, 0)
        code, out, err = self.batch("--parallel", "2")
        self.assertEqual(code, 0, out + err)
        self.assertIn("are done already", err)
        rs = self.results()
        self.assertEqual(sorted(r["id"] for r in rs), ids)
        self.assertTrue(all(r["success"] for r in rs), rs)
        self.assertTrue(os.path.exists(os.path.join(keep, "precious")))
        self.assertFalse(os.path.exists(os.path.join(ws, "link")))
        self.assertEqual(out.strip().splitlines()[-1][:25], "5 tasks, 5 succeeded (100")
        # Everything is done: a third run runs nothing.
        code, out, err = self.batch()
        self.assertEqual(code, 0, out + err)
        self.assertEqual(len(self.results()), 5)

    def test_a_timeout_ends_the_task_and_everything_it_started(self):
        self.tasks([
            {"id": "hangs", "instruction": "hang", "timeout_s": 4,
             # An app that escapes its process group and session, twice forked.
             "apps": [["sh", "-c", "setsid sh -c 'sleep 600.7731' & exec sleep 600.7732"]],
             "check": ["true"]},
            {"id": "after", "instruction": "nothing", "check": ["true"]},
        ], {
            "hangs": script(("Working.", shell("sleep 600.7733"))),
            "after": script("Done."),
        })
        code, out, err = self.batch()
        self.assertEqual(code, 1, out + err)
        r = self.by_id()
        self.assertFalse(r["hangs"]["success"])
        self.assertEqual(r["hangs"]["error"], "timed out after 4 s: the agent was ended")
        self.assertIsNone(r["hangs"]["check_exit"])
        self.assertTrue(r["after"]["success"], r["after"])
        for m in ("sleep 600.7731", "sleep 600.7732", "sleep 600.7733"):
            self.assertEqual(processes_with(m), [], m)

    def test_a_fork_bomb_and_a_killed_task_end_alone(self):
        """A fork bomb in the model's code (bounded by the sandbox's task cap)
        runs into the task's timeout and is ended whole; a task whose first
        process is killed from outside (kill -9) is recorded with why; the
        task after them runs."""
        bomb = "bomb() { bomb | bomb & }; bomb; sleep 600.8841"
        self.tasks([
            {"id": "bomb", "instruction": "bomb", "timeout_s": 6, "check": ["true"]},
            {"id": "killed", "instruction": "wait", "timeout_s": 120,
             "apps": [["sh", "-c", "exec sleep 600.8842"]], "check": ["true"]},
            {"id": "after", "instruction": "nothing", "check": ["true"]},
        ], {"bomb": script(("Forking.", shell(bomb))),
            "killed": script(("Waiting.", shell("sleep 600.8843"))),
            "after": script("Done.")})
        p = subprocess.Popen(self.argv("--parallel", "2"), env=self.env, cwd=self.dir,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # The enclosure of "killed": the batch's child whose apps include the marker.
        def init_of_killed():
            for pid in processes_with("sleep 600.8842"):
                with open("/proc/%d/stat" % pid) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                return ppid
            return None
        init = h.wait_for(init_of_killed, timeout=60)
        self.assertIsNotNone(init, "the task never started its app")
        os.kill(init, signal.SIGKILL)
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 1, out + err)
        r = self.by_id()
        self.assertEqual(r["bomb"]["error"], "timed out after 6 s: the agent was ended")
        self.assertEqual(r["killed"]["error"], "the task ended without an outcome (signal 9)")
        self.assertTrue(r["after"]["success"], r["after"])
        for m in ("sleep 600.8841", "sleep 600.8842", "sleep 600.8843"):
            self.assertTrue(h.wait_for(lambda: not processes_with(m), 20), m)

    def test_without_os_auto_approve_actions_are_refused_and_never_reach_the_display(self):
        self.tasks([
            {"id": "click", "instruction": "click", "screen": "1024x768",
             "apps": [["sh", "-c", "exec " + h.binary("xrecord") + " > events.txt"]],
             "check": ["sh", "-c", "grep -q '^ready' events.txt && ! grep -q '^press' events.txt"
                       " && false"]},
        ], {"click": script(("Clicking.", computer("left_click", coordinate=[500, 400])),
                            "Done.")})
        code, out, err = self.batch(approve=False)
        self.assertEqual(code, 1, out + err)
        r = self.by_id()["click"]
        self.assertIn("--os-auto-approve", r["error"])
        self.assertIn("refused", r["error"])
        events = self.read("click", "workspace/events.txt")
        self.assertIn("ready", events)
        self.assertNotIn("press", events)
        audit = [json.loads(x) for x in self.read("click", "audit.jsonl").splitlines()]
        self.assertIn("denied", [e["event"] for e in audit])
        self.assertNotIn("executed", [e["event"] for e in audit
                                      if e.get("kind") == "os_input"])

    def test_no_task_sees_another_or_the_key(self):
        sync = tempfile.mkdtemp(prefix="deskhand-batch-sync-", dir="/var/tmp")
        self.addCleanup(subprocess.run, ["rm", "-rf", sync])
        spy = os.path.join(self.dir, "spy.py")
        with open(spy, "w") as f:
            f.write(SPY)
        self.tasks([
            # a holds a secret and waits (bounded) until b has looked.
            {"id": "a", "instruction": "hold",
             "setup": [["sh", "-c", "echo secret-of-a > secret.txt; echo $DISPLAY > %s/a-display; "
                        "touch %s/a-ready; "
                        "for i in $(seq 600); do [ -e %s/b-done ] && break; sleep 0.1; done"
                        % (sync, sync, sync)]],
             "check": ["true"]},
            # b's app looks for the key in every process while b's agent runs;
            # b's check looks for a.
            {"id": "b", "instruction": "look",
             # (a windowless program is started from the setup: the agent
            # waits for the apps' windows)
             "setup": [["sh", "-c", "for i in $(seq 600); do [ -e %s/a-ready ] && break; "
                        "sleep 0.1; done" % sync],
                       ["sh", "-c", "python3 %s scan %s >spy.log 2>&1 &" % (spy, KEY)]],
             "check": ["python3", spy, "check", self.out, sync]},
        ], {"a": script("Done."), "b": script(("Working.", shell("sleep 2")), "Done.")})
        code, out, err = self.batch("--parallel", "2")
        report = self.read("b", "check.out")
        self.assertEqual(code, 0, out + err + report)
        self.assertIn("own folder only: ['b']", report)
        self.assertIn("scans while the agent ran: ", report)
        self.assertIn("key found: none", report)
        self.assertIn("processes: only the task's", report)
        self.assertIn("display without the cookie: refused", report)
        self.assertIn("the other task's display with this task's cookie: refused", report)

    def test_usage_errors_say_what_is_wrong(self):
        self.tasks([{"id": "a", "instruction": "x", "check": ["true"]}], {"a": script("ok")})
        cases = [
            (["--api-key", "sk-x"], "--api-key"),
            (["--conversation", "c.json"], "the batch's"),
            (["--console", "--audit", "a.jsonl"], "the batch's"),
            (["--index", "1"], "--index I and --count C go together"),
            (["--index", "2", "--count", "2"], "I < C"),
            (["--parallel", "0"], "--parallel 0"),
        ]
        for extra, says in cases:
            code, out, err = self.batch(*extra)
            self.assertEqual(code, 2, (extra, out, err))
            self.assertIn(says, err, extra)
        r = h.run([h.binary(), "batch", os.path.join(self.dir, "tasks.jsonl")], env=self.env)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"--out DIR is needed", r.stderr)
        # The output folder is hidden from the tasks: not the one their file is in.
        r = h.run([h.binary(), "batch", "tasks.jsonl", "--out", ".", "--provider", "script",
                   "--script", "s-{id}.json"], env=self.env, cwd=self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"holds the tasks' folder", r.stderr)
        bad = os.path.join(self.dir, "tasks.jsonl")
        for text, says in [
                ('{"id": "a", "instruction": "x", "check": ["true"]}\n'
                 '{"id": "b", "instruction": "y", "check": ["true"], "colour": 1}\n',
                 'tasks.jsonl:2: unknown field "colour"'),
                ('{"id": "a", "instruction": "x", "check": ["true"]}\n'
                 '{"id": "a", "instruction": "y", "check": ["true"]}\n',
                 'tasks.jsonl:2: id "a" is taken'),
                ('{"id": "../a", "instruction": "x", "check": ["true"]}\n', "tasks.jsonl:1: id"),
                ('{"id": "a", "instruction": "x\\u0000rm -rf", "check": ["true"]}\n', "NUL"),
                ('{"id": "a", "check": ["true"]}\n', "instruction is missing")]:
            with open(bad, "w") as f:
                f.write(text)
            code, out, err = self.batch()
            self.assertEqual(code, 2, (text, err))
            self.assertIn(says, err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.jsonl")))

    def test_index_and_count_take_a_share_and_a_second_batch_is_refused(self):
        ids = ["s%d" % i for i in range(5)]
        tasks = [{"id": t, "instruction": "x", "check": ["true"]} for t in ids]
        scripts = {t: script("Done.") for t in ids}
        scripts["s1"] = script(("Waiting.", shell("sleep 8")), "Done.")   # > the lock's wait
        self.tasks(tasks, scripts)
        p = subprocess.Popen(self.argv("--index", "1", "--count", "2"), env=self.env,
                             cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertTrue(h.wait_for(lambda: os.path.exists(os.path.join(self.out, "s1",
                                                                      "task.json")), 60))
        code, out, err = self.batch()
        self.assertEqual(code, 1, err)
        self.assertIn("another deskhand batch is writing there", err)
        o, e = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, o + e)
        self.assertEqual(sorted(r["id"] for r in self.results()), ["s1", "s3"])
        self.assertIn(b"2 tasks, 2 succeeded (100 %)", o)

    def test_a_lock_let_go_a_moment_later_is_waited_for(self):
        """As by the enclosures of a batch killed a moment ago, which die of
        its death a little after it: the next run waits, it is not refused
        (before, it was: 'another deskhand batch is writing there')."""
        self.tasks([{"id": "one", "instruction": "x", "check": ["true"]}],
                   {"one": script("Done.")})
        os.makedirs(self.out, exist_ok=True)
        held = open(os.path.join(self.out, ".batch.lock"), "a")
        fcntl.flock(held, fcntl.LOCK_EX)
        threading.Timer(0.5, held.close).start()
        code, out, err = self.batch()
        self.assertEqual(code, 0, err)
        self.assertEqual([r["id"] for r in self.results()], ["one"])

    def test_a_failing_setup_is_the_error_and_the_agent_never_starts(self):
        self.tasks([{"id": "setup", "instruction": "x", "check": ["true"],
                     "setup": [["true"], ["sh", "-c", "echo broken >&2; exit 3"]]}],
                   {"setup": script("Done.")})
        code, out, err = self.batch()
        self.assertEqual(code, 1)
        r = self.by_id()["setup"]
        self.assertEqual(r["error"], "setup command 2 (sh) exited with status 3: see setup.log")
        self.assertIsNone(r["agent_exit"])
        self.assertIn("broken", self.read("setup", "setup.log"))
        self.assertFalse(os.path.exists(os.path.join(self.out, "setup", "conversation.json")))

    def test_the_setup_and_apps_start_once_the_window_manager_runs(self):
        """A window mapped while openbox starts can stay unmanaged for good
        (off the client list, never seen by the agent): the task waits for
        the manager's EWMH check window. This manager takes a second to
        start; the setup, run at once before, finds it running."""
        probe = "xprop -root _NET_SUPPORTING_WM_CHECK > wm.txt 2>&1"
        self.tasks([{"id": "slow-wm", "instruction": "x", "check": ["true"],
                     "wm": ["sh", "-c", "sleep 1; exec openbox --sm-disable"],
                     "setup": [["sh", "-c", probe]]}],
                   {"slow-wm": script("Done.")})
        code, out, err = self.batch()
        self.assertEqual(code, 0, err + self.read("slow-wm", "setup.log"))
        seen = self.read("slow-wm", "workspace/wm.txt")
        self.assertIn("window id #", seen)
        self.assertNotIn("EWMH manager", self.read("slow-wm", "setup.log"))

    def test_a_window_manager_that_never_shows_is_logged_and_the_task_goes_on(self):
        self.tasks([{"id": "no-wm", "instruction": "x", "check": ["true"],
                     "wm": ["sleep", "600"]}], {"no-wm": script("Done.")})
        code, out, err = self.batch()
        self.assertEqual(code, 0, err)
        self.assertIn("--- the window manager (sleep) does not answer as an EWMH manager "
                      "after 10 s: the setup starts anyway", self.read("no-wm", "setup.log"))
        self.assertIs(self.by_id()["no-wm"]["success"], True)

    def test_an_ordinary_user_runs_a_batch_too(self):
        """As an unprivileged uid (nobody, when the tests run as root) the
        enclosure, the agent's own sandbox inside it and an xterm work,
        and the task's init, which holds the batch's environment, is out of
        the task's reach."""
        nobody = 65534
        if os.geteuid() == 0:
            os.chown(self.dir, nobody, nobody)
        self.tasks([{"id": "plain", "instruction": "x",
                     "apps": [["xterm", "-e", "sh", "-c", "echo up > xt.txt; exec sleep 60"]],
                     "check": ["sh", "-c", "cat xt.txt out.txt disp.txt && ! cat /proc/1/environ"]}],
                   {"plain": script(("Writing.", shell("echo hi > out.txt")),
                                    # display code needs a root-owned interpreter, which
                                    # shows as the overflow uid in the task's namespace
                                    ("And on the display.", shell("echo $DISPLAY > disp.txt",
                                                                  display=True)),
                                    "Done.")})
        if os.geteuid() == 0:
            for f in os.listdir(self.dir):
                os.chown(os.path.join(self.dir, f), nobody, nobody)
        prefix = (["setpriv", "--reuid=%d" % nobody, "--regid=%d" % nobody, "--clear-groups"]
                  if os.geteuid() == 0 else [])
        env = dict(self.env, HOME=self.dir)
        r = h.run(prefix + self.argv(), env=env, cwd=self.dir, timeout=240)
        out, err = r.stdout.decode(), r.stderr.decode()
        check = self.read("plain", "check.out") if os.path.exists(
            os.path.join(self.out, "plain", "check.out")) else ""
        self.assertEqual(r.returncode, 0, out + err + check)
        self.assertRegex(check, r"up\nhi\n:\d+\n")

    def test_console_per_task_lets_a_supervisor_approve(self):
        """--console without --os-auto-approve: each task's console link is
        in the progress and in DIR/ID/console.url (0600); a supervisor who
        answers y there makes the click happen, and only then."""
        sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "console"))
        import consolelib as cl
        self.tasks([{"id": "watched", "instruction": "click", "screen": "1024x768",
                     "apps": [["sh", "-c", "exec " + h.binary("xrecord") + " > events.txt"]],
                     "check": ["sh", "-c", "grep -q '^press button=1 x=500 y=400' events.txt"],
                     "timeout_s": 120}],
                   {"watched": script(("Clicking.", computer("left_click", coordinate=[500, 400])),
                                      "Done.")})
        p = subprocess.Popen(self.argv("--console", approve=False), env=self.env, cwd=self.dir,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        path = os.path.join(self.out, "watched", "console.url")
        self.assertTrue(h.wait_for(lambda: os.path.exists(path), 60), "no console.url")
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        with open(path) as f:
            url = f.read().strip()
        port = int(re.search(r":(\d+)/", url).group(1))

        class Link:   # what consolelib asks of an agent
            pass
        a = Link()
        a.approver, a.port = url, port
        a.host = "127.0.0.1:%d" % port
        a.origin = "http://" + a.host
        cookie, csrf = cl.login(a)
        ev = cl.Events(a, cookie)
        try:
            q = ev.question(timeout=60)
            self.assertIsNotNone(q, "no question reached the console")
            events = os.path.join(self.out, "watched", "workspace", "events.txt")
            with open(events) as f:
                self.assertNotIn("press", f.read())
            st, _, body = cl.post(a, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
            self.assertEqual(st, 200, body)
        finally:
            ev.close()
        out, err = p.communicate(timeout=180)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn(("watched: console " + url).encode(), err)
        self.assertTrue(self.by_id()["watched"]["success"])


# The spy inside task b (run as `spy.py scan KEY` while b's agent runs, and
# `spy.py check OUT SYNC` as b's check).
SPY = r'''
import os, socket, subprocess, sys, time

def scan(key):
    found, scans, agent_seen = [], 0, False
    end = time.monotonic() + 20
    while time.monotonic() < end:
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) in (os.getpid(), os.getppid()):
                continue
            for name in ("environ", "cmdline"):
                try:
                    with open("/proc/%s/%s" % (p, name), "rb") as f:
                        if key.encode() in f.read():
                            found.append((p, name))
                except OSError:
                    pass
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    if b"--conversation" in f.read():
                        agent_seen = True
            except OSError:
                pass
        scans += agent_seen
        if agent_seen and scans > 5 and not alive_agent():
            break
        time.sleep(0.05)
    with open("spy.txt", "w") as f:
        f.write("%d %s\n" % (scans, ",".join("%s/%s" % x for x in found) or "none"))

def alive_agent():
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if b"--conversation" in f.read():
                    return True
        except OSError:
            pass
    return False

def check(out, sync):
    ok = True
    seen = sorted(os.listdir(out))
    print("own folder only: %s" % seen); ok &= seen == ["b"]
    ok &= not os.path.exists(os.path.join(out, "a", "workspace", "secret.txt"))
    for _ in range(200):
        if os.path.exists("spy.txt"):
            break
        time.sleep(0.05)
    with open("spy.txt") as f:
        scans, found = f.read().split()
    print("scans while the agent ran: %s" % scans); ok &= int(scans) > 0
    print("key found: %s" % found); ok &= found == "none"
    procs = [p for p in os.listdir("/proc") if p.isdigit()]
    cmds = []
    for p in procs:
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmds.append(f.read())
        except OSError:
            pass
    mine = not any(b"secret-of-a" in c or b"a-ready" in c for c in cmds)
    print("processes: %s" % ("only the task's" if mine and "1" in procs else "others'"))
    ok &= mine
    print("x sockets: %s" % os.listdir("/tmp/.X11-unix"))
    env = dict(os.environ, XAUTHORITY="/nonexistent")
    r = subprocess.run(["xwininfo", "-root"], env=env, capture_output=True)
    r2 = subprocess.run(["xwininfo", "-root"], capture_output=True)
    refused = r.returncode != 0 and r2.returncode == 0
    print("display without the cookie: %s" % ("refused" if refused else "open"))
    ok &= refused
    with open(os.path.join(sync, "a-display")) as f:
        other = f.read().strip()
    mine = os.environ["DISPLAY"]
    r3 = subprocess.run(["xwininfo", "-root"], env=dict(os.environ, DISPLAY=other),
                        capture_output=True)
    refused = other != mine and r3.returncode != 0
    print("the other task's display with this task's cookie: %s (%s, mine %s)"
          % ("refused" if refused else "open", other, mine))
    ok &= refused
    open(os.path.join(sync, "b-done"), "w").close()
    sys.exit(0 if ok else 1)

if sys.argv[1] == "scan":
    scan(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3])
'''

if __name__ == "__main__":
    h.main()
