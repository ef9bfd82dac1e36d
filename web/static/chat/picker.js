// "Pick an element": while picking, the element under the pointer is outlined (its tag, and its
// component where the dev build says, from frameworkInfo alone: hovering asks nothing of
// devhostd), a click picks it and ends picking, Shift+click picks it and goes on, Esc ends.
//
// The page must not notice: the clicks (and the presses and releases around them) on the page are
// stopped in the capture phase at the window, before the page's own handlers, and their default
// actions prevented (a link is not followed, a button does not submit). The panel is never
// picked: it lives in its own host element (panel.js), and events inside it pass as usual, so the
// button stops picking when pressed again.

import { el, icon } from "./dom.js";
import { loadFrameworks } from "./page_context.js";

const STOPPED = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "dblclick", "auxclick", "contextmenu"];
const CURSOR_ID = "devhost-picking-cursor";

function pickIcon() {
  return icon([["path", { d: "M5 3l14 7-6 2-2 6z" }], ["path", { d: "M13 13l6 6" }]],
    { fill: "none", stroke: "currentColor", "stroke-width": "1.8", "stroke-linejoin": "round" });
}

/** What the hover label says: "button", or "button · Cart" where the component is known. */
export function hoverLabel(element, info) {
  const component = info?.components?.[0]?.name;
  return component ? `${element.localName} · ${component}` : element.localName;
}

export class Picker {
  /** `host`: the panel's own element (never picked); `layer`: where the outline is drawn (the
   *  panel's shadow root); `onPick(element)` for each element picked. */
  constructor({ host, layer, onPick }) {
    this.host = host;
    this.onPick = onPick;
    this.active = false;
    this.hovered = null;
    this.info = null; // frameworkInfo, once loaded
    this.button = el("button", { type: "button", class: "icon pick", "aria-label": "Pick an element", "aria-pressed": "false",
      title: "Pick an element of the page to tell the agent about (Shift+click picks more, Esc ends)",
      onclick: () => (this.active ? this.stop() : this.start()) }, pickIcon());
    this.label = el("div", { class: "pick-label" });
    this.outline = el("div", { class: "pick-outline", hidden: true, "aria-hidden": "true" }, this.label);
    layer.append(this.outline);
    this._onEvent = (event) => this._event(event);
    this._onMove = (event) => this._hover(event.target);
    this._onKey = (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      event.stopImmediatePropagation(); // Esc ends picking only: the panel stays open
      this.stop();
    };
    this._onScroll = () => this._draw();
  }

  start() {
    if (this.active) return;
    this.active = true;
    this.button.setAttribute("aria-pressed", "true");
    this.button.title = "Picking: click an element of the page (Shift+click picks more, Esc ends)";
    loadFrameworks().then((info) => { this.info = info; this._draw(); });
    for (const type of STOPPED) window.addEventListener(type, this._onEvent, true);
    window.addEventListener("pointermove", this._onMove, true);
    window.addEventListener("keydown", this._onKey, true);
    window.addEventListener("scroll", this._onScroll, true);
    window.addEventListener("resize", this._onScroll);
    if (!document.getElementById(CURSOR_ID)) {
      const style = document.createElement("style");
      style.id = CURSOR_ID;
      style.textContent = "* { cursor: crosshair !important; }";
      (document.head || document.documentElement).append(style);
    }
  }

  stop() {
    if (!this.active) return;
    this.active = false;
    this.button.setAttribute("aria-pressed", "false");
    this.button.title = "Pick an element of the page to tell the agent about (Shift+click picks more, Esc ends)";
    for (const type of STOPPED) window.removeEventListener(type, this._onEvent, true);
    window.removeEventListener("pointermove", this._onMove, true);
    window.removeEventListener("keydown", this._onKey, true);
    window.removeEventListener("scroll", this._onScroll, true);
    window.removeEventListener("resize", this._onScroll);
    document.getElementById(CURSOR_ID)?.remove();
    this.hovered = null;
    this.outline.hidden = true;
  }

  /** Whether an event's target is the page's (not the panel's, whose events reach the window
   *  retargeted to its host). */
  _onPage(target) {
    return target instanceof Element && target !== this.host && !this.host.contains(target)
      && target.id !== CURSOR_ID;
  }

  _event(event) {
    if (!this._onPage(event.target)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (event.type !== "click" || event.button !== 0) return;
    const element = event.target;
    if (!event.shiftKey) this.stop();
    this.onPick(element);
  }

  _hover(target) {
    this.hovered = this._onPage(target) ? target : null;
    this._draw();
  }

  _draw() {
    const element = this.hovered;
    if (!this.active || !element || !element.isConnected) {
      this.outline.hidden = true;
      return;
    }
    const rect = element.getBoundingClientRect();
    Object.assign(this.outline.style, { left: `${rect.left}px`, top: `${rect.top}px`,
                                        width: `${rect.width}px`, height: `${rect.height}px` });
    this.outline.dataset.below = rect.top < 22 ? "yes" : "no"; // the label goes inside when there is no room above
    this.label.textContent = hoverLabel(element, this.info ? this.info(element) : null);
    this.outline.hidden = false;
  }
}
