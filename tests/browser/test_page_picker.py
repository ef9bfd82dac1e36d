"""Pick an element, in Chromium on a plain page (no framework) behind the real proxy, with the real
Claude Code on the mock model server (web/static/chat/picker.js, page_context.js, page_attach.js).

- "Pick an element" (aria-pressed while picking) outlines what the pointer is over, and asks
  nothing of devhostd while it hovers; a click picks (the page's own click handlers never see it)
  and ends picking, Shift+click picks more, Esc ends picking and leaves the panel open.
- Each pick is a chip in the composer that names it and can be removed; the message the model
  gets holds the person's words, then one [Page context] section per chip: page, selector,
  element, role, name, box, text and HTML; then the chips are gone.
- Form values never leave the page: neither an input's value (in the markup or typed) nor a
  password field, nor a textarea's text.
- The pure parts, in the page: every element of the page gets a selector that finds exactly it;
  roles and accessible names; the HTML excerpt is bounded.
- axe-core finds nothing serious on the picker button and the chips.
"""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.a11y import (assert_clean_in_both_themes, assert_every_control_labelled,
                                assert_no_serious_axe_violation, assert_readable)
from tests.browser.page_app import upstream  # noqa: F401 - the app with /shop behind app.localhost
from tests.browser.panel import Panel
from tests.mock_anthropic import message_text, text_reply

MODULE = "/__devhost__/static/chat/page_context.js"


def sections(text: str) -> list[str]:
    """The [Page context] sections of a message, each as its text."""
    return ["[Page context]\n" + part.strip() for part in text.split("[Page context]\n")[1:]]


def field(section: str, name: str) -> str | None:
    """A line's value; the HTML excerpt, the last line, runs to the section's end (it keeps its newlines)."""
    found = (re.search(r"^HTML: (.*)\Z", section, re.M | re.S) if name == "HTML"
             else re.search(rf"^{name}: (.*)$", section, re.M))
    return found.group(1) if found else None


def test_a_click_picks_an_element_shift_adds_esc_ends_and_the_model_gets_each_as_page_context(page, daemon, mock):
    mock.add(text_reply("I see the checkout button and the pear's Remove."))
    panel = Panel(page, daemon).open("/shop")
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/__devhost__/page/" in r.url else None)
    pick = panel.page.get_by_role("button", name="Pick an element")
    expect(pick).to_have_attribute("aria-pressed", "false")
    expect(panel.find(".attach-errors")).to_be_hidden()  # a page without errors offers none to attach
    pick.click()
    expect(pick).to_have_attribute("aria-pressed", "true")
    # Hovering outlines the element under the pointer, labelled by its tag, and asks nothing.
    page.hover("#checkout")
    outline = panel.find(".pick-outline")
    expect(outline).to_be_visible()
    expect(outline.locator(".pick-label")).to_have_text("button")
    box, drawn = page.locator("#checkout").bounding_box(), outline.bounding_box()
    assert abs(box["x"] - drawn["x"]) < 1 and abs(box["width"] - drawn["width"]) < 1, (box, drawn)
    page.hover("li.item:nth-of-type(2) .name")
    expect(outline.locator(".pick-label")).to_have_text("span")
    assert asked == [], asked
    # Over the panel nothing is outlined.
    panel.find("textarea").hover()
    expect(outline).to_be_hidden()
    # A click picks and ends picking; the page's own handlers never saw it.
    page.click("#checkout")
    expect(pick).to_have_attribute("aria-pressed", "false")
    chips = panel.find(".page-tray .page-chip")
    expect(chips).to_have_count(1)
    expect(chips.first.locator(".page-chip-name")).to_have_text("button#checkout")
    # Shift+click picks and goes on picking; Esc ends it and the panel stays open.
    pick.click()
    page.click("li.item:nth-of-type(2) button.remove", modifiers=["Shift"])
    page.click("#user", modifiers=["Shift"])
    expect(pick).to_have_attribute("aria-pressed", "true")
    expect(chips).to_have_count(3)
    page.keyboard.press("Escape")
    expect(pick).to_have_attribute("aria-pressed", "false")
    expect(panel.find(".panel")).to_be_visible()
    page.click("h1")  # picking has ended: the page's handlers hear clicks again
    assert page.evaluate("window.pageClicks") == 1
    expect(chips.nth(1).locator(".page-chip-name")).to_have_text("button.remove")
    expect(chips.nth(2).locator(".page-chip-name")).to_have_text("input#user")
    # The chip of the input is removed: it is not sent.
    panel.page.get_by_role("button", name="Remove input#user").click()
    expect(chips).to_have_count(2)
    expect(chips.first).to_have_attribute("data-ready", "yes")
    panel.send("What are these two?")
    expect(panel.items("assistant")).to_have_text("I see the checkout button and the pear's Remove.")
    expect(panel.find(".page-tray .page-chip")).to_have_count(0)
    said = message_text(mock.requests[0])
    assert said.index("What are these two?") < said.index("[Page context]"), said  # the person's words first
    checkout, pear = sections(said)
    origin = daemon.page("app.localhost").rstrip("/")
    assert field(checkout, "Page") == f"{origin}/shop"
    assert field(checkout, "Element") == 'button#checkout.primary (role button, name "Check out")'
    assert field(checkout, "Selector") == "#checkout"
    assert field(checkout, "Box") == "120×40 at (40, {})".format(round(page.locator("#checkout").bounding_box()["y"]))
    assert field(checkout, "Text") == "Check out"
    assert field(checkout, "HTML") == '<button id="checkout" class="primary" type="button">Check out</button>'
    assert field(checkout, "Source") is None and field(checkout, "Components") is None  # no framework here
    assert field(pear, "Element") == 'button.remove (role button, name "Remove")'
    selector = field(pear, "Selector")
    # The selector finds exactly the pear's Remove button, and nothing else.
    assert page.evaluate("""(s) => { const found = document.querySelectorAll(s);
        return found.length === 1 && found[0].closest("li").querySelector(".name").textContent; }""",
                         selector) == "Pear"
    assert "Selector: #user" not in said  # the removed chip is not sent


def test_form_values_and_password_fields_never_leave_the_page(page, daemon, mock):
    mock.add(text_reply("That is the login form."))
    panel = Panel(page, daemon).open("/shop")
    page.fill("#user", "typed-user-value")
    page.fill("input[type=password]", "typed-secret")
    page.fill("textarea", "typed note text")
    pick = panel.page.get_by_role("button", name="Pick an element")
    pick.click()
    page.click("#login", modifiers=["Shift"], position={"x": 2, "y": 2})
    page.click("#user", modifiers=["Shift"])
    page.click("input[type=password]", modifiers=["Shift"])
    page.keyboard.press("Escape")
    expect(panel.find(".page-tray .page-chip")).to_have_count(3)
    expect(panel.find(".page-tray .page-chip").last.locator(".page-chip-name")).to_have_text("input")
    panel.send("Is the form fine?")
    expect(panel.items("assistant")).to_have_text("That is the login form.")
    said = message_text(mock.requests[0])
    for secret in ("markup-user-value", "typed-user-value", "markup-secret", "typed-secret", "markup note text",
                   "typed note text"):
        assert secret not in said, (secret, said)
    form, user, password = sections(said)
    assert field(form, "Selector") == "#login"
    assert field(form, "Element") == 'form#login.login (role form)'
    assert 'type="password"' not in field(form, "HTML")  # the password field is dropped whole
    assert '<input id="user" name="user">' in field(form, "HTML")
    assert '<textarea name="note" aria-label="Note"></textarea>' in field(form, "HTML")
    assert field(user, "Element") == 'input#user (role textbox, name "User name")'
    assert field(user, "HTML") == '<input id="user" name="user">' and field(user, "Text") is None
    assert field(password, "Element") == 'input (role textbox, name "Password")'
    assert field(password, "HTML") is None  # nothing of a password field's markup goes


def test_the_pure_parts_selectors_roles_names_and_bounded_html(page, daemon):
    Panel(page, daemon).load("/shop")
    origin = daemon.page("app.localhost").rstrip("/")
    result = page.evaluate("""async (module) => {
      const c = await import(module);
      // Every element of the page gets a selector that finds exactly it.
      const wrong = [...document.body.querySelectorAll("*")].filter((node) => {
        const found = document.querySelectorAll(c.selectorFor(node));
        return found.length !== 1 || found[0] !== node;
      }).map((node) => node.outerHTML.slice(0, 80));
      // Siblings alike are told apart; generated and state classes are not relied on.
      const twin = document.createElement("div");
      twin.innerHTML = '<p class="css-1x2y3z active note">a</p><p class="css-9q8w7e active note">b</p>';
      document.body.append(twin);
      const second = c.selectorFor(twin.lastChild);
      const big = document.createElement("section");
      big.textContent = "x".repeat(5000);
      document.body.append(big);
      const both = (s) => [c.roleOf(document.querySelector(s)), c.accessibleName(document.querySelector(s))];
      const names = { checkout: both("#checkout"), user: both("#user"), note: both("textarea"), link: both("a"),
                      list: both("ul"), heading: both("h1") };
      const checkout = document.querySelector("#checkout");
      const described = await c.describeElement(checkout, { locate: async (p) => p.map(() => null) });
      // locate: a route that fails gives nulls; more than 200 positions go in calls of 200 at most.
      const at = { url: `${location.origin}/src/a.js`, line: 1, column: 1 };
      const failing = await c.locateAll(async () => { throw new Error("404"); }, [at, at]);
      const silent = await c.locateAll(() => new Promise(() => {}), [at]); // a daemon that never answers
      const sizes = [];
      const many = await c.locateAll(async (p) => { sizes.push(p.length); return p.map((_, i) => (i % 2 ? null
        : { file: "src/a.js", line: 7 })); }, Array(250).fill(at));
      // A framework's positions (the element's own line, its components') are located in one call.
      const calls = [];
      const served = `${location.origin}/src/Cart.jsx`;
      const framed = await c.describeElement(checkout, {
        frameworkInfo: () => ({ framework: "react", source: { url: served, line: 80, column: 9 },
                                components: [{ name: "Cart", url: served, line: 20, column: 1 }, { name: "App" },
                                             { name: "Layout", file: "/elsewhere/Layout.jsx", line: 3 }] }),
        locate: async (p) => { calls.push(p); return [{ file: "src/Cart.jsx", line: 42, column: 5 },
                                                      { file: "src/Cart.jsx", line: 12 }, null]; } });
      const { hoverLabel } = await import("/__devhost__/static/chat/picker.js");
      const { chipName } = await import("/__devhost__/static/chat/page_attach.js");
      return { calls, framed: [framed.source, framed.components, framed.framework],
               framedText: c.pageContextText(framed),
               hover: [hoverLabel(checkout, null), hoverLabel(checkout, { components: [{ name: "Cart" }] })],
               chips: [chipName(framed), chipName({ ...framed, id: "" }), chipName({ ...described, id: "" })],
               wrong, second, secondFinds: document.querySelector(second) === twin.lastChild, names,
               html: c.redactedHTML(big).length, text: c.visibleText(big).length, described, failing, silent, sizes,
               mapped: many.filter(Boolean).length, last: many[248],
               stable: c.stableClasses(twin.firstChild), text2: c.pageContextText(described) };
    }""", MODULE)
    assert result["wrong"] == [], result["wrong"]
    second = result["second"]
    assert result["secondFinds"] and "css-" not in second and "active" not in second, second
    assert result["stable"] == ["note"]
    assert result["names"] == {"checkout": ["button", "Check out"], "user": ["textbox", "User name"],
                               "note": ["textbox", "Note"], "link": ["link", "Go elsewhere"], "list": ["list", ""],
                               "heading": ["heading", "Your cart"]}
    assert result["html"] == 1500 and result["text"] == 300
    described = result["described"]
    assert described["selector"] == "#checkout" and described["source"] is None and described["components"] == []
    assert described["box"]["width"] == 120 and described["box"]["height"] == 40
    assert result["silent"] == [None]  # given up after 5 s: a send never waits on it for good
    assert result["failing"] == [None, None]  # a locate that fails (no route yet) maps nothing, and throws nothing
    assert result["sizes"] == [200, 50] and result["mapped"] == 125
    assert result["last"] == {"file": "src/a.js", "line": 7}
    assert result["calls"] == [[{"url": f"{origin}/src/Cart.jsx", "line": 80, "column": 9},
                                {"url": f"{origin}/src/Cart.jsx", "line": 20, "column": 1},
                                {"file": "/elsewhere/Layout.jsx", "line": 3}]]
    cart = {"name": "Cart", "file": "src/Cart.jsx", "line": 12}
    assert result["framed"] == [{"file": "src/Cart.jsx", "line": 42, "column": 5},
                                [cart, {"name": "App"}, {"name": "Layout"}], "react"]
    assert "Source: src/Cart.jsx:42\nComponents: Cart (src/Cart.jsx:12) < App < Layout\n" in result["framedText"]
    assert result["hover"] == ["button", "button · Cart"]
    assert result["chips"] == ["button#checkout", "Cart (button)", "button.primary"]
    assert result["text2"].splitlines()[:4] == [
        "[Page context]", f"Page: {origin}/shop",
        'Element: button#checkout.primary (role button, name "Check out")', "Selector: #checkout"]


def test_the_picker_button_and_the_chips_are_accessible(page, daemon, shots):
    panel = Panel(page, daemon).open("/shop")
    pick = panel.page.get_by_role("button", name="Pick an element")
    assert pick.get_attribute("title")
    pick.focus()
    page.keyboard.press("Enter")  # reachable and pressed from the keyboard
    expect(pick).to_have_attribute("aria-pressed", "true")
    page.click("#checkout", modifiers=["Shift"])
    page.click("li.item:nth-of-type(3) .name", modifiers=["Shift"])
    page.keyboard.press("Escape")
    expect(panel.find(".page-tray .page-chip")).to_have_count(2)
    expect(panel.find(".page-tray .page-chip").last).to_have_attribute("data-ready", "yes")
    shots(page, "39-picked-elements")
    assert_every_control_labelled(page, "with two picked elements")
    assert_clean_in_both_themes(page, "with two picked elements")
    pick.click()
    page.hover("#checkout")
    expect(panel.find(".pick-outline")).to_be_visible()
    shots(page, "41-picking")
    assert_readable(panel.find(".pick-label"), "the picker's label (dark)")
    assert_no_serious_axe_violation(page, "while picking")
    page.keyboard.press("Escape")
