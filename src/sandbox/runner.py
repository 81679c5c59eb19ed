# Runs inside the jail (python -I -S -c <this file>): reads {"code", "input"} as JSON from stdin,
# executes the snippet with `input` bound, and writes {"result"} or {"error"} as JSON to fd 3.
# The snippet's stdout stays on fd 1; the parent counts fd 1, 2 and 3 against the output cap.
import json, linecache, os, sys, traceback

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
