#!/usr/bin/env python3
"""Checker of the text-editor task: notes.txt, as the editor saved it on
disk, is the original list with the line "- milk" added at its end.

    python3 note_saved.py ORIGINAL.txt        (cwd = the task's workspace)

What is on the screen does not count: text typed but not saved fails.
Trailing white space and a missing final newline are forgiven.
"""
import sys


def lines(text):
    out = [line.rstrip() for line in text.splitlines()]
    while out and not out[-1]:
        out.pop()
    return out


def main():
    want = lines(open(sys.argv[1], encoding="utf-8").read()) + ["- milk"]
    try:
        got = lines(open("notes.txt", encoding="utf-8").read())
    except (OSError, UnicodeDecodeError) as e:
        print("notes.txt cannot be read: %s" % e)
        return 1
    if got != want:
        print("notes.txt on disk is %r; expected %r" % (got, want))
        return 1
    print("notes.txt was saved with the new line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
