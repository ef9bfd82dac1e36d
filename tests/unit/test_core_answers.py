"""How the chat core encodes its answers (web/core.py ``encode_answer``): exactly as JSON, and a
long snapshot a piece at a time, so other greenlets run while a 20 MB chat is encoded."""
from __future__ import annotations

import json

import gevent

from web.core.wire import LONG_LIST, encode_answer


def test_an_answer_with_a_long_list_reads_back_as_it_was():
    items = [{"id": str(n), "text": "é\u2063 \"quoted\"", "nested": {"list": [n]}} for n in range(LONG_LIST * 3)]
    for key in ("items", "events"):
        answer = {"id": "r1", "ok": True, "result": {"seq": 9, key: items, "info": {"status": "idle"}}}
        assert json.loads(encode_answer(answer)) == answer


def test_a_short_answer_is_one_plain_encoding():
    answer = {"id": "r1", "ok": True, "result": {"items": [1, 2], "bookmarks": []}}
    assert encode_answer(answer) == json.dumps(answer, separators=(",", ":")).encode()


def test_other_greenlets_run_while_a_large_snapshot_is_encoded():
    ticks = []
    ticker = gevent.spawn(lambda: [ticks.append(gevent.sleep(0)) for _ in range(10_000)])
    items = [{"id": str(n), "text": "b" * 4000} for n in range(2000)]  # 8 MB
    encode_answer({"id": "r1", "ok": True, "result": {"items": items}})
    ran_meanwhile = len(ticks)
    ticker.kill()
    assert ran_meanwhile >= 8  # at least once for each 256 KiB piece of the first 2 MB
