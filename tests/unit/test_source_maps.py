"""Source maps (web/source_maps.py): a position in a served module back to a file of the checkout,
on handmade maps (a real one Vite serves: tests/integration/test_page_locate.py)."""
from __future__ import annotations

import base64
import json
import os

import pytest

from web.source_maps import (MAX_POSITIONS, Invalid, MapCache, data_url_bytes, file_of, inside, map_address,
                             mapping_url, parse_map, parse_positions, source_file)

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def vlq(*values: int) -> str:
    """The Base64 VLQ of a segment (the source map spec), written out here to build maps by hand."""
    out = ""
    for value in values:
        number = (-value << 1) | 1 if value < 0 else value << 1
        while True:
            digit, number = number & 31, number >> 5
            out += _B64[digit | (32 if number else 0)]
            if not number:
                break
    return out


def handmade_map(sources: list[str], source_root: str | None = None) -> bytes:
    """Generated line 1 column 1 <- source 0 line 10 column 3; generated line 3 column 5 <- source 1
    line 42 column 7; generated line 2 has no mapping."""
    mappings = ";".join([vlq(0, 0, 9, 2), "", vlq(4, 1, 32, 4)])
    value = {"version": 3, "sources": sources, "names": [], "mappings": mappings}
    if source_root is not None:
        value["sourceRoot"] = source_root
    return json.dumps(value).encode()


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "Cart.jsx").write_text("x")
    (root / "src" / "App.jsx").write_text("x")
    return root


def test_a_stack_position_is_looked_up_one_based_as_stacks_print_it():
    parsed = parse_map(handmade_map(["/src/App.jsx", "/src/Cart.jsx"]))
    assert parsed.lookup(1, 1) == ("/src/App.jsx", 10, 3)
    assert parsed.lookup(3, 5) == ("/src/Cart.jsx", 42, 7)
    assert parsed.lookup(3, 9) == ("/src/Cart.jsx", 42, 7)  # later on the same line: the token before it


def test_a_line_without_a_mapping_locates_nothing_rather_than_an_earlier_lines_token():
    parsed = parse_map(handmade_map(["/src/App.jsx", "/src/Cart.jsx"]))
    assert parsed.lookup(2, 1) is None
    assert parsed.lookup(50, 1) is None


@pytest.mark.parametrize("data", [b"", b"not json", b"[]", b'{"version": 3}',
                                  b'{"version": 3, "sections": [], "sources": []}'])
def test_what_is_no_map_is_none_never_an_error(data):
    assert parse_map(data) is None


def test_the_source_root_is_joined_to_each_source():
    parsed = parse_map(handmade_map(["App.jsx", "Cart.jsx"], source_root="/src/"))
    assert parsed.sources == ["/src/App.jsx", "/src/Cart.jsx"]


def test_an_absolute_source_inside_the_checkout_is_made_relative(checkout):
    assert source_file(str(checkout / "src" / "Cart.jsx"), "http://app.localhost:7777/src/Cart.jsx",
                       str(checkout), str(checkout)) == "src/Cart.jsx"
    assert source_file(f"file://{checkout}/src/Cart.jsx", "http://h/x.js", str(checkout), str(checkout)) == \
        "src/Cart.jsx"
    assert source_file(f"/@fs{checkout}/src/Cart.jsx", "http://h/x.js", str(checkout), str(checkout)) == \
        "src/Cart.jsx"


def test_a_root_relative_source_starts_at_the_dev_servers_root(checkout):
    assert source_file("/src/Cart.jsx", "http://app.localhost:7777/src/Cart.jsx", str(checkout), str(checkout)) \
        == "src/Cart.jsx"


def test_a_source_relative_to_the_map_is_resolved_from_the_maps_address(checkout):
    url = "http://app.localhost:7777/src/components/Cart.jsx?t=1700"
    assert source_file("Cart.jsx", url, str(checkout), str(checkout)) == "src/components/Cart.jsx"
    assert source_file("../App.jsx?v=3", url, str(checkout), str(checkout)) == "src/App.jsx"


def test_nothing_outside_the_checkout_is_answered(checkout, tmp_path):
    (tmp_path / "secret.txt").write_text("x")
    os.symlink(tmp_path / "secret.txt", checkout / "src" / "link.js")
    (checkout / "node_modules").mkdir()
    os.symlink(tmp_path, checkout / "node_modules" / "outside")
    for source in [str(tmp_path / "secret.txt"), "/src/../../secret.txt", "/src/link.js",
                   "/node_modules/outside/secret.txt", f"file://{tmp_path}/secret.txt", "/etc/passwd",
                   "https://cdn.example/lib.js"]:
        assert source_file(source, "http://app.localhost:7777/src/main.js", str(checkout), str(checkout)) is None, \
            source
    assert file_of("../secret.txt", str(checkout), str(checkout)) is None
    # A relative source is a URL path: like the browser's, it stops at the dev server's root.
    assert source_file("../../../secret.txt", "http://app.localhost:7777/src/main.js", str(checkout),
                       str(checkout)) == "secret.txt"
    assert inside(str(checkout), str(checkout)) is None  # the checkout itself is no file


def test_a_file_of_the_dev_build_is_relative_to_the_checkout(checkout):
    assert file_of(str(checkout / "src" / "App.jsx"), str(checkout), str(checkout)) == "src/App.jsx"
    assert file_of("src/App.jsx", str(checkout), str(checkout)) == "src/App.jsx"
    assert file_of("/src/App.jsx", str(checkout), str(checkout)) == "src/App.jsx"


def test_the_last_source_mapping_comment_is_the_modules_map():
    module = (b"const a = 1;\n//# sourceMappingURL=old.map\nconst b = 2;\n"
              b"//# sourceMappingURL=data:application/json;base64,e30=\n")
    assert mapping_url(module) == "data:application/json;base64,e30="
    assert mapping_url(b"/*# sourceMappingURL=style.css.map */\n") == "style.css.map"
    assert mapping_url(b"const x = 1;\n") is None


def test_a_data_url_is_read_whether_base64_or_percent_encoded():
    data = base64.b64encode(b'{"version":3}').decode()
    assert data_url_bytes(f"data:application/json;charset=utf-8;base64,{data}") == b'{"version":3}'
    assert data_url_bytes("data:application/json,%7B%7D") == b"{}"
    assert data_url_bytes("main.js.map") is None


def test_a_map_is_read_only_from_the_modules_own_origin():
    module = "http://app.localhost:7777/assets/main.js"
    assert map_address(module, "main.js.map") == "http://app.localhost:7777/assets/main.js.map"
    assert map_address(module, "/maps/main.js.map") == "http://app.localhost:7777/maps/main.js.map"
    assert map_address(module, "http://127.0.0.1:22/main.js.map") is None
    assert map_address(module, "//evil.example/main.js.map") is None


def test_positions_are_checked_with_words_that_say_what_to_send():
    assert parse_positions({"positions": [{"url": "http://h/a.js", "line": 3, "column": 9},
                                          {"file": "src/App.jsx", "line": 4}, {"file": "/p/src/Cart.vue"}]}) == \
        [{"url": "http://h/a.js", "line": 3, "column": 9}, {"file": "src/App.jsx", "line": 4},
         {"file": "/p/src/Cart.vue"}]  # a file with no line: Vue's dev build knows a component's file only
    for body, words in [(None, '{"positions"'), ({"positions": "x"}, '{"positions"'),
                        ({"positions": [{"url": "http://h/a.js", "line": 3}]}, "needs its line and column"),
                        ({"positions": [{"file": "a.js", "line": 0}]}, "positions[0].line"),
                        ({"positions": [{"file": "a.js", "line": True}]}, "positions[0].line"),
                        ({"positions": [{"line": 1}]}, "needs a url"),
                        ({"positions": [{"file": "a.js", "line": 1}] * (MAX_POSITIONS + 1)}, "at most 200")]:
        with pytest.raises(Invalid, match=words.replace("[", r"\[").replace("{", r"\{")):
            parse_positions(body)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_cache_is_bounded_by_count_and_bytes_the_least_recently_used_going_first():
    cache = MapCache(max_maps=2, max_bytes=100, clock=Clock())
    cache.put("a", None, None, 10)
    cache.put("b", None, None, 10)
    cache.get("a")
    cache.put("c", None, None, 10)
    assert (cache.get("a") is not None, cache.get("b"), cache.get("c") is not None) == (True, None, True)
    cache.put("d", None, None, 95)
    assert len(cache) == 1 and cache.bytes == 95
    cache.put("e", None, None, 101)  # larger than the whole cache: not kept
    assert cache.get("e") is None


def test_a_cached_map_is_fresh_a_moment_then_revalidated_and_dropped_when_old():
    clock = Clock()
    cache = MapCache(clock=clock)
    cache.put("m", None, 'W/"1"', 10)
    assert cache.fresh(cache.get("m"))
    clock.now = 3.0
    assert not cache.fresh(cache.get("m"))  # asked again (If-None-Match)
    cache.touch("m")  # the upstream said 304
    assert cache.fresh(cache.get("m"))
    clock.now = 100.0
    assert cache.get("m") is None
