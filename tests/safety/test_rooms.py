"""agent/ is a house of rooms, each a folder with one door. Read from the
sources, not from memory:

- every room has its door header, whose opening comment says what the room
  does, owns and may call;
- a file includes another room only through that room's door (the one side
  door: the computer runner, agent/tools/computer-run.h, for the gate);
- the rooms depend on each other in one direction only, exactly as
  agent/meson.build draws it."""
import glob
import os
import re
import unittest

import harness as h

AGENT = os.path.join(h.SRCDIR, "agent")
DOORS = {
    "cli": "agent/cli/cli.h",
    "session": "agent/session/session.h",
    "safety": "agent/safety/safety.h",
    "tools": "agent/tools/tools.h",
    "llm": "agent/llm/llm.h",
    "ui": "agent/ui/terminal.h",
    "console": "agent/console/console.h",
    "util": "agent/util/textutil.h",
}
SIDE_DOORS = {("agent/safety/gate_action.c", "agent/tools/computer-run.h")}
# Who may use whom: the one direction of agent/meson.build.
ALLOWED = {
    "cli": {"session", "safety", "util"},
    "session": {"safety", "tools", "llm", "ui", "console", "util"},
    "console": {"ui", "util"},
    "safety": {"tools", "llm", "ui", "util"},
    "tools": {"util"},
    "llm": {"util"},
    "ui": {"util"},
    "util": set(),
}
INCLUDE = re.compile(r'^#include "(agent/([a-z]+)/[^"]+)"', re.M)


def sources():
    for path in sorted(glob.glob(os.path.join(AGENT, "*", "*.[ch]"))):
        rel = os.path.relpath(path, h.SRCDIR)
        with open(path) as f:
            yield rel, rel.split("/")[1], f.read()


class Rooms(unittest.TestCase):
    def test_every_folder_is_a_room_with_a_door(self):
        folders = {d for d in os.listdir(AGENT) if os.path.isdir(os.path.join(AGENT, d))}
        self.assertEqual(folders, set(DOORS))
        for room, door in DOORS.items():
            with open(os.path.join(h.SRCDIR, door)) as f:
                head = f.read().split("*/", 1)[0]
            self.assertIn("agent/" + room, head, door)
            self.assertRegex(head, r"(?i)may\s+(\*\s+)?call", door)

    def test_other_rooms_only_through_their_door(self):
        strays = []
        for rel, room, text in sources():
            for target, other in INCLUDE.findall(text):
                if other != room and target != DOORS[other] and \
                        (rel, target) not in SIDE_DOORS:
                    strays.append("%s includes %s" % (rel, target))
        self.assertEqual(strays, [])

    def test_one_direction(self):
        edges = set()
        for rel, room, text in sources():
            for _, other in INCLUDE.findall(text):
                if other != room:
                    edges.add((room, other))
        wrong = sorted("%s -> %s" % e for e in edges if e[1] not in ALLOWED[e[0]])
        self.assertEqual(wrong, [])
        # ALLOWED itself has no cycle: a topological order exists.
        left = {r: set(d) for r, d in ALLOWED.items()}
        while left:
            free = [r for r, d in left.items() if not d & set(left)]
            self.assertTrue(free, "a cycle among %s" % sorted(left))
            for r in free:
                del left[r]


if __name__ == "__main__":
    h.main()
