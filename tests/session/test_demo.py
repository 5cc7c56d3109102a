"""The README's first command runs examples/demo.sh: it must keep working.
Run without a terminal, it answers its questions with y and says so.
The user's dotfiles are not the demo's: a ~/.bashrc that never returns (as
a pyenv rehash waiting on its lock in the sandbox did) would leave the
xterm without a prompt, and a config.json could cut the run short."""
import os
import unittest

import harness as h


class Demo(unittest.TestCase):
    def test_demo_runs_offline(self):
        d = h.tmpdir()
        home = h.tmpdir()
        with open(os.path.join(home, ".bashrc"), "w") as f:
            f.write("while :; do sleep 1; done\n")
        os.makedirs(os.path.join(home, ".config", "deskhand"))
        with open(os.path.join(home, ".config", "deskhand", "config.json"), "w") as f:
            f.write('{"max_steps": 1}\n')
        env = dict(os.environ, DESKHAND_BUILD=h.build_dir(), DESKHAND_DEMO_REBUILD="0",
                   HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"))
        for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DISPLAY"):
            env.pop(k, None)
        r = h.run([os.path.join(h.SRCDIR, "examples", "demo.sh")], env=env, cwd=d,
                  timeout=300)
        out = r.stdout.decode()
        self.assertEqual(r.returncode, 0, out + r.stderr.decode())
        self.assertIn("answering every question with y", out)
        self.assertIn("Perform this action?", out)
        self.assertIn("the terminal wrote: hello from deskhand", out)
        with open(os.path.join(d, "deskhand-demo.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    h.main()
