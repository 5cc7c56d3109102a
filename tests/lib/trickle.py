"""Slowloris for the tests of deskhand's HTTP servers: connections that
start a request and never end its headers, a byte a second each."""
import socket
import threading


class Trickle:
    """n connections that start a request and send one more header byte
    each second, never ending it; stopped (and closed) by stop()."""

    def __init__(self, port, n):
        self.socks, self.done = [], threading.Event()
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            self.socks.append(s)
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        live = list(self.socks)
        while live and not self.done.wait(1.0):
            for s in list(live):
                try:
                    s.send(b"a")
                except OSError:
                    live.remove(s)

    def stop(self):
        self.done.set()
        self.t.join()
        for s in self.socks:
            s.close()


def closed_by_server(sock):
    """Whether the server ended this connection (its end sent FIN or RST):
    a read that would block means it is still open."""
    try:
        return sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
