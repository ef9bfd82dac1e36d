"""Where the panel's script goes into HTML, however the body is cut into chunks (web/proxy/injection.py)."""
from __future__ import annotations

from web.proxy import injection
from web.proxy.injection import PANEL_SCRIPT, SNIFF_LIMIT, ScriptInjector


def inject(*chunks: bytes) -> bytes:
    injector = ScriptInjector()
    return b"".join(injector.feed(chunk) for chunk in chunks) + injector.finish()


def test_the_script_goes_right_after_the_head_tag_even_when_the_tag_is_split():
    page = b'<!doctype html><html><head lang="x"><title>t</title></head><body>hi</body></html>'
    for cut in range(1, len(page)):
        assert inject(page[:cut], page[cut:]) == page.replace(b'<head lang="x">', b'<head lang="x">' + PANEL_SCRIPT)


def test_header_elements_are_not_taken_for_the_head():
    page = b"<!doctype html><body><header>menu</header><p>x</p></body>"
    assert inject(page) == b"<!doctype html><body>" + PANEL_SCRIPT + b"<header>menu</header><p>x</p></body>"


def test_without_head_or_body_the_script_follows_the_doctype_never_precedes_it():
    assert inject(b"<!DOCTYPE html>\n<p>bare</p>") == b"<!DOCTYPE html>" + PANEL_SCRIPT + b"\n<p>bare</p>"
    assert inject(b"<p>fragment</p>") == PANEL_SCRIPT + b"<p>fragment</p>"


def test_at_most_the_sniff_limit_is_held_back():
    injector = ScriptInjector()
    assert injector.feed(b"<!doctype html>" + b" " * 100) == b""  # still looking
    out = injector.feed(b"x" * SNIFF_LIMIT)
    assert out.startswith(b"<!doctype html>" + PANEL_SCRIPT)
    assert injector.feed(b"rest") == b"rest"
    assert injector.finish() == b""


def test_the_script_is_injected_once():
    page = b"<head></head><head></head>"
    assert inject(page).count(PANEL_SCRIPT) == 1


def test_the_script_goes_at_whichever_of_head_body_and_the_head_end_comes_first():
    # A "<head>" inside a body script is the page's text, not its head.
    page = b"<!doctype html><body><script>const t = '<head>';</script></body>"
    assert inject(page) == b"<!doctype html><body>" + PANEL_SCRIPT + page[len(b"<!doctype html><body>"):]
    # No <head> tag, but its end: the script goes in just before it, still in the head.
    page = b"<!doctype html><title>t</title></head><body>x</body>"
    assert inject(page) == page.replace(b"</head>", PANEL_SCRIPT + b"</head>")
    for cut in range(1, len(page)):
        assert inject(page[:cut], page[cut:]) == page.replace(b"</head>", PANEL_SCRIPT + b"</head>")
    assert inject(b"<HEAD>") == b"<HEAD>" + PANEL_SCRIPT  # short, at the very end, any case


def test_looking_for_the_head_scans_each_byte_a_bounded_number_of_times(monkeypatch):
    # Fed a byte at a time, a scan that went back over what it held would try each "<" again at
    # every byte; this one decides each "<" once, so the tag is tried once per "<" of the page.
    tried = []
    real = injection._TAG

    class CountingTag:
        def match(self, held, at):
            tried.append(at)
            return real.match(held, at)

    monkeypatch.setattr(injection, "_TAG", CountingTag())
    injector = ScriptInjector()
    filler = b"<p>" + b"x" * 61 + b"</p>"  # many "<" that are not ours
    page = b"<!doctype html>" + filler * (SNIFF_LIMIT // len(filler))
    out = b"".join(injector.feed(page[i:i + 1]) for i in range(len(page)))
    assert (out + injector.finish()).startswith(b"<!doctype html>" + PANEL_SCRIPT)
    assert len(tried) <= page.count(b"<")
    assert len(set(tried)) == len(tried)  # no "<" tried twice
