"""What the panel's composer completes: the files of a page's checkout (``@`` mentions) and a
session's skills (``/``, beside the slash commands its info lists)."""
from __future__ import annotations

import bottle
import gevent

from actors.harness import skills as skill_rules
from storage.checkout_files import GIT_TIMEOUT, git_names, listed
from web import edge
from web.edge import Refusal, json_answer, refusals_as_json
from web.single_flight import SingleFlight

FILES_TIMEOUT = 20.0  # the bounded walk (or the check of git's names), on the threadpool
FILES_FRESH_SECONDS = 2.0  # a file made a moment ago is soon in the list; a burst of asks costs one listing
SKILLS_TIMEOUT = 12.0  # a running Codex answers skills/list within its 10 s deadline, else the disk does


def install(app, context) -> None:
    request = bottle.request
    listings = SingleFlight(FILES_FRESH_SECONDS)

    def listing(root: str) -> dict:
        found = gevent.get_hub().threadpool.spawn(listed, root, git_names(root))
        found.wait(FILES_TIMEOUT)
        if not found.ready():
            raise Refusal(503, "the checkout's files are still being listed; try again in a moment")
        return found.get()

    @app.get("/__devhost__/chat/files")
    @refusals_as_json
    def files():
        """The checkout's files, relative to it: the directory is the page's own (pageURL +
        chatTarget, resolved by the server), never a path the browser names."""
        root = edge.query_directory(context, request)
        try:
            return json_answer(listings.get(root, lambda: listing(root), timeout=FILES_TIMEOUT + GIT_TIMEOUT))
        except TimeoutError:
            raise Refusal(503, "the checkout's files are still being listed; try again in a moment") from None

    @app.get("/__devhost__/chat/sessions/<session_id>/skills")
    @refusals_as_json
    def skills(session_id):
        """The skills the session's CLI offers its folder (its own word while it runs, else the disk's)."""
        chat, _record = edge.page_session(context, session_id, edge.query_directory(context, request))
        answer = edge.ask(chat.skills_listed())
        found = edge.waited(answer, SKILLS_TIMEOUT, busy="the CLI has not listed its skills yet; try again")
        return json_answer({"skills": skill_rules.public(found)})
