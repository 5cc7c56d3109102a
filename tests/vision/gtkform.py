#!/usr/bin/python3
"""A GTK3 window for the accessibility tests: two buttons, Approve and
Reject, one under the other; a click prints the button's name on stdout.
With --header-bar the window draws its own title bar (a GtkHeaderBar), and
with it, on Wayland, a client-side shadow around the window."""
import sys

import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

win = Gtk.Window(title="gtkform")
win.set_default_size(360, 200)
if "--header-bar" in sys.argv:
    bar = Gtk.HeaderBar(title="gtkform")
    bar.set_show_close_button(True)
    win.set_titlebar(bar)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
for name in ("Approve", "Reject"):
    b = Gtk.Button(label=name)
    b.connect("clicked", lambda _b, n=name: print(n, flush=True))
    box.pack_start(b, False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()
