#!/usr/bin/env python3
"""Checker of the file-rename task: in files/, report-draft.txt is now
report-final.txt with its contents unchanged, and nothing else changed.

    python3 rename_done.py ORIGINAL_DIR       (cwd = the task's workspace)

ORIGINAL_DIR is the suite's pristine copy of files/, so the checker compares
the directory as it is on disk with what it must be.
"""
import os
import sys


def snapshot(path):
    out = {}
    for name in sorted(os.listdir(path)):
        with open(os.path.join(path, name), "rb") as f:
            out[name] = f.read()
    return out


def main():
    want = snapshot(sys.argv[1])
    want["report-final.txt"] = want.pop("report-draft.txt")
    try:
        got = snapshot("files")
    except OSError as e:
        print("files/ cannot be read: %s" % e)
        return 1
    if got != want:
        print("files/ holds %s; expected %s" % (sorted(got), sorted(want)))
        for name in sorted(set(got) & set(want)):
            if got[name] != want[name]:
                print("%s's contents changed" % name)
        return 1
    print("report-draft.txt was renamed report-final.txt, contents intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
