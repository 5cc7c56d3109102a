#!/usr/bin/python3
"""A GTK3 window for the accessibility tests: a button "Add" that adds a
button "Added N" under it on each click (and prints "added N"), so that one
process reading the tree twice must see a control that did not exist at its
first read."""
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

win = Gtk.Window(title="grow")
win.set_default_size(300, 300)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
count = [0]


def add(_button):
    count[0] += 1
    box.pack_start(Gtk.Button(label="Added %d" % count[0]), False, False, 0)
    box.show_all()
    print("added %d" % count[0], flush=True)


button = Gtk.Button(label="Add")
button.connect("clicked", add)
box.pack_start(button, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
