"""One gate, by structure: checked on the built objects, not by reading
the code. Whatever a later change writes, the linker's view says who can
reach the desktop and run model code:

- agent_computer_run (an action reaches the desktop) is referred to by the
  gate's action runner (agent/safety/gate_action.c) alone, exec_sessions_run
  (model code runs) by its code runner (agent/safety/gate_code.c) alone, and
  those runners (gate_run_action, gate_run_code) by agent/safety/gate.c
  alone, the object that defines agent_gate_tool_call;
- os/'s input functions (mouse, keys, typing) by the runner the gate calls
  (agent/tools/computer.c) and by the human's own commands (agent/cli/cmd_input.c:
  `deskhand click ...`, typed by a person, never by a model);
- exec_session_run by the executors themselves and the human's
  `deskhand exec` (agent/cli/cmd_exec.c);
- agent/tools/computer-run.h, the runner's door, is included by the gate's
  action runner and the runner only."""
import glob
import os
import re
import subprocess
import unittest

import harness as h

OS_INPUT = ["os_mouse_move", "os_mouse_click", "os_mouse_button", "os_mouse_drag",
            "os_mouse_scroll", "os_key_combo", "os_key_down", "os_key_up", "os_key_hold",
            "os_type"]
# The gate's way in, and the runners only it may call (gate-internal.h).
GATE = "agent/safety/gate.c"
GATE_RUNNERS = {"gate_run_action": "agent/safety/gate_action.c",
                "gate_run_code": "agent/safety/gate_code.c"}
RULES = {
    "agent_computer_run": {"agent/safety/gate_action.c"},
    "exec_sessions_run": {"agent/safety/gate_code.c"},
    "gate_run_action": {GATE},
    "gate_run_code": {GATE},
    "exec_session_run": {"agent/cli/cmd_exec.c", "executors/*"},
}
RULES.update({sym: {"agent/tools/computer.c", "agent/cli/cmd_input.c", "os/*"}
              for sym in OS_INPUT})


def product_objects():
    """(source file, object path) of every object in the product: the
    static libraries of base/, os/, vision/, executors/, agent/ and main."""
    b = h.build_dir()
    objs = []
    # meson names an object after its path with "/" as "_": agent/safety/gate.c
    # in agent/ is safety_gate.c.o; rooms and folders have no "_" in their names.
    for top in ("base", "os", "vision", "executors", "agent"):
        for o in glob.glob(os.path.join(b, top, "*.a.p", "*.o")):
            src = re.sub(r"\.o$", "", os.path.basename(o))
            if top == "agent":
                src = src.replace("_", "/", 1)
            objs.append((top + "/" + src, o))
    for o in glob.glob(os.path.join(b, "deskhand.p", "*.o")):
        src = re.sub(r"\.o$", "", os.path.basename(o)).replace("_", "/", 2)
        objs.append((src, o))
    return objs


def references(obj):
    r = subprocess.run(["nm", "-u", obj], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    return {line.split()[-1] for line in r.stdout.decode().splitlines() if line.strip()}


def definitions(obj):
    r = subprocess.run(["nm", "--defined-only", "-g", obj], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True)
    return {line.split()[-1] for line in r.stdout.decode().splitlines() if line.strip()}


def allowed(src, patterns):
    return any(src == p or (p.endswith("/*") and src.startswith(p[:-1]))
               for p in patterns)


class OneGate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        objs = product_objects()
        cls.refs = {src: references(o) for src, o in objs}
        cls.defs = {src: definitions(o) for src, o in objs}

    def test_the_objects_are_all_there(self):
        # The check below means nothing if it looked at no objects.
        for src in ("agent/safety/gate.c", "agent/tools/computer.c", "agent/cli/cmd_input.c",
                    "agent/session/loop.c", "agent/cli/main.c", "executors/exec_sessions.c"):
            self.assertIn(src, self.refs)
        self.assertIn("agent_computer_run", self.refs["agent/safety/gate_action.c"])
        self.assertIn("exec_sessions_run", self.refs["agent/safety/gate_code.c"])
        self.assertIn("os_mouse_click", self.refs["agent/tools/computer.c"])

    def test_the_runners_are_reached_through_the_gate(self):
        # The runners are the gate's own functions, defined where the rules
        # above expect them, and called from the object of agent_gate_tool_call.
        self.assertIn("agent_gate_tool_call", self.defs[GATE])
        for runner, src in sorted(GATE_RUNNERS.items()):
            self.assertIn(runner, self.defs[src])
            self.assertIn(runner, self.refs[GATE])
            definers = sorted(s for s, d in self.defs.items() if runner in d)
            self.assertEqual(definers, [src])

    def test_who_reaches_the_desktop_and_runs_code(self):
        for sym, patterns in sorted(RULES.items()):
            users = sorted(src for src, refs in self.refs.items() if sym in refs)
            strays = [u for u in users if not allowed(u, patterns)]
            self.assertEqual(strays, [], "%s is called from %s, outside the gate" % (sym, strays))

    def test_only_the_gate_includes_the_runner(self):
        found = []
        for path in glob.glob(os.path.join(h.SRCDIR, "*", "**", "*.[ch]"), recursive=True):
            rel = os.path.relpath(path, h.SRCDIR)
            if rel.startswith(("tests/", "bench/", "build")):
                continue
            with open(path, errors="replace") as f:
                if '#include "agent/tools/computer-run.h"' in f.read():
                    found.append(rel)
        self.assertEqual(sorted(found), ["agent/safety/gate_action.c", "agent/tools/computer.c"])


if __name__ == "__main__":
    h.main()
