"""Inbound routing (docs/contract.md §9 "Inbound routing").

A route has up to four criteria: msg_type (equal), tag (that one tag present), tags (any of them
present), tags_all (all of them present). Every criterion given must match; a route with none
matches everything. Routes are tried in registration order and the first match wins; unmatched
messages go to the default handler, then to the constructor callback.
"""


class Route:
    def __init__(self, handler, msg_type=None, tag=None, tags=None, tags_all=None):
        if isinstance(tags, str) or isinstance(tags_all, str):
            raise TypeError("tags and tags_all are lists of strings; use tag= for one tag")
        self.handler = handler
        self.msg_type = msg_type
        self.tag = tag
        self.tags = list(tags) if tags else None
        self.tags_all = list(tags_all) if tags_all else None

    def matches(self, message):
        if self.msg_type is not None and message.get("msg_type") != self.msg_type:
            return False
        have = message.get("tags") or []
        if self.tag is not None and self.tag not in have:
            return False
        if self.tags is not None and not any(t in have for t in self.tags):
            return False
        if self.tags_all is not None and not all(t in have for t in self.tags_all):
            return False
        return True


class Router:
    def __init__(self, fallback=None):
        self.routes = []
        self.default = None
        self.fallback = fallback

    def add(self, handler, msg_type=None, tag=None, tags=None, tags_all=None):
        self.routes.append(Route(handler, msg_type, tag, tags, tags_all))
        return handler

    def handler_for(self, message):
        for route in self.routes:
            if route.matches(message):
                return route.handler
        return self.default or self.fallback
