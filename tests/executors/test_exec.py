"""Interpreter sessions for real: state that persists across blocks in
every language, exit statuses and tracebacks, live output in order,
markers that code cannot fake, output floods, bad bytes, timeouts,
interrupts and restarts — through the library (exec-run) and the command
(deskhand exec)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from execlib import (SYSTEM_PATH, deskhand_exec, env_with, have, run_blocks,  # noqa: E402
                     pids_in_namespace)


class Persistence(unittest.TestCase):
    """Variables, functions, the working directory and the environment
    survive between blocks of one session."""

    def check(self, blocks, expect):
        res = run_blocks(blocks)
        for r in res:
            self.assertNotIn("error", r)
            self.assertEqual(r["status"], 0, r)
            self.assertFalse(r["restarted"])
        self.assertEqual(res[-1]["output"], expect)

    def test_python(self):
        self.check(["python:x = 41\ndef f(): return 'fn'\nimport os\n"
                    "os.chdir('/')\nos.environ['DH'] = '1'",
                    "python:print(x + 1, f(), os.getcwd(), os.environ['DH'])"],
                   "42 fn / 1\n")

    def test_shell(self):
        self.check(["shell:x=41; f() { echo fn; }; cd /; export DH=1",
                    "shell:echo $((x + 1)) $(f) $PWD $DH"], "42 fn / 1\n")

    def test_javascript(self):
        self.check(["javascript:let x = 41; function f() { return 'fn' }; "
                    "process.chdir('/'); process.env.DH = '1'",
                    "javascript:console.log(x + 1, f(), process.cwd(), process.env.DH)"],
                   "42 fn / 1\n")

    @unittest.skipUnless(have("ruby"), "ruby is not installed")
    def test_ruby(self):
        self.check(["ruby:x = 41\ndef f; 'fn'; end\nDir.chdir('/')\nENV['DH'] = '1'",
                    "ruby:puts [x + 1, f, Dir.pwd, ENV['DH']].join(' ')"], "42 fn / 1\n")

    @unittest.skipUnless(have("Rscript"), "R is not installed")
    def test_r(self):
        self.check(["r:x <- 41\nf <- function() 'fn'\nsetwd('/')\nSys.setenv(DH = '1')",
                    "r:cat(x + 1, f(), getwd(), Sys.getenv('DH'), '\\n')"], "42 fn / 1 \n")

    def test_languages_are_separate_sessions(self):
        res = run_blocks(["python:x = 1", "shell:x=2",
                          "python:print(x)", "shell:echo $x"])
        self.assertEqual(res[2]["output"], "1\n")
        self.assertEqual(res[3]["output"], "2\n")


class Results(unittest.TestCase):
    def test_python_traceback_and_status(self):
        res = run_blocks(["python:def f():\n    raise ValueError('bad')\nf()",
                          "python:print('still here')"])
        self.assertEqual(res[0]["status"], 1)
        out = res[0]["output"]
        self.assertIn("Traceback (most recent call last):", out)
        self.assertIn('File "<block 1>", line 3, in <module>', out)
        self.assertIn("ValueError: bad", out)
        self.assertNotIn("__deskhand_driver", out)
        self.assertEqual(res[1]["output"], "still here\n")

    def test_python_syntax_error(self):
        res = run_blocks(["python:x = ("])
        self.assertEqual(res[0]["status"], 1)
        self.assertIn("SyntaxError", res[0]["output"])

    def test_exit_codes_are_reported(self):
        res = run_blocks(["python:import sys; sys.exit(3)", "python:print('alive')",
                          "shell:false", "shell:(exit 7)",
                          "javascript:throw new Error('no')"])
        self.assertEqual(res[0]["status"], 3)
        self.assertFalse(res[0]["ended"])
        self.assertEqual(res[1]["output"], "alive\n")
        self.assertEqual(res[2]["status"], 1)
        self.assertEqual(res[3]["status"], 7)
        self.assertEqual(res[4]["status"], 1)
        self.assertIn("Error: no", res[4]["output"])

    def test_last_expression_is_shown(self):
        res = run_blocks(["python:x = 20\nx + 22", "javascript:20 + 22",
                          "python:print('p')"])
        self.assertEqual(res[0]["output"], "42\n")
        self.assertEqual(res[1]["output"], "42\n")
        self.assertEqual(res[2]["output"], "p\n")

    def test_javascript_awaits_promises(self):
        res = run_blocks(["javascript:const v = await new Promise(r => setTimeout(() => r(7), 50));"
                          " console.log('got', v)"])
        self.assertEqual(res[0]["output"], "got 7\n")

    def test_stdout_and_stderr_stream_in_order(self):
        # Each line waits until the session has read the one before from
        # its pipe (FIONREAD is 0), so the order is the code's on any machine.
        code = ("import fcntl, struct, sys, termios, time\n"
                "def drained(f):\n"
                "    f.flush()\n"
                "    for _ in range(30000):\n"
                "        n = fcntl.ioctl(f.fileno(), termios.FIONREAD, b'\\0' * 4)\n"
                "        if struct.unpack('i', n)[0] == 0:\n"
                "            return\n"
                "        time.sleep(0.001)\n"
                "for i in range(3):\n"
                "    print('out', i)\n"
                "    drained(sys.stdout)\n"
                "    print('err', i, file=sys.stderr)\n"
                "    drained(sys.stderr)\n")
        res = run_blocks(["python:" + code])
        # python -u writes each piece of a print() on its own: join what
        # arrives in a row on one stream, then compare line by line.
        runs = []
        for stream, data in res[0]["chunks"]:
            if runs and runs[-1][0] == stream:
                runs[-1][1] += data
            else:
                runs.append([stream, data])
        seen = [(stream, line) for stream, data in runs
                for line in data.decode().splitlines()]
        self.assertEqual(seen, [(1, "out 0"), (2, "err 0"), (1, "out 1"), (2, "err 1"),
                                (1, "out 2"), (2, "err 2")])
        self.assertEqual(res[0]["output"], "out 0\nerr 0\nout 1\nerr 1\nout 2\nerr 2\n")

    def test_marker_cannot_be_faked(self):
        # Protocol-looking lines on stdout, and a forged report on the
        # report pipe itself with a guessed marker: the block goes on.
        code = ("import os, time\n"
                "print('0' * 32 + ' 0')\n"
                "os.write(4, b'f' * 32 + b' 0\\n')\n"
                "time.sleep(0.3)\n"
                "print('after')\n")
        res = run_blocks(["python:" + code, "python:print('next')"])
        self.assertEqual(res[0]["status"], 0)
        self.assertTrue(res[0]["output"].endswith("after\n"), res[0]["output"])
        self.assertEqual(res[1]["output"], "next\n")

    def test_private_channels_are_not_inherited(self):
        # Programs the code starts see only stdin, stdout and stderr.
        res = run_blocks(["shell:ls /proc/self/fd | sort -n | tr '\\n' ' '",
                          "python:import subprocess\n"
                          "print(subprocess.run(['ls', '/proc/self/fd'], capture_output=True,"
                          " text=True).stdout.split())"])
        self.assertEqual(res[0]["output"], "0 1 2 3 ")     # 3: ls's directory
        self.assertEqual(res[1]["output"], "['0', '1', '2', '3']\n")

    def test_code_stdin_is_empty(self):
        res = run_blocks(["shell:cat; echo done", "python:import sys; print(repr(sys.stdin.read()))"])
        self.assertEqual(res[0]["output"], "done\n")
        self.assertEqual(res[1]["output"], "''\n")

    def test_output_flood_is_cut(self):
        res = run_blocks(["python:print('x' * 1000000)\nprint('END')"], "--max-output", "200")
        r = res[0]
        self.assertEqual(r["total"], 1000000 + 1 + 4)
        self.assertEqual(r["omitted"], r["total"] - 200)
        self.assertTrue(r["output"].startswith("x" * 100 + "\n\u2026 %d characters omitted \u2026\n"
                                               % r["omitted"]))
        self.assertTrue(r["output"].endswith("x\nEND\n"))
        self.assertLess(len(r["output"]), 300)

    def test_invalid_utf8_and_nul_in_output(self):
        res = run_blocks(["python:import sys\n"
                          "sys.stdout.buffer.write(b'a\\xffb\\x00c\\xe2\\x82')\n"
                          "sys.stdout.flush()\nprint('', file=sys.stderr)"])
        raw = b"".join(d for s, d in res[0]["chunks"] if s == 1)
        self.assertEqual(raw, b"a\xffb\x00c\xe2\x82")
        self.assertEqual(res[0]["output"], "a\ufffdb\u2400c\n\ufffd")

    def test_nul_in_code_is_refused(self):
        res = run_blocks(["python:print(1)"])
        self.assertEqual(res[0]["output"], "1\n")
        r = deskhand_exec("python", b"print(1)\0print(2)")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"NUL byte", r.stderr)
        self.assertEqual(r.stdout, b"")


class Lifecycle(unittest.TestCase):
    def test_crash_restarts_the_session(self):
        res = run_blocks(["python:x = 1", "python:import os; os.kill(os.getpid(), 9)",
                          "python:print('x' in globals())", "python:print('again')"])
        self.assertTrue(res[1]["ended"])
        self.assertEqual(res[1]["status"], 137)
        self.assertIn("killed by signal 9 (SIGKILL)", res[1]["message"])
        self.assertTrue(res[2]["restarted"])
        self.assertIn("fresh python session", res[2]["message"])
        self.assertEqual(res[2]["output"], "False\n")
        self.assertFalse(res[3]["restarted"])

    def test_shell_exit_restarts(self):
        res = run_blocks(["shell:x=1; exit 4", "shell:echo \"[$x]\""])
        self.assertEqual(res[0]["status"], 4)
        self.assertTrue(res[0]["ended"])
        self.assertTrue(res[1]["restarted"])
        self.assertEqual(res[1]["output"], "[]\n")

    def test_timeout_interrupts_then_kills(self):
        res = run_blocks(["python:x = 1",
                          "python:import time\nprint('start', flush=True)\ntime.sleep(60)",
                          "python:print('x' in globals())"], "--timeout-ms", "5000")
        r = res[1]
        self.assertTrue(r["timed_out"])
        self.assertEqual(r["status"], 124)
        self.assertTrue(r["ended"])
        self.assertIn("start", r["output"])
        self.assertIn("KeyboardInterrupt", r["output"])   # it was interrupted first
        self.assertIn("timed out after 5 s", r["message"])
        self.assertTrue(res[2]["restarted"])
        self.assertEqual(res[2]["output"], "False\n")

    def test_timeout_of_code_ignoring_sigint(self):
        res = run_blocks(["python:import signal, time\n"
                          "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                          "while True: time.sleep(1)",
                          "python:print('fresh')"], "--timeout-ms", "500")
        self.assertTrue(res[0]["timed_out"])
        self.assertEqual(res[0]["status"], 124)
        self.assertEqual(res[1]["output"], "fresh\n")

    def test_interrupt_keeps_python_state(self):
        res = run_blocks(["python:x = 5", "python!/ready:import time\nprint('ready', flush=True)\ntime.sleep(60)",
                          "python:print(x)"])
        r = res[1]
        self.assertTrue(r["interrupted"])
        self.assertEqual(r["status"], 130)
        self.assertFalse(r["ended"])
        self.assertIn("KeyboardInterrupt", r["output"])
        self.assertEqual(res[2]["output"], "5\n")
        self.assertFalse(res[2]["restarted"])

    def test_interrupt_javascript_busy_loop(self):
        res = run_blocks(["javascript:var k = 3", "javascript!/ready:console.log('ready'); while (true) {}",
                          "javascript:console.log(k)"])
        self.assertTrue(res[1]["interrupted"])
        self.assertEqual(res[1]["status"], 130)
        self.assertEqual(res[2]["output"], "3\n")

    @unittest.skipUnless(have("ruby"), "ruby is not installed")
    def test_interrupt_ruby(self):
        res = run_blocks(["ruby:k = 3", "ruby!/ready:puts 'ready'; $stdout.flush; sleep 60", "ruby:puts k"])
        self.assertEqual(res[1]["status"], 130)
        self.assertEqual(res[2]["output"], "3\n")

    def test_interrupt_keeps_shell_state(self):
        # A command, then a busy loop in the shell itself: each interrupt
        # ends its block only; variables and the directory live on.
        res = run_blocks(["shell:k=3; cd /tmp; declare -A m=([a]=map)",
                          "shell!/ready:echo ready; sleep 60; echo never",
                          "shell!/ready:echo ready; while :; do :; done; echo never",
                          "shell:echo $k $PWD ${m[a]}"])
        for r in res[1:3]:
            self.assertTrue(r["interrupted"], r)
            self.assertEqual(r["status"], 130)
            self.assertFalse(r["ended"], r)
            self.assertNotIn("never", r["output"])
        self.assertEqual(res[3]["output"], "3 /tmp map\n")
        self.assertFalse(res[3]["restarted"])

    def test_timeout_leaves_no_process(self):
        code = ("readlink /proc/self/ns/pid\n"
                "sleep 1000 &\n(setsid sleep 1000 &)\nnohup sleep 1000 >/dev/null 2>&1 &\n"
                "sleep 1000\n")
        r = deskhand_exec("shell", code, "--timeout", "10")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertIn(b"timed out after 10 s", r.stderr)
        ns = r.stdout.decode().splitlines()[0]
        self.assertTrue(ns.startswith("pid:["), ns)
        self.assertEqual(h.wait_for(lambda: not pids_in_namespace(ns), 30), True)

    def test_timeout_without_sandbox_leaves_no_process(self):
        # Under `off` there is no pid namespace: the session's subreaper
        # hunts down even processes that left the process group.
        code = ("echo $$\nsleep 1000 & echo $!\n(setsid sleep 1000 & echo $!)\n"
                "sleep 1000\n")
        r = deskhand_exec("shell", code, "--sandbox", "off", "--timeout", "10")
        self.assertEqual(r.returncode, 124, r.stderr)
        pids = [int(p) for p in r.stdout.split()]
        self.assertEqual(len(pids), 3)
        from execlib import alive
        self.assertTrue(h.wait_for(lambda: not any(alive(p) for p in pids), 30), pids)


class Command(unittest.TestCase):
    def test_exit_status_passthrough(self):
        self.assertEqual(deskhand_exec("shell", "exit 7").returncode, 7)
        self.assertEqual(deskhand_exec("python", "import sys; sys.exit(5)").returncode, 5)
        r = deskhand_exec("python", "1/0")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"ZeroDivisionError", r.stderr)
        r = deskhand_exec("python", "print('hi')")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"hi\n", b""))

    def test_live_head_then_note_and_tail(self):
        r = deskhand_exec("python", "print('a' * 500)\nprint('THE END')", "--max-output", "100")
        self.assertEqual(r.returncode, 0)
        out = r.stdout.decode()
        self.assertTrue(out.startswith("a" * 50 + "\n\u2026 "), out)
        self.assertIn(" characters omitted \u2026\n", out)
        self.assertTrue(out.endswith("aa\nTHE END\n"))
        self.assertLess(len(out), 200)

    def test_usage_errors(self):
        for args, what in ((["exec"], b"which language"),
                           (["exec", "cobol"], b"unknown language 'cobol'"),
                           (["exec", "python", "shell"], b"one language only"),
                           (["exec", "--sandbox", "loose", "python"], b"unknown sandbox profile"),
                           (["exec", "--timeout", "0", "python"], b"--timeout"),
                           (["exec", "--timeout", "soon", "python"], b"--timeout"),
                           (["exec", "--max-output", "x", "python"], b"--max-output"),
                           (["exec", "--frobnicate", "python"], b"unknown option")):
            r = h.run([h.binary()] + args, input=b"print(1)")
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(what, r.stderr, args)
            self.assertIn(b"usage: deskhand exec", r.stderr)

    def test_not_installed(self):
        empty = h.tmpdir()
        for lang, prog in (("ruby", b"ruby"), ("r", b"Rscript"), ("python", b"python3")):
            r = deskhand_exec(lang, "1", env=env_with(PATH=empty))
            self.assertEqual(r.returncode, 1, lang)
            self.assertIn(b"is not installed (no '" + prog + b"' found on PATH)", r.stderr)

    def test_workspace_option(self):
        ws = h.tmpdir()
        r = deskhand_exec("shell", "pwd; echo $PWD; touch made-here", "--workspace", ws)
        self.assertEqual(r.stdout.decode(), "%s\n%s\n" % (ws, ws))
        self.assertTrue(os.path.exists(os.path.join(ws, "made-here")))
        r = deskhand_exec("shell", "pwd", "--workspace", "/nonexistent/ws")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"workspace /nonexistent/ws", r.stderr)

    def test_display_needs_a_display(self):
        env = dict(os.environ)
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        r = deskhand_exec("python", "1", "--display", env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"neither DISPLAY nor WAYLAND_DISPLAY is set", r.stderr)

    def test_system_interpreters(self):
        # What a fresh Debian machine (and the unprivileged tests) use.
        r = deskhand_exec("python", "import sys; print(sys.executable)",
                          env=env_with(PATH=SYSTEM_PATH))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(b"/usr/"), r.stdout)

    def test_help_lists_exec_and_doctor(self):
        r = h.run([h.binary(), "--help"])
        self.assertIn(b"exec", r.stdout)
        self.assertIn(b"doctor", r.stdout)


if __name__ == "__main__":
    h.main()
