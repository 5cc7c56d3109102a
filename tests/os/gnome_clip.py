"""The user's clipboard for tests/os/test_gnome_input.py: a RemoteDesktop
session of its own on Mutter's bus (run as the compositor's uid, with
python3-gi), driven by lines on stdin, one answer line each:

    set HEX        owns the clipboard with bytes HEX as text/plain;charset=utf-8
                   and as text/html (answers every transfer) -> "ok"
    read           the clipboard's text/plain;charset=utf-8 -> "HEX" ("" empty)
    mimes          the mime types of the last owner change -> "a b c"
    transfers      how many transfers of its content it answered -> "N"

Only Gio; the truth the tests compare deskhand's restored clipboard with."""
import os
import select
import sys
import time

from gi.repository import Gio, GLib

RD = "org.gnome.Mutter.RemoteDesktop"
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def call(path, iface, method, params=None):
    return bus.call_with_unix_fd_list_sync(RD, path, iface, method, params, None, 0, 5000,
                                           None, None)


def pump(t=0.0):
    end = time.monotonic() + t
    ctx = GLib.MainContext.default()
    while True:
        while ctx.iteration(False):
            pass
        if time.monotonic() >= end:
            return
        time.sleep(0.002)


(path,) = call("/org/gnome/Mutter/RemoteDesktop", RD, "CreateSession")[0].unpack()
S = RD + ".Session"
content = {}
state = {"mimes": [], "transfers": 0}


def on_signal(conn, sender, p, iface, name, params):
    if name == "SelectionOwnerChanged":
        state["mimes"] = list(params.unpack()[0].get("mime-types", ([],))[0])
    elif name == "SelectionTransfer":
        mime, serial = params.unpack()
        r, fds = call(path, S, "SelectionWrite", GLib.Variant("(u)", (serial,)))
        fd = fds.get(r.unpack()[0])
        os.write(fd, content.get(mime, b""))
        os.close(fd)
        call(path, S, "SelectionWriteDone", GLib.Variant("(ub)", (serial, True)))
        state["transfers"] += 1


bus.signal_subscribe(None, S, None, path, None, 0, on_signal)
call(path, S, "Start")
call(path, S, "EnableClipboard", GLib.Variant("(a{sv})", ({},)))
pump(0.1)
print("ready", flush=True)


def read_clip():
    r, fds = call(path, S, "SelectionRead", GLib.Variant("(s)", ("text/plain;charset=utf-8",)))
    fd = fds.get(r.unpack()[0])
    os.set_blocking(fd, False)
    data, end = b"", time.monotonic() + 5
    while time.monotonic() < end:
        pump()
        try:
            b = os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.002)
            continue
        if not b:
            break
        data += b
    os.close(fd)
    return data


while True:
    pump()
    if not select.select([sys.stdin], [], [], 0.01)[0]:
        continue
    line = sys.stdin.readline()
    if not line:
        break
    cmd = line.split()
    if not cmd:
        break
    if cmd[0] == "set":
        data = bytes.fromhex(cmd[1]) if len(cmd) > 1 else b""
        content = {"text/plain;charset=utf-8": data, "text/html": b"<b>" + data + b"</b>"}
        call(path, S, "SetSelection", GLib.Variant("(a{sv})", (
            {"mime-types": GLib.Variant("as", list(content))},)))
        pump(0.2)
        out = "ok"
    elif cmd[0] == "read":
        out = read_clip().hex()
    elif cmd[0] == "mimes":
        pump(0.05)
        out = " ".join(state["mimes"])
    elif cmd[0] == "transfers":
        out = str(state["transfers"])
    else:
        out = "?"
    print(out, flush=True)
call(path, S, "Stop")
