#!/usr/bin/python3
"""A GTK3 window for the accessibility tests: a button "Approve" that prints
"clicked LABEL" when pressed. When the file DIR/rename appears, the button
takes its content as its new label and prints "renamed"; when DIR/quit
appears, it prints "bye" and ends. Prints "ready" once shown."""
import os
import sys

import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

folder = sys.argv[1]
win = Gtk.Window(title="renamer")
win.set_default_size(420, 120)
box = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL)
button = Gtk.Button(label="Approve")
# A fixed size: a short new label keeps the box, a long one widens it.
button.set_size_request(160, 40)
button.connect("clicked", lambda b: print("clicked", b.get_label(), flush=True))
box.pack_start(button, False, False, 20)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
state = {"renamed": False}


def poll():
    path = os.path.join(folder, "rename")
    if not state["renamed"] and os.path.exists(path):
        with open(path) as f:
            button.set_label(f.read())
        state["renamed"] = True
        print("renamed", flush=True)
    if os.path.exists(os.path.join(folder, "quit")):
        print("bye", flush=True)
        Gtk.main_quit()
        return False
    return True


GLib.timeout_add(50, poll)
GLib.timeout_add(100, lambda: print("ready", flush=True) and False)
Gtk.main()
