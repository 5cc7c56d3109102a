# deskhand's Python driver: runs blocks read from fd 3 in one persistent
# __main__ namespace and reports "MARKER STATUS" on fd 4 after each.
def __deskhand_driver():
    import ast, linecache, os, signal, sys, traceback

    g = sys.modules["__main__"].__dict__
    g.pop("__deskhand_driver", None)
    sys.argv[:] = [""]
    os.set_inheritable(3, False)
    os.set_inheritable(4, False)
    blocks = os.fdopen(3, "rb")
    pid = os.getpid()
    state = {"running": False}

    # SIGINT interrupts a block; between blocks it must not kill the driver.
    def on_sigint(signum, frame):
        if state["running"]:
            raise KeyboardInterrupt
    signal.signal(signal.SIGINT, on_sigint)

    def show(exc):
        # The traceback of the block only: the driver's frames (the loop
        # that called exec, the SIGINT handler) are left out.
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if not (f.filename == "<string>" and
                                         f.name in ("__deskhand_driver", "on_sigint"))])
        sys.stderr.write("".join(te.format()))

    def exit_status(code):
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        try:
            print(code, file=sys.stderr)
        except Exception:
            pass
        return 1

    n = 0
    while True:
        header = blocks.readline()
        if not header:
            os._exit(0)
        if header == b"\n":
            continue    # deskhand's token: it looks whether we wait here
        try:
            marker, size = header.split()
            size = int(size)
        except ValueError:
            os._exit(70)
        src = blocks.read(size) if size else b""
        n += 1
        name = "<block %d>" % n
        status = 0
        try:
            state["running"] = True
            text = src.decode("utf-8", "replace")
            linecache.cache[name] = (len(text), None, text.splitlines(True), name)
            tree = compile(src, name, "exec", ast.PyCF_ONLY_AST)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, name, "exec"), g)
            if last is not None:
                value = eval(compile(last, name, "eval"), g)
                if value is not None:
                    sys.displayhook(value)
        except SystemExit as e:
            status = exit_status(e.code)
        except KeyboardInterrupt as e:
            state["running"] = False
            show(e)
            status = 130
        except BaseException as e:
            state["running"] = False
            show(e)
            status = 1
        state["running"] = False
        for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                f.flush()
            except Exception:
                pass
        if os.getpid() != pid:
            # A fork() made by the block ends here, not in this loop.
            os._exit(status)
        os.write(4, b"%s %d\n" % (marker, status))

__deskhand_driver()
