"""Shared pieces of the exec tests: running blocks through exec-run (the
library itself) and deskhand exec (the command), and finding what is
left of a session once it is over."""
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import threading

import harness as h

# Interpreters an unprivileged uid can read (not root's pyenv shims).
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def have(program, path=None):
    return shutil.which(program, path=path) is not None


def helper(name):
    """A helper program built beside these tests (try-syscall, exec-run)."""
    return os.path.join(h.build_dir(), "tests", "executors", name)


def parse_exec_run(data):
    """Splits exec-run's output into one dict per block:
    {status, timed_out, interrupted, restarted, ended, total, omitted,
     output (str), chunks [(stream, bytes)], message (str)} or {error}."""
    blocks, chunks, i = [], [], 0
    while i < len(data):
        nl = data.index(b"\n", i)
        head = data[i:nl].split()
        i = nl + 1
        kind = head[0]
        if kind == b"chunk":
            stream, n = int(head[1]), int(head[2])
            chunks.append((stream, data[i:i + n]))
            i += n + 1
        elif kind == b"result":
            (status, to, intr, rest, ended, total, omitted, n) = map(int, head[1:])
            out = data[i:i + n].decode("utf-8")
            i += n + 1
            blocks.append(dict(status=status, timed_out=bool(to), interrupted=bool(intr),
                               restarted=bool(rest), ended=bool(ended), total=total,
                               omitted=omitted, output=out, chunks=chunks))
            chunks = []
        elif kind == b"message":
            n = int(head[1])
            blocks[-1]["message"] = data[i:i + n].decode()
            i += n + 1
        elif kind == b"error":
            n = int(head[1])
            blocks.append(dict(error=data[i:i + n].decode(), chunks=chunks))
            chunks = []
            i += n + 1
        else:
            raise ValueError("unexpected exec-run line %r" % head)
    return blocks


def run_blocks(blocks, *opts, env=None, timeout=120):
    r = h.run([helper("exec-run")] + list(opts) + list(blocks), env=env,
              timeout=timeout)
    if r.returncode != 0:
        raise AssertionError("exec-run failed (%d): %s" % (r.returncode, r.stderr))
    return parse_exec_run(r.stdout)


def deskhand_exec(lang, code, *opts, env=None, timeout=120, prefix=()):
    if isinstance(code, str):
        code = code.encode()
    return h.run(list(prefix) + [h.binary(), "exec"] + list(opts) + [lang],
                 input=code, env=env, timeout=timeout)


def env_with(**extra):
    e = dict(os.environ)
    e.update(extra)
    return e


def shared_dir():
    """A directory every uid may use (for runs as nobody)."""
    d = tempfile.mkdtemp(prefix="deskhand-exec-")
    os.chmod(d, 0o777)
    return d


def pids_in_namespace(ns):
    """Host pids whose pid namespace is `ns` ("pid:[4026532...]")."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/ns/pid" % name) == ns:
                found.append(int(name))
        except OSError:
            pass
    return found


def alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kernel_at_least(major, minor):
    rel = os.uname().release.split(".")
    return (int(rel[0]), int(rel[1].split("-")[0])) >= (major, minor)


def world_readable_copy(path, dest_dir):
    """Copies a built helper where any uid can run it."""
    dst = os.path.join(dest_dir, os.path.basename(path))
    shutil.copy(path, dst)
    os.chmod(dst, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return dst


def as_nobody(nproc=4000, data=None):
    """A command prefix: an outer limit first (so a broken sandbox cannot
    take the machine down), then uid/gid 65534 without groups."""
    prefix = ["prlimit", "--nproc=%d" % nproc]
    if data is not None:
        prefix.append("--data=%d" % data)
    return prefix + ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class Listener(threading.Thread):
    """Accepts connections on a listening socket (by default TCP on the
    host's loopback, on a free port), greets each client and counts them."""

    def __init__(self, sock=None, greeting=b""):
        super().__init__(daemon=True)
        self.sock = sock if sock is not None else socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1] if self.sock.family != socket.AF_UNIX else None
        self.greeting = greeting
        self.accepted = 0
        self.start()

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            if self.greeting:
                c.sendall(self.greeting)
            c.close()
