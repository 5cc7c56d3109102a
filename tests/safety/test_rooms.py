"""The rooms and their doors, read from the sources. The graph is written
once: in the doors' "May call:" lines. Nothing here lists the rooms'
edges; the test reads them and holds every include to them.

- every folder of agent/, and base/, os/, vision/, executors/, is a room
  with exactly one door: the header whose opening comment says what the
  room does and "May call:", and names the room;
- a file includes another room only through that room's door, or through
  a side door the door itself declares ("Side door: H, for F");
- a file includes another room only when its own room's door says it may
  call that room;
- the doors name only rooms that exist, and their graph has no cycle;
- tests/ has one folder per room, named as the room's folder is, and
  besides them only the shared ones.

Library boundaries (only os/ includes Xlib, only the provider code knows
libcurl, only executors/ knows seccomp and Landlock) are checked too, on
the system headers the files include."""
import glob
import os
import re
import unittest

import harness as h

TOPS = ("base", "os", "vision", "executors")
ROOM_TOKEN = re.compile(r"\b(agent/[a-z]+|(?:base|os|vision|executors)(?=/))")
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
SYSTEM_INCLUDE = re.compile(r"^#include <([^>]+)>", re.M)
SIDE_DOOR = re.compile(r"Side door:\s*(\S+\.h)\b[^,]*,\s*for\s+(\S+\.c)")
# Who alone may include which library's headers (the prefix of the path).
LIBRARIES = {
    # The display's protocols: each in its backend's folder alone.
    "X11/": {"os/x11"},
    "wayland-": {"os/wlroots", "os/gnome"},
    "pipewire/": {"os/gnome"},
    "spa/": {"os/gnome"},
    "gio/": {"os/gnome"},
    "curl/": {"agent/llm/http.c"},
    "seccomp.h": {"executors"},
    "linux/landlock.h": {"executors"},
    "microhttpd.h": {"agent/console", "agent/mcp/http.c"},
    "atspi/": {"vision"},
}
# The folders of tests/ that are no room's: the harness and what several
# rooms' tests import, the fake model servers, the fuzz targets.
SHARED_TESTS = {"lib", "fake_llm", "fuzz"}


def rel(path):
    return os.path.relpath(path, h.SRCDIR)


def room_of(path):
    """The room a source path (relative to the tree) belongs to, or None."""
    parts = path.split("/")
    if parts[0] == "agent" and len(parts) > 2:
        return "agent/" + parts[1]
    return parts[0] if parts[0] in TOPS and len(parts) > 1 else None


def rooms():
    found = set(TOPS)
    for d in os.listdir(os.path.join(h.SRCDIR, "agent")):
        if os.path.isdir(os.path.join(h.SRCDIR, "agent", d)):
            found.add("agent/" + d)
    return found


def sources():
    for top in ("agent/*/*.[ch]",) + tuple(t + "/*.[ch]" for t in TOPS) + \
            tuple(t + "/*/*.[ch]" for t in TOPS):
        for path in sorted(glob.glob(os.path.join(h.SRCDIR, top))):
            r = rel(path)
            with open(path, errors="replace") as f:
                yield r, room_of(r), f.read()


def opening_comment(text):
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    return re.sub(r"\n\s*\* ?", "\n", m.group(1)) if m else ""


def may_call(comment):
    """The rooms named after "May call:", up to the sentence's end (a
    period outside parentheses)."""
    i = comment.find("May call:")
    if i < 0:
        return None
    depth, j, s = 0, i + len("May call:"), comment
    while j < len(s):
        c = s[j]
        depth += c == "("
        depth -= c == ")"
        if c == "." and depth == 0 and (j + 1 == len(s) or s[j + 1].isspace()):
            break
        j += 1
    return set(ROOM_TOKEN.findall(s[i:j]))


def doors():
    """room -> (door path, rooms it may call, side doors {(header, file)})."""
    out = {}
    for r in sorted(rooms()):
        for path in sorted(glob.glob(os.path.join(h.SRCDIR, r, "*.h"))):
            with open(path) as f:
                comment = opening_comment(f.read())
            calls = may_call(comment)
            if calls is None:
                continue
            if r in out:
                raise AssertionError("%s has two doors: %s and %s" % (r, out[r][0], rel(path)))
            out[r] = (rel(path), calls - {r}, set(SIDE_DOOR.findall(comment)), comment)
    return out


class Rooms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doors = doors()

    def test_every_room_has_one_door_that_says_what_it_is(self):
        self.assertEqual(set(self.doors), rooms())
        for r, (door, calls, _, comment) in self.doors.items():
            # The door names its room ("agent/tools —", "os/ —").
            self.assertIn(r if r.startswith("agent/") else r + "/", comment, door)
            for word in ("Owns", "May call"):
                self.assertIn(word, comment, "%s does not say what it %s" % (door, word))

    def test_doors_name_only_rooms_that_exist(self):
        known = rooms()
        for r, (door, calls, sides, _) in self.doors.items():
            self.assertEqual(calls - known, set(), door)
            for header, user in sides:
                self.assertEqual(room_of(header), r, door)
                self.assertTrue(os.path.exists(os.path.join(h.SRCDIR, header)), header)
                self.assertTrue(os.path.exists(os.path.join(h.SRCDIR, user)), user)

    def test_other_rooms_only_through_their_door(self):
        strays = []
        for path, room, text in sources():
            for target in INCLUDE.findall(text):
                other = room_of(target)
                if other is None or other == room:
                    continue
                door, _, sides, _ = self.doors[other]
                if target != door and (target, path) not in sides:
                    strays.append("%s includes %s (the door of %s is %s)" %
                                  (path, target, other, door))
        self.assertEqual(strays, [])

    def test_includes_are_what_the_doors_allow(self):
        wrong = []
        for path, room, text in sources():
            allowed = self.doors[room][1]
            for target in INCLUDE.findall(text):
                other = room_of(target)
                if other is not None and other != room and other not in allowed:
                    wrong.append("%s includes %s, but %s may not call %s" %
                                 (path, target, self.doors[room][0], other))
        self.assertEqual(wrong, [])

    def test_the_doors_draw_one_direction(self):
        left = {r: set(d[1]) for r, d in self.doors.items()}
        while left:
            free = [r for r, d in left.items() if not d & set(left)]
            self.assertTrue(free, "a cycle among %s" % sorted(left))
            for r in free:
                del left[r]

    def test_shared_display_code_names_no_backend(self):
        """os/'s shared files reach a backend only through its struct of
        functions: no backend's name, type or protocol appears in them (the
        table of backends in os/display.c is the one place that lists
        their entry points)."""
        named = re.compile(r"\b(os_x11\w*|os_wl\w*|Display\b|Window\b|wl_\w+|zwlr_\w+|"
                           r"zwp_\w+|xcb_\w+|X[A-Z][a-z]\w*\(|sway\w*)")
        wrong = []
        for path in sorted(glob.glob(os.path.join(h.SRCDIR, "os", "*.[ch]"))):
            with open(path) as f:
                text = f.read()
            if rel(path) == "os/display.c":
                text = re.sub(r"static const struct \{.*?\} backends\[\] = \{.*?\};",
                              "", text, flags=re.S)
            if rel(path) == "os/backend.h":
                text = re.sub(r"os_display \*os_\w+_open\(.*?\);", "", text)
            code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
            for m in named.finditer(code):
                wrong.append("%s names %s" % (rel(path), m.group(1)))
        self.assertEqual(wrong, [])

    def test_libraries_stay_in_their_rooms(self):
        wrong = []
        for path, room, text in sources():
            for lib in SYSTEM_INCLUDE.findall(text):
                for prefix, owners in LIBRARIES.items():
                    if lib.startswith(prefix) and room not in owners and path not in owners \
                            and os.path.dirname(path) not in owners:
                        wrong.append("%s includes <%s>" % (path, lib))
        self.assertEqual(wrong, [])

    def test_tests_has_one_folder_per_room(self):
        top = os.path.join(h.SRCDIR, "tests")
        # (a folder a move left holding only __pycache__ is none)
        folders = {d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d))
                   and set(os.listdir(os.path.join(top, d))) - {"__pycache__"}}
        names = {r.split("/")[-1] for r in rooms()}
        self.assertEqual(folders - names - SHARED_TESTS, set(), "test folders of no room")
        self.assertEqual(names - folders, set(), "rooms without tests/<room>")

    def test_the_graph_is_written_only_in_the_doors(self):
        # Neither the build files nor DEVELOPERS.md draw it again.
        with open(os.path.join(h.SRCDIR, "agent", "meson.build")) as f:
            self.assertNotRegex(f.read(), r"(?m)^#.*->")
        with open(os.path.join(h.SRCDIR, "DEVELOPERS.md")) as f:
            self.assertNotRegex(f.read(), r"cli → session →|cli -> session ->")


if __name__ == "__main__":
    h.main()
