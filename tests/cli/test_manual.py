"""The manual and the help agree, and the help is everywhere.

Every option and command that deskhand --help and each deskhand COMMAND
--help list is documented in deskhand(1) under the same heading (the
agent's under OPTIONS, a command's under its own in COMMANDS), and the page
documents no option or command they do not list: in its scdoc source, and
in the page as built and rendered by man(1). Every option a help lists is
one its command accepts. Every command takes --help and -h (exit 0, the
usage on standard output, nothing else done), deskhand help COMMAND says
the same, and a bad option stays a usage error (exit 2, nothing on
standard output).

The built page exists where scdoc was found; without it the rendered half
is skipped, except under CI (DESKHAND_REQUIRE_MAN), where it fails.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

import harness as h

sys.path.insert(0, os.path.join(h.SRCDIR, "completions"))
import complete  # noqa: E402  (the help's reader, shared with the completion)

MAN_SOURCE = os.path.join(h.SRCDIR, "man", "deskhand.1.scd")
MAN_BUILT = os.path.join(h.build_dir(), "man", "deskhand.1")
REQUIRE_MAN = bool(os.environ.get("DESKHAND_REQUIRE_MAN"))
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)")


def setUpModule():
    global MODEL, TMP
    MODEL = complete.read_all(h.binary())
    TMP = h.tmpdir()


def quiet_env(**extra):
    """No display to reach and a home of the test's own: nothing a command
    does when its arguments pass can touch the desktop or the user's files."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE")}
    env.update(HOME=TMP, XDG_CONFIG_HOME=os.path.join(TMP, "config"),
               XDG_DATA_HOME=os.path.join(TMP, "data"))
    env.update(extra)
    return env


def deskhand(*args, **kw):
    return h.run([h.binary()] + list(args), env=quiet_env(), input=b"", **kw)


def help_sections():
    """{"": the agent's flags, COMMAND: its flags}, from the help texts."""
    return {cmd: {f for o in opts for f in o.flags}
            for cmd, (_, opts, _) in MODEL.items()}


def source_sections(text):
    """The same from the scdoc source: the flags of the definitions (a line
    "*--flag* _VALUE_", its text indented by a tab under it) under # OPTIONS,
    and under each ## COMMAND of # COMMANDS."""
    out, section, sub = {}, None, None
    lines = text.replace("\\_", "_").splitlines() + [""]
    for line, after in zip(lines, lines[1:]):
        if line.startswith("# "):
            section, sub = line[2:].strip(), None
        elif line.startswith("## ") and section == "COMMANDS":
            sub = line[3:].strip()
            out.setdefault(sub, set())
        elif line.startswith("*-") and after.startswith("\t"):
            key = "" if section == "OPTIONS" else sub if section == "COMMANDS" else None
            if key is None:
                raise AssertionError("an option defined outside OPTIONS and COMMANDS: "
                                     + line)
            out.setdefault(key, set()).update(
                re.findall(r"\*(--?[A-Za-z0-9][\w-]*)\*", line))
    return out


def rendered_sections(text):
    """The same from the page as man renders it: sections at the margin,
    subsections three spaces in, definitions seven spaces in, their text
    eleven."""
    out, section, sub = {}, None, None
    lines = text.splitlines() + [""]
    for line, after in zip(lines, lines[1:]):
        if re.match(r"[A-Z]", line):
            section, sub = line.strip(), None
        elif re.match(r"   \S", line) and section == "COMMANDS":
            sub = line.strip()
            out.setdefault(sub, set())
        # A definition is a paragraph of its own with its text indented under
        # it; prose that a line break starts with a flag is not one.
        elif re.match(r"       -", line) and re.match(r" {11}\S", after):
            key = "" if section == "OPTIONS" else sub if section == "COMMANDS" else None
            out.setdefault(key, set()).update(FLAG.findall(line))
    return out


def render(path):
    """The page as man(1) shows it, unwrapped and unhyphenated enough that
    no definition line breaks."""
    env = dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8", MANPAGER="cat",
               PAGER="cat")
    r = subprocess.run(["man", "--nh", "--nj", "-l", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=60)
    if r.returncode != 0:
        raise AssertionError("man -l %s: exit %d: %s" % (path, r.returncode, r.stderr))
    # Overstrikes, should a man ever keep them off a terminal.
    return re.sub(r".\x08", "", r.stdout.decode())


class ManualAgrees(unittest.TestCase):
    def assertSameSections(self, man, where):
        helps = help_sections()
        self.assertEqual(sorted(k for k in man if k), sorted(k for k in helps if k),
                         "%s: the commands under COMMANDS are not deskhand --help's"
                         % where)
        for cmd, flags in helps.items():
            with self.subTest(command=cmd or "(the agent)"):
                documented = man.get(cmd, set())
                self.assertEqual(sorted(flags - documented), [],
                                 "%s: listed by --help, missing in the page" % where)
                self.assertEqual(sorted(documented - flags), [],
                                 "%s: in the page, listed by no --help" % where)

    def test_source_documents_what_help_lists(self):
        with open(MAN_SOURCE) as f:
            self.assertSameSections(source_sections(f.read()), MAN_SOURCE)

    def test_every_option_the_page_names_is_a_real_one(self):
        # Also in the prose: "*--console* 0", "*--auto\_run*".
        with open(MAN_SOURCE) as f:
            named = set(re.findall(r"\*(--?[A-Za-z0-9][\w-]*)\*",
                                   f.read().replace("\\_", "_")))
        helps = "\n".join(text for text, _, _ in MODEL.values())
        listed = set(FLAG.findall(helps))
        self.assertEqual(sorted(named - listed), [])

    def test_rendered_page_documents_what_help_lists(self):
        missing = None
        if not os.path.exists(MAN_BUILT):
            missing = "%s was not built (no scdoc: install scdoc)" % MAN_BUILT
        elif shutil.which("man") is None:
            missing = "no man to render it (install man-db)"
        if missing and REQUIRE_MAN:
            self.fail(missing)
        if missing:
            self.skipTest(missing)
        self.assertGreaterEqual(os.path.getmtime(MAN_BUILT), os.path.getmtime(MAN_SOURCE),
                                "the built page is older than its source: rebuild")
        self.assertSameSections(rendered_sections(render(MAN_BUILT)), MAN_BUILT)


class HelpEverywhere(unittest.TestCase):
    def test_every_command_takes_help_and_h(self):
        for cmd in (c for c in MODEL if c):
            for flag in ("--help", "-h"):
                with self.subTest(command=cmd, flag=flag):
                    r = deskhand(cmd, flag)
                    self.assertEqual((r.returncode, r.stderr), (0, b""))
                    self.assertTrue(r.stdout.startswith(b"usage: deskhand " + cmd.encode()),
                                    r.stdout[:80])
                    self.assertEqual(r.stdout.decode(), MODEL[cmd][0])

    def test_help_command_says_the_same(self):
        for cmd in (c for c in MODEL if c):
            with self.subTest(command=cmd):
                r = deskhand("help", cmd)
                self.assertEqual((r.returncode, r.stderr), (0, b""))
                self.assertEqual(r.stdout.decode(), MODEL[cmd][0])
        for args in (["help"], ["-h"], ["--help"]):
            r = deskhand(*args)
            self.assertEqual((r.returncode, r.stdout.decode()), (0, MODEL[""][0]), args)

    def test_help_anywhere_before_double_dash(self):
        r = deskhand("click", "10", "10", "--button", "left", "-h")
        self.assertEqual((r.returncode, r.stdout.decode()), (0, MODEL["click"][0]))
        r = deskhand("--display-backend", "x11", "key", "--help")
        self.assertEqual((r.returncode, r.stdout.decode()), (0, MODEL["key"][0]))
        # After "--" it is the text to type: the command runs (and finds no display).
        r = deskhand("type", "--", "--help")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, b"")
        self.assertIn(b"no display", r.stderr)

    def test_bad_option_is_a_usage_error(self):
        for cmd in (c for c in MODEL if c):
            with self.subTest(command=cmd):
                r = deskhand(cmd, "--no-such-option")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stdout, b"")
                err = r.stderr.decode()
                # deskhand mcp's and batch's own rooms cannot print the
                # table's line; they point at their --help instead.
                want = ("deskhand %s --help" % cmd if cmd in ("mcp", "batch") else
                        "usage: " + complete.synopsis(MODEL[cmd][0]) + "\n")
                self.assertIn(want, err)

    def test_help_of_no_command(self):
        r = deskhand("help", "frobnicate")
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertIn(b"no command 'frobnicate'", r.stderr)
        self.assertIn(b"usage: deskhand help [COMMAND]\n", r.stderr)

    def test_help_that_cannot_be_written_fails(self):
        for args in (["--help"], ["click", "--help"]):
            with open("/dev/full", "wb") as full:
                r = subprocess.run([h.binary()] + args, stdout=full,
                                   stderr=subprocess.PIPE, env=quiet_env(), timeout=60)
            self.assertEqual(r.returncode, 1, args)
            self.assertIn(b"cannot write the help", r.stderr)


# A value of each kind, good enough to get past the option's parser.
VALUES = {"N": "1", "X": "1", "Y": "1", "MS": "1", "SEC": "1", "ID": "0x1",
          "X,Y,W,H": "0,0,1,1", "WxH": "1280x800", "NAME": "m", "KEY": "k",
          "URL": "http://127.0.0.1:9", "TEXT": "t", "[ADDR:]PORT": "0",
          "FILE": "/nonexistent/deskhand-test", "PATH": "/nonexistent/deskhand-test"}


def sample(option):
    values = []
    for v in option.values:
        if option.choices:
            values.append(option.choices[0])
        elif v == "DIR":
            values.append(TMP)
        else:
            values.append(VALUES.get(v, "1"))
    return values


class OptionsAreReal(unittest.TestCase):
    def assertAccepted(self, args, flag):
        r = deskhand(*args)
        err = r.stderr.decode()
        self.assertNotIn("unknown option '%s'" % flag, err, args)
        self.assertNotIn("unknown option %s" % flag, err, args)
        self.assertNotIn("unknown argument '%s'" % flag, err, args)

    def test_commands_accept_the_options_they_list(self):
        # Each option with a value of its kind, and then a mistake the
        # command refuses or a display it cannot find: it never acts.
        stop = {"exec": ["no-such-language"], "scan": []}
        for cmd in (c for c in MODEL if c and c != "mcp"):
            for o in MODEL[cmd][1]:
                for flag in o.flags:
                    with self.subTest(command=cmd, option=flag):
                        self.assertAccepted([cmd, flag] + sample(o) + stop.get(cmd, []), flag)

    def test_the_agent_accepts_the_options_it_lists(self):
        # --version ends the run once every option before it is parsed.
        for o in MODEL[""][1]:
            for flag in o.flags:
                if flag in ("-h", "--help", "--version"):
                    continue
                with self.subTest(option=flag):
                    self.assertAccepted([flag] + sample(o) + ["--version"], flag)


if __name__ == "__main__":
    h.main()
