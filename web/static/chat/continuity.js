// No silent fork: the panel stays with the conversation it showed. After a page reload or a
// daemon restart it comes back to that conversation (closed, when the restart closed it, and
// says so), and a message written into a closed conversation resumes it with its context (the
// Chat API's resume) instead of starting a new one beside it. Only New starts afresh.
//
// What tells a restart: devhostd names each of its runs (config.json `run`); the panel keeps,
// per target, the run it last saw the conversation open in (`openIn`). Seen closed in another
// run, it was the restart that closed it (a person's Close here forgets `openIn`).

import { api } from "./api.js";
import { el } from "./dom.js";

const RESTARTED = "devhostd restarted, which closed this conversation. Write to resume it with everything said so far, "
  + "or choose New to start another.";

export class Continuity {
  /** panel: the Panel (its store, config, session, sessions and _refreshSessions). */
  constructor(panel) {
    this.panel = panel;
    this.ui = el("div", { class: "continuity", hidden: true, role: "status" });
  }

  get conversation() {
    return this.panel.store.conversation;
  }

  _update(change) {
    this.panel.store.update(change);
  }

  /** What the panel saw of its session's record: open in this run of devhostd, or closed (by a
      restart when it was last seen open in another run; a dropped socket may mean one since boot). */
  async seen(record) {
    const panel = this.panel;
    const conversation = this.conversation;
    if (record.status === "closed" && conversation.openIn && conversation.openIn === panel.config?.run) {
      try {
        panel.config = { ...panel.config, run: (await api.config()).run };
      } catch {
        return; // devhostd is away: the next record it sends tells
      }
    }
    const run = panel.config?.run;
    if (record.id !== panel.session?.id || !run || conversation !== this.conversation) return;
    if (record.status !== "closed") {
      if (conversation.openIn !== run || conversation.closedBy) {
        this._update(() => { conversation.openIn = run; conversation.closedBy = null; });
      }
    } else if (conversation.openIn && conversation.openIn !== run) {
      this._update(() => { conversation.openIn = null; conversation.closedBy = "restart"; });
    }
    if (record.status === "closed" && conversation.closedBy === "restart") this.say(RESTARTED);
  }

  /** The person closed it here: no restart to tell of. */
  closedHere() {
    this._update(() => { this.conversation.openIn = null; this.conversation.closedBy = null; });
  }

  /** A closed conversation resumed with its context (the Chat API's resume): its new session, or
      null when there is nothing to resume (the CLI never saved it). */
  async resume(closed) {
    const panel = this.panel;
    if (!closed.nativeSessionId) {
      this.say("That conversation could not be resumed (its CLI never saved it), so this message starts a new one.");
      return null;
    }
    let record;
    try {
      record = await api.createSession({ harness: closed.harness, target: panel.store.state.target,
                                         model: closed.model || "", resumeId: closed.nativeSessionId,
                                         ...("account" in closed ? { account: closed.account } : {}) });
    } catch (error) {
      if (error.status !== 409) throw error;
      // Another page resumed it meanwhile: that session is this conversation.
      await panel._refreshSessions();
      record = panel.sessions.find((s) => s.chatId === closed.chatId && s.status !== "closed");
      if (!record) throw error;
    }
    const restart = this.conversation.closedBy === "restart";
    this._update(() => { this.conversation.closedBy = null; });
    this.say(restart ? "devhostd restarted; this conversation was resumed with everything said so far."
      : "This conversation was resumed with everything said so far.");
    await panel._refreshSessions();
    return record;
  }

  say(text) {
    this.ui.textContent = text;
    this.ui.hidden = !text;
  }

  clear() {
    this.say("");
  }
}
