"""The panel's size, on the real daemon: a handle in its corner resizes it by pointer and by the
arrow keys, Maximize covers the page and Restore brings the size back, the size is remembered
across a reload, never larger than the viewport, and on a phone-wide window (390 px) the panel
is a sheet that still fits and works."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.panel import Panel


def box(panel: Panel) -> dict:
    return panel.find(".panel").bounding_box()


def near(a: float, b: float) -> bool:
    return abs(a - b) <= 1.5


def drag(page, handle, dx: float, dy: float) -> None:
    start = handle.bounding_box()
    x, y = start["x"] + start["width"] / 2, start["y"] + start["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=6)
    page.mouse.up()


def inside_viewport(page, rect: dict) -> bool:
    view = page.viewport_size
    return rect["x"] >= 0 and rect["y"] >= 0 and rect["x"] + rect["width"] <= view["width"] + 0.5 \
        and rect["y"] + rect["height"] <= view["height"] + 0.5


def test_dragging_the_corner_handle_resizes_the_panel_and_a_reload_keeps_the_size(page, daemon):
    panel = Panel(page, daemon).open()
    handle = panel.find(".panel > .resize")
    expect(handle).to_have_accessible_name("Resize the panel")
    expect(handle).to_have_attribute("title", "Drag to resize the panel (or focus this and use the arrow keys; "
                                              "Shift for bigger steps)")
    before = box(panel)
    drag(page, handle, -120, -60)  # docked on the right: its top-left corner grows it left and up
    after = box(panel)
    assert near(after["width"], before["width"] + 120) and near(after["height"], before["height"] + 60)
    assert near(after["x"] + after["width"], before["x"] + before["width"])  # the right edge stays docked
    panel.reload()
    kept = box(panel)
    assert near(kept["width"], after["width"]) and near(kept["height"], after["height"])


def test_the_arrow_keys_on_the_focused_handle_resize_the_panel(page, daemon):
    panel = Panel(page, daemon).open()
    handle = panel.find(".panel > .resize")
    before = box(panel)
    handle.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # the corner moves left: wider
    page.keyboard.press("ArrowDown")  # and down: shorter
    page.keyboard.press("Shift+ArrowUp")  # a big step up: taller
    after = box(panel)
    assert near(after["width"], before["width"] + 32) and near(after["height"], before["height"] - 16 + 64)
    expect(handle).to_be_focused()


def test_the_panel_never_grows_past_the_viewport_by_drag_or_by_a_saved_size(page, daemon):
    panel = Panel(page, daemon).open()
    drag(page, panel.find(".panel > .resize"), -5000, -5000)
    assert inside_viewport(page, box(panel))
    # A size saved on a bigger screen (or written by hand) is capped too.
    page.evaluate("() => localStorage.setItem('devhost:panel-size', JSON.stringify({ width: 4000, height: 3000 }))")
    panel.reload()
    assert inside_viewport(page, box(panel))
    page.set_viewport_size({"width": 900, "height": 600})  # the window made smaller afterwards
    assert inside_viewport(page, box(panel))


def test_maximize_covers_the_page_restore_brings_the_size_back_and_both_are_remembered(page, daemon):
    panel = Panel(page, daemon).open()
    button = panel.find("button.maximize")
    expect(button).to_have_accessible_name("Maximize panel")
    expect(button).to_have_attribute("title", "Maximize the panel over the page")
    own = box(panel)
    button.click()
    expect(button).to_have_accessible_name("Restore panel size")
    expect(button).to_have_attribute("title", "Restore the panel to its own size")
    expect(panel.find(".panel > .resize")).to_be_hidden()  # nothing to drag while maximised
    full, view = box(panel), page.viewport_size
    assert near(full["x"], 8) and near(full["y"], 8)
    assert near(full["width"], view["width"] - 16) and near(full["height"], view["height"] - 16)
    panel.reload()
    expect(panel.find("button.maximize")).to_have_accessible_name("Restore panel size")
    assert near(box(panel)["width"], view["width"] - 16)
    panel.find("button.maximize").click()
    expect(panel.find("button.maximize")).to_have_accessible_name("Maximize panel")
    back = box(panel)
    assert near(back["width"], own["width"]) and near(back["height"], own["height"])


def test_on_a_390_px_wide_window_the_panel_is_a_sheet_that_fits_and_maximizes_to_the_screen(page, daemon, shots):
    page.set_viewport_size({"width": 390, "height": 844})
    panel = Panel(page, daemon).open()
    sheet = box(panel)
    assert near(sheet["width"], 390) and inside_viewport(page, sheet)
    for control in ("textarea", ".send", "button.maximize", "select.harness"):
        expect(panel.find(control)).to_be_in_viewport()
    drag(page, panel.find(".panel > .resize"), 0, -100)  # a taller sheet, still as wide as the phone
    taller = box(panel)
    assert near(taller["height"], sheet["height"] + 100) and near(taller["width"], 390)
    assert inside_viewport(page, taller)
    panel.find("button.maximize").click()
    full = box(panel)
    assert (full["x"], full["y"], full["width"], full["height"]) == (0, 0, 390, 844)
    expect(panel.find(".send")).to_be_in_viewport()
    shots(page, "37-phone-maximized")
