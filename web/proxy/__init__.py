"""The reverse proxy for routed services whose manifest entry names an ``upstream``.

The person's own dev server answers every path outside /__devhost__/; devhostd streams its
answers through unchanged except for three things: hop-by-hop headers are not forwarded,
``Location`` headers that name the upstream's own address are pointed back at the routed
hostname, and a page navigation's HTML gets the panel's script injected (so the chat panel
appears on the app). Only the manifest's upstream is ever contacted: the request contributes
its path and query, never a host or port.

- ``relay.py``: one HTTP request relayed and its answer streamed back (``forward``);
- ``tunnel.py``: the app's own WebSocket (its hot reload), tunnelled byte for byte
  (``tunnel_websocket``);
- ``heads.py``: the pure rules of what changes in the heads passed on either way;
- ``injection.py``: where the panel's script goes into streamed HTML (pure);
- ``upstream.py``: the upstream's address, how it is reached and the path a request asks of it;
- ``pool.py``: kept-alive upstream connections; ``decoders.py``: undoing content encodings.
"""
