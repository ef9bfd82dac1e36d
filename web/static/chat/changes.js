// What a turn changed in the checkout's files, and putting it back (devhostd's per-turn
// checkpoints). Under its turn, the `changes` item is one line: a button "N files changed +a −b"
// that opens the review. The review covers the panel (a modal dialog inside it, so it fits the
// panel's narrow width): the files with their hunks, asked for from devhostd as it opens (the
// item carries counts only), and Revert file, Revert hunk, Undo turn and Rewind. Each says in
// words what it will do and waits for a yes; a file changed on disk since the turn is a conflict
// that names the files and offers to revert anyway. After a revert the review shows what is left.

import { api } from "./api.js";
import { el } from "./dom.js";

const MINUS = "\u2212"; // a real minus sign: "−4" reads as minus four, "-4" as a hyphen

/** "3 files changed +12 −4" (one file: "1 file changed"). */
export function changedWords(count, added, removed) {
  return `${count} ${count === 1 ? "file" : "files"} changed +${added} ${MINUS}${removed}`;
}

/** The `changes` item's line in the transcript (view.js): the button that opens the review, the
    files left out for their size, and the note when there is no checkpoint. */
export function changesLine(item, actions) {
  const count = item.files.length;
  const open = count ? el("button", { type: "button", class: "plain changes-open", "aria-haspopup": "dialog",
                                      title: "Review the files this turn changed, and put them back if you want",
                                      onclick: (event) => actions.reviewChanges?.(item, event.currentTarget) },
    el("span", { class: "count" }, `${count} ${count === 1 ? "file" : "files"} changed`), " ",
    el("span", { class: "added" }, `+${item.added}`), " ", el("span", { class: "removed" }, `${MINUS}${item.removed}`)) : null;
  const skipped = item.skipped.length
    ? el("span", { class: "skipped" }, ` (${item.skipped.length} skipped: too large)`) : null;
  const back = item.reverted.length;
  const reverted = !back ? null : count ? el("span", { class: "reverted" }, ` · ${back} put back`)
    : el("span", { class: "reverted" }, `${back === 1 ? "1 file" : `${back} files`} put back as before this turn`);
  return el("div", { class: "item changes" }, open || skipped || reverted ? el("div", { class: "changes-row" }, open, skipped, reverted) : null,
    item.note ? el("div", { class: "muted changes-note" }, item.note) : null);
}

const STATUS_WORD = { added: "added", modified: "modified", deleted: "deleted", renamed: "renamed" };

/** What reverting one file does, in words, as a question. */
function fileQuestion(file) {
  if (file.status === "added") return `Delete ${file.path}? This turn created it.`;
  if (file.status === "deleted") return `Bring ${file.path} back? This turn deleted it.`;
  if (file.status === "renamed" && file.oldPath) return `Rename ${file.path} back to ${file.oldPath}, as it was before this turn?`;
  return `Put ${file.path} back as it was before this turn?`;
}

function filesWord(count) {
  return count === 1 ? "the 1 file" : `all ${count} files`;
}

export class ChangesReview {
  /** ``panel``: the Panel (its session, store, root and ui.panel, which the review covers). */
  constructor(panel) {
    this.panel = panel;
    this.turn = null; // {sessionId, target, turnId, key}: the turn reviewed
    this.changes = null; // devhostd's answer: {files (with hunks), skipped}
    this.busy = false;
    this.asking = null; // the confirmation shown: {action, opener}
    this.ui = {
      title: el("h2", { class: "changes-title", id: "devhost-changes-title" }, "Changes of this turn"),
      sum: el("div", { class: "changes-sum" }),
      close: el("button", { type: "button", class: "icon", title: "Close the review (Escape)", "aria-label": "Close the review",
                            onclick: () => this.close() }, "×"),
      said: el("div", { class: "changes-said", role: "status" }),
      confirm: el("div", { class: "changes-confirm", role: "alertdialog", "aria-labelledby": "devhost-changes-question",
                           hidden: true }),
      body: el("div", { class: "changes-body", tabindex: "0", "aria-label": "Changed files" }),
      undo: el("button", { type: "button", class: "plain undo-turn", title: "Put every file of this turn back as it was before it",
                           onclick: (event) => this.ask({ kind: "undo" }, event.currentTarget) }, "Undo turn"),
      rewind: el("button", { type: "button", class: "plain rewind",
                             title: "Put the files back and take the conversation back to before this turn",
                             onclick: (event) => this.ask({ kind: "rewind" }, event.currentTarget) }, "Rewind"),
    };
    const u = this.ui;
    u.dialog = el("div", { class: "changes-review", role: "dialog", "aria-modal": "true", "aria-labelledby": "devhost-changes-title",
                           hidden: true, onkeydown: (event) => this._key(event) },
      el("div", { class: "changes-head" }, u.title, u.close),
      u.sum, u.said, u.confirm, u.body,
      el("div", { class: "changes-foot" }, u.undo, u.rewind));
    panel.ui.panel.append(u.dialog);
  }

  get isOpen() {
    return !this.ui.dialog.hidden;
  }

  /** Opens the review of a `changes` item's turn (``opener``: the button, which gets the focus back). */
  async open(item, opener) {
    const panel = this.panel;
    if (!panel.session) return;
    this.turn = { sessionId: panel.session.id, target: panel.store.state.target, turnId: item.turnId, key: item.key };
    this.opener = opener || null;
    this.changes = { files: item.files, skipped: item.skipped }; // counts only, until the hunks come
    this._closeConfirm(false);
    this.say("Loading the changes…");
    this.ui.dialog.hidden = false;
    this._render();
    this.ui.close.focus();
    await this.load();
  }

  /** Closes the review; the focus goes back to the button that opened it (drawn again since, maybe). */
  close() {
    if (!this.isOpen) return;
    const focusInside = this.ui.dialog.contains(this.panel.root.activeElement);
    this.ui.dialog.hidden = true;
    this._closeConfirm(false);
    const key = this.turn?.key;
    this.turn = null;
    this.changes = null;
    if (!focusInside && this.panel.root.activeElement !== null) return;
    const again = key && [...this.panel.root.querySelectorAll(".item.changes")].find((node) => node.dataset.key === key);
    const back = this.opener?.isConnected ? this.opener : again?.querySelector(".changes-open");
    (back || this.panel.ui.textarea).focus();
  }

  /** Asks devhostd for the turn's changes as they are now. */
  async load() {
    const turn = this.turn;
    if (!turn) return;
    try {
      const changes = await api.changes(turn.sessionId, turn.target, turn.turnId);
      if (turn !== this.turn) return; // closed, or another turn opened meanwhile
      this.changes = { files: Array.isArray(changes?.files) ? changes.files : [],
                       skipped: Array.isArray(changes?.skipped) ? changes.skipped : [] };
      if (this.ui.said.dataset.kind === "loading") this.say("");
    } catch (error) {
      if (turn !== this.turn) return;
      // After a revert or a rewind, what it did stays said (a rewound turn may have no changes left to ask for).
      if (this.ui.said.dataset.kind === "done") this.say(`${this.ui.said.textContent} What is left could not be loaded: ${error.message}`, "done");
      else this.say(`The changes could not be loaded: ${error.message}`, "error");
    }
    this._render();
  }

  say(text, kind = text.endsWith("…") ? "loading" : "") {
    this.ui.said.textContent = text;
    this.ui.said.dataset.kind = kind;
    this.ui.said.hidden = !text;
  }

  // ---- drawing -----------------------------------------------------------------------------

  _render() {
    const u = this.ui;
    const files = this.changes?.files || [];
    const added = files.reduce((n, f) => n + (Number(f.added) || 0), 0);
    const removed = files.reduce((n, f) => n + (Number(f.removed) || 0), 0);
    u.sum.textContent = files.length ? changedWords(files.length, added, removed) : "No changes left";
    const skipped = this.changes?.skipped || [];
    u.body.replaceChildren(
      files.length ? el("ul", { class: "changes-list", "aria-label": "Files" }, files.map((file, index) =>
        el("li", {}, el("a", { href: `#devhost-change-${index}`, class: "changes-jump", title: `Go to ${file.path}`,
                               onclick: (event) => { event.preventDefault(); this._jump(index); } },
          el("span", { class: "status", dataset: { status: file.status } }, STATUS_WORD[file.status] || file.status),
          el("span", { class: "path" }, file.oldPath && file.status === "renamed" ? `${file.oldPath} → ${file.path}` : file.path),
          el("span", { class: "added" }, `+${file.added ?? 0}`), el("span", { class: "removed" }, `${MINUS}${file.removed ?? 0}`)))))
        : el("p", { class: "muted" }, "Every file of this turn is as it was before it."),
      skipped.length ? el("p", { class: "muted changes-skipped" },
        `Left out for their size (not kept, so they cannot be put back): ${skipped.join(", ")}`) : null,
      ...files.map((file, index) => this._file(file, index)));
    u.undo.title = files.length ? "Put every file of this turn back as it was before it" : "Undo turn: nothing is left to put back";
    this._setBusy(this.busy);
  }

  /** One request at a time: while one is on its way every button that would send another waits. */
  _setBusy(busy) {
    this.busy = busy;
    const u = this.ui;
    u.undo.disabled = busy || !(this.changes?.files.length);
    u.rewind.disabled = busy;
    for (const button of [...u.body.querySelectorAll("button"), ...u.confirm.querySelectorAll("button")]) button.disabled = busy;
  }

  _file(file, index) {
    const hunks = Array.isArray(file.hunks) ? file.hunks : null;
    const label = `Revert file ${file.path}`;
    return el("section", { class: "diff changes-file", id: `devhost-change-${index}`, "aria-label": file.path, tabindex: "-1" },
      el("div", { class: "diff-head" },
        el("span", { class: "status", dataset: { status: file.status } }, STATUS_WORD[file.status] || file.status),
        el("span", { class: "path" }, file.oldPath && file.status === "renamed" ? `${file.oldPath} → ${file.path}` : file.path),
        el("span", { class: "added" }, `+${file.added ?? 0}`), el("span", { class: "removed" }, `${MINUS}${file.removed ?? 0}`),
        el("button", { type: "button", class: "plain revert-file", "aria-label": label,
                       title: "Put this file back as it was before this turn",
                       onclick: (event) => this.ask({ kind: "file", file }, event.currentTarget) }, "Revert file")),
      file.binary ? el("div", { class: "muted changes-none" }, "A binary file: no lines to show.")
        : hunks === null ? el("div", { class: "muted changes-none" }, "Loading its lines…")
          : hunks.map((hunk) => this._hunk(file, hunk)),
      file.truncated ? el("div", { class: "muted changes-none" }, "More changes than are shown here (the counts are the whole file's).")
        : null);
  }

  _hunk(file, hunk) {
    const lines = Array.isArray(hunk.lines) ? hunk.lines : [];
    return el("div", { class: "changes-hunk" },
      el("div", { class: "hunk-head" }, el("code", {}, hunk.header),
        el("button", { type: "button", class: "plain revert-hunk", "aria-label": `Revert hunk ${hunk.header} of ${file.path}`,
                       title: "Undo only this part of the file's change",
                       onclick: (event) => this.ask({ kind: "hunk", file, hunk }, event.currentTarget) }, "Revert hunk")),
      el("pre", {}, lines.map((line) => {
        const sign = line[0];
        const kind = sign === "+" ? "add" : sign === "-" ? "del" : sign === "\\" ? "hunk" : "same";
        return el("span", { class: `line ${kind}` }, `${line}\n`);
      })));
  }

  _jump(index) {
    const section = this.ui.body.querySelector(`#devhost-change-${index}`);
    section?.scrollIntoView({ block: "start" });
    section?.focus({ preventScroll: true });
  }

  // ---- asking, then doing ------------------------------------------------------------------

  /** What an action does, in words, asked as a question. */
  _question(action) {
    const count = this.changes?.files.length || 0;
    switch (action.kind) {
      case "file": return fileQuestion(action.file);
      case "hunk": return `Undo this part (${action.hunk.header}) of ${action.file.path}? The rest of the file stays as it is.`;
      case "undo": return `Put ${filesWord(count)} of this turn back as they were before it? The conversation stays as it is.`;
      default: return `Put ${count ? filesWord(count) : "the files"} back as they were before this turn, and take the `
        + "conversation back to before it? The agent will not remember this turn or anything after it.";
    }
  }

  /** Shows the confirmation of ``action``; ``conflict``: the files changed since the turn. */
  ask(action, opener, conflict = null) {
    if (this.busy) return;
    this.asking = { action, opener: opener || this.asking?.opener || null };
    const u = this.ui;
    const yes = conflict ? "Revert anyway" : { file: "Revert file", hunk: "Revert hunk", undo: "Undo turn", rewind: "Rewind" }[action.kind];
    u.confirm.replaceChildren(
      el("p", { id: "devhost-changes-question" }, conflict
        ? (conflict.length === 1 ? "This file has changed since the turn; reverting puts it back anyway, "
          : "These files have changed since the turn; reverting puts them back anyway, ") + "and what changed since is lost:"
        : this._question(action)),
      conflict ? el("ul", { class: "changes-conflict" }, conflict.map((path) => el("li", {}, path))) : null,
      el("div", { class: "buttons" },
        el("button", { type: "button", class: "deny confirm-yes", title: conflict ? "Revert, losing what changed since the turn"
                                                                                   : "Yes, do it",
                       onclick: () => this.run(action, Boolean(conflict)) }, yes),
        el("button", { type: "button", class: "plain confirm-no", title: "Leave the files as they are",
                       onclick: () => this._closeConfirm(true) }, "Cancel")));
    u.confirm.hidden = false;
    u.confirm.querySelector(".confirm-no").focus(); // the safe answer is the default one
  }

  _closeConfirm(refocus) {
    this.ui.confirm.hidden = true;
    this.ui.confirm.replaceChildren();
    const opener = this.asking?.opener;
    this.asking = null;
    if (!refocus) return;
    (opener?.isConnected ? opener : this.ui.close).focus();
  }

  async run(action, force) {
    const turn = this.turn;
    if (!turn || this.busy) return;
    this._setBusy(true);
    let answer;
    try {
      if (action.kind === "rewind") answer = await api.rewind(turn.sessionId, turn.target, turn.turnId, { force });
      else {
        const body = action.kind === "file" ? { paths: [action.file.path] }
          : action.kind === "hunk" ? { hunks: [{ path: action.file.path, header: action.hunk.header }] } : {};
        answer = await api.revert(turn.sessionId, turn.target, turn.turnId, { ...body, force });
      }
    } catch (error) {
      this._setBusy(false);
      if (turn !== this.turn) return;
      if (error.status === 409 && error.code === "conflict" && Array.isArray(error.body?.paths)) {
        this.ask(action, null, error.body.paths);
        return;
      }
      this._closeConfirm(true);
      this.say(`Nothing was put back: ${error.message}`, "error");
      return;
    }
    this._setBusy(false);
    if (turn !== this.turn) return;
    this._closeConfirm(false);
    this.say(this._done(action, answer), "done");
    if (action.kind === "rewind") {
      // The turn is gone from the conversation, and its files are back: nothing is left to review.
      this.changes = { files: [], skipped: this.changes?.skipped || [] };
      this._render();
    } else await this.load(); // what is left of the turn's changes
    this.ui.close.focus(); // the button that asked may be gone with its file
  }

  _done(action, answer) {
    if (action.kind === "rewind") return answer?.note || "Rewound.";
    const reverted = Array.isArray(answer?.reverted) ? answer.reverted : [];
    if (action.kind === "hunk") return `Undid that part of ${action.file.path}.`;
    return reverted.length ? `Put back: ${reverted.join(", ")}.` : "Nothing needed putting back.";
  }

  // ---- keys --------------------------------------------------------------------------------

  /** Escape answers the confirmation (Cancel), else closes the review, never the panel around it;
      Tab stays inside the review while it is open. The global Alt+Shift+D (a capture on the window)
      still closes the whole panel. */
  _key(event) {
    event.stopPropagation(); // the panel's own keys (Escape closes it, "?" its help) wait behind a modal review
    if (event.key === "Escape" && !event.isComposing) {
      event.preventDefault();
      if (!this.ui.confirm.hidden) this._closeConfirm(true);
      else this.close();
    } else if (event.key === "Tab") {
      const focusable = [...this.ui.dialog.querySelectorAll("button, a[href], [tabindex='0']")]
        .filter((node) => !node.disabled && node.checkVisibility());
      if (!focusable.length) return;
      const [first, last] = [focusable[0], focusable.at(-1)];
      const active = this.panel.root.activeElement;
      if (event.shiftKey && active === first) { event.preventDefault(); last.focus(); }
      else if (!event.shiftKey && active === last) { event.preventDefault(); first.focus(); }
    }
  }
}
