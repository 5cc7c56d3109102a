#!/usr/bin/python3
"""A GTK3 window for the accessibility tests: a 3,000-row list scrolled to
row 1,500 (argv[1] rows, argv[2] the row to show at the top), a button, and
"ready" on stdout once the list is scrolled."""
import sys

import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

rows, top = int(sys.argv[1]), int(sys.argv[2])
win = Gtk.Window(title="biglist")
win.set_default_size(400, 500)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
button = Gtk.Button(label="Refresh")
button.connect("clicked", lambda b: print("clicked", flush=True))
box.pack_start(button, False, False, 0)
store = Gtk.ListStore(str)
for i in range(rows):
    store.append(["row %d" % i])
view = Gtk.TreeView(model=store)
view.append_column(Gtk.TreeViewColumn("Item", Gtk.CellRendererText(), text=0))
scroll = Gtk.ScrolledWindow()
scroll.add(view)
box.pack_start(scroll, True, True, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()


def scrolled():
    view.scroll_to_cell(Gtk.TreePath(top), None, True, 0.0, 0.0)
    GLib.timeout_add(300, lambda: print("ready", flush=True) and False)
    return False


GLib.timeout_add(200, scrolled)
Gtk.main()
