"""The test's end of a pseudo-terminal that a process under test has as
its controlling terminal (mcplib's driver, mcpraw's server): what it shows
is read until a pattern appears, and answers are typed into it. The class
using it sets self.tty (the master's fd, or None), self.tty_buf and
self.tty_transcript (b"")."""
import os
import re
import select
import time


class TtyEnd:
    def tty_expect(self, pattern, timeout=30):
        """The match of `pattern` (bytes regex) in what the terminal shows
        next; what came before it and the match itself are used up."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.tty_buf)
            if m:
                self.tty_buf = self.tty_buf[m.end():]
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %r on the terminal within %ds; it showed:\n%r" % (
                    pattern, timeout, self.tty_transcript[-2000:]))
            r, _, _ = select.select([self.tty], [], [], min(left, 1.0))
            if r:
                try:
                    data = os.read(self.tty, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError("the terminal closed before %r; it showed:\n%r" % (
                        pattern, self.tty_transcript[-2000:]))
                self.tty_buf += data
                self.tty_transcript += data

    def tty_send(self, text):
        os.write(self.tty, text if isinstance(text, bytes) else text.encode())
