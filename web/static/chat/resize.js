// The panel's size: a handle in the corner away from where the panel is anchored (the top-left
// one when it is docked on the right, top-right docked on the left, bottom-right once dragged to
// a place of its own) resizes it by pointer or by the arrow keys, and a header button maximises
// it over the page and restores it. The size is remembered in this origin's localStorage (like
// the rest of the panel's browser state; the daemon keeps only the position), and never exceeds
// the viewport: the stylesheet caps it too, so a window made smaller later cannot strand it.

import { el, icon } from "./dom.js";

export const SIZE_KEY = "devhost:panel-size";
export const MIN = { width: 300, height: 320 };
const MARGIN = 8; // px kept free between the panel and the viewport's edges
const MAXIMIZE = [["rect", { x: "5", y: "5", width: "14", height: "14", rx: "1.5" }]];
const RESTORE = [["rect", { x: "4", y: "9", width: "11", height: "11", rx: "1.5" }], ["path", { d: "M9 9V4h11v11h-5" }]];
const STEP = 16, BIG_STEP = 64; // px an arrow key (with Shift) resizes by

/** A saved size read back: only finite sizes within the bounds of sense, else none. */
export function loadSize(raw) {
  try {
    const size = JSON.parse(raw);
    const ok = (v) => Number.isFinite(v) && v >= 100 && v <= 100_000;
    return { width: ok(size?.width) ? size.width : null, height: ok(size?.height) ? size.height : null,
             maximized: size?.maximized === true };
  } catch {
    return { width: null, height: null, maximized: false };
  }
}

export class PanelSize {
  constructor(panel) {
    this.panel = panel;
    this.size = loadSize(localStorage.getItem(SIZE_KEY));
    this.ui = {
      handle: el("button", { type: "button", class: "resize", "aria-label": "Resize the panel",
                             title: "Drag to resize the panel (or focus this and use the arrow keys; Shift for bigger steps)",
                             onkeydown: (event) => this._key(event) }),
      maximize: el("button", { type: "button", class: "icon maximize", onclick: () => this.toggleMaximized() }),
    };
    this._pointer();
    this.apply();
  }

  /** Which way the handle's corner lies: -1 (left / top) or 1 (right / bottom). */
  _corner() {
    const placed = this.panel.dataset.placed === "yes";
    const left = this.panel.getRootNode().host?.dataset.side === "left";
    return { x: placed || left ? 1 : -1, y: placed ? 1 : -1 };
  }

  /** The largest size that keeps the panel inside the viewport from where it is anchored. */
  _max() {
    const rect = this.panel.getBoundingClientRect(), corner = this._corner();
    return { width: Math.max(MIN.width, corner.x > 0 ? innerWidth - rect.left - MARGIN : rect.right - MARGIN),
             height: Math.max(MIN.height, corner.y > 0 ? innerHeight - rect.top - MARGIN : rect.bottom - MARGIN) };
  }

  resizeTo(width, height) {
    const max = this._max();
    this.size.width = Math.round(Math.min(Math.max(width, MIN.width), max.width));
    this.size.height = Math.round(Math.min(Math.max(height, MIN.height), max.height));
    this.apply();
  }

  toggleMaximized() {
    this.size.maximized = !this.size.maximized;
    this.apply();
    this.save();
  }

  apply() {
    const { width, height, maximized } = this.size;
    this.panel.dataset.maximized = maximized ? "yes" : "no";
    this.panel.style.width = width ? `${width}px` : "";
    this.panel.style.height = height ? `${height}px` : "";
    this.ui.handle.hidden = maximized; // a maximised panel has no size to drag
    const label = maximized ? "Restore panel size" : "Maximize panel";
    this.ui.maximize.setAttribute("aria-label", label);
    this.ui.maximize.title = maximized ? "Restore the panel to its own size" : "Maximize the panel over the page";
    this.ui.maximize.replaceChildren(icon(maximized ? RESTORE : MAXIMIZE, { fill: "none", stroke: "currentColor", "stroke-width": "1.8" }));
  }

  save() {
    try {
      localStorage.setItem(SIZE_KEY, JSON.stringify(this.size));
    } catch {
      // storage full or refused: the size lasts this page only
    }
  }

  _key(event) {
    const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const move = arrows[event.key];
    if (!move) return;
    event.preventDefault();
    // An arrow moves the handle's corner that way, as a drag would.
    const step = event.shiftKey ? BIG_STEP : STEP, corner = this._corner(), rect = this.panel.getBoundingClientRect();
    this.resizeTo(rect.width + move[0] * step * corner.x, rect.height + move[1] * step * corner.y);
    this.save();
  }

  _pointer() {
    const handle = this.ui.handle;
    let start = null;
    handle.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      const rect = this.panel.getBoundingClientRect();
      start = { x: event.clientX, y: event.clientY, width: rect.width, height: rect.height, corner: this._corner() };
      handle.setPointerCapture(event.pointerId);
      event.preventDefault(); // no text selection while dragging
    });
    handle.addEventListener("pointermove", (event) => {
      if (!start) return;
      this.resizeTo(start.width + (event.clientX - start.x) * start.corner.x,
                    start.height + (event.clientY - start.y) * start.corner.y);
    });
    const end = () => {
      if (!start) return;
      start = null;
      this.save();
    };
    handle.addEventListener("pointerup", end);
    handle.addEventListener("pointercancel", end);
  }
}
