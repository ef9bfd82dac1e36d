// Telling a person who looks at another tab that the agent needs them: an approval or a question
// waits, or a turn ended. While the page is hidden each such event adds to a count shown in the
// tab's title ("(2) My app"), taken off again when the page is visible; and, once the person
// opted in with the bell (the only place the browser's permission is asked for, so no prompt
// ever comes unasked), a system notification says what happened.

import { el, icon } from "./dom.js";

const OPT_IN_KEY = "devhost:notifications"; // "on" once the person asked for notifications
const BADGE = /^\(\d+\) /;

/** What a live item means for a person away from the page, in words; null: nothing to tell. */
export function newsOf(item, wasRunning) {
  if (item.kind === "approval" && item.decision === "pending") return `Approval waits: ${item.toolName || item.title || "a tool"}`;
  if (item.kind === "question" && item.state === "pending") return "A question waits for your answer";
  if (item.kind === "turn" && item.state !== "running" && wasRunning) {
    const took = item.endedAt && item.createdAt ? ` after ${Math.max(1, Math.round((item.endedAt - item.createdAt) / 1000))} s` : "";
    const how = { done: "finished", error: "ended with an error", aborted: "was interrupted" }[item.state] || `ended (${item.state})`;
    return `The turn ${how}${took}`;
  }
  return null;
}

function bellIcon() {
  return icon([["path", { d: "M6 16v-5a6 6 0 0 1 12 0v5l2 2H4z" }], ["path", { d: "M10 20a2 2 0 0 0 4 0" }]],
    { fill: "none", stroke: "currentColor", "stroke-width": "1.8", "stroke-linejoin": "round" });
}

export class Notifier {
  constructor() {
    this.count = 0;
    this.told = new Set(); // ids of the pending requests already told (an item is sent again on each change)
    this.running = new Set(); // turns seen running here: only their end is news, never a replayed one
    this.ui = { toggle: el("button", { type: "button", class: "icon notify", "aria-pressed": "false",
                                       onclick: () => this.toggle() }, bellIcon()) };
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") this.clear(); });
    this.render();
  }

  get supported() {
    return typeof window.Notification === "function";
  }

  get enabled() {
    return this.supported && Notification.permission === "granted" && localStorage.getItem(OPT_IN_KEY) === "on";
  }

  async toggle() {
    if (this.enabled) localStorage.removeItem(OPT_IN_KEY);
    else {
      localStorage.setItem(OPT_IN_KEY, "on");
      if (Notification.permission === "default") await Notification.requestPermission();
    }
    this.render();
  }

  render() {
    const button = this.ui.toggle;
    const denied = !this.supported || Notification.permission === "denied";
    button.disabled = denied;
    button.setAttribute("aria-pressed", String(this.enabled));
    // A toggle keeps its name; aria-pressed says whether it is on (and the tooltip, in words).
    button.setAttribute("aria-label", "Notify me when the agent waits or finishes");
    button.title = !this.supported ? "This browser has no notifications"
      : denied ? "Notifications are blocked for this site: allow them in the browser's site settings"
        : this.enabled ? "Notifications are on: click to stop them" : "Notify me (in this tab's title and the system) when an approval waits or a turn ends while I look elsewhere";
  }

  /** A snapshot's items: a turn running in it (the page was reloaded mid-turn) has an end to tell. */
  track(items) {
    for (const item of items) if (item.kind === "turn" && item.state === "running") this.running.add(item.id);
  }

  /** An item from the live stream (never a snapshot's): news while the page is hidden. */
  seen(item) {
    if (!item?.id) return;
    const wasRunning = this.running.has(item.id);
    if (item.kind === "turn") {
      if (item.state === "running") this.running.add(item.id);
      else this.running.delete(item.id);
    }
    const news = newsOf(item, wasRunning);
    if (!news || (item.kind !== "turn" && this.told.has(item.id))) return;
    if (item.kind !== "turn") this.told.add(item.id);
    if (document.visibilityState === "visible") return;
    this.count += 1;
    document.title = `(${this.count}) ${document.title.replace(BADGE, "")}`;
    if (this.enabled) {
      try {
        new Notification("devhost chat", { body: news, tag: `devhost-${item.id}` });
      } catch {
        // a browser that allows notifications only from a service worker: the title says it
      }
    }
  }

  /** The person is back: the title is the page's own again. */
  clear() {
    if (!this.count) return;
    this.count = 0;
    document.title = document.title.replace(BADGE, "");
  }
}
