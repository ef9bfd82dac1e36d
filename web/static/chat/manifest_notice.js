// The manifest's problems (config.json's manifestProblems) as a notice at the top of the panel:
// a broken live edit of devhost.toml (the last good manifest goes on serving) and unknown keys,
// each saying what to write instead. The daemon has no push channel for its own state, so the
// notice asks again every few seconds while the panel is open and the page visible (an edit shows
// without a reload), and only every CLOSED_POLL_MS while the panel is closed: the requests show in
// the developer's own Network tab, which is theirs to read.

import { api } from "./api.js";
import { el } from "./dom.js";

const POLL_MS = 2000;
const CLOSED_POLL_MS = 30000; // the launcher's tooltip still learns of a problem
const LAUNCHER_TITLE = "devhost chat";

export class ManifestNotice {
  /** launcher: the round button, whose tooltip says so too while the panel is closed. */
  constructor(launcher) {
    this.launcher = launcher;
    this.shown = "[]";
    this.list = el("ul");
    this.ui = el("div", { class: "manifest-notice", role: "alert", "aria-label": "Manifest problems", hidden: true },
      el("strong", {}, "devhost.toml needs a fix"), this.list);
  }

  /** Shows what the first config.json said, then keeps it current; ``isOpen()``: whether the
   *  panel is open. */
  start(problems, isOpen = () => true) {
    this.show(problems);
    this.isOpen = isOpen;
    this.askedAt = Date.now();
    setInterval(() => {
      if (this.isOpen() || Date.now() - this.askedAt >= CLOSED_POLL_MS) this.refresh();
    }, POLL_MS);
  }

  async refresh() {
    if (document.hidden) return;
    this.askedAt = Date.now();
    try {
      this.show((await api.config()).manifestProblems);
    } catch {
      // devhostd not answering is said elsewhere (the panel's own calls fail with it)
    }
  }

  show(problems) {
    const list = Array.isArray(problems) ? problems : [];
    const key = JSON.stringify(list);
    if (key === this.shown) return; // unchanged: an alert region must not be announced again
    this.shown = key;
    this.list.replaceChildren(...list.map((p) => el("li", { dataset: { level: p.level } },
      el("b", {}, p.level === "error" ? "Error: " : "Warning: "), p.message)));
    this.ui.hidden = list.length === 0;
    this.launcher.title = list.length ? `${LAUNCHER_TITLE} (devhost.toml needs a fix: open to see why)` : LAUNCHER_TITLE;
  }
}
