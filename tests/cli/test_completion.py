"""The bash completion as installed: the script the build generated from
deskhand's --help texts, sourced in a real bash, asked what a Tab would
offer. It is what the generator makes of the built binary's help now, and
it offers every command and every option the help lists."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import harness as h

sys.path.insert(0, os.path.join(h.SRCDIR, "completions"))
import complete  # noqa: E402

SCRIPT = os.path.join(h.build_dir(), "completions", "deskhand")


def setUpModule():
    global MODEL
    if not os.path.exists(SCRIPT):
        raise AssertionError("%s was not built" % SCRIPT)
    MODEL = complete.read_all(h.binary())


def offered(*words, cwd=None):
    """What completing the last of `words` offers, as bash-completion calls
    the function: COMP_WORDS and COMP_CWORD set, COMPREPLY read back."""
    prog = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
            '_deskhand; printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog, "bash", SCRIPT]
                       + list(words), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       cwd=cwd, timeout=30)
    if r.returncode != 0 or r.stderr:
        raise AssertionError("bash: exit %d: %s" % (r.returncode, r.stderr.decode()))
    return [w for w in r.stdout.decode().split("\n") if w]


class Completion(unittest.TestCase):
    def test_the_issue_cases(self):
        self.assertEqual(offered("deskhand", "--pro"), ["--provider"])
        # "scr" is also the start of scroll; "scre" only of the two.
        self.assertEqual(offered("deskhand", "scre"), ["screen", "screenshot"])
        self.assertEqual(offered("deskhand", "scr"), ["screen", "screenshot", "scroll"])
        self.assertEqual(offered("deskhand", "click", "--b"), ["--button"])

    def test_values_and_arguments(self):
        self.assertEqual(offered("deskhand", "click", "--button", ""),
                         ["left", "middle", "right", "back", "forward"])
        self.assertEqual(offered("deskhand", "click", "--button", "=", "m"), ["middle"])
        self.assertEqual(offered("deskhand", "--sandbox", "st"), ["standard", "strict"])
        self.assertEqual(offered("deskhand", "exec", "--timeout", "5", "py"), ["python"])
        self.assertEqual(offered("deskhand", "scroll", ""), ["up", "down", "left", "right"])
        # Both of --at's values are numbers; the direction comes after them.
        self.assertEqual(offered("deskhand", "scroll", "--at", "1", ""), [])
        self.assertEqual(offered("deskhand", "scroll", "--at", "1", "2", "d"), ["down"])
        self.assertEqual(offered("deskhand", "audit", ""), ["verify"])
        self.assertEqual(offered("deskhand", "help", "cl"), ["click"])
        self.assertEqual(offered("deskhand", "--display-backend", "x11", "cl"), ["click"])
        self.assertEqual(offered("deskhand", "--display-backend", "w"), ["wlroots"])
        # deskhand mcp takes the agent's options beside its own.
        self.assertIn("--console", offered("deskhand", "mcp", "--co"))
        self.assertIn("--http", offered("deskhand", "mcp", "--ht"))
        # The agent's message is free text.
        self.assertEqual(offered("deskhand", "hello", ""), [])

    def test_files_where_a_file_goes(self):
        d = tempfile.mkdtemp(prefix="deskhand-test-")
        try:
            for name in ("shot-a.png", "shot-b.png"):
                open(os.path.join(d, name), "w").close()
            os.mkdir(os.path.join(d, "shots"))
            self.assertEqual(sorted(offered("deskhand", "screenshot", "-o", "shot", cwd=d)),
                             ["shot-a.png", "shot-b.png", "shots"])
            self.assertEqual(offered("deskhand", "--workspace", "sh", cwd=d), ["shots"])
            self.assertEqual(sorted(offered("deskhand", "audit", "verify", "s", cwd=d)),
                             ["shot-a.png", "shot-b.png", "shots"])
        finally:
            shutil.rmtree(d)

    def test_every_command_and_option_of_the_help(self):
        self.assertEqual(offered("deskhand", ""), [c for c in MODEL if c])
        agent = [f for o in MODEL[""][1] for f in o.flags]
        self.assertEqual(offered("deskhand", "-"), agent)
        for cmd in (c for c in MODEL if c):
            with self.subTest(command=cmd):
                flags = [f for o in MODEL[cmd][1] for f in o.flags]
                if cmd in ("mcp", "batch"):   # [AGENT OPTIONS]
                    flags += agent
                want = list(dict.fromkeys(flags + ["--help", "-h"]))
                self.assertEqual(offered("deskhand", cmd, "-"), want)

    def test_generated_from_this_binary(self):
        with open(SCRIPT) as f:
            self.assertEqual(f.read(), complete.bash_script(MODEL),
                             "the installed script is not what the help says now")


if __name__ == "__main__":
    h.main()
