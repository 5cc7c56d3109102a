"""
mutterhand CONNECTOR — a RemoteDesktop session of its own on the session
bus's Mutter, driven line by line on stdin, for tests/lib/mutter.py's
MutterHand: the user's hand, whose pointer moves deskhand must observe.

    move X Y          absolute, in the stream of CONNECTOR's coordinates
    button CODE 0|1   evdev code (272 left), released / pressed

Answers "ready NODE" once the session started (NODE: its stream's
PipeWire node, which a test oracle such as gst-launch's pipewiresrc reads),
then "ok" per command, or "error TEXT". Absolute motion needs a stream:
the session records CONNECTOR (nobody reads its frames).
"""
import sys

from gi.repository import Gio, GLib

RD, SC = "org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.ScreenCast"


def call(bus, dest, path, iface, method, params=None, reply=None):
    return bus.call_sync(dest, path, iface, method, params,
                         GLib.VariantType(reply) if reply else None,
                         Gio.DBusCallFlags.NONE, 10000, None)


def main():
    conn = sys.argv[1]
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    rd = call(bus, RD, "/org/gnome/Mutter/RemoteDesktop", RD, "CreateSession",
              reply="(o)")[0]
    sid = call(bus, RD, rd, "org.freedesktop.DBus.Properties", "Get",
               GLib.Variant("(ss)", (RD + ".Session", "SessionId")), "(v)")[0]
    sc = call(bus, SC, "/org/gnome/Mutter/ScreenCast", SC, "CreateSession",
              GLib.Variant("(a{sv})", ({"remote-desktop-session-id": GLib.Variant("s", sid)},)),
              "(o)")[0]
    stream = call(bus, SC, sc, SC + ".Session", "RecordMonitor",
                  GLib.Variant("(sa{sv})", (conn, {})), "(o)")[0]
    nodes = []
    bus.signal_subscribe(SC, SC + ".Stream", "PipeWireStreamAdded", stream, None,
                         Gio.DBusSignalFlags.NONE,
                         lambda *a: nodes.append(a[5][0]))
    call(bus, RD, rd, RD + ".Session", "Start")
    ctx = GLib.MainContext.default()
    deadline = GLib.get_monotonic_time() + 10 * 1000000
    while not nodes and GLib.get_monotonic_time() < deadline:
        ctx.iteration(True)
    print("ready %d" % nodes[0] if nodes else "error no PipeWire node for %s" % conn, flush=True)
    for line in sys.stdin:
        words = line.split()
        try:
            if words[0] == "move":
                call(bus, RD, rd, RD + ".Session", "NotifyPointerMotionAbsolute",
                     GLib.Variant("(sdd)", (stream, float(words[1]), float(words[2]))))
            elif words[0] == "button":
                call(bus, RD, rd, RD + ".Session", "NotifyPointerButton",
                     GLib.Variant("(ib)", (int(words[1]), words[2] == "1")))
            else:
                raise ValueError("unknown command " + words[0])
            print("ok", flush=True)
        except Exception as e:  # the test reads the reason
            print("error %s" % e, flush=True)
    call(bus, RD, rd, RD + ".Session", "Stop")


if __name__ == "__main__":
    main()
