"""What the accessibility tests measure in the rendered panel: WCAG contrast from the computed
styles of real elements, every control's accessible name and tooltip, and axe-core's findings.

axe-core is a peer of the tests (pinned in tests/peers.sh, installed into .peers/ like the CLIs):
the checks everyone audits, rather than a hand-written list of rules.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

AXE = Path(__file__).resolve().parents[2] / ".peers" / "node_modules" / "axe-core" / "axe.min.js"
AA_TEXT = 4.5  # WCAG 2.x AA, normal-size text

# The contrast of an element's text on what is painted behind it: its own background and its
# ancestors' (across the shadow root), translucent layers composited over the first opaque one.
CONTRAST = r"""(nodes) => {
  const parse = (value) => {
    const m = /rgba?\(([^)]*)\)/.exec(value);
    if (!m) throw new Error(`a colour this test cannot read: ${value}`);
    const [r, g, b, a = 1] = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  };
  const over = (top, below) => ({ r: top.r * top.a + below.r * (1 - top.a), g: top.g * top.a + below.g * (1 - top.a),
                                  b: top.b * top.a + below.b * (1 - top.a), a: 1 });
  const up = (node) => node.parentElement
    || (node.getRootNode() instanceof ShadowRoot ? node.getRootNode().host : null);
  const behind = (node) => {
    const layers = [];
    for (let n = node; n; n = up(n)) {
      const colour = parse(getComputedStyle(n).backgroundColor);
      if (colour.a > 0) layers.push(colour);
      if (colour.a >= 1) break;
    }
    let colour = { r: 255, g: 255, b: 255, a: 1 }; // nothing opaque: the browser's canvas
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const luminance = ({ r, g, b }) => {
    const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const hex = ({ r, g, b }) => "#" + [r, g, b].map((c) => Math.round(c).toString(16).padStart(2, "0")).join("");
  return nodes.map((node) => {
    const bg = behind(node);
    let fg = parse(getComputedStyle(node).color);
    if (fg.a < 1) fg = over(fg, bg);
    const [light, dark] = [luminance(fg), luminance(bg)].sort((x, y) => y - x);
    const text = node.textContent.trim().slice(0, 30);
    const what = `${node.tagName.toLowerCase()}.${[...node.classList].join(".")} "${text}"`;
    return { what, fg: hex(fg), bg: hex(bg), ratio: Math.round(((light + 0.05) / (dark + 0.05)) * 100) / 100 };
  });
}"""


def contrasts(locator: Locator) -> list[dict]:
    """{what, fg, bg, ratio} for each element the locator finds (at least one)."""
    expect(locator.first).to_be_visible()
    return locator.evaluate_all(CONTRAST)


def assert_readable(locator: Locator, where: str) -> list[dict]:
    measured = contrasts(locator)
    poor = [m for m in measured if m["ratio"] < AA_TEXT]
    assert not poor, f"{where}: text under {AA_TEXT}:1 contrast: {poor}"
    return measured


# Every element of the panel that shows text of its own (and each select, which shows its
# option's), visible, not disabled: WCAG exempts inactive controls from contrast.
TEXTS = r"""(host) => [...host.shadowRoot.querySelectorAll("*")].filter((node) => {
  if (["OPTION", "OPTGROUP", "STYLE", "LINK", "SCRIPT", "TEXTAREA"].includes(node.tagName)) return false;
  if (!node.checkVisibility({ visibilityProperty: true, opacityProperty: true })) return false;
  if (node.closest(":disabled") || node.closest("fieldset:disabled")) return false;
  if (node.tagName === "SELECT") return true;
  return [...node.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && child.textContent.trim());
})"""


def assert_all_text_readable(page: Page, where: str) -> list[dict]:
    """All the panel's text, as it is rendered now, at AA (what axe-core leaves for review)."""
    measured = page.locator("devhost-chat").evaluate(f"(host) => ({CONTRAST})(({TEXTS})(host))")
    assert len(measured) >= 5, f"{where}: hardly any text found: {measured}"
    poor = [m for m in measured if m["ratio"] < AA_TEXT]
    assert not poor, f"{where}: text under {AA_TEXT}:1 contrast: {poor}"
    return measured


# Every visible control in the panel's shadow root (buttons, selects, inputs, text areas, and
# the options of a select), marked so a locator can find each one again.
CONTROLS = r"""(host) => {
  const found = [];
  for (const old of host.shadowRoot.querySelectorAll("[data-a11y-probe]")) delete old.dataset.a11yProbe;
  for (const node of host.shadowRoot.querySelectorAll("button, select, input, textarea, [role=button], option")) {
    const control = node.tagName === "OPTION" ? node.closest("select") : node;
    if (!control.checkVisibility({ visibilityProperty: true })) continue;
    if (node.tagName === "OPTION" && !node.disabled) continue; // an option speaks through its select
    node.dataset.a11yProbe = String(found.length);
    const described = (node.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean)
      .map((id) => host.shadowRoot.getElementById(id)?.textContent.trim() || "").join(" ");
    found.push({ probe: found.length, tag: node.tagName.toLowerCase(), cls: node.className,
                 text: node.textContent.trim().slice(0, 30), title: (node.title || "").trim(),
                 disabled: node.disabled || node.getAttribute("aria-disabled") === "true", described });
  }
  return found;
}"""


def assert_every_control_labelled(page: Page, state: str) -> list[dict]:
    """Each control has an accessible name (as Playwright computes it) and a tooltip, and a
    disabled one says why (its tooltip or the text it is described by)."""
    controls = page.locator("devhost-chat").evaluate(CONTROLS)
    assert controls, f"{state}: no controls found"
    for control in controls:
        node = page.locator(f'devhost-chat [data-a11y-probe="{control["probe"]}"]')
        if control["tag"] != "option":
            expect(node, f"{state}: {control} has no accessible name").to_have_accessible_name(re.compile(r"\S"))
        assert control["title"], f"{state}: {control} has no tooltip"
        if control["disabled"]:
            assert control["title"] or control["described"], f"{state}: {control} is disabled without saying why"
    return controls


def axe_violations(page: Page, impacts=("serious", "critical")) -> list[dict]:
    """axe-core's violations inside the panel (the page around it is the upstream app's, not
    ours), those of the given impacts, each with the elements it found."""
    if not AXE.is_file():
        raise RuntimeError(f"{AXE} is missing: `bash tests/peers.sh` installs axe-core")
    if not page.evaluate("() => Boolean(window.axe)"):
        page.evaluate(AXE.read_text())
    result = page.evaluate("""async () => {
      const r = await window.axe.run({ include: [["devhost-chat"]] }, { resultTypes: ["violations"] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target, summary: n.failureSummary })) }));
    }""")
    return [v for v in result if v["impact"] in impacts]


def assert_no_serious_axe_violation(page: Page, state: str) -> None:
    found = axe_violations(page)
    assert not found, f"{state}: axe-core found {json.dumps(found, indent=1)}"


def assert_clean_in_both_themes(page: Page, state: str) -> None:
    """The panel as it is now, light then dark (the system's preference; the panel on auto): all
    its text at AA, and nothing serious for axe-core."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        expect(page.locator("devhost-chat")).to_have_attribute("data-theme", scheme)
        assert_all_text_readable(page, f"{state} ({scheme})")
        assert_no_serious_axe_violation(page, f"{state} ({scheme})")
