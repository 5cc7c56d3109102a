"""The disk fills, for real: the conversation, its images and the audit log
each on a small tmpfs of its own (mounted in this test's private mount
namespace, so nothing outlives it), filled to the last byte while deskhand
waits for the model or runs code.

- the conversation cannot be saved: deskhand says so on one line, exits
  1..127, and the previous version stays whole, loadable and resumable;
- the audit log cannot be written, whichever record fails first: nothing
  more runs (no code, no further call of the batch, no request to the
  model), and the log still verifies;
- a screenshot cannot be stored: the user and the model are told, no image
  is recorded and no partial file is left.
"""
import errno
import json
import os
import shutil
import subprocess
import sys
import unittest

import harness as h
from agentlib import FakeLLM, Held, Run, call, texts, tool_results

# Own mount namespace first, so the tmpfs mounts below are this test's alone
# and go with it however it ends.
if os.environ.get("DESKHAND_DISKFULL_NS") != "1" and os.geteuid() == 0 and \
        shutil.which("unshare"):
    os.environ["DESKHAND_DISKFULL_NS"] = "1"
    os.execvp("unshare", ["unshare", "--mount", "--propagation", "private",
                          sys.executable] + sys.argv)
CAN_MOUNT = os.environ.get("DESKHAND_DISKFULL_NS") == "1"


def mount_tmpfs(path, size="1m"):
    os.makedirs(path, mode=0o700, exist_ok=True)
    p = h.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0700" % size, "tmpfs", path])
    if p.returncode != 0:
        raise unittest.SkipTest("cannot mount a tmpfs: %s" % p.stderr.decode())


def umount(path):
    h.run(["umount", "-l", path])


def fill(path):
    """Fills the filesystem at path to its last byte (ENOSPC proves it)."""
    fd = os.open(os.path.join(path, ".fill"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
        try:
            os.write(fd, b"x")
            raise AssertionError("the filesystem at %s is not full" % path)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)


def unfill(path):
    os.unlink(os.path.join(path, ".fill"))


def leftovers(path):
    """Files in path other than what the test and deskhand mean to keep."""
    return sorted(n for n in os.listdir(path) if n != ".fill")


@unittest.skipUnless(CAN_MOUNT, "needs root and unshare(1) for a private tmpfs")
class DiskFull(unittest.TestCase):
    def setUp(self):
        self.r = r = Run()
        self.convfs = os.path.join(r.dir, "convfs")
        self.auditfs = os.path.join(r.dir, "auditfs")
        self.mounts = []
        for d in (self.convfs, self.auditfs):
            mount_tmpfs(d)
            self.mounts.append(d)
        r.conv = os.path.join(self.convfs, "conv.json")
        r.audit = os.path.join(self.auditfs, "audit.jsonl")

    def tearDown(self):
        for d in reversed(self.mounts):
            umount(d)

    def start(self, srv, *more):
        return subprocess.Popen(self.r.args(srv, "openai", *more), env=self.r.env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def finish(self, p):
        try:
            out, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        return out, err.decode("utf-8", "replace")

    def assert_one_error(self, rc, err, want):
        self.assertGreaterEqual(rc, 1, err)
        self.assertLess(rc, 128, err)
        lines = [l for l in err.splitlines() if l.startswith("deskhand: ")]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(want, lines[0])
        self.assertIn("No space left on device", lines[0])

    def assert_verifies(self):
        v = h.run([h.binary(), "audit", "verify", self.r.audit], env=self.r.env())
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    def assert_resumes(self, before):
        with FakeLLM([{"text": "carried on"}]) as srv:
            p = self.r.run(srv, "openai", "-m", "go on")
            self.assertEqual(p.returncode, 0, p.stderr)
            sent = texts(srv.requests[0]["body"])
        self.assertIn(before, sent)
        self.assertNotIn(b"edited since", p.stderr)
        self.assertEqual(self.r.conversation()["messages"][-1]["role"], "assistant")
        self.assert_verifies()

    # ---- the conversation cannot be saved ----------------------------------

    def test_conversation_cannot_be_saved_keeps_the_previous_version(self):
        answer = Held({"text": "all done " * 100})
        turns = [{"tool_calls": [call("execute", language="shell", code="echo one-two")]},
                 answer]
        with FakeLLM(turns) as srv:
            p = self.start(srv, "-y", "-m", "first task")
            try:
                # The second request left after the results were saved.
                self.assertEqual(srv.wait_requests(2, 60), 2, "no second request")
                with open(self.r.conv, "rb") as f:
                    before = f.read()
                fill(self.convfs)
            finally:
                answer.release()
            _, err = self.finish(p)
        self.assert_one_error(p.returncode, err, "cannot save the conversation")
        with open(self.r.conv, "rb") as f:
            self.assertEqual(f.read(), before, "the saved version changed")
        self.assertEqual([m["role"] for m in json.loads(before)["messages"]],
                         ["user", "assistant", "tool"])
        self.assertEqual(leftovers(self.convfs), ["conv.json"])
        self.assert_verifies()
        unfill(self.convfs)
        self.assert_resumes("one-two")

    # ---- the audit log cannot be written ----------------------------------

    def audit_run(self, pad):
        """A log with room for only its last block's slack (a filesystem
        gives a file's last block whole), then a run of many answers, two
        calls each: some record, which depends on `pad`, is the first that
        cannot be written. What ran, what was recorded and what was sent
        is returned, with the record that failed."""
        r = self.r
        with FakeLLM([{"text": "ready"}]) as srv:
            p = r.run(srv, "openai", "-m", "prepare")
            self.assertEqual(p.returncode, 0, p.stderr)
        fill(self.auditfs)
        turns = []
        for i in range(40):
            code = ["touch mark-%d-%s" % (i, k) for k in "ab"]
            if i == 0:
                code[0] += " # " + "p" * pad
            turns.append({"tool_calls": [call("execute", language="shell", code=c)
                                         for c in code]})
        turns.append({"text": "all done"})
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "-m", "go")
            sent = len(srv.requests)
        unfill(self.auditfs)
        return p, sent, r.audit_events()

    def test_audit_full_at_any_record_stops_everything_after_it(self):
        failed_after = set()
        for pad in range(0, 4096, 256):
            with self.subTest(pad=pad):
                self.setUp()
                try:
                    p, sent, events = self.audit_run(pad)
                    err = p.stderr.decode("utf-8", "replace")
                    self.assert_one_error(p.returncode, err, "audit log")
                    self.assert_verifies()
                    self.check_nothing_unrecorded(events, sent)
                    failed_after.add(events[-1]["event"])
                    self.assert_resumes("go")
                finally:
                    self.tearDown()
        # The sweep reached the records of more than one kind.
        print("# the last record written before the failure: %s" % sorted(failed_after))
        self.assertGreaterEqual(len(failed_after), 4, failed_after)

    def check_nothing_unrecorded(self, events, sent):
        """Each code ran only with its approval and every record before it
        on disk; each request left only with the last results recorded."""
        calls, by_id, convs = [], {}, 0
        for e in events:
            if e["event"] == "conversation":
                convs += 1
            elif e["event"] == "proposed":
                c = {"code": e.get("code", ""), "approved": False, "executed": False,
                     "convs": convs}
                calls.append(c)
                by_id[e["id"]] = c
            elif e["event"] in ("approved", "executed"):
                # A line after a missing one would vouch for what the log lacks.
                c = by_id.get(e["id"])
                self.assertIsNotNone(c, "%r follows no proposal" % e)
                self.assertFalse(c[e["event"]], "%r follows no proposal of its own" % e)
                if e["event"] == "executed":
                    self.assertTrue(c["approved"], "%r follows no approval" % e)
                c[e["event"]] = True
        marks = [n for n in os.listdir(self.r.work) if n.startswith("mark-")]
        for m in marks:
            n = [i for i, c in enumerate(calls) if m in c["code"]]
            self.assertEqual(len(n), 1, "%s ran unproposed" % m)
            n = n[0]
            self.assertTrue(calls[n]["approved"], "%s ran unapproved" % m)
            self.assertTrue(all(c["executed"] for c in calls[:n]),
                            "%s ran after an unrecorded result" % m)
        self.assertLessEqual(len(marks), len(calls))
        # The first run's two records, then per answer: its own, its results'.
        self.assertGreaterEqual(convs, 2 + 2 * (sent - 1) + 1,
                                "a request left before the results were recorded")
        self.assertLess(sent, 41, "the run went to the end")

    def test_audit_full_at_start_sends_nothing(self):
        fill(self.auditfs)
        with FakeLLM([{"text": "never"}]) as srv:
            p = self.r.run(srv, "openai", "-y", "-m", "first task")
            self.assertEqual(len(srv.requests), 0)
        self.assert_one_error(p.returncode, p.stderr.decode(), "audit log")
        unfill(self.auditfs)


@unittest.skipUnless(CAN_MOUNT, "needs root and unshare(1) for a private tmpfs")
class ScreenshotDiskFull(unittest.TestCase):
    def test_a_screenshot_that_cannot_be_stored_is_told_and_not_recorded(self):
        r = Run()
        images = os.path.join(r.dir, "conv.images")   # beside r.conv
        mount_tmpfs(images)
        X = h.Xvfb(1024, 768)
        try:
            fill(images)
            turns = [{"tool_calls": [call("computer", action="screenshot")]},
                     {"text": "ok"}]
            with FakeLLM(turns) as srv:
                p = r.run(srv, "anthropic", "--os", "--model", "claude-sonnet-4-5",
                          "-m", "look", X=X)
                self.assertEqual(len(srv.requests), 2)
                res = tool_results(srv.requests[1]["body"], "anthropic")
            err = p.stderr.decode("utf-8", "replace")
            self.assertEqual(p.returncode, 0, err)
            # The user is told, on one line, and so is the model.
            told = [l for l in err.splitlines() if "screenshot" in l and
                    "No space left on device" in l]
            self.assertEqual(len(told), 1, err)
            self.assertIn("no screenshot", res[0][1])
            self.assertIn("No space left on device", res[0][1])
            # No image recorded, none half written.
            self.assertNotIn('"image"', json.dumps(r.conversation()["messages"][2]))
            self.assertEqual(leftovers(images), [])
        finally:
            X.stop()
            umount(images)


if __name__ == "__main__":
    h.main()
