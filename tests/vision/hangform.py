#!/usr/bin/python3
"""A GTK3 window for the fault tests: a title and buttons from the command
line (hangform.py TITLE BUTTON...). It prints "ready" once its window maps;
on SIGUSR1 its main loop blocks for good (it prints "blocked" and sleeps
inside a GLib callback, as an application stuck in a long computation or
a dead lock does): it stays registered on the accessibility bus and never
answers again. SIGTERM still ends it (Python leaves SIGTERM at its
default)."""
import signal
import sys
import time

import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def block():
    print("blocked", flush=True)
    while True:
        time.sleep(3600)


win = Gtk.Window(title=sys.argv[1])
win.set_default_size(300, 60 * (len(sys.argv) - 2))
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
for name in sys.argv[2:]:
    box.pack_start(Gtk.Button(label=name), False, False, 0)
win.add(box)
win.connect("destroy", Gtk.main_quit)
win.connect("map-event", lambda *_: print("ready", flush=True))
GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGUSR1, block)
win.show_all()
Gtk.main()
