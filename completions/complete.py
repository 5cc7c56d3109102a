#!/usr/bin/env python3
"""deskhand's shell completion, generated from the built binary's own help.

    complete.py DESKHAND BASH_OUT

runs DESKHAND --help and DESKHAND COMMAND --help for every command the
first lists, reads their options, values and arguments, and writes a bash
completion script. The help texts are the one source (agent/cli/commands.c,
agent/session/options.c): what they list is what the script completes.

The readers below are also tests/cli/test_manual.py's, which holds the man
page to the same texts. They read the layout commands.c promises: option
lines start "  -", each flag is followed by its values (words in capitals,
or [ADDR:]PORT) and ", " before the next flag; a value's choices are written
"a | b | c"; "arguments:", "options:" and "commands:" head their blocks.
"""
import os
import re
import subprocess
import sys

# One flag and its values: "-o", "--output FILE", "--at X Y", "--http [ADDR:]PORT".
FLAG = re.compile(r"(--?[A-Za-z0-9][\w-]*)((?: (?:[A-Z]|\[)[^\s,]*)*)(, )?")
# A value's choices in its description: "off | standard | strict".
CHOICES = re.compile(r"(?<![\w.-])([\w.-]+(?: \| [\w.-]+)+)")


class Option:
    """One option line: its spellings, its values' names, their choices."""

    def __init__(self, flags, values, text):
        self.flags, self.values, self.text = flags, values, text
        m = CHOICES.search(text)
        self.choices = m.group(1).split(" | ") if m else []

    def __repr__(self):
        return "Option(%r, %r, %r)" % (self.flags, self.values, self.choices)


class Argument:
    """One line of "arguments:": its words ("X Y", "FILE...") and choices."""

    def __init__(self, name, text):
        self.name, self.text = name, text
        words = name.split()
        self.repeats = words[-1].endswith("...")
        self.count = len(words)
        m = CHOICES.search(text)
        if "|" in name and name.islower():
            self.choices = name.split("|")
        elif name.islower():
            self.choices = [name]     # a literal word, as audit's "verify"
        else:
            self.choices = m.group(1).split(" | ") if m else []


def help_text(binary, command=None):
    """What `deskhand [COMMAND] --help` prints, checked: exit 0, nothing on
    standard error. No display is needed, so none is given."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    args = [binary] + ([command] if command else []) + ["--help"]
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=60)
    if r.returncode != 0 or r.stderr:
        raise RuntimeError("%s: exit %d, %r" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout.decode()


def _described(lines, i):
    """The description starting on lines[i] after its name, with the
    continuation lines (indented deeper) that follow; and the next index."""
    text = [lines[i]]
    i += 1
    while i < len(lines) and lines[i].startswith("    ") and lines[i].strip():
        text.append(lines[i].strip())
        i += 1
    return " ".join(text), i


def parse_options(text):
    """Every option line of a help text."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("  -"):
            i += 1
            continue
        rest, pos, flags, values = line[2:], 0, [], []
        while True:
            m = FLAG.match(rest, pos)
            if m is None:
                break
            flags.append(m.group(1))
            values = m.group(2).split() or values
            pos = m.end()
            if not m.group(3):
                break
        lines[i] = rest[pos:].strip()
        desc, i = _described(lines, i)
        out.append(Option(flags, values, desc))
    return out


def _block(text, heading):
    """The lines of the block under "heading:", up to the blank line."""
    lines = text.splitlines()
    if heading + ":" not in lines:
        return []
    start = lines.index(heading + ":") + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def parse_arguments(text):
    """The "arguments:" block of a command's help."""
    lines = _block(text, "arguments")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"  (\S+(?: \S+)*?)(?:\s{2,}(.*))?$", lines[i])
        if m is None or lines[i].startswith("    "):
            i += 1
            continue
        lines[i] = m.group(2) or ""
        desc, i = _described(lines, i)
        out.append(Argument(m.group(1), desc))
    return out


def parse_commands(text):
    """The commands deskhand --help lists, in its order."""
    return [m.group(1) for line in _block(text, "commands")
            for m in [re.match(r"  ([a-z][\w-]*) ", line)] if m]


def synopsis(text):
    """A command's synopsis: its help's first line, without "usage: "."""
    first = text.splitlines()[0]
    return first[len("usage: "):] if first.startswith("usage: ") else first


def read_all(binary):
    """{"": (agent's help, options), COMMAND: (help, options, arguments)}:
    everything the binary's help says, as the script and the test use it."""
    top = help_text(binary)
    model = {"": (top, parse_options(top), [])}
    for c in parse_commands(top):
        t = help_text(binary, c)
        model[c] = (t, parse_options(t), parse_arguments(t))
    return model


# ---- the bash script ---------------------------------------------------

def _words(words):
    return "'" + " ".join(words) + "'"


def _value_reply(values, choices):
    """What completes an option's first value: choices, files, directories
    or nothing ('')."""
    if choices:
        return _words(choices)
    if values and values[0] in ("FILE", "PATH"):
        return "@file"
    if values and values[0] == "DIR":
        return "@dir"
    return "''"


def _argument_reply(arg, commands):
    if arg.name == "COMMAND":
        return _words(commands)
    if "FILE" in arg.name:
        return "@file"
    return _words(arg.choices) if arg.choices else None


def _options_of(model, cmd):
    """A command's options; deskhand mcp takes the agent's too."""
    text, opts, _ = model[cmd]
    if cmd and "AGENT OPTIONS" in synopsis(text):
        opts = opts + model[""][1]
    return opts


def bash_script(model):
    commands = [c for c in model if c]
    out = ["# bash completion for deskhand(1): generated at build time by",
           "# completions/complete.py from the built deskhand's --help texts;",
           "# change those (agent/cli/commands.c, agent/session/options.c), not this.",
           "",
           "_deskhand_commands=%s" % _words(commands), "",
           "# The options of command $1 ('' for the agent) in REPLY.",
           "_deskhand_options() {", "\tcase $1 in"]
    for cmd in model:
        flags = [f for o in _options_of(model, cmd) for f in o.flags]
        flags = list(dict.fromkeys(flags + (["--help", "-h"] if cmd else [])))
        out.append("\t%s) REPLY=%s ;;" % (cmd or "''", _words(flags)))
    out += ["\tesac", "}", "",
            "# Option $2 of command $1: in REPLY what completes its value (words,",
            "# @file or @dir), in N how many values it takes; 1 when it takes none.",
            "_deskhand_value() {", "\tcase \"$1 $2\" in"]
    for cmd in model:
        for o in _options_of(model, cmd):
            if o.values:
                pats = "|".join("'%s %s'" % (cmd, f) for f in o.flags)
                out.append("\t%s) REPLY=%s N=%d ;;" % (
                    pats, _value_reply(o.values, o.choices), len(o.values)))
    out += ["\t*) return 1 ;;", "\tesac", "}", "",
            "# What completes argument $2 (from 0) of command $1, in REPLY; 1: nothing.",
            "_deskhand_argument() {", "\tcase \"$1 $2\" in"]
    for cmd in commands:
        k = 0
        for a in model[cmd][2]:
            reply = _argument_reply(a, commands)
            if reply is not None:
                pats = ["'%s %d'" % (cmd, k + j) for j in range(a.count)]
                if a.repeats:
                    pats = ["'%s '*" % cmd]
                out.append("\t%s) REPLY=%s ;;" % ("|".join(pats), reply))
            k += a.count
    out += ["\t*) return 1 ;;", "\tesac", "}", "", BASH_MAIN]
    return "\n".join(out) + "\n"


BASH_MAIN = r'''# COMPREPLY from a reply: words, @file or @dir, matched against $cur.
_deskhand_reply() {
	case $1 in
	@file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	@dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	*) mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur") ;;
	esac
}

_deskhand() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' i=1 j k=0 w cmd='' REPLY N
	COMPREPLY=()
	(( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
	# --opt=value: bash splits at the "=" (COMP_WORDBREAKS).
	if [[ $cur == = ]]; then cur=''
	elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	# A --display-backend B may come before the command.
	if [[ ${COMP_WORDS[1]-} == --display-backend ]]; then i=3; fi
	if (( COMP_CWORD > i )) && [[ " $_deskhand_commands " == *" ${COMP_WORDS[i]} "* ]]; then
		cmd=${COMP_WORDS[i]}
	fi
	if [[ $prev == -* ]] && _deskhand_value "$cmd" "$prev"; then
		_deskhand_reply "$REPLY"
		return
	fi
	if [[ $cur == -* ]]; then
		_deskhand_options "$cmd"
		_deskhand_reply "$REPLY"
		return
	fi
	if [[ -z $cmd ]]; then
		# The command's place; after it, the agent's MESSAGE is free text.
		(( COMP_CWORD == i )) && _deskhand_reply "$_deskhand_commands"
		return
	fi
	# Which argument of the command this is: the words before it that are
	# neither options nor their values.
	for (( j = i + 1; j < COMP_CWORD; j++ )); do
		w=${COMP_WORDS[j]}
		if [[ $w == -?* ]] && _deskhand_value "$cmd" "$w"; then
			(( j + N >= COMP_CWORD )) && return
			(( j += N ))
		elif [[ $w != -?* ]]; then
			(( k++ ))
		fi
	done
	_deskhand_argument "$cmd" "$k" && _deskhand_reply "$REPLY"
}
complete -F _deskhand deskhand'''


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: complete.py DESKHAND BASH_OUT")
    script = bash_script(read_all(argv[1]))
    tmp = argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write(script)
    os.replace(tmp, argv[2])


if __name__ == "__main__":
    main(sys.argv)
