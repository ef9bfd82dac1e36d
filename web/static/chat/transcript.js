// The conversation as the panel shows it: the chat's items, as devhostd projects them from the
// CLI's frames (one projection, in Python: the same items an app on the chat core reads), plus
// what only this page knows: the messages it sent that have no item yet and their
// acknowledgements, the answers it gave that devhostd has not shown taken yet, and errors the
// daemon told it.
//
// The thread socket sends a snapshot of items (or, on a reconnect from a sequence, only what came
// after it) and then one event per change: `item` (the whole item), `delta` (text appended),
// `info`, `reset`. Nothing here decodes a CLI's own frames. A snapshot of a long conversation
// holds only its newest items (`history`: where they start, and the cursor of the page before);
// older pages are put in front as they come (`prepend`).

import { harnessLabel, queuedText } from "./harnesses.js";

// What the person answered, in the harness's own words (Codex accepts and declines); any other
// harness, an ACP agent's too, is allowed or denied.
const ALLOW_WORDS = { allow: "allowed", "allow-always": "allowed for the session", deny: "denied" };
const HARNESS_WORDS = { codex: { allow: "accepted", "allow-always": "accepted for the session", deny: "declined" } };
// An ACP approval's options (the agent's own, by kind) -> the panel's decisions they make possible
// (actors/harness/acp/projection.py answers a decision with the option of its kind; deny with no
// rejecting option is ACP's "cancelled", which allows nothing, so Deny is always there).
const OPTION_DECISIONS = { allow_once: "allow", allow_always: "allow-always" };
const PLAN_STATES = ["pending", "in_progress", "completed"];

const TOOL_NAMES = { shell: "Shell", apply_patch: "Edit files" }; // Codex's, in a person's words

/** The plan an approval asks to go on with ({text, path?}: markdown), or null. */
function planOf(item) {
  const plan = item.plan ?? item.request?.plan;
  return plan && typeof plan.text === "string" ? { text: plan.text, path: typeof plan.path === "string" ? plan.path : "" } : null;
}

export class Transcript {
  constructor(harness = "claude-code") {
    this.harness = harness;
    this.local = new Map(); // commandId -> {text, images, anchor, delivery, error}
    this.notes = []; // {key, kind, text, anchor}: errors told to this page
    this.answers = new Map(); // requestId (as a string) -> the decision this page sent, until the item shows one
    this.resent = new Set(); // ids of messages the CLI dropped unsent that this page sent again
    this.info = null;
    this.load({ seq: 0, items: [] });
  }

  /** Replaces every item with a snapshot's. */
  load(snapshot) {
    this.items = new Map();
    this.order = [];
    this.position = new Map(); // item id -> its index in order
    this.agents = new Map(); // a subagent's toolUseId -> its item id
    this.tools = new Map(); // toolUseId -> the tool item's id
    this.approvals = new Map(); // toolUseId -> the id of the approval that asks for it
    this.children = new Map(); // a parent's toolUseId -> ids of the items it started, in order
    this.turnUsers = new Map(); // turn id -> ids of its user items
    this.seq = snapshot.seq || 0;
    // {start, cursor} while older items are still on devhostd only (cursor: the page before them).
    this.history = snapshot.history?.start > 0 ? { ...snapshot.history } : null;
    if (snapshot.info) this.info = snapshot.info;
    for (const item of snapshot.items || []) this._put(item);
    this.sorted = null;
    this.changed = new Set(["*"]);
    this.setBookmarks(snapshot.bookmarks || []);
    this.setVisuals(snapshot.visuals || [], snapshot.visualsOrigin);
  }

  /** The chat's visuals (pages an agent published), shown after their turn's last item. */
  setVisuals(list, origin) {
    if (origin) this.visualsOrigin = origin;
    const before = new Set((this.visuals || []).map((v) => `visual-${v.id}`));
    this.visuals = Array.isArray(list) ? list : [];
    for (const visual of this.visuals) {
      if (!before.delete(`visual-${visual.id}`)) this.changed.add(`visual-${visual.id}`);
    }
    this.sorted = null;
  }

  /** Applies one event frame ({seq, event}); one seen already is ignored. */
  apply(frame) {
    if (!frame || typeof frame.seq !== "number" || frame.seq <= this.seq) return false;
    this.seq = frame.seq;
    const event = frame.event || {};
    if (event.type === "item" && event.item?.id) {
      // An item before the oldest one here (a settled approval far up): its page, once asked
      // for, has it as it is now; put at the end now it would show out of place.
      if (this.history && typeof event.historyIndex === "number" && event.historyIndex < this.history.start
          && !this.items.has(event.item.id)) return true;
      this._put(event.item);
      this.answers.delete(String(event.item.requestId)); // the item says what became of it now
    } else if (event.type === "delta") {
      const item = this.items.get(event.itemId);
      if (item) {
        item.text = (item.text || "") + (event.text || "");
        this._bump(item.id);
      }
    } else if (event.type === "info") {
      this.info = event.info;
      this.changed.add(`limit-${this.lastTurn}`); // its reset, take-up and queue are the info's
    } else if (event.type === "reset") {
      // A message of this page's that the chat had shown is gone with a rewind (or a new
      // conversation): it must not come back as a bubble still on its way.
      for (const [commandId, local] of this.local) if (local.shown) this.local.delete(commandId);
      this.info = event.info;
      this.load({ seq: this.seq, items: event.items || [] });
    }
    return true;
  }

  /** Older items (a history page: the ones just before the oldest here) go in front; ``history``
      says where they start and the cursor of the page before them (null: none is older). */
  prepend(items, history) {
    const older = (items || []).filter((item) => item?.id && !this.items.has(item.id));
    for (const local of this.local.values()) local.anchor += older.length; // anchored to what they followed
    for (const note of this.notes) note.anchor += older.length;
    const current = this.order.map((id) => this.items.get(id));
    this.load({ seq: this.seq, items: [...older, ...current], bookmarks: this.bookmarkList(), visuals: this.visuals,
                history: history?.cursor ? history : null });
  }

  _put(item) {
    if (!this.items.has(item.id)) {
      this.position.set(item.id, this.order.length);
      this.order.push(item.id);
      this.sorted = null;
      // The agent's first answer in a turn shows its messages were taken up ("started").
      const users = this.turnUsers.get(item.turnId);
      if (item.kind === "user") {
        this.turnUsers.set(item.turnId, [...(users || []), item.id]);
        const local = this.local.get(item.id.slice(5)); // "user-<commandId>"
        if (local) local.shown = true;
      }
      if (item.kind === "tool" && item.toolUseId && !this.tools.has(item.toolUseId)) this.tools.set(item.toolUseId, item.id);
      if (item.kind === "approval" && item.toolUseId && !this.approvals.has(item.toolUseId)) {
        this.approvals.set(item.toolUseId, item.id);
      }
      if (item.parentToolUseId) this.children.set(item.parentToolUseId, [...(this.children.get(item.parentToolUseId) || []), item.id]);
      if (item.kind === "subagent" && item.toolUseId) {
        this.agents.set(item.toolUseId, item.id);
        this.sorted = null;
      }
      else if (users && item.kind !== "turn") for (const id of users) this.changed.add(id);
    }
    this.items.set(item.id, { ...item });
    this._bump(item.id);
    if (item.kind === "turn") {
      this.sorted = null; // an interrupted or limited turn gets a line after its items
      this.changed.add(`end-${item.id}`);
      this.changed.add(`limit-${item.id}`);
      this.changed.add(`retry-${item.id}`);
      for (const id of this.turnUsers.get(item.id) || []) this.changed.add(id); // how its messages went
      this.lastTurn = item.id;
    }
  }

  _bump(id) {
    this.changed.add(id);
    const item = this.items.get(id);
    // A delegated agent's own items are shown inside its card: the card changes with them.
    const agent = item?.parentToolUseId && this.agents.get(item.parentToolUseId);
    if (agent) this.changed.add(agent);
    // An approval is shown inside its tool call: the call's card changes with it.
    if (item?.kind === "approval" && item.toolUseId) {
      const tool = this.tools.get(item.toolUseId);
      if (tool) this.changed.add(tool);
    }
  }

  // ---- what only this page knows ----------------------------------------------------------

  /** ``waits``: sent during a turn of a harness that cannot take it into that turn (an ACP
      agent): it waits for the turn's end, and says so until devhostd tells otherwise. */
  addLocal(commandId, text, images, waits = false) {
    this.local.set(commandId, { text, images, anchor: this.order.length, delivery: null, error: null, waits });
    this._touch(`user-${commandId}`);
  }

  acknowledge(commandId, delivery, error) {
    const local = this.local.get(commandId);
    if (!local) return;
    local.delivery = delivery || null;
    local.error = error || null;
    this._touch(`user-${commandId}`);
  }

  note(kind, text) {
    const key = `note:${this.notes.length}`;
    this.notes.push({ key, kind, text, anchor: this.order.length });
    this.sorted = null;
    this.changed.add(key);
  }

  /** This page answered a request; until the item shows it taken, the answer is shown as sent. */
  answered(requestId, decision) {
    this.answers.set(String(requestId), decision);
    this._touchRequest(requestId);
  }

  /**
   * A new socket is attached: answers the last one carried are forgotten. One devhostd took
   * shows in its item (in the snapshot, or in the events after the sequence resumed from); one
   * it never got is open again.
   */
  newSocket() {
    for (const id of [...this.answers.keys()]) this.refused(id);
  }

  /** devhostd refused this page's answer (answered already, withdrawn): the item says the rest. */
  refused(requestId) {
    if (!this.answers.delete(String(requestId))) return false;
    this._touchRequest(requestId);
    return true;
  }

  _touchRequest(requestId) {
    for (const id of [`approval-${requestId}`, `question-${requestId}`]) if (this.items.has(id)) this._bump(id);
  }

  _touch(key) {
    this.sorted = null;
    this.changed.add(key);
  }

  /** A message the CLI dropped unsent went out again (Send again): its own buttons go. */
  markResent(itemId) {
    this.resent.add(itemId);
    this._touch(itemId);
  }

  /** Whether the chat's items have the message (the CLI was given it). */
  seen(commandId) {
    return this.items.has(`user-${commandId}`);
  }

  // ---- reading ---------------------------------------------------------------------------

  /** Every item to show, in conversation order. */
  list() {
    if (!this.sorted) this.sorted = this._arrange();
    return this.sorted.map((entry) => this._view(entry)).filter((item) => item.kind !== "hidden");
  }

  /** Keys changed since the last call ("*" when everything may have). */
  takeChanged() {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  _arrange() {
    const entries = [];
    const toolUses = new Set();
    this.order.forEach((id, position) => {
      const item = this.items.get(id);
      if (item.kind === "turn") return; // a turn shows as its items (and, interrupted, a line after them)
      // A delegated agent's own items, and the tool call that started it, are shown in its card.
      if (item.parentToolUseId && this.agents.has(item.parentToolUseId)) return;
      if (item.kind === "tool" && this.agents.has(item.toolUseId)) return;
      if (item.kind === "tool" && item.toolUseId) toolUses.add(item.toolUseId);
      // shown in its tool call; a plan to approve is a card of its own
      if (item.kind === "approval" && !planOf(item) && toolUses.has(item.toolUseId)) return;
      entries.push([position, id, { id }]);
    });
    // A turn that was interrupted says so after its last item.
    const lastOfTurn = new Map();
    entries.forEach(([position, id]) => {
      const turnId = this.items.get(id).turnId;
      if (turnId) lastOfTurn.set(turnId, position);
    });
    for (const [turnId, position] of lastOfTurn) {
      const turn = this.items.get(turnId);
      if (turn?.state === "aborted") entries.push([position + 0.1, `end-${turnId}`, { key: `end-${turnId}`,
        kind: "notice", text: "Interrupted." }]);
      // A turn that stopped on a usage limit or an overloaded model says when it can go on.
      if (turn?.limit) entries.push([position + 0.2, `limit-${turnId}`, { key: `limit-${turnId}`, limitOf: turnId }]);
      // The last turn ended in an error: a Retry sends its last message again.
      const retried = turn?.state === "error" && !turn.limit && turnId === this.lastTurn && this._lastUser(turnId);
      if (retried) entries.push([position + 0.3, `retry-${turnId}`, { key: `retry-${turnId}`, kind: "retry", text: retried.text,
        itemId: retried.id }]);
    }
    for (const [commandId, local] of this.local) {
      if (!this.items.has(`user-${commandId}`)) entries.push([local.anchor - 0.5, `user-${commandId}`, { id: `user-${commandId}` }]);
    }
    for (const note of this.notes) entries.push([note.anchor - 0.25, note.key, note]);
    // A visual comes after the last item of the turn it belongs to (else after everything).
    for (const visual of this.visuals || []) {
      const after = lastOfTurn.get(visual.turnId);
      entries.push([(after ?? this.order.length) + 0.3, `visual-${visual.id}`, { key: `visual-${visual.id}`, kind: "visual",
        visual, url: this.visualsOrigin ? `${this.visualsOrigin}/v/${encodeURIComponent(this.chatId || "")}/${visual.id}` : null }]);
    }
    entries.sort((a, b) => a[0] - b[0]);
    return entries.map((entry) => entry[2]);
  }

  _view(entry) {
    if (entry.limitOf) return this._limitView(entry);
    if (!entry.id) return entry; // a note, or an interrupted turn's end
    const item = this.items.get(entry.id);
    if (!item) return this._userView(entry.id, null);
    if (item.kind === "changes" || (!item.kind && item.type === "changes")) return changesView(item);
    switch (item.kind) {
      case "user": return this._userView(item.id, item);
      case "assistant":
      case "thinking":
        return { key: item.id, kind: item.kind, text: item.text || "", streaming: Boolean(item.streaming),
                 sub: Boolean(item.parentToolUseId), itemId: item.id,
                 bookmarked: item.kind === "assistant" && !item.parentToolUseId ? Boolean(this.bookmarks?.has(item.id)) : null };
      case "tool": return this._toolView(item);
      case "approval": return this._approvalView(item);
      case "question": return this._questionView(item);
      case "note":
        return { key: item.id, kind: item.level === "error" ? "error" : "notice", text: item.text || "" };
      case "subagent":
        return { key: item.id, kind: "subagent", id: item.id, taskId: item.taskId, description: item.description || "",
                 subagentType: item.subagentType, status: item.status || "running", children: this._childrenOf(item) };
      case "task":
        return { key: item.id, kind: "task", taskId: item.taskId, description: item.description || "",
                 command: item.command || "", status: item.status || "running" };
      case "plan": // the agent's plan (ACP sends it whole each time): its entries with their status
        return { key: item.id, kind: "plan", label: harnessLabel(this.harness),
                 entries: (Array.isArray(item.entries) ? item.entries : []).map((e) => ({
                   content: typeof e?.content === "string" ? e.content : "",
                   status: PLAN_STATES.includes(e?.status) ? e.status : "pending",
                   priority: typeof e?.priority === "string" ? e.priority : "" })) };
      case "compaction":
        return { key: item.id, kind: "notice", text: "The conversation was compacted." };
      default:
        return { key: item.id, kind: "hidden" }; // turns, and kinds this panel does not show
    }
  }

  /** A delegated agent's own items, in order, as the panel shows them. */
  _childrenOf(agent) {
    return (this.children.get(agent.toolUseId) || []).filter((id) => id !== agent.id)
      .map((id) => this._view({ id })).filter((view) => view.kind !== "hidden");
  }

  /** A limited turn's line: what stopped it, when it resets, and, while it is the chat's current
   *  limit, what waits for it (the queue, a take-up the host owes) and the Resume-at-reset switch. */
  _limitView(entry) {
    const turn = this.items.get(entry.limitOf);
    const info = this.info || {};
    const current = entry.limitOf === this.lastTurn && Boolean(info.limit);
    return { key: entry.key, kind: "limit", limit: turn.limit, current,
             queued: current && Array.isArray(info.queue) ? info.queue.length : 0,
             resumeAt: current ? info.resumeAt || null : null,
             canResume: current && Boolean(info.limitResume), resumeOn: info.resumeAtReset !== false };
  }

  /** The chat's bookmarks (its whole list, as devhostd sent it last), by item id. */
  setBookmarks(list) {
    const before = this.bookmarks || new Map();
    this.bookmarks = new Map((list || []).map((mark) => [mark.itemId, mark]));
    for (const id of new Set([...before.keys(), ...this.bookmarks.keys()])) if (this.items?.has(id)) this.changed.add(id);
    this.changed.add("bookmarks");
  }

  bookmarkList() {
    return [...(this.bookmarks || new Map()).values()];
  }

  /** What still runs in the background (info.background): subagents and shells. */
  background() {
    return Array.isArray(this.info?.background) ? this.info.background : [];
  }

  _userView(key, item) {
    const commandId = key.startsWith("user-") ? key.slice(5) : null;
    const local = commandId ? this.local.get(commandId) : null;
    const images = local?.images?.length ? local.images : [];
    const started = Boolean(item) && this._answeredAfter(item);
    const delivery = deliveryOf(item, local, started, this.harness);
    if (delivery.state === "not-sent" && this.resent.has(item.id)) delivery.text += " (sent again below)";
    const skill = item?.skills?.length ? `/${item.skills[0]} ` : ""; // a skill sent as one, named as typed
    return { key, kind: "user", text: item ? `${skill}${item.text ?? ""}`.trimEnd() : local?.text ?? "", images, itemId: item?.id,
             imageCount: images.length ? 0 : item?.images || 0, delivery, resent: this.resent.has(item?.id),
             bookmarked: item ? Boolean(this.bookmarks?.has(item.id)) : null };
  }

  /** What sending the person's message ``itemId`` again takes: the images this page still holds
      of it (their data: URLs), and how many it had that the page no longer holds (a reload
      keeps only their count, so those would be lost in a send of the text alone). */
  resendable(itemId) {
    const local = itemId?.startsWith("user-") ? this.local.get(itemId.slice(5)) : null;
    const images = local?.images?.length ? local.images : [];
    const count = Number(this.items.get(itemId)?.images) || 0;
    return { images, missing: images.length ? 0 : count };
  }

  /** The turn's last message of the person's that has text (null: none). */
  _lastUser(turnId) {
    const texts = (this.turnUsers.get(turnId) || []).map((id) => this.items.get(id)).filter((u) => u?.text?.trim());
    return texts.at(-1) || null;
  }

  /** Whether the agent answered after a message of its turn (it took the message up). */
  _answeredAfter(user) {
    if (this.items.get(user.turnId)?.limit) return true; // the model refused it: the CLI had taken it up
    for (let i = this.position.get(user.id) + 1; i < this.order.length; i += 1) {
      const item = this.items.get(this.order[i]);
      if (item.turnId === user.turnId && item.kind !== "user" && item.kind !== "turn") return true;
    }
    return false;
  }

  _toolView(item) {
    let approval = item.toolUseId ? this.items.get(this.approvals.get(item.toolUseId)) : null;
    if (approval && planOf(approval)) approval = null; // the plan's card asks, after the call
    const input = Array.isArray(item.changes) ? { ...(item.input || {}), changes: item.changes } : item.input;
    return { key: item.id, kind: "tool", name: TOOL_NAMES[item.name] || item.name || "tool", toolName: item.name,
             input, output: item.output ?? null, state: item.state || "running", exitCode: item.exitCode,
             sub: Boolean(item.parentToolUseId), approval: approval && this._approvalView(approval) };
  }

  _approvalView(item) {
    const sent = this.answers.get(String(item.requestId));
    const decision = item.decision === "pending" && sent ? sent : item.decision;
    const words = HARNESS_WORDS[this.harness] || ALLOW_WORDS;
    return { key: item.id, kind: "approval", harness: this.harness, label: harnessLabel(this.harness),
             requestId: item.requestId, decisions: decisionsOf(item),
             toolName: item.toolName, title: TOOL_NAMES[item.toolName] || item.toolName || "A tool",
             detail: item.description || "", input: item.input, canAllowAlways: Boolean(item.canAllowAlways),
             open: decision === "pending", answer: words[decision] || null,
             settled: decision === "cancelled" ? "No longer waiting for an answer." : "", plan: planOf(item) };
  }

  _questionView(item) {
    const sent = this.answers.get(String(item.requestId));
    return { key: item.id, kind: "question", harness: this.harness, label: harnessLabel(this.harness),
             requestId: item.requestId,
             questions: (item.questions || []).map((q) => ({ id: q.id, text: q.question || "", header: q.header || "",
               multiple: Boolean(q.multiSelect), options: q.choices || [] })),
             open: item.state === "pending" && !sent,
             answer: item.state === "answered" || sent ? "answered" : null,
             answers: item.answers || null,
             settled: item.state === "cancelled" || item.state === "dismissed" ? "No longer waiting for an answer." : "" };
  }
}

/** The decisions an approval offers, in order: allow, allow for the session where the harness
    can, deny. An ACP agent's item lists its own options; the CLIs' say canAllowAlways. */
function decisionsOf(item) {
  if (!Array.isArray(item.options)) return ["allow", ...(item.canAllowAlways ? ["allow-always"] : []), "deny"];
  const offered = new Set(item.options.map((o) => OPTION_DECISIONS[o?.kind]).filter(Boolean));
  return ["allow", "allow-always", "deny"].filter((decision) => decision === "deny" || offered.has(decision));
}

/** A turn's `changes` item (devhostd's checkpoints): the files it changed, with their counts (the
    hunks are asked for when the review opens), and why there is no checkpoint when there is none.
    One with no file and no note shows nothing (unless its files were all put back). */
function changesView(item) {
  const files = Array.isArray(item.files) ? item.files.filter((f) => f && typeof f.path === "string") : [];
  const note = typeof item.note === "string" ? item.note : "";
  const reverted = Array.isArray(item.reverted) ? item.reverted : [];
  // Every file put back: the line says so (a turn that changed nothing shows nothing).
  if (!files.length && !note && !reverted.length) return { key: item.id, kind: "hidden" };
  const sum = (field) => files.reduce((total, f) => total + (Number(f[field]) || 0), 0);
  return { key: item.id, kind: "changes", turnId: item.turnId, files,
           added: Number.isFinite(item.added) ? item.added : sum("added"),
           removed: Number.isFinite(item.removed) ? item.removed : sum("removed"),
           skipped: Array.isArray(item.skipped) ? item.skipped : [], note,
           reverted };
}

// devhostd's command_result error for a send an interrupt cancelled before the CLI got it.
const CANCELLED_BY_INTERRUPT = "not sent: an interrupt cancelled";

/** What the page shows under a message: sending… queued started unconfirmed failed cancelled, not
    sent (the chat's item says the CLI dropped it: an interrupt), or
    nothing for a message this page did not send (another page's, or one of before a reload). */
function deliveryOf(item, local, started, harness) {
  // The chat's own word, for every page and after a reload: the CLI dropped it unsent.
  if (typeof item?.notSent === "string") return { state: "not-sent", text: item.notSent };
  if (local?.error?.startsWith(CANCELLED_BY_INTERRUPT)) return { state: "cancelled", text: "cancelled by the interrupt" };
  if (local?.error) return { state: "failed", text: `failed: ${local.error}` };
  if (!local) return { state: "unknown", text: "" };
  if (local.delivery === "started" || started) return { state: "started", text: "started" };
  // A harness that cannot take it into the running turn (an ACP agent) takes it when the turn ends: said.
  if (local.delivery === "queued" || (local.waits && !local.delivery)) return { state: "queued", text: queuedText(harness) };
  if (item) return { state: "sent", text: "sent" };
  if (local.delivery === "unconfirmed") return { state: "unconfirmed", text: "unconfirmed" };
  return { state: "sending", text: "sending…" };
}
