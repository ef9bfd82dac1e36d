"""The chat core's protocol: requests over a WebSocket or one per POST.

Envelope: a request ``{id, type, payload}`` is answered ``{id, ok: true, result}`` or
``{id, ok: false, error: {code, message}}``; events are ``{type: "event", event, payload}``.
Served on the control origin only (an app's integration, not a page's): a routed hostname
gets 403. Codes: ``bad-request`` (unreadable frame or payload), ``unknown-request``,
``internal`` (logged), and the chat layer's own (``chat-not-found``, ``chat-busy``, ...).

- ``service.py``: one envelope in, one answer out (``CoreService``), over the requests of
- ``chats.py`` (create, configure, attach, send, clear, kill, ...), ``approvals.py``
  (approve, answer, dismiss), ``background.py`` (subagents and tasks), ``keeping.py``
  (bookmarks, visuals, attachments read back);
- ``wire.py``: the frames (events, answers) as bytes;
- ``extension.py``: the socket ``/__devhost__/ws/core`` and ``POST /__devhost__/core``.
"""
