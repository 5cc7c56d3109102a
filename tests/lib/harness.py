"""
Shared harness for deskhand's integration tests: a private Xvfb on a free
display, the path of the built binary, helpers to start and stop processes
this test owns (by pid, never by name), and a unittest runner that speaks
TAP so meson and tests/run can count every case.

Only the Python standard library is used, so the tests run on a fresh
Debian machine with nothing but the packages .ci/run installs.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(os.path.dirname(HERE))


def build_dir():
    """The meson build directory, from MESON_BUILD_ROOT or DESKHAND_BUILD."""
    for var in ("DESKHAND_BUILD", "MESON_BUILD_ROOT"):
        if os.environ.get(var):
            return os.environ[var]
    return os.path.join(SRCDIR, "build")


def binary(name="deskhand"):
    """Path of a built program: deskhand itself or a helper under tests/."""
    if os.environ.get("DESKHAND_BIN") and name == "deskhand":
        return os.environ["DESKHAND_BIN"]
    b = build_dir()
    for cand in (os.path.join(b, name), os.path.join(b, "tests", name)):
        if os.path.exists(cand):
            return cand
    raise FileNotFoundError("%s not built under %s" % (name, b))


class Xvfb:
    """A private X server. The display number is chosen by the server itself
    (-displayfd), so parallel tests never collide and :0/:99 are never
    assumed."""

    def __init__(self, width=1920, height=1080, depth=24, extra_args=()):
        self.width, self.height, self.depth = width, height, depth
        rfd, wfd = os.pipe()
        args = ["Xvfb", "-displayfd", str(wfd), "-screen", "0",
                "%dx%dx%d" % (width, height, depth), "-nolisten", "tcp",
                "-noreset"] + list(extra_args)
        self.proc = subprocess.Popen(args, pass_fds=(wfd,),
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        os.close(wfd)
        data = b""
        deadline = time.monotonic() + 30
        while not data.endswith(b"\n"):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                os.close(rfd)
                self.stop()
                raise RuntimeError("Xvfb did not start")
            chunk = os.read(rfd, 64)
            if not chunk:
                break
            data += chunk
        os.close(rfd)
        self.number = int(data.strip())
        self.display = ":%d" % self.number
        self.socket = "/tmp/.X11-unix/X%d" % self.number

    def env(self, **extra):
        e = dict(os.environ)
        e["DISPLAY"] = self.display
        e.pop("XAUTHORITY", None)
        e.update(extra)
        return e

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Proc:
    """A child process owned by the test; stop() ends it by pid (and its
    process group, which it leads), never by name."""

    def __init__(self, args, env=None, **kw):
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        self.p = subprocess.Popen(args, env=env, start_new_session=True, **kw)
        self.pid = self.p.pid

    def stop(self, timeout=5):
        if self.p.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.p.wait()
        return self.p.returncode


def wait_for(pred, timeout=10.0, step=0.02):
    """Polls pred() until it is true; returns its last value. Bounded."""
    deadline = time.monotonic() + timeout
    val = pred()
    while not val and time.monotonic() < deadline:
        time.sleep(step)
        val = pred()
    return val


def run(args, env=None, input=None, timeout=60, **kw):
    """Runs a program to completion, returning CompletedProcess with bytes."""
    if isinstance(input, str):
        input = input.encode()
    return subprocess.run(args, env=env, input=input, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def tmpdir():
    return tempfile.mkdtemp(prefix="deskhand-test-")


class _TapResult(unittest.TestResult):
    """One TAP line per test method, each failure with its traceback as "# "
    diagnostics. A method whose subtests failed gets one "not ok" line
    carrying every failed subtest (unittest calls neither addSuccess nor
    addFailure for it). A failed setUpModule/setUpClass is remembered, and
    every case it kept from running is reported by name with that reason."""

    def __init__(self):
        super().__init__()
        self.n = 0
        self.reported = set()
        self.setup_errors = []
        self.setup_skips = []
        self._sub_failed = {}

    def _line(self, ok, test, detail=None, directive=""):
        self.n += 1
        self.reported.add(test.id())
        name = test.id().split(".", 1)[-1]
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, name,
                                directive), flush=True)
        if detail:
            for line in detail.rstrip().splitlines():
                print("# " + line, flush=True)

    def _fail(self, test, err):
        if not hasattr(test, "_testMethodName"):
            # setUpModule, setUpClass or their tearDown: no case of its own.
            self.setup_errors.append("%s\n%s" % (
                test.description, self._exc_info_to_string(err, test)))
            return
        detail = self._sub_failed.pop(test.id(), [])
        detail.append(self._exc_info_to_string(err, test))
        self._line(False, test, "\n".join(detail))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._sub_failed.setdefault(test.id(), []).append(
                "%s\n%s" % (subtest._subDescription(),
                            self._exc_info_to_string(err, test)))

    def stopTest(self, test):
        failed = self._sub_failed.pop(test.id(), None)
        if failed:
            self._line(False, test, "\n".join(failed))
        super().stopTest(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._fail(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._fail(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if hasattr(test, "_testMethodName"):
            self._line(True, test, directive=" # SKIP " + reason)
        else:
            # setUpModule/setUpClass raised SkipTest: its cases are skips.
            self.setup_skips.append((test.description, reason))

    def skip_reason(self, test):
        """The reason a skipped setUpModule/setUpClass kept `test` from
        running, or None. The description names the module or the class:
        "setUpClass (mod.Class)" or "setUpModule (mod)"."""
        for desc, reason in self.setup_skips:
            scope = desc[desc.find("(") + 1:desc.rfind(")")]
            if test.id().startswith(scope + "."):
                return reason
        return None

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(True, test, directive=" # TODO expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(False, test, "unexpected success")


def _cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _cases(t)
        else:
            yield t


def main():
    """Runs the calling module's tests and prints TAP. Exit 0 iff all pass."""
    mod = sys.modules["__main__"]
    suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    cases = list(_cases(suite))
    print("TAP version 13", flush=True)
    print("1..%d" % len(cases), flush=True)
    result = _TapResult()
    suite.run(result)
    why = "\n".join(result.setup_errors) or "the case never reported a result"
    missing = [t for t in cases if t.id() not in result.reported]
    skipped = [t for t in missing if result.skip_reason(t) is not None]
    missing = [t for t in missing if t not in skipped]
    for t in skipped:
        result._line(True, t, directive=" # SKIP " + result.skip_reason(t))
    for t in missing:
        result._line(False, t, "setup failed, so this case did not run:\n" + why)
    if result.setup_errors and not missing:
        # A tearDownModule/tearDownClass failure after every case ran.
        print("# " + why.replace("\n", "\n# "), flush=True)
    ok = result.wasSuccessful() and not missing and not result.setup_errors
    sys.exit(0 if ok else 1)
