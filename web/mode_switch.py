"""A page switching its session's runtime mode, from either page socket (web/chat_socket.py,
web/thread_socket.py): the chat core's own path (the Chat actor's ``configure``, as
``chat.configure`` takes it: web/core/chats.py), then the mode remembered for the session's
checkout, so the next conversation started there begins in it (storage/panel_modes.py)."""
from __future__ import annotations

import gevent

from actors.chatlog import daemon_log

ASK_TIMEOUT = 10.0


def switch(context, chat, root: str, runtime_mode: str | None, plan: bool | None, **more) -> str | None:
    """Configures the chat (``more``: the rest of a configure, e.g. resume_at_reset); returns a
    warning for the page when the mode holds but could not be remembered, else None. A refusal
    of the chat's (ChatError) or its being busy or gone is raised for the socket to answer."""
    chat.configure(runtime_mode=runtime_mode, plan=plan, **more).get(timeout=ASK_TIMEOUT)
    if runtime_mode is None or context.panel_modes is None:
        return None
    try:
        # fsync and rename on the hub's threadpool: file work never holds the hub.
        gevent.get_hub().threadpool.apply(context.panel_modes.save, (root, runtime_mode))
    except OSError as exc:
        daemon_log(f"the panel's mode for {root} was not saved: {exc}")
        return (f"this conversation runs in {runtime_mode} now, but the choice was not saved for new "
                f"conversations of {root} ({exc.strerror or exc})")
    return None
