# Runs inside the jail (python -I -S -c <this file>): reads {"code", "input"} as JSON from stdin,
# executes the snippet with `input` bound, and writes to fd 3 one byte saying whether the jail's
# confinement is in place ("C") or not ("U" and {"unavailable"}), then {"result"} or {"error"} as
# JSON. The snippet can write to fd 3 too, but only after the "C": the parent trusts that first
# byte alone. The snippet's stdout stays on fd 1; the parent counts fd 1, 2 and 3 against the cap.
import ctypes, errno, json, linecache, os, sys, traceback

def confine():
    """Makes the snippet one process whose address space (RLIMIT_AS) is all the memory it can
    hold: no new processes (threads share the address space and stay allowed), no SysV or POSIX
    shared memory and no memfd, whose pages live outside any one process. Loaded through Debian's
    libseccomp before the snippet runs; the snippet cannot lift it (no_new_privs, seccomp stays)."""
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]

    class ArgCmp(ctypes.Structure):
        _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]

    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ALLOW, CMP_MASKED_EQ, CLONE_THREAD = 0x7FFF0000, 7, 0x00010000

    def deny(e):
        return 0x00050000 | e

    ctx = lib.seccomp_init(ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        def rule(name, action, cmp=None):
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            rc = lib.seccomp_rule_add_array(ctx, action, nr, 1 if cmp else 0, ctypes.byref(cmp) if cmp else None)
            if rc < 0:
                raise OSError(-rc, "seccomp rule for %s: %s" % (name, os.strerror(-rc)))

        for name in ("fork", "vfork", "shmget", "memfd_create", "memfd_secret", "mq_open"):
            rule(name, deny(errno.EPERM))
        # io_uring runs its operations outside the system-call path this filter sees; a snippet
        # has no use for it (Docker's default profile refuses it too).
        for name in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
            rule(name, deny(errno.EPERM))
        # clone is allowed for threads only; clone3 hides its flags in memory, so glibc is told it
        # does not exist and falls back to clone.
        rule("clone", deny(errno.EPERM), ArgCmp(0, CMP_MASKED_EQ, CLONE_THREAD, 0))
        rule("clone3", deny(errno.ENOSYS))
        rc = lib.seccomp_load(ctx)
        if rc < 0:
            raise OSError(-rc, "seccomp_load: %s" % os.strerror(-rc))
    finally:
        lib.seccomp_release(ctx)

# CPython's locale coercion (PEP 538) adds LC_CTYPE at start-up; the jail itself passes no
# environment at all, and the snippet should see exactly that.
os.environ.clear()
request = json.loads(sys.stdin.buffer.read())
sys.stdin.close()
result_fd = os.fdopen(3, "w", encoding="utf-8")
os.set_inheritable(3, False)

code = request["code"]
FILENAME = "<snippet>"
# Tracebacks show the snippet's own source lines.
linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
scope = {"__name__": "__main__", "input": request.get("input")}

try:
    confine()
except OSError as e:
    # Never run a snippet unconfined: the parent reports the sandbox as unavailable.
    result_fd.write("U" + json.dumps({"unavailable": "cannot confine the snippet (libseccomp2): %s" % e}))
    result_fd.flush()
    sys.exit(1)
result_fd.write("C")
result_fd.flush()

def snippet_traceback(exc):
    tb = exc.__traceback__
    # Drop this runner's frames: the user sees only frames of their snippet (and what it called).
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))

try:
    exec(compile(code, FILENAME, "exec"), scope)
    outcome = {"result": scope.get("result")}
except SystemExit as e:
    outcome = {"result": scope.get("result")} if e.code in (None, 0) else {"error": "SystemExit: %r" % (e.code,)}
except BaseException as e:
    outcome = {"error": snippet_traceback(e) if not isinstance(e, SyntaxError) else "".join(traceback.format_exception_only(type(e), e))}

sys.stdout.flush()
try:
    text = json.dumps(outcome, allow_nan=False, ensure_ascii=False)
except (TypeError, ValueError) as e:
    text = json.dumps({"error": "result is not JSON-serialisable: %s" % e})
result_fd.write(text)
result_fd.flush()
