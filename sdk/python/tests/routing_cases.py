"""The routing table (docs/contract.md §9 "Inbound routing"), shared by the CPython tests and the
MicroPython run (test/unit/sdk/micropython.test.ts): plain Python both interpreters run.

Each case registers routes (name, criteria) in order, optionally a default handler and a
constructor callback, routes one message, and names the handler that must receive it.
"""

CASES = [
    ("msg_type alone",
     [("cmd", {"msg_type": "command"}), ("pub", {"msg_type": "publish"})], False, False,
     {"msg_type": "publish", "tags": []}, "pub"),
    ("tag alone",
     [("alarm", {"tag": "alarm"}), ("other", {"tag": "x"})], False, False,
     {"msg_type": "publish", "tags": ["x", "y"]}, "other"),
    ("tags: any of",
     [("any", {"tags": ["a", "b"]})], True, False,
     {"msg_type": "publish", "tags": ["b"]}, "any"),
    ("tags_all: a subset is not enough",
     [("all", {"tags_all": ["a", "b"]})], True, False,
     {"msg_type": "publish", "tags": ["a"]}, "default"),
    ("tags_all: every tag present",
     [("all", {"tags_all": ["a", "b"]})], True, False,
     {"msg_type": "publish", "tags": ["b", "c", "a"]}, "all"),
    ("msg_type and tag must both match",
     [("both", {"msg_type": "publish", "tag": "hot"}), ("tag-only", {"tag": "hot"})], False, False,
     {"msg_type": "client_cmd_resp", "tags": ["hot"]}, "tag-only"),
    ("tags any-of combined with tags_all",
     [("combo", {"tags": ["x", "y"], "tags_all": ["a", "b"]}), ("fallthrough", {"tags": ["a"]})], False, False,
     {"msg_type": "publish", "tags": ["a", "b"]}, "fallthrough"),
    ("all four criteria",
     [("four", {"msg_type": "publish", "tag": "t", "tags": ["u", "v"], "tags_all": ["t", "w"]})], True, False,
     {"msg_type": "publish", "tags": ["w", "v", "t"]}, "four"),
    ("registration order: the first match wins",
     [("first", {"tag": "a"}), ("second", {"tag": "a"})], False, False,
     {"msg_type": "publish", "tags": ["a"]}, "first"),
    ("order beats specificity",
     [("broad", {"msg_type": "publish"}), ("narrow", {"msg_type": "publish", "tag": "a"})], False, False,
     {"msg_type": "publish", "tags": ["a"]}, "broad"),
    ("default handler takes unmatched messages, before the constructor callback",
     [("cmd", {"msg_type": "command"})], True, True,
     {"msg_type": "publish", "tags": []}, "default"),
    ("constructor callback is the last fallback",
     [("cmd", {"msg_type": "command"})], False, True,
     {"msg_type": "publish", "tags": ["z"]}, "constructor"),
]


def run(register, set_default, make_target, dispatch):
    """Runs every case. make_target(fallback) -> a fresh routing target; register(target, handler,
    criteria) adds a route; set_default(target, handler); dispatch(target, message) routes one.
    Returns [(case name, got, expected)] of failures (empty when all pass) and the number of cases run."""
    failures = []
    for name, routes, with_default, with_fallback, message, expected in CASES:
        got = []

        def recorder(label):
            return lambda msg: got.append(label)

        target = make_target(recorder("constructor") if with_fallback else None)
        for label, criteria in routes:
            register(target, recorder(label), criteria)
        if with_default:
            set_default(target, recorder("default"))
        dispatch(target, dict(message))
        if got != [expected]:
            failures.append((name, got, expected))
    return failures, len(CASES)


def router_dispatch(router, message):
    handler = router.handler_for(message)
    if handler is not None:
        handler(message)


def device_dispatch(device, message):
    """The path an inbound MQTT or check_messages message takes in Device."""
    device._dispatch(message)
