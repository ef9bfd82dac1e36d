// The page's hot reloads while the agent works: holding them (devhostd keeps what the dev
// server sends the page until the person applies it), the notice after the page reloaded
// mid-turn, and Disable Reloads (asking the agent to turn hot reload off in the project's
// dev-server configuration), tracked until its turn ends, across reloads.

import { api } from "./api.js";
import { el, icon } from "./dom.js";

const POLL_MS = 1000;
const NOTICE_WINDOW_MS = 5 * 60 * 1000; // a reload this soon after a turn was running is "mid-turn"
export const DISABLE_PROMPT = "Turn off hot module replacement and automatic page reloads in this project's dev-server "
  + "configuration (for example `server.hmr: false` and no full-page reload on change in a Vite config), so the page I "
  + "am chatting from is not reloaded while you edit files. Change only that setting, and tell me in one sentence what "
  + "you changed and whether the dev server needs a restart.";
const ENDED = { size: "more than the hold can keep arrived", time: "it was held for 10 minutes" };
const RUNNING = ["running", "requires_action"];

export class ReloadControls {
  /** panel: the Panel (its store, session, transcript, sendPrompt, hint). */
  constructor(panel) {
    this.panel = panel;
    this.timer = null;
    this.state = { held: false, updates: 0 };
    this.ui = {
      toggle: el("button", { type: "button", class: "icon hold", title: "Hold the page's hot reloads while the agent works",
                             "aria-label": "Hold reloads", "aria-pressed": "false", onclick: () => this.setHeld(!this.held) },
        pauseIcon()),
      strip: el("div", { class: "reloads", hidden: true, role: "status" }),
      notice: el("div", { class: "reload-notice", hidden: true, role: "status" }),
      outcome: el("div", { class: "reload-outcome", hidden: true, role: "status" }),
    };
  }

  get store() {
    return this.panel.store;
  }

  get held() {
    return Boolean(this.store?.state.reloads.held);
  }

  /** After the panel found its state: the stored hold is held again (devhostd forgets it on a
      restart), and a turn that was running when the page went away gets its notice. */
  async boot() {
    window.addEventListener("pagehide", () => this._rememberRunning());
    if (this.held) await this.setHeld(true);
    const running = this.store.state.reloads.runningAtUnload;
    this.store.update((s) => { s.reloads.runningAtUnload = null; });
    // With reloads held the page reloaded because the person did: nothing to tell.
    if (running && !this.held && Date.now() - running.at < NOTICE_WINDOW_MS && !this.store.state.reloads.noticeDismissed) {
      this._showNotice();
    }
    this.render();
  }

  _rememberRunning() {
    const session = this.panel.session;
    if (session && RUNNING.includes(session.status)) {
      this.store.update((s) => { s.reloads.runningAtUnload = { sessionId: session.id, at: Date.now() }; });
    }
  }

  async setHeld(held) {
    try {
      this.state = await api.holdReloads(held);
    } catch (error) {
      this.panel.hint(`Reloads could not be ${held ? "held" : "released"}: ${error.message}`);
      return;
    }
    this.store.update((s) => { s.reloads.held = this.state.held; });
    // Held: the strip says so and offers the rest; a notice still offering "Hold reloads" would
    // be a second strip saying the opposite.
    if (this.state.held && !this.ui.notice.hidden) this._dismiss();
    clearInterval(this.timer);
    this.timer = this.state.held ? setInterval(() => this._poll(), POLL_MS) : null;
    this.render();
  }

  async apply() {
    try {
      this.state = await api.applyReloads();
    } catch (error) {
      this.panel.hint(`The updates were not applied: ${error.message}`);
    }
    this.render();
  }

  async _poll() {
    try {
      this.state = await api.reloads();
    } catch {
      return; // the daemon is away for a moment: the next poll tells
    }
    if (!this.state.held && this.held) {
      // The hold ended by itself: what it held went to the page.
      clearInterval(this.timer);
      this.timer = null;
      this.store.update((s) => { s.reloads.held = false; });
      this.panel.hint(`Reloads are no longer held: ${ENDED[this.state.ended] || "the hold ended"}; the page got every update.`);
    }
    this.render();
  }

  _showNotice() {
    const u = this.ui;
    u.notice.replaceChildren(
      el("span", {}, "This page reloaded while the agent was working (the dev server reloads it when files change). "
        + "The conversation went on; nothing was lost."),
      el("span", { class: "actions" },
        el("button", { type: "button", class: "plain", title: "Hold the page's hot reloads while the agent works",
                       onclick: () => { this.setHeld(true); this._dismiss(); } },
          "Hold reloads"),
        el("button", { type: "button", class: "plain", title: "Ask the agent to turn hot reload off in this project's dev-server configuration",
                       onclick: () => { this.disable(); this._dismiss(); } },
          "Disable reloads"),
        el("button", { type: "button", class: "icon", title: "Do not show this again", "aria-label": "Dismiss",
                       onclick: () => this._dismiss() }, "×")));
    u.notice.hidden = false;
  }

  /** Whatever the person did with the notice, it is not shown again (the seed's "dismissed"). */
  _dismiss() {
    this.ui.notice.hidden = true;
    this.store.update((s) => { s.reloads.noticeDismissed = true; });
  }

  /** Asks the current session's agent, as a normal message, to turn hot reload off. */
  async disable() {
    const sent = await this.panel.sendPrompt(DISABLE_PROMPT);
    if (!sent) return;
    const target = this.store.state.target;
    this.store.update((s) => { s.reloads.disableRequest = { ...sent, target }; });
    this.render();
  }

  /** Called after the conversation changed: a Disable Reloads request whose turn ended says how. */
  check(transcript, session) {
    const request = this.store?.state.reloads.disableRequest;
    if (!request || !session || request.sessionId !== session.id) return;
    const user = transcript.items.get(`user-${request.commandId}`);
    const turn = user && transcript.items.get(user.turnId);
    const refused = transcript.local.get(request.commandId)?.error;
    if (!refused && (!turn || turn.state === "running")) return;
    let text;
    if (refused) text = `Disable reloads was not sent: ${refused}`;
    else if (turn.state === "done") text = `Disable reloads: ${lastReply(transcript, user.turnId) || "the agent finished."}`;
    else text = `Disable reloads did not finish (the turn ${turn.state === "aborted" ? "was interrupted" : "failed"}).`;
    // Kept until the person dismisses it: a reload right after the turn ended must not lose it.
    this.store.update((s) => { s.reloads.disableRequest = null; s.reloads.disableOutcome = text; });
    this.render();
  }

  _renderOutcome() {
    const text = this.store?.state.reloads.disableOutcome;
    const { outcome } = this.ui;
    outcome.hidden = !text;
    if (!text || outcome.firstChild?.textContent === text) return;
    outcome.replaceChildren(el("span", {}, text),
      el("button", { type: "button", class: "icon", "aria-label": "Dismiss", title: "Dismiss", onclick: () => {
        this.store.update((s) => { s.reloads.disableOutcome = null; });
        this.render();
      } }, "×"));
  }

  render() {
    const u = this.ui;
    const held = this.held;
    this._renderOutcome();
    u.toggle.setAttribute("aria-pressed", String(held));
    u.toggle.classList.toggle("on", held);
    u.toggle.title = held ? "Reloads are held: release them" : "Hold the page's hot reloads while the agent works";
    const updates = this.state.updates || 0;
    const pending = this.store?.state.reloads.disableRequest;
    u.strip.hidden = !held && !pending;
    u.strip.replaceChildren(...[
      held ? el("span", { class: "count" }, updates ? `Reloads held: ${updates} update${updates === 1 ? "" : "s"} waiting`
        : "Reloads held: the page will not change until you apply them") : null,
      held && updates ? el("button", { type: "button", class: "plain apply", title: "Let the held updates reach the page (and go on holding)",
                                   onclick: () => this.apply() },
        `Apply ${updates} update${updates === 1 ? "" : "s"}`) : null,
      held ? el("button", { type: "button", class: "plain release", title: "Stop holding: the page reloads as the dev server says",
                      onclick: () => this.setHeld(false) }, "Release") : null,
      held && !pending ? el("button", { type: "button", class: "plain disable", title: "Ask the agent to turn hot reload off "
        + "in this project's dev-server configuration", onclick: () => this.disable() }, "Disable reloads") : null,
      pending ? el("span", { class: "pending" }, "Asked the agent to disable reloads…") : null].filter(Boolean));
  }
}

function pauseIcon() {
  return icon(["6", "14"].map((x) => ["rect", { x, y: "5", width: "4", height: "14", rx: "1" }]), { fill: "currentColor" });
}

function lastReply(transcript, turnId) {
  let text = "";
  for (const id of transcript.order) {
    const item = transcript.items.get(id);
    if (item.turnId === turnId && item.kind === "assistant" && item.text) text = item.text;
  }
  const line = text.trim().split("\n")[0];
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
