"""A block cannot fake its own end (issue 10, class 12). The code lives in
the same process as the driver, so it can learn the block's end marker
(from the driver's frame, its variables, the blocks pipe) and write the end
report itself while it keeps working: a thread, a child, or the main
thread itself. The session must not take the report for the end while the
interpreter is still running the block, must say when work the block
started is still running, and must never put what that work prints later
into another block's output without saying so. Every case runs real code
in the real sandbox; the code signals through files when it is done, so no
case depends on the machine's speed."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import have, run_blocks  # noqa: E402

EARLIER = "output of an earlier block's background work"


class ForgedEnd(unittest.TestCase):
    def setUp(self):
        self.dir = h.tmpdir()
        self.flag = os.path.join(self.dir, "late-done")

    def check(self, res, main_text):
        for r in res:
            self.assertNotIn("error", r, r)
        first, second = res[0], res[1]
        # The main thread's work after the forged report is the block's.
        self.assertIn(main_text, first["output"], first)
        # The late line is in the first block's output (its work was still
        # running when the report came, and ended in time), or the first
        # block says its work is still running and the second block shows
        # the line only under the label.
        if "late-line" not in first["output"]:
            self.assertIn("still running", first["message"], first)
            out = second["output"]
            self.assertIn("late-line", out, second)
            self.assertIn(EARLIER, out, second)
            self.assertLess(out.index(EARLIER), out.index("late-line"), out)
            self.assertTrue(out.rstrip().endswith("next"), out)
        else:
            self.assertNotIn("late-line", second["output"], second)

    def test_python_thread(self):
        code = ("import os, sys, threading, time\n"
                "f = sys._getframe()\n"
                "while 'marker' not in f.f_locals:\n"
                "    f = f.f_back\n"
                "marker = f.f_locals['marker']\n"
                "def late():\n"
                "    time.sleep(0.3)\n"
                "    print('late-line', flush=True)\n"
                "    open(%r, 'w').close()\n"
                "threading.Thread(target=late).start()\n"
                "os.write(4, marker + b' 0\\n')\n"
                "time.sleep(0.2)\n"
                "print('main-went-on', flush=True)\n" % self.flag)
        res = run_blocks(["python:" + code, "wait:" + self.flag, "python:print('next')"],
                         "--workspace", self.dir)
        self.check(res, "main-went-on")

    def test_shell_child(self):
        # The driver's copy of the report pipe sits above fd 9 while the
        # block runs; the marker is one of its variables.
        code = ("for fd in $(ls /proc/$$/fd); do\n"
                "  [ \"$fd\" -gt 9 ] && printf '%%s 0\\n' \"$__deskhand_marker\" >&$fd\n"
                "done 2>/dev/null\n"
                "(sleep 0.3; echo late-line; touch %s) &\n"
                "sleep 0.2\n"
                "echo main-went-on\n" % self.flag)
        res = run_blocks(["shell:" + code, "wait:" + self.flag, "shell:echo next"],
                         "--workspace", self.dir)
        self.check(res, "main-went-on")

    @unittest.skipUnless(have("node"), "node is not installed")
    def test_javascript_reads_the_next_frame(self):
        # The first block listens on the blocks pipe ahead of the driver:
        # it sees the next frame's marker and reports that block's end
        # before it has run; it also leaves a child printing.
        first = ("const fs = require('fs');\n"
                 "const sock = process._getActiveHandles().find((x) => x._handle &&"
                 " x._handle.fd === 3);\n"
                 "sock.prependListener('data', (d) => {\n"
                 "  const m = d.toString('latin1').split(' ')[0];\n"
                 "  fs.writeSync(4, m + ' 0\\n');\n"
                 "});\n"
                 "require('child_process').spawn('sh', ['-c', 'sleep 0.3; echo late-line;"
                 " touch %s'], {stdio: ['ignore', 'inherit', 'inherit']});\n"
                 "console.log('main-went-on');\n" % self.flag)
        second = ("const t = Date.now(); while (Date.now() - t < 300) {}\n"
                  "console.log('second-ran'); console.log('next');")
        res = run_blocks(["javascript:" + first, "wait:" + self.flag,
                          "javascript:" + second, "javascript:console.log('next')"],
                         "--workspace", self.dir)
        for r in res:
            self.assertNotIn("error", r, r)
        # The second block's own output is its own, not the next one's.
        self.assertIn("second-ran", res[1]["output"], res[1])
        self.assertNotIn("second-ran", res[2]["output"], res[2])
        self.check([res[0], res[1]], "main-went-on")


FIND_MARKER = ("import os, sys, threading, time\n"
               "f = sys._getframe()\n"
               "while 'marker' not in f.f_locals:\n"
               "    f = f.f_back\n"
               "marker = f.f_locals['marker']\n")


class TokenAndChildren(unittest.TestCase):
    """The block's end is looked at when the driver reads a token from the
    blocks pipe, and what is left running is found from the kernel's lists
    of children: code that reads the tokens itself, and processes in the
    lists a shortcut could skip (a thread's child, an orphan handed to the
    supervisor)."""

    def setUp(self):
        self.dir = h.tmpdir()
        self.go = os.path.join(self.dir, "go")
        self.done = os.path.join(self.dir, "late-done")

    def test_tokens_read_by_the_code_do_not_end_the_block(self):
        # A thread takes every token off the blocks pipe while the main
        # thread, after a forged report, goes on until it has seen three
        # of them: their reads are only a reason to look at /proc, which
        # still shows the main thread busy.
        code = (FIND_MARKER +
                "import select\n"
                "stolen = []\n"
                "stop = threading.Event()\n"
                "def steal():\n"
                "    while not stop.is_set():\n"
                "        if select.select([3], [], [], 0.01)[0]:\n"
                "            stolen.append(os.read(3, 1))\n"
                "t = threading.Thread(target=steal)\n"
                "t.start()\n"
                "os.write(4, marker + b' 0\\n')\n"
                "limit = time.monotonic() + 30\n"
                "while len(stolen) < 3 and time.monotonic() < limit:\n"
                "    time.sleep(0.01)\n"
                "stop.set()\n"
                "t.join()\n"
                "print('stolen', len(stolen), set(stolen))\n"
                "print('main-went-on')\n")
        res = run_blocks(["python:" + code, "python:print('next')"], "--workspace", self.dir)
        for r in res:
            self.assertNotIn("error", r, r)
        first, second = res
        # Only tokens were there to take, and at least three were sent.
        self.assertRegex(first["output"], r"stolen ([3-9]|[1-9][0-9]+) \{b'\\n'\}", first)
        self.assertIn("main-went-on", first["output"], first)
        self.assertEqual(first["status"], 0, first)
        self.assertNotIn("still running", first["message"], first)
        self.assertEqual(second["output"], "next\n", second)

    def wait_go(self):
        return ("import os, time\n"
                "while not os.path.exists(%r):\n"
                "    time.sleep(0.02)\n"
                "print('late-line', flush=True)\n"
                "open(%r, 'w').close()\n" % (self.go, self.done))

    def release(self):
        """The second block: lets the left work go on, and waits for its
        line, so that the line is printed while this block runs."""
        return ("python:import os, time\n"
                "open(%r, 'w').close()\n"
                "while not os.path.exists(%r):\n"
                "    time.sleep(0.01)\n" % (self.go, self.done))

    def check_left_running(self, res):
        for r in res:
            self.assertNotIn("error", r, r)
        first, second, last = res
        self.assertRegex(first["message"], r"still running.* [1-9][0-9]* process", first)
        self.assertNotIn("late-line", first["output"], first)
        # The first block's note made the second one say whose its output
        # may be (or that the work still runs, when it still does).
        self.assertIn("late-line", second["output"], second)
        self.assertRegex(second["message"], "background work of an earlier block was running "
                         "during this block|work is still running", second)
        self.assertTrue(last["output"].endswith("next\n"), last)

    def test_a_threads_child_is_reported(self):
        # The child belongs to the thread that forked it, not to the main
        # thread: only the thread's list of children names it.
        code = ("import os, subprocess, sys, threading, time\n"
                "gate = threading.Event()\n"
                "def spawn():\n"
                "    subprocess.Popen([sys.executable, '-c', %r])\n"
                "    gate.wait()\n"
                "threading.Thread(target=spawn, daemon=True).start()\n"
                "while not [t for t in os.listdir('/proc/self/task')\n"
                "           if open('/proc/self/task/%%s/children' %% t).read()]:\n"
                "    time.sleep(0.01)\n" % self.wait_go())
        res = run_blocks(["python:" + code, self.release(),
                          "python:gate.set()\nprint('next')"], "--workspace", self.dir)
        self.check_left_running(res)

    def test_an_orphan_is_reported(self):
        # The shell that started it exits at once: the process is the
        # supervisor's child from then on, in no list of the interpreter.
        code = ("import subprocess, sys\n"
                "_ = subprocess.run(['sh', '-c', '\"$0\" -c \"$1\" &', sys.executable, %r])\n"
                % self.wait_go())
        res = run_blocks(["python:" + code, self.release(), "python:print('next')"],
                         "--workspace", self.dir)
        self.check_left_running(res)

if __name__ == "__main__":
    h.main()
