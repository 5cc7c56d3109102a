"""kill -9 of deskhand at random points of a long scripted run (an instant
model, code auto-approved, so it is always writing the conversation, its
records and the audit log), 100 times: every conversation file left behind
resumes with its messages, every audit log verifies or names the one line a
crash leaves past its head (exit 3) — never a tampering verdict, never a
false "was changed" — and no process of the run outlives it. Then planted
edits: a line changed in the middle, one line cut short, lines added."""
import json
import os
import random
import re
import signal
import subprocess
import time
import unittest

import harness as h
from agentlib import FakeLLM, Run, call, marked, texts

RUNS = 100
STEPS = 400         # far more than a run lives: every kill lands mid-run


def script(path, turns):
    with open(path, "w") as f:
        json.dump({"turns": turns}, f)


def long_script(path):
    turns = []
    for i in range(STEPS):
        code = "print(%d)" % i if i % 7 else "import time; time.sleep(0.05); print(%d)" % i
        turns.append({"text": "step %d " % i + "x" * 300,
                      "tool_calls": [call("execute", language="python", code=code)]})
    turns.append({"text": "done"})
    script(path, turns)


def verify(env, path):
    return h.run([h.binary(), "audit", "verify", path], env=env, timeout=60)


def lines_of(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


class Kill9(unittest.TestCase):
    def check_log(self, env, path, what):
        """The log verifies, or fails only at the end a crash leaves: the
        line named is its last, past the head's recorded end."""
        v = verify(env, path)
        out = v.stdout.decode()
        if v.returncode == 0:
            return "ok"
        self.assertEqual(v.returncode, 3, "%s: %s%s" % (what, out, v.stderr.decode()))
        m = re.search(r": line (\d+): (after the recorded end|incomplete last line)", out)
        self.assertIsNotNone(m, out)
        self.assertEqual(int(m.group(1)), lines_of(path), out)
        self.assertIn("lines 1-%d verify" % (int(m.group(1)) - 1), out)
        return "crash end"

    def one_run(self, n, delay, long_path):
        r = Run()
        mark = "k9-%d-%d" % (os.getpid(), n)
        env = r.env(DESKHAND_TEST_MARK=mark)
        args = [h.binary(), "--provider", "script", "--script", long_path, "-y",
                "--max-steps", "100000", "--conversation", r.conv, "--audit", r.audit,
                "--workspace", r.work, "-m", "count"]
        p = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(delay)
        self.assertIsNone(p.poll(), "the run ended before its kill")
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        left = h.wait_for(lambda: not marked(mark), 30)
        self.assertTrue(left, "run %d: processes left behind: %r" % (n, marked(mark)))
        found = {"log": "none", "conv": "none"}
        if os.path.exists(r.audit):
            found["log"] = self.check_log(env, r.audit, "run %d" % n)
        before = []
        if os.path.exists(r.conv):
            with open(r.conv) as f:
                before = json.load(f)["messages"]
            found["conv"] = "%d messages" % len(before)
        # Resumed: the model gets the old messages and the new question.
        with FakeLLM([{"text": "resumed fine"}]) as srv:
            q = h.run(r.args(srv, "openai", "-m", "go on"), env=env, timeout=60)
            sent = texts(srv.requests[0]["body"]) if srv.requests else ""
        err = q.stderr.decode()
        self.assertEqual(q.returncode, 0, "run %d: %s" % (n, err))
        self.assertNotIn("WAS CHANGED", err, "run %d: a crash is not an edit" % n)
        self.assertNotIn("FAILS VERIFICATION", err, "run %d: a crash is not an edit" % n)
        if found["log"] == "crash end":
            self.assertIn("the audit log ends where deskhand was stopped", err)
        self.assertIn(b"resumed fine", q.stdout, "run %d: %s" % (n, err))
        self.assertIn("go on", sent)
        if before:
            self.assertIn("count", sent)
            self.assertIn(json.dumps(before[-1]["content"][0].get("text", ""))[1:-1], sent)
        with open(r.conv) as f:
            after = json.load(f)["messages"]
        self.assertEqual(after[:len(before)], before)
        self.assertEqual([m["role"] for m in after[len(before):]], ["user", "assistant"])
        # A log the resume set aside is kept as it was; the one it wrote verifies.
        for name in os.listdir(r.dir):
            if name.endswith(".jsonl") and os.path.join(r.dir, name) != r.audit:
                self.assertEqual(verify(env, os.path.join(r.dir, name)).returncode, 0, name)
        # base_atomic's file is unnamed (O_TMPFILE) until it is whole on
        # disk, then named and renamed at once: a kill while it is written
        # leaves nothing (before, 7 runs in 100 left a .conv.json.XXXXXXXX).
        found["temp"] = [n for n in os.listdir(r.dir) if n.startswith(".conv.json.")]
        return found

    def test_kill_9_at_random_points(self):
        seed = int(os.environ.get("DESKHAND_K9_SEED", random.randrange(1 << 30)))
        rnd = random.Random(seed)
        print("# seed %d (DESKHAND_K9_SEED repeats it)" % seed, flush=True)
        long_path = os.path.join(h.tmpdir(), "long.json")
        long_script(long_path)
        seen, temps = {}, 0
        for n in range(RUNS):
            with self.subTest(run=n):
                found = self.one_run(n, rnd.uniform(0.0, 0.6), long_path)
                key = (found["log"], found["conv"] != "none")
                seen[key] = seen.get(key, 0) + 1
                temps += bool(found["temp"])
                self.assertEqual(found["temp"], [], "a temporary file left behind")
        for (log, conv), count in sorted(seen.items()):
            print("# %3d runs: audit log %s, conversation %s" %
                  (count, log, "left" if conv else "none yet"), flush=True)
        print("# %3d runs left a temporary .conv.json.XXXXXXXX behind" % temps, flush=True)


class Planted(unittest.TestCase):
    """A finished log, then one edit at a time on a copy of it and its head;
    a save stopped between its record and its file, planted the same way."""

    @classmethod
    def setUpClass(cls):
        cls.r = Run()
        path = os.path.join(cls.r.dir, "short.json")
        script(path, [{"tool_calls": [call("execute", language="python", code="print(%d)" % i)]}
                      for i in range(6)] + [{"text": "done"}])
        p = h.run([h.binary(), "--provider", "script", "--script", path, "-y",
                   "--conversation", cls.r.conv, "--audit", cls.r.audit,
                   "--workspace", cls.r.work, "-m", "six"], env=cls.r.env(), timeout=120)
        assert p.returncode == 0, p.stderr
        with open(cls.r.audit, "rb") as f:
            cls.lines = f.read().splitlines(keepends=True)
        with open(cls.r.audit + ".head", "rb") as f:
            cls.head = f.read()
        assert len(cls.lines) > 12, len(cls.lines)

    def planted(self, lines, head=None):
        d = h.tmpdir()
        path = os.path.join(d, "planted.jsonl")
        with open(path, "wb") as f:
            f.write(b"".join(lines))
        with open(path + ".head", "wb") as f:
            f.write(head if head is not None else self.head)
        v = verify(self.r.env(), path)
        return v.returncode, v.stdout.decode()

    def test_the_untouched_log_verifies(self):
        rc, out = self.planted(self.lines)
        self.assertEqual(rc, 0, out)

    def test_a_line_changed_in_the_middle_is_named(self):
        k = len(self.lines) // 2          # 1-based line k+1 is the one changed
        lines = list(self.lines)
        o = json.loads(lines[k])
        o["ts"] = o["ts"][:-2] + ("1" if o["ts"][-2] != "1" else "2") + o["ts"][-1:]
        lines[k] = (json.dumps(o, separators=(",", ":")) + "\n").encode()
        rc, out = self.planted(lines)
        self.assertEqual(rc, 1, out)
        self.assertIn(": line %d: line %d does not follow line %d: line %d was changed" %
                      (k + 2, k + 2, k + 1, k + 1), out)

    def test_a_torn_last_line_is_a_crash_not_an_edit(self):
        # The head records every line before it: what a write cut short leaves.
        n = len(self.lines)
        whole = self.planted(self.lines[:-1])       # the head then runs past the end
        self.assertEqual(whole[0], 1, whole[1])
        self.assertIn("cut off", whole[1])
        lines = list(self.lines)
        head = self.head_for(lines[:-1])
        lines[-1] = lines[-1][:len(lines[-1]) // 2]
        rc, out = self.planted(lines, head)
        self.assertEqual(rc, 3, out)
        self.assertIn(": line %d: incomplete last line (no newline) after the recorded end "
                      "(line %d)" % (n, n - 1), out)
        self.assertIn("lines 1-%d verify" % (n - 1), out)

    def test_one_line_past_the_head_is_a_crash_two_are_not(self):
        n = len(self.lines)
        rc, out = self.planted(self.lines, self.head_for(self.lines[:-1]))
        self.assertEqual(rc, 3, out)
        self.assertIn(": line %d: after the recorded end (line %d)" % (n, n - 1), out)
        rc, out = self.planted(self.lines, self.head_for(self.lines[:-2]))
        self.assertEqual(rc, 1, out)
        self.assertIn(": line %d: after the recorded end (line %d): 2 lines added by "
                      "another writer" % (n - 1, n - 2), out)

    def test_a_torn_line_in_the_middle_is_not_a_crash(self):
        k = len(self.lines) // 2
        lines = list(self.lines)
        lines[k] = lines[k][:len(lines[k]) // 2]   # joined to the next line
        rc, out = self.planted(lines)
        self.assertEqual(rc, 1, out)
        self.assertIn(": line %d:" % (k + 1), out)

    def resume_after(self, tail_events):
        """A copy of the finished run whose log then records its file as
        saved, followed by `tail_events` (the conversation record of a save
        whose file never landed, and what else); resumed, its stderr."""
        import hashlib
        import shutil
        d = h.tmpdir()
        conv, audit = os.path.join(d, "conv.json"), os.path.join(d, "audit.jsonl")
        shutil.copy(self.r.conv, conv)
        with open(conv, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        lines = list(self.lines)
        ts = json.loads(lines[-1])["ts"]
        for ev in [{"event": "conversation", "path": os.path.realpath(conv), "sha256": sha}] + \
                tail_events:
            o = dict(ts=ts, prev=hashlib.sha256(lines[-1]).hexdigest(), **ev)
            if o.get("path") == "@":
                o["path"] = os.path.realpath(conv)
            lines.append((json.dumps(o, separators=(",", ":")) + "\n").encode())
        with open(audit, "wb") as f:
            f.write(b"".join(lines))
        with open(audit + ".head", "wb") as f:
            f.write(self.head_for(lines))
        with FakeLLM([{"text": "on we go"}]) as srv:
            p = h.run([h.binary(), "--provider", "openai", "--api-base", srv.base_url("openai"),
                       "--model", "fake", "--conversation", conv, "--audit", audit,
                       "--workspace", self.r.work, "-m", "more"], env=self.r.env(), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stderr.decode()

    def test_a_save_stopped_between_its_record_and_its_file(self):
        # kill -9 after the record of a save, before its rename: the file is
        # what the record before vouched for, and nothing was logged since.
        unsaved = {"event": "conversation", "path": "@", "sha256": "ab" * 32}
        err = self.resume_after([unsaved])
        self.assertNotIn("WAS CHANGED", err)
        self.assertIn("is the conversation as saved before its last save", err)
        # Once anything was logged after that record, the save had landed:
        # a file that is not what it says was changed.
        err = self.resume_after([unsaved, {"event": "setting", "name": "x", "value": "y"}])
        self.assertIn("WAS CHANGED", err)

    def head_for(self, lines):
        """The head deskhand writes after `lines`: their count and the last one's hash."""
        import hashlib
        last = hashlib.sha256(lines[-1]).hexdigest() if lines else "0" * 64
        return json.dumps({"lines": len(lines), "last": last},
                          separators=(",", ":")).encode()


if __name__ == "__main__":
    h.main()
