"""The core's requests of a chat's background work: a delegated agent's own conversation (read
from the CLI's transcript, a page at a time, and watched as it grows), and stopping a task or
an agent (the seed's B22-B24).

A watch reads the agent's file when the CLI says the agent did something (the chat tells it:
``Chat.subagent_watch``), then a few times shortly after, as the CLI may say so before its file
has it; and every WATCH_FALLBACK seconds for what the CLI never mentions. Nothing polls."""
from __future__ import annotations

import os
import time

import gevent
import gevent.event

from actors.errors import ChatError
from actors.guard import spawn_logged
from actors.harness.claude.files import claude_subagent_transcript
from actors.harness.claude.saved import claude_items
from actors.harness.codex.saved import codex_child_items, codex_transcript
from actors.tell import tell
from web import command_rules as rules
from web.core.payload import chat_id, chat_of, checked, get
from web.sockets import frame

SUBAGENT_PAGE = 50
MAX_WATCHED = 8  # subagents one client may watch at once
# Seconds between looks at a watched transcript the CLI said nothing of (a test may make it long).
WATCH_FALLBACK = float(os.environ.get("DEVHOSTD_SUBAGENT_FALLBACK_SECONDS") or 10.0)
WATCH_SETTLE = (0.2, 1.0, 3.0)  # looks again after the CLI's word: its file may lag behind it
WATCH_GAP = 0.25  # at most one look this often: a streaming agent's frames are many a second
WATCH_LIMIT = 30 * 60.0  # a watch ends after this long, whatever happens


def subagent(service, payload, client):
    """A delegated agent's own conversation, read from the CLI's transcript, a page at a time;
    ``watch`` (on a socket) sends chat.subagentChanged as it grows."""
    chat = chat_id(payload)
    cursor, limit = payload.get("cursor", 0), payload.get("limit", SUBAGENT_PAGE)
    if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
        raise ChatError("bad-request", "`cursor` must be a position (0 or more) a previous page gave")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise ChatError("bad-request", "`limit` must be 1..100")
    watch = payload.get("watch")
    if watch is not None and not isinstance(watch, bool):
        raise ChatError("bad-request", "`watch` must be true or false")
    chat_proxy = chat_of(service, payload)
    source = get(chat_proxy.subagent_source(checked(rules.subagent_id, payload)))
    if watch is False and client is not None:  # released before reading (the seed's rule)
        watcher = client.watching.pop((chat, source["subagentId"]), None)
        if watcher is not None:
            watcher.kill(block=False)
    nudge = None
    if watch:
        if client is None:
            raise ChatError("bad-request", "watch streams events: use the WebSocket /__devhost__/ws/core")
        key = (chat, source["subagentId"])
        if key not in client.watching:
            if len(client.watching) >= MAX_WATCHED:
                raise ChatError("bad-request", f"a client may watch at most {MAX_WATCHED} subagents at once")
            # Told before the file is read: whatever the agent does after this read is said.
            nudge = gevent.event.Event()
            source = get(chat_proxy.subagent_watch(source["subagentId"], nudge.set))
    items, stamp = _subagent_items(source)
    page = items[cursor:cursor + limit]
    answer = {"subagentId": source["subagentId"], "toolUseId": source.get("toolUseId"), "status": source["status"],
              "live": source["status"] == "running",
              "source": "codex-thread" if source["harness"] == "codex" else "claude-transcript",
              "items": page, "total": len(items),
              **({"nextCursor": cursor + len(page)} if cursor + len(page) < len(items) else {})}
    if nudge is not None:
        client.watching[(chat, source["subagentId"])] = spawn_logged(
            _watch_subagent, chat_proxy, client, chat, source, len(items), stamp, nudge)
    return answer


def stop_task(service, payload, client):
    task = checked(rules.task_id, payload)
    return get(chat_of(service, payload).stop_task(task))


def stop_subagent(service, payload, client):
    agent = checked(rules.subagent_id, payload)
    return get(chat_of(service, payload).stop_subagent(agent))


def _subagent_items(source: dict, known: tuple | None = None) -> tuple[list[dict] | None, tuple | None]:
    """The agent's items, read from the CLI's file on the hub's threadpool, and the file's
    (size, mtime) they were read at; (None, known) when the file is as ``known`` (unread)."""
    def read():
        env = {**os.environ, **source.get("homeEnv", {})}  # the chat's account's home, where its CLI writes
        if source["harness"] == "codex":
            path, items_of = codex_transcript(source["agent"], env), codex_child_items
        else:
            path, items_of = claude_subagent_transcript(source["native"], source["agent"], env), \
                lambda found: claude_items(found, sidechain=True)
        if path is None:
            return [], None
        try:
            info = os.stat(path)
        except OSError:
            return [], None
        stamp = (info.st_size, info.st_mtime_ns)
        if stamp == known:
            return None, known
        return items_of(path), stamp
    return gevent.get_hub().threadpool.apply(read)


def _watch_subagent(chat, client, chat_id: str, source: dict, seen: int,
                    stamp: tuple | None, nudge: gevent.event.Event) -> None:
    """Sends chat.subagentChanged with the items a watched agent's transcript gained, until the
    agent ended and its file stopped growing, the client left, or WATCH_LIMIT passed. It looks
    when ``nudge`` is set (the chat's word that the CLI spoke of the agent), at the settle
    delays after that, and every WATCH_FALLBACK seconds; the file is read again only when its
    size or time changed."""
    started, quiet, last, settle = time.monotonic(), 0, 0.0, ()
    try:
        while not client.sink.closed and time.monotonic() - started < WATCH_LIMIT:
            wait, settle = (settle[0], settle[1:]) if settle else (WATCH_FALLBACK, ())
            if nudge.wait(wait):
                gevent.sleep(max(0.0, last + WATCH_GAP - time.monotonic()))  # its next words wait with it
                nudge.clear()
                settle = WATCH_SETTLE
            last = time.monotonic()
            fresh, stamp = _subagent_items(source, stamp)  # None: the file is as it was
            status = get(chat.subagent_source(source["subagentId"]))["status"]
            grown = fresh is not None and len(fresh) > seen
            if grown or status != source["status"]:
                client.sink.push(frame({"type": "event", "event": "chat.subagentChanged", "payload": {
                    "chatId": chat_id, "subagentId": source["subagentId"], "status": status,
                    "items": fresh[seen:] if grown else [], "total": len(fresh) if grown else seen}}))
                seen, source = len(fresh) if grown else seen, {**source, "status": status}
                quiet = 0
            elif status != "running":
                quiet += 1
                if quiet >= 2:
                    return  # it ended, and its file says nothing more
    except ChatError:
        return  # the chat or the agent is gone
    finally:
        client.watching.pop((chat_id, source["subagentId"]), None)
        tell(chat, "subagent_unwatch", source["subagentId"], nudge.set)  # (a chat gone took its watches along)


REQUESTS = {"chat.subagent": subagent, "chat.stopTask": stop_task, "chat.stopSubagent": stop_subagent}
