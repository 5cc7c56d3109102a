#!/usr/bin/env python3
"""Checker of the GTK form task: what the zenity form printed when it was
submitted. The task's app runs `zenity --forms ... > form.txt; echo $? >
form.status`, so form.txt is the form's own output (the fields joined by
"|") and form.status its exit status (0 only when OK was pressed).

    python3 visitor_form.py                   (cwd = the task's workspace)
"""
import sys

WANT = ["Ada Lovelace", "Analytical Engines", "contractor"]


def main():
    try:
        status = open("form.status", encoding="utf-8").read().strip()
        out = open("form.txt", encoding="utf-8").read()
    except OSError as e:
        print("the form was not submitted (still open?): %s" % e)
        return 1
    if status != "0":
        print("the form ended with status %s (cancelled or closed), not OK" % status)
        return 1
    fields = [f.strip() for f in out.rstrip("\n").split("|")]
    if fields != WANT:
        print("the form was submitted with %r; expected %r" % (fields, WANT))
        return 1
    print("the form was submitted with %r" % (fields,))
    return 0


if __name__ == "__main__":
    sys.exit(main())
