// The conversation's context meter and cost, and its Compact control, in the composer's row.
// devhostd's info says both (info.usage: contextTokens — what the last model request held —,
// contextWindow, costUsd — Claude Code's total_cost_usd, summed over the chat's processes);
// Compact folds the conversation into a summary as a turn of its own (the core's chat.compact:
// Claude Code's /compact, Codex's thread/compact/start), freeing the context.

import { api } from "./api.js";
import { el } from "./dom.js";

const RUNNING = ["running", "requires_action", "starting"];

export class UsageMeter {
  constructor(panel) {
    this.panel = panel;
    this.ui = {
      // No live region: a screen reader would read the cost after every turn; the meter is read when visited.
      meter: el("span", { class: "usage", role: "note", "aria-label": "Context and cost", hidden: true },
        el("span", { class: "bar" }, el("span", { class: "fill" })), el("span", { class: "words" })),
      compact: el("button", { type: "button", class: "plain compact", "aria-label": "Compact conversation",
                              onclick: () => this.compact() }, "Compact"),
    };
  }

  render(info, session) {
    const usage = info?.usage || {};
    const { contextTokens: used, contextWindow: window, costUsd: cost } = usage;
    const share = Number.isFinite(used) && Number.isFinite(window) && window > 0 ? Math.min(1, used / window) : null;
    // A little used is "<1%", never a "0%" that reads as nothing; a cent's fractions show.
    const percent = share === null ? null : share > 0 && share < 0.01 ? "<1%" : `${Math.round(share * 100)}%`;
    const words = [percent && `${percent} context`,
                   Number.isFinite(cost) && cost > 0 ? `$${cost.toFixed(cost < 0.01 ? 4 : 2)}` : null].filter(Boolean);
    const { meter, compact } = this.ui;
    meter.hidden = !session || words.length === 0;
    meter.dataset.level = share === null ? "none" : share >= 0.9 ? "full" : share >= 0.7 ? "high" : "ok";
    meter.querySelector(".fill").style.width = `${Math.round((share || 0) * 100)}%`;
    meter.querySelector(".bar").hidden = share === null;
    meter.querySelector(".words").textContent = words.join(" · ");
    meter.title = [share === null ? null : `${used.toLocaleString("en-US")} of ${window.toLocaleString("en-US")} tokens `
      + "of context used by the last model request", Number.isFinite(cost) ? `$${cost.toFixed(4)} spent on this conversation so far` : null]
      .filter(Boolean).join("; ");
    const why = !session ? "there is no conversation to compact yet"
      : session.status === "closed" ? "this conversation is closed; resume it first"
        : RUNNING.includes(session.status) ? "wait until the agent finished this turn" : "";
    compact.disabled = Boolean(why);
    compact.title = why ? `Compact conversation: ${why}`
      : "Compact conversation: the agent folds it into a summary, freeing context (a turn of its own)";
  }

  async compact() {
    const session = this.panel.session;
    if (!session) return;
    this.ui.compact.disabled = true; // one fold at a time; the session's state enables it again
    try {
      await api.compactSession(session.id, this.panel.store.state.target);
    } catch (error) {
      this.panel.hint(`The conversation was not compacted: ${error.message}`);
      this.ui.compact.disabled = false;
    }
  }
}
