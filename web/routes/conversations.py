"""The panel's conversation controls, on a page's own sessions: rename, delete (as the core's
chat.kill: gone from every list and from disk), compact (as chat.compact), export as Markdown,
and search over the titles and text of the page's conversations. (The Origin rule holds for
every POST, PUT and DELETE here: web/app.py checks it before any route runs.)"""
from __future__ import annotations

import bottle

from actors.core.titles import ASK, checked_title

from web import edge
from web.edge import Refusal, json_answer, json_body, refusals_as_json
from web.markdown_export import conversation_markdown, file_name
from web.single_flight import SingleFlight

QUERY_CHARS = 200
MOST_ITEMS = 5000  # a conversation's items read for an export or a search, newest kept
SEARCH_BUDGET = 20000  # items one search reads in all, newest conversations first: then it says truncated
SEARCH_FRESH_SECONDS = 2.0  # the same search asked again at once (a burst from the page) is worked out once
HISTORY_PAGE = 100
EXCERPT_CHARS = 60
SEARCHED_KINDS = ("user", "assistant")


def check_title(value) -> str:
    title, problem = checked_title(value)
    if problem:
        raise Refusal(400, problem)
    return title


def items_of(chat, most: int = MOST_ITEMS) -> tuple[list[dict], bool]:
    """(the conversation's items, oldest first: about its newest ``most``, read page by page;
    whether older ones were left unread)."""
    pages, cursor, count = [], None, 0
    while count < most:
        page = edge.ask(chat.history(cursor, HISTORY_PAGE))
        pages.append(page["items"])
        count += len(page["items"])
        cursor = page["history"]["cursor"]
        if cursor is None:
            break
    return [item for page in reversed(pages) for item in page], cursor is not None


def excerpt(text: str, at: int, length: int) -> str:
    """The words around a match, on one line."""
    start, end = max(0, at - EXCERPT_CHARS // 2), min(len(text), at + length + EXCERPT_CHARS)
    line = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + line + ("…" if end < len(text) else "")


def text_match(items: list[dict], query: str) -> dict | None:
    """Where ``query`` (lower case) is in the messages' text: {"in": "text", "excerpt"}, or None."""
    for item in reversed(items):  # the newest mention is the one a person remembers
        text = item.get("text") if item.get("kind") in SEARCHED_KINDS else None
        at = text.lower().find(query) if isinstance(text, str) else -1
        if at >= 0:
            return {"in": "text", "excerpt": excerpt(text, at, len(query))}
    return None


def search_conversations(records: list[dict], read_items, query: str, budget: int = SEARCH_BUDGET) -> dict:
    """``{sessions, truncated}``: of ``records`` (newest first), those whose title or text has
    ``query`` (lower case). ``read_items(record, most)`` gives a conversation's newest items, or
    None when it is gone; at most ``budget`` items are read in all, so a page cannot make one
    search read every conversation ever kept (``truncated`` says some were not read)."""
    found, left, truncated = [], budget, False
    for record in records:
        # A title that matches is enough: the text is read only for the others.
        if query in (record.get("title") or "").lower():
            found.append({"id": record["id"], "title": record.get("title"), "in": "title"})
            continue
        if left <= 0:
            truncated = True
            continue
        items = read_items(record, min(MOST_ITEMS, left))
        if items is None:
            continue  # deleted meanwhile
        left -= len(items)
        hit = text_match(items, query)
        if hit:
            found.append({"id": record["id"], "title": record.get("title"), **hit})
    return {"sessions": found, "truncated": truncated}


def install(app, context) -> None:
    request = bottle.request
    searches = SingleFlight(SEARCH_FRESH_SECONDS)

    def directory_from_query():
        return edge.page_directory(context, request.environ, request.query.get("pageURL"),
                                   request.query.get("chatTarget"))

    def page_session(session_id: str):
        return edge.page_session(context, session_id, directory_from_query())

    @app.put("/__devhost__/chat/sessions/<session_id>/title")
    @refusals_as_json
    def rename(session_id):
        chat, _ = page_session(session_id)
        body = json_body(request)
        if set(body) != {"title"}:
            raise Refusal(400, ASK)
        return json_answer(edge.ask(chat.rename(check_title(body["title"]))))

    @app.delete("/__devhost__/chat/sessions/<session_id>")
    @refusals_as_json
    def delete(session_id):
        """As the core's chat.kill: its CLI ended, its record, log and kept files removed, and
        the registry forgets it (every list: the Chat API's, the core's chat.list)."""
        chat, record = page_session(session_id)
        gone = edge.ask(chat.cli_gone())
        edge.ask(chat.kill())
        edge.ask(context.registry.forget(record["chatId"], gone))
        return json_answer({"deleted": session_id})

    @app.post("/__devhost__/chat/sessions/<session_id>/compact")
    @refusals_as_json
    def compact(session_id):
        """As the core's chat.compact: the CLI folds the conversation into a summary, as a turn
        of its own (409 while a turn runs)."""
        chat, _ = page_session(session_id)
        return json_answer(edge.ask(chat.compact()))

    @app.get("/__devhost__/chat/sessions/<session_id>/export")
    @refusals_as_json
    def export(session_id):
        chat, record = page_session(session_id)
        items, older_left_out = items_of(chat)
        text = conversation_markdown(record, items, older_left_out=older_left_out)
        return bottle.HTTPResponse(text.encode(), headers={
            "Content-Type": "text/markdown; charset=utf-8", "Cache-Control": "no-store",
            "Content-Disposition": f'attachment; filename="{file_name(record)}"'})

    @app.get("/__devhost__/chat/search")
    @refusals_as_json
    def search():
        """The page's conversations whose title or text has ``q`` (any case), newest first."""
        directory = directory_from_query()
        query = request.query.getunicode("q") or ""
        if not query.strip() or len(query) > QUERY_CHARS:
            raise Refusal(400, f"q is what to look for: 1..{QUERY_CHARS} characters")
        query = query.strip().lower()

        def read_items(record, most):
            chat, _ = edge.ask(context.registry.session(record["id"]))
            return None if chat is None else items_of(chat, most)[0]

        def search_now():
            return search_conversations(edge.ask(context.registry.sessions(directory)), read_items, query)
        try:
            return json_answer(searches.get((directory, query), search_now, timeout=60))
        except TimeoutError:
            raise Refusal(503, "the same search is still running; try again in a moment") from None
