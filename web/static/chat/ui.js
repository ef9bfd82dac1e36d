// The chat panel: header (status, target, side), harness / model / session pickers, the
// conversation, and the composer. It talks to devhostd only through the Chat API.

import { api, devhostURL, HISTORY_LIMIT } from "./api.js";
import { ChangesReview } from "./changes.js";
import { ChatConnection } from "./connection.js";
import { Composer, MAX_FRAME_BYTES, frameBytes } from "./composer.js";
import { Continuity } from "./continuity.js";
import { ConversationControls } from "./conversations.js";
import { Completion } from "./completion.js";
import { EMPTY, References, fileEntries, slashEntries } from "./references.js";
import { Shortcuts } from "./shortcuts.js";
import { el, icon } from "./dom.js";
import { clampPosition, makeDraggable } from "./drag.js";
import { JumpToLatest } from "./jumplatest.js";
import { capturePage, chooseArea } from "./screenshot.js";
import { LogView } from "./logview.js";
import { accountChoices, accountLabel, accountName, accountValue, swapNotice } from "./accounts.js";
import { ManifestNotice } from "./manifest_notice.js";
import { PageAttachments } from "./page_attach.js";
import { markExcerpt } from "./bookmark_text.js";
import { Notifier } from "./notify.js";
import { PanelSize } from "./resize.js";
import { AFTER_PLAN_DEFAULT, MODES, SESSION_DEFAULT, configureFrame, effectiveNotice, modeOf, shownMode } from "./modes.js";
import { ReloadControls } from "./reloads.js";
import { Store, TARGETS, liveKey, storageKey } from "./store.js";
import { describeTarget } from "./targets.js";
import { Theme, tellVisuals } from "./theme.js";
import { Transcript } from "./transcript.js";
import { harnessLabel, knowHarnesses, steers } from "./harnesses.js";
import { UsageMeter } from "./usage.js";
import { ConversationView, countdown } from "./view.js";

const STATUS_TEXT = { starting: "starting", idle: "idle", running: "running", requires_action: "requires action",
                      error: "error", closed: "closed", none: "no session" };
const RUNNING = ["running", "requires_action"];
const READY_WAIT_MS = 15000;

function cameraIcon() {
  return icon([["path", { d: "M4 8h3l2-3h6l2 3h3v11H4z" }], ["path", { d: "M12 17a4 4 0 1 0 0-8 4 4 0 0 0 0 8z" }]],
    { fill: "none", stroke: "currentColor", "stroke-width": "1.8" });
}

export class Panel {
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.session = null; // the attached session's record
    this.sessions = [];
    this.saved = []; // the CLIs' own saved conversations of this folder, resumable
    this.harnesses = null;
    this.connection = null;
    this.transcript = new Transcript();
    this.firstSnapshot = true;
    this.renderQueued = false;
    this.pickedMode = SESSION_DEFAULT; // what a new conversation of this checkout starts in
    this.pendingPlan = false; // Plan picked with no conversation open: asked for as the next one starts
    this.modeAsked = null; // a pick sent to the session that its info does not show yet
    this.modeBeforePlan = null; // what a plan approved goes on in by default
    this.pickedAccount = {}; // harness id -> the account (a name, null: the default) a new conversation gets
    this.accountAsked = undefined; // an account sent to the session that its info does not show yet
    this._build();
  }

  // ---- building ------------------------------------------------------------------------------

  _build() {
    const $ = (tag, attributes, ...children) => el(tag, attributes, ...children);
    this.reloads = new ReloadControls(this);
    this.continuity = new Continuity(this);
    const reloads = this.reloads.ui;
    this.logView = new LogView();
    const hljsTheme = (name) => el("link", { rel: "stylesheet", href: devhostURL(`/__devhost__/static/chat/vendor/${name}.min.css`) });
    const themeLinks = { light: hljsTheme("highlight-github"), dark: hljsTheme("highlight-github-dark") };
    this.theme = new Theme(this.host, themeLinks, (shown) => tellVisuals(this.root, shown));
    this.conversations = new ConversationControls(this);
    this.usage = new UsageMeter(this);
    // api.locate: the page/locate route (where it is missing, a pick or an error maps to nothing).
    this.page = new PageAttachments({ host: this.host, layer: this.root, onProblem: (text) => this.hint(text),
                                      locate: (positions) => api.locate(positions) });
    this.notifier = new Notifier();
    this.ui = {
      launcher: $("button", { type: "button", class: "launcher", title: "devhost chat", "aria-label": "Open the devhost chat",
                              onclick: () => this.setOpen(true) }, $("span", { class: "glyph" }, "✦"), $("span", { class: "dot" })),
      badge: $("span", { class: "badge", dataset: { status: "none" } }, "no session"),
      link: $("span", { class: "link" }),
      target: $("select", { class: "target", title: "Whose checkout the agent works in", "aria-label": "Chat target",
                            "aria-describedby": "devhost-target-line", onchange: (e) => this.setTarget(e.target.value) },
        $("option", { value: "project" }, "project"), $("option", { value: "devhost" }, "devhost")),
      side: $("button", { type: "button", class: "icon side", title: "Dock on the other side", "aria-label": "Dock on the other side",
                          onclick: () => this.flipSide() }, "⇆"),
      close: $("button", { type: "button", class: "icon", title: "Close the chat", "aria-label": "Close the chat",
                           onclick: () => this.setOpen(false) }, "×"),
      harness: $("select", { class: "harness", "aria-label": "Harness", onchange: (e) => this.pickHarness(e.target.value) }),
      model: $("select", { class: "model", "aria-label": "Model", title: "The model (applies from the next turn)",
                           onchange: (e) => this.pickModel(e.target.value) }),
      // Shown only when the harness's provider has more than one login (accounts.js).
      account: $("select", { class: "account", "aria-label": "Account", hidden: true,
                             title: "Which login of the CLI the agent runs under", onchange: (e) => this.pickAccount(e.target.value) }),
      accountNotice: $("div", { class: "account-notice", role: "status", hidden: true }),
      // What the agent may do without asking; the line under it says what the picked mode lets it do.
      mode: $("select", { class: "mode", "aria-label": "Mode", "aria-describedby": "devhost-mode-line",
                          title: "What the agent may do without asking you", onchange: (e) => this.pickMode(e.target.value) },
        MODES.map((m) => $("option", { value: m.id, title: m.line }, m.label))),
      modeLine: $("div", { class: "mode-line", id: "devhost-mode-line" }),
      targetLine: $("div", { class: "target-line", id: "devhost-target-line" }),
      modeNotice: $("div", { class: "mode-notice", role: "status", hidden: true }),
      sessionPick: $("select", { class: "session", "aria-label": "Session", title: "Open a conversation, or start a new one",
                                 onchange: (e) => this.pickSession(e.target.value) }),
      newButton: $("button", { type: "button", class: "plain new", title: "Start a new conversation", onclick: () => this.detach() }, "New"),
      endButton: $("button", { type: "button", class: "plain end", title: "Close this session (ends its CLI)", onclick: () => this.endSession() }, "Close"),
      resumeButton: $("button", { type: "button", class: "plain resume", title: "Resume this closed conversation", onclick: () => this.resume() }, "Resume"),
      note: $("div", { class: "note", hidden: true, role: "status" }),
      items: $("div", { class: "items" }),
      tray: $("div", { class: "tray", hidden: true }),
      textarea: $("textarea", { rows: 3, placeholder: "Message the agent (Enter sends, Shift+Enter for a new line)", "aria-label": "Message",
                            title: "Your message to the agent" }),
      shot: $("button", { type: "button", class: "icon shot", title: "Send an area of a screenshot of this page", "aria-label": "Screenshot",
                          onclick: () => this.screenshot() }, cameraIcon()),
      hint: $("span", { class: "hint", role: "status" }),
      stop: $("button", { type: "button", class: "stop", hidden: true, title: "Stop the running turn",
                          onclick: () => this.interrupt() }, "Interrupt"),
      marks: $("button", { type: "button", class: "plain marks", hidden: true, title: "Bookmarks of this conversation",
                           "aria-expanded": "false", onclick: () => this._toggleMarks() }, "★"),
      markList: $("div", { class: "mark-list", hidden: true, role: "menu", "aria-label": "Bookmarks" }),
      send: $("button", { type: "button", class: "send", onclick: () => this.send() }, "Send"),
      layer: $("div", { class: "layer", hidden: true }),
    };
    const u = this.ui;
    this.manifestNotice = new ManifestNotice(u.launcher);
    u.empty = $("div", { class: "empty" });
    u.log = $("div", { class: "log", tabindex: "0", "aria-label": "Conversation", "aria-live": "polite" }, u.empty, u.items);
    u.header = $("header", { class: "bar", title: "Drag to move" },
      // Two groups: where the row is too narrow for both, the controls wrap under the status.
      $("span", { class: "status" }, $("strong", { class: "title" }, "devhost"), u.badge, u.link),
      $("span", { class: "controls" }, reloads.toggle, u.target, this.theme.makeButton($), u.side, u.close));
    u.panel = $("section", { class: "panel", role: "dialog", "aria-label": "devhost chat", hidden: true },
      u.header, u.targetLine, this.manifestNotice.ui, reloads.notice, reloads.strip, reloads.outcome,
      $("div", { class: "row" }, u.harness, u.model, u.account, u.mode),
      u.modeLine, u.modeNotice, u.accountNotice,
      $("div", { class: "row" }, u.sessionPick, u.newButton, u.endButton, u.resumeButton, u.marks, this.notifier.ui.toggle),
      this.conversations.ui.row, ...this.conversations.ui.below,
      u.markList, this.logView.ui.map, this.logView.ui.list,
      u.note, this.continuity.ui, u.log,
      $("footer", { class: "composer" }, this.page.ui.tray, u.tray, u.textarea,
        $("div", { class: "actions" }, u.shot, this.page.ui.pick, this.page.ui.attach, u.hint, $("span", { class: "spacer" }), this.usage.ui.meter,
          this.usage.ui.compact, u.stop, u.send)));
    this.sizer = new PanelSize(u.panel); // its handle in a corner, Maximize beside Close
    u.panel.append(this.sizer.ui.handle);
    u.close.before(this.sizer.ui.maximize); // in the header's controls
    this.root.append(themeLinks.light, themeLinks.dark,
      el("link", { rel: "stylesheet", href: devhostURL("/__devhost__/static/chat/panel.css") }),
      el("link", { rel: "stylesheet", href: devhostURL("/__devhost__/static/chat/input.css") }),
      el("link", { rel: "stylesheet", href: devhostURL("/__devhost__/static/chat/compose.css") }),
      el("link", { rel: "stylesheet", href: devhostURL("/__devhost__/static/chat/page.css") }),
      el("link", { rel: "stylesheet", href: devhostURL("/__devhost__/static/chat/changes.css") }), u.launcher, u.panel, u.layer);
    this.review = new ChangesReview(this); // a turn's changed files, over the conversation

    this.visualHeights = new Map(); // visual id -> the height its page last reported
    this.view = new ConversationView(u.log, u.items, {
      approve: (item, decision) => this.answer(item, { type: "approve", requestId: item.requestId, decision,
        ...(decision === "deny" ? { message: "The person denied this in the devhost panel." } : {}) }, decision),
      // A plan: approved to go on in a mode, or sent back with what to change (the same approve).
      approvePlan: (item, runtimeMode) => this.answer(item, { type: "approve", requestId: item.requestId,
        decision: "allow", runtimeMode }, "allow"),
      sendBack: (item, message) => this.answer(item, { type: "approve", requestId: item.requestId, decision: "deny",
        message: message || "The person sent the plan back in the devhost panel without saying what to change." }, "deny"),
      modeAfterPlan: () => this.modeBeforePlan || AFTER_PLAN_DEFAULT,
      answer: (item, answers) => this.answer(item, { type: "answer", requestId: item.requestId, answers }, "answered"),
      stopTask: (item) => this.command({ type: "stopTask", taskId: item.taskId }),
      stopSubagent: (item) => this.command({ type: "stopSubagent", subagentId: item.taskId || item.id }),
      configure: (fields) => this.command({ type: "configure", ...fields }),
      visualHeight: (id) => this.visualHeights.get(id),
      theme: () => this.theme.shown,
      bookmark: (itemId, on) => this.command(on ? { type: "bookmark", itemId } : { type: "unbookmark", itemId }),
      // A message the CLI dropped unsent (not_sent.js): sent again as it is, or back in the composer.
      sendAgain: (item) => this._sendAgain(item).then((sent) => {
        if (sent) this._render((this.transcript.markResent(item.itemId), this.transcript.takeChanged()));
      }),
      editAgain: (item) => this._editAgain(item),
      retry: (item) => this._sendAgain(item), // a failed turn's last message, sent again
      reviewChanges: (item, opener) => this.review.open(item, opener),
    });
    // A visual's frame says how tall its page is, and asks for links to be opened (its sandbox
    // cannot open a window itself). Only frames of this panel's own visuals are listened to.
    window.addEventListener("message", (event) => this._fromVisual(event));
    // A limited turn counts down to its reset.
    setInterval(() => {
      for (const node of this.root.querySelectorAll(".countdown")) node.textContent = countdown(Number(node.dataset.until));
    }, 1000);
    this.view.onScrolled = () => this._saveScrollSoon();
    this.view.onTop = () => this._askOlder();
    this.jump = new JumpToLatest(this.view);
    this.view.onNewContentBelow = () => this.jump.show();
    u.log.append(this.jump.button);
    this.composer = new Composer({
      textarea: u.textarea, tray: u.tray,
      onDraft: (text) => this.store?.update(() => { this.store.conversation.draft = text; }),
      onPastes: (texts) => this.store?.update(() => { this.store.conversation.pastes = texts; }),
      onProblem: (text) => this.hint(text),
    });
    this.references = new References();
    this.completion = new Completion({ textarea: u.textarea, empty: EMPTY, onProblem: (text) => this.hint(text),
      sources: { slash: () => slashEntries(this), file: () => fileEntries(this) },
      onPick: (kind, entry) => this.references.pick(kind, entry) });
    this.shortcuts = new Shortcuts(this); // README "Keyboard shortcuts"; the help is the header's "?"
    u.textarea.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
    });
    // Escape closes the panel (a dialog), focus going back to the launcher.
    u.panel.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !event.isComposing && !event.defaultPrevented) this.setOpen(false);
    });
    u.panel.addEventListener("dragover", (event) => event.preventDefault());
    u.panel.addEventListener("drop", (event) => {
      event.preventDefault();
      this.composer.addFiles([...(event.dataTransfer?.files || [])]);
    });
    makeDraggable(u.panel, u.header, (position) => this.savePosition(position));
    // A smaller window must not strand a dragged panel off screen (the saved spot stays as it is).
    window.addEventListener("resize", () => {
      if (u.panel.dataset.placed === "yes") {
        this._applyPlacement({ left: parseFloat(u.panel.style.left), top: parseFloat(u.panel.style.top) });
      }
    });
  }

  // ---- start -----------------------------------------------------------------------------------

  /** ``open``: shown whatever the stored state says (the person opened it from panel.js's launcher). */
  async boot({ open = false } = {}) {
    let config;
    try {
      config = await api.config();
    } catch (error) {
      this.showNote(`The chat cannot start: ${error.message}`);
      return;
    }
    this.config = config;
    this.manifestNotice.start(config.manifestProblems, () => this.store.state.open);
    this.service = (config.services || []).find((s) => s.host === location.hostname);
    if (!this.service) {
      this.showNote(`${location.hostname} is not a routed service of ${config.name}.`);
      return;
    }
    this.store = new Store(storageKey(this.service.projectRootPath, location.origin), window.localStorage,
                           liveKey(location.origin));
    const devhost = this.ui.target.querySelector("option[value=devhost]");
    devhost.disabled = !config.devhostSourceRootPath;
    devhost.title = config.devhostSourceRootPath ? config.devhostSourceRootPath
      : "Only a development build of devhostd (running from its git checkout) has its own checkout to work in";
    if (devhost.disabled && this.store.state.target === "devhost") this.store.update((s) => { s.target = "project"; });
    // Positions are kept per manifest: without one there is none to ask for.
    this._applyPlacement(config.manifestPath ? await api.position() : null);
    this.setOpen(open || this.store.state.open);
    // Holding reloads needs a dev server behind the page (its hot reload socket).
    this.reloads.ui.toggle.hidden = !this.service.proxied;
    await this.reloads.boot();
    await this._enterTarget();
    this.booted = true; // for tests and tools: the panel has found its state and sessions
  }

  async _enterTarget() {
    const conversation = this.store.conversation;
    this.ui.target.value = this.store.state.target;
    describeTarget(this.ui.target, this.ui.targetLine, this.store.state.target,
      { project: this.service.projectRootPath, devhost: this.config.devhostSourceRootPath });
    this._disconnect();
    this.session = null;
    this.continuity.clear();
    this.transcript = new Transcript();
    this.firstSnapshot = true;
    this.logView.start(this.store.state.target);
    this.logView.show(null);
    this._render(new Set(["*"]));
    this.composer.clear();
    this.composer.text = conversation.draft;
    this.composer.restorePastes(conversation.pastes);
    this._loadHarnesses();
    this._loadMode();
    let sessions = [];
    try {
      sessions = await api.sessions(this.store.state.target);
    } catch (error) {
      this.showNote(error.message);
    }
    this.sessions = sessions;
    this._loadSaved();
    // The conversation it showed, also closed (a restart closes every one) or resumed elsewhere
    // under a new session id: never a silent New conversation (continuity.js).
    const saved = sessions.find((s) => s.id === conversation.sessionId)
      || (conversation.sessionId && sessions.find((s) => s.chatId === conversation.chatId && s.status !== "closed"));
    if (saved) {
      this.attach(saved);
    } else {
      // The saved session is gone: start fresh, giving back what was never acknowledged.
      this.store.update(() => { conversation.sessionId = null; });
      this._returnUnsent(() => false);
    }
    this._renderControls();
  }

  async _loadHarnesses() {
    const target = this.store.state.target;
    this.ui.harness.replaceChildren(el("option", {}, "Finding the CLIs…"));
    this.ui.harness.disabled = true;
    this.ui.harness.title = "Finding the CLIs installed here…";
    try {
      const harnesses = await api.harnesses(target);
      if (target !== this.store.state.target) return;
      this.harnesses = harnesses;
      const before = harnessLabel(this.transcript.harness);
      knowHarnesses(harnesses);
      // Items drawn before the list (an agent the manifest names) name their agent by its label now.
      if (harnessLabel(this.transcript.harness) !== before) this._render(new Set(["*"]));
    } catch (error) {
      this.harnesses = [];
      this.showNote(`Could not list the harnesses: ${error.message}`);
    }
    const conversation = this.store.conversation;
    const usable = this.harnesses.filter((h) => h.available);
    if (!this.harnesses.some((h) => h.id === conversation.harness && h.available) && usable.length) {
      this.store.update(() => { conversation.harness = usable[0].id; });
    }
    const offered = this._harness()?.models || [];
    if (conversation.model && !offered.some((m) => m.id === conversation.model)) {
      this.store.update(() => { conversation.model = ""; }); // no longer offered: the CLI's default
    }
    const unavailable = this.harnesses.filter((h) => !h.available);
    if (unavailable.length) {
      this.showNote(unavailable.map((h) => `${h.label} is unavailable: ${h.error || "not found"}.`).join("\n"));
    }
    this._renderControls();
  }

  async _loadMode() {
    const target = this.store.state.target;
    this.pendingPlan = false;
    try {
      const mode = await api.mode(target);
      if (target === this.store.state.target) this.pickedMode = mode;
    } catch {
      this.pickedMode = SESSION_DEFAULT; // devhostd starts the conversation so anyway
    }
    this._renderControls();
  }

  _harness(id = this.session?.harness || this.store.conversation.harness) {
    return (this.harnesses || []).find((h) => h.id === id);
  }

  // ---- sessions -------------------------------------------------------------------------------

  attach(record) {
    this._disconnect();
    this.review?.close(); // a review is of one conversation's turn
    this.session = record;
    this.modeAsked = null;
    this.accountAsked = undefined;
    this.logView.show(record.chatId);
    this.transcript = new Transcript(record.harness);
    this.firstSnapshot = true;
    const conversation = this.store.conversation;
    this.store.update(() => {
      if (conversation.chatId !== record.chatId) Object.assign(conversation, { openIn: null, closedBy: null });
      conversation.sessionId = record.id;
      conversation.chatId = record.chatId || null;
      conversation.harness = record.harness;
    });
    this.continuity.seen(record);
    this._render(new Set(["*"]));
    this.ready = new Promise((resolve) => { this._readyNow = resolve; });
    const target = this.store.state.target;
    const transcript = this.transcript;
    this.connection = new ChatConnection((since) => api.threadURL(record.id, target, since), {
      onFrame: (frame) => this._onFrame(frame),
      onState: (state) => this._onConnection(state),
      seq: () => (transcript.seq || null),
    });
    this._renderControls();
  }

  detach() {
    this._disconnect();
    this.review.close();
    this.session = null;
    this.logView.show(null);
    this.continuity.clear();
    this.transcript = new Transcript();
    this.store.update(() => {
      Object.assign(this.store.conversation, { sessionId: null, chatId: null, openIn: null, closedBy: null });
    });
    this._render(new Set(["*"]));
    this._renderControls();
    this.ui.textarea.focus();
  }

  _disconnect() {
    this.connection?.stop();
    this.connection = null;
    this.ui.link.textContent = "";
  }

  async _loadSaved() {
    const target = this.store.state.target;
    try {
      const saved = await api.saved(target);
      if (target === this.store.state.target) this.saved = saved;
    } catch {
      this.saved = []; // the list of sessions says what is wrong, if anything is
    }
    this._renderControls();
  }

  async pickSession(id) {
    if (!id) return this.detach();
    if (id.startsWith("saved:")) {
      const [, harness, nativeId] = id.split(":");
      const saved = this.saved.find((c) => c.nativeSessionId === nativeId);
      return this.resumeSaved(harness, nativeId, saved?.account);
    }
    const record = this.sessions.find((s) => s.id === id);
    if (record) this.attach(record);
  }

  async endSession() {
    if (!this.session) return;
    this.continuity.closedHere();
    try {
      this.session = await api.closeSession(this.session.id, this.store.state.target);
    } catch (error) {
      this.hint(error.message);
    }
    await this._refreshSessions();
  }

  async resume() {
    const closed = this.session;
    if (!closed?.nativeSessionId) return;
    try {
      const record = await this.continuity.resume(closed);
      if (record) this.attach(record);
    } catch (error) {
      this.hint(error.message);
    }
  }

  /** A conversation begun in a terminal: resumed as a session of its own, its transcript kept. */
  async resumeSaved(harness, nativeId, account) {
    try {
      // Read from the account's home it is kept in (undefined: an older daemon's list says none).
      const record = await api.createSession({ harness, target: this.store.state.target, resumeId: nativeId,
                                               ...(account !== undefined ? { account } : {}) });
      await this._refreshSessions();
      this.attach(record);
    } catch (error) {
      this.hint(error.message);
      this._renderControls();
    }
  }

  async _refreshSessions() {
    try {
      this.sessions = await api.sessions(this.store.state.target);
    } catch (error) {
      this.hint(error.message);
    }
    await this._loadSaved();
  }

  // ---- frames -----------------------------------------------------------------------------------

  _onFrame(frame) {
    const t = this.transcript;
    switch (frame.type) {
      case "snapshot":
      case "resumed": {
        this._setSession(frame.session);
        t.chatId = frame.session?.chatId;
        t.newSocket(); // answers the last socket carried are open again unless the items say otherwise
        if (frame.type === "snapshot") {
          t.load(frame);
          this.askedOlder = null; // a page asked on the socket before is not this snapshot's
        }
        this.notifier.track(t.items.values());
        this._settleUnsent();
        this._render(t.takeChanged(), this.firstSnapshot);
        this.firstSnapshot = false;
        this._readyNow?.();
        return;
      }
      case "event":
        if (t.apply(frame) && frame.event?.type === "item") this.notifier.seen(frame.event.item);
        // The info after a pick says what holds now (a change that waits for the turn says so in a note).
        if (frame.event?.type === "info" || frame.event?.type === "reset") this.modeAsked = null;
        if (frame.event?.type === "item" && frame.event.item?.kind === "user") this._forgetUnsent(frame.event.item.id);
        break;
      case "state":
        this._setSession(frame.session);
        break;
      case "history":
        this._olderArrived(frame);
        return;
      case "bookmarks":
        t.setBookmarks(frame.bookmarks);
        break;
      case "visuals":
        t.setVisuals(frame.visuals, frame.origin);
        break;
      case "command_result":
        t.acknowledge(frame.commandId, frame.delivery, frame.error);
        this.store.update(() => {
          this.store.conversation.unsent = this.store.conversation.unsent.filter((u) => u.commandId !== frame.commandId);
        });
        break;
      case "error":
        if (frame.requestId !== undefined) {
          if (t.refused(frame.requestId)) this.hint(`The answer was not taken: ${frame.message}`);
        } else {
          t.note("error", frame.message);
        }
        break;
      default:
        return;
    }
    this._render(t.takeChanged());
  }

  _fromVisual(event) {
    const frame = [...this.root.querySelectorAll("iframe.visual-frame")].find((f) => f.contentWindow === event.source);
    const message = event.data;
    if (!frame || !message || message.jsonrpc !== "2.0" || typeof message.method !== "string") return;
    if (message.method === "ui/notifications/size-changed") {
      const height = Number(message.params?.height);
      if (!Number.isFinite(height) || height < 0) return;
      const fitted = Math.max(80, Math.min(Math.ceil(height), Number(frame.dataset.maxHeight) || 2000));
      frame.style.height = `${fitted}px`;
      this.visualHeights.set(frame.dataset.visual, fitted); // kept when the item is drawn again
    } else if (message.method === "ui/open-link") {
      let url = null;
      try { url = new URL(message.params?.url); } catch { url = null; }
      if (url && (url.protocol === "http:" || url.protocol === "https:")) window.open(url.href, "_blank", "noopener");
      if (typeof message.id === "string" || Number.isFinite(message.id)) {
        event.source.postMessage({ jsonrpc: "2.0", id: message.id, result: {} }, "*");
      }
    }
  }

  _toggleMarks(open = this.ui.markList.hidden) {
    this.ui.markList.hidden = !open;
    this.ui.marks.setAttribute("aria-expanded", String(open));
    if (open) this._renderMarks();
  }

  /** The bookmarks menu: each entry named (or its excerpt); choosing one goes to its item. */
  _renderMarks() {
    const marks = this.transcript.bookmarkList();
    this.ui.marks.hidden = marks.length === 0;
    this.ui.marks.textContent = `★ ${marks.length}`;
    if (!marks.length) this._toggleMarks(false);
    if (this.ui.markList.hidden) return;
    this.ui.markList.replaceChildren(...marks.map((mark) => {
      const excerpt = markExcerpt(mark, this.transcript.items.get(mark.itemId)); // plain words, no Markdown
      return el("button", { type: "button", class: "mark-entry", role: "menuitem", title: excerpt,
                            onclick: () => { this._toggleMarks(false); this.view.reveal(mark.itemId); } },
        mark.name || excerpt || "(empty)");
    }));
  }

  _setSession(record) {
    if (!record || record.id !== this.session?.id) return;
    this.session = record;
    this.continuity.seen(record);
    const listed = this.sessions.findIndex((s) => s.id === record.id);
    if (listed === -1) this.sessions.unshift(record); // newest first
    else this.sessions[listed] = record;
    this._renderControls();
  }

  _onConnection({ state, retryInMs, everOpened }) {
    const link = this.ui.link;
    if (state === "open") link.textContent = "";
    else if (state === "connecting") link.textContent = "connecting…";
    else if (state === "retrying") link.textContent = `reconnecting in ${Math.round(retryInMs / 1000)} s`;
    else if (state === "closed") link.textContent = "";
    link.title = link.textContent; // the header may cut it short
    link.dataset.state = state;
    if (state === "closed") this._refreshSessions();
    if (state === "retrying" && !everOpened) this._checkSessionStillThere();
  }

  async _checkSessionStillThere() {
    const id = this.session?.id;
    try {
      const sessions = await api.sessions(this.store.state.target);
      this.sessions = sessions;
      const gone = id && this.session?.id === id && !sessions.some((s) => s.id === id);
      const resumed = gone && sessions.find((s) => s.chatId === this.session.chatId && s.status !== "closed");
      if (resumed) {
        this.attach(resumed); // resumed elsewhere under a new id: still this conversation
      } else if (gone) {
        this.detach();
        this.showNote("That session is gone (the daemon restarted, or it was replaced by its resume).");
      }
    } catch {
      // the daemon itself is away: keep retrying
    }
    this._renderControls();
  }

  /** A message of this page's the chat now has: no longer kept for a reload. */
  _forgetUnsent(itemId) {
    const unsent = this.store.conversation.unsent;
    if (!unsent.some((u) => `user-${u.commandId}` === itemId)) return;
    this.store.update(() => {
      this.store.conversation.unsent = unsent.filter((u) => `user-${u.commandId}` !== itemId);
    });
  }

  /**
   * Sends that were never acknowledged: those the history shows arrived are done; those sent
   * from this page keep their bubble (marked unconfirmed: the socket that would have told is
   * gone) and stay stored until the history shows them or their command_result comes, so a
   * reload still finds them; those from before a reload go back into the composer, for the
   * person to resend (the stored draft holds them from then on).
   */
  _settleUnsent() {
    this._returnUnsent((u) => this.transcript.seen(u.commandId));
  }

  _returnUnsent(arrived) {
    const conversation = this.store.conversation;
    if (!conversation.unsent.length) return;
    const back = [];
    const kept = [];
    for (const u of conversation.unsent) {
      if (arrived(u)) continue;
      if (this.transcript.local.has(u.commandId)) {
        this.transcript.acknowledge(u.commandId, "unconfirmed", null);
        kept.push(u);
      } else {
        back.push(u.text);
      }
    }
    this.store.update(() => {
      conversation.unsent = kept;
      if (back.length) {
        this.composer.text = [...back, this.composer.text].filter((t) => t.trim()).join("\n\n");
        conversation.draft = this.composer.text;
      }
    });
  }

  // ---- commands ---------------------------------------------------------------------------------

  async send() {
    if (this.sending || this.ui.send.disabled) return;
    await this.page.ready(); // elements picked are still being described
    const text = this.composer.text;
    const attachments = [...this.composer.attachments];
    const pastes = [...this.composer.pastes];
    if (this.composer.empty && this.page.empty) return;
    const { text: said, shown, ...references } = this.references.take(this.composer.composeText()); // files, skill
    const page = this.page.take(); // [Page context] and [Page errors] after the person's words (never stored)
    const sent = await this._deliver([said, page.text].filter((t) => t.trim()).join("\n\n"),
                                     this.references.take(this.composer.messageText()).shown, attachments, references);
    if (!sent) return;
    this.page.removeSent(page.parts);
    this.references.sent(references);
    // Only what this send carried: text typed, pasted or images attached while it waited stay.
    this.composer.removeSent(text, attachments, pastes);
    this.store.update(() => { this.store.conversation.draft = this.composer.text; });
  }

  /**
   * Sends a message the panel writes itself (Disable Reloads), or one sent again (with its
   * images' data: URLs), through the same path as the person's: {sessionId, commandId} once
   * devhostd has it, else null (the hint says why).
   */
  async sendPrompt(text, images = []) {
    if (this.ui.send.disabled) {
      this.hint(this.ui.send.title);
      return null;
    }
    return this._deliver(text, text, images.map((dataURL) => ({ dataURL })));
  }

  /** The person's message sent again as it was, its images with it (Send again, Retry). One whose
      images this page no longer holds is not sent without them: it goes back into the composer
      (_editAgain), and the hint asks for them. Returns what _deliver does, or null. */
  async _sendAgain(item) {
    const { images, missing } = this.transcript.resendable(item.itemId);
    if (missing) {
      this._editAgain(item);
      return null;
    }
    return this.sendPrompt(item.text, images);
  }

  /** The person's message back in the composer to edit: its text before the draft's, its images
      in the tray (those this page holds; the hint asks for any it no longer does). */
  _editAgain(item) {
    const { images, missing } = this.transcript.resendable(item.itemId);
    this.composer.text = [item.text, this.composer.text].filter((t) => t.trim()).join("\n\n");
    for (const dataURL of images) this.composer.add({ dataURL });
    this.store.update(() => { this.store.conversation.draft = this.composer.text; });
    this.ui.textarea.focus();
    if (missing) {
      const them = missing === 1 ? "its image" : `its ${missing} images`;
      this.hint(`The text is back in the box. This message was sent with ${them}, which this page no longer holds ` +
                `(it was reloaded since): attach ${missing === 1 ? "it" : "them"} again, then send.`);
    }
  }

  /** One send: a session started if there is none, the frame checked, sent, and kept until
      acknowledged. Returns {sessionId, commandId}, or null when it did not go out. */
  async _deliver(composed, shown, attachments, { mentions = [], skills = [] } = {}) {
    if (this.sending) return null;
    this.sending = true;
    try {
      const commandId = crypto.randomUUID(); // lowercase: it becomes the message's native id
      const frame = { type: "send", commandId, text: composed, images: attachments.map((a) => ({ dataURL: a.dataURL })),
                      ...(mentions.length ? { mentions } : {}), ...(skills.length ? { skills } : {}) };
      const model = this.store.conversation.model;
      // Checked before anything starts: a send devhostd would refuse never opens a session.
      const size = frameBytes({ ...frame, model });
      if (size > MAX_FRAME_BYTES) {
        this.hint(`This message is ${(size / 1048576).toFixed(1)} MiB; a send must fit in 8 MiB. Remove an image or use a smaller area.`);
        return null;
      }
      let planFirst = false;
      if (!this.session || this.session.status === "closed") {
        // A closed conversation goes on where it was (no silent fork); New is the person's choice.
        let record = this.session ? await this.continuity.resume(this.session) : null;
        if (!record) {
          const conversation = this.store.conversation;
          // devhostd starts it in the mode last picked for the checkout (pickedMode, as shown).
          record = await api.createSession({ harness: conversation.harness, target: this.store.state.target,
                                             model: conversation.model, ...this._newAccount(conversation.harness) });
          this.sessions.unshift(record); // newest first
          planFirst = this.pendingPlan;
          this.pendingPlan = false;
        }
        this.attach(record);
      }
      // A socket that never opens (the session vanished) must not hold the Send button for good.
      await Promise.race([this.ready, new Promise((resolve) => setTimeout(resolve, READY_WAIT_MS))]);
      // Plan picked before the conversation existed: asked for before its first message, on the same socket.
      if (planFirst && this.connection?.send(configureFrame("plan"))) this.modeAsked = "plan";
      if (model !== (this.session.model || "")) frame.model = model;
      // A turn runs and this harness cannot take the message into it: it waits for the turn's end.
      const waits = RUNNING.includes(this.session.status) && !steers(this.session.harness);
      if (!this.connection?.send(frame)) {
        this.hint("Not connected to the session right now; your message is kept. Send again once it reconnects.");
        return null;
      }
      this.transcript.addLocal(commandId, shown, attachments.map((a) => a.dataURL), waits);
      this.store.update(() => { this.store.conversation.unsent.push({ commandId, text: shown }); });
      this.hint("");
      this.view.scrollToBottom();
      this._render(this.transcript.takeChanged());
      return { sessionId: this.session.id, commandId };
    } catch (error) {
      this.hint(error.message);
      return null;
    } finally {
      this.sending = false;
    }
  }

  command(frame) {
    if (!this.connection?.send(frame)) this.hint("Not connected; try again once it reconnects.");
  }

  interrupt() {
    if (!this.connection?.send({ type: "interrupt" })) this.hint("Not connected; the interrupt was not sent.");
  }

  /** An approval or a question answered; shown as sent until the item says it was taken. */
  answer(item, frame, decision) {
    if (this.connection?.send(frame)) {
      this.transcript.answered(item.requestId, decision); // kept in memory only, never stored
      this._render(this.transcript.takeChanged());
    } else {
      this.hint("Not connected; answer again once it reconnects.");
    }
  }

  async screenshot() {
    let canvas;
    try {
      canvas = await capturePage((hidden) => { this.host.style.visibility = hidden ? "hidden" : ""; });
    } catch (error) {
      this.hint(`No screenshot: ${error.message || error}`);
      return;
    }
    const chosen = await chooseArea(this.ui.layer, canvas);
    if (chosen) await this.composer.addScreenshot(chosen);
    this.ui.textarea.focus();
  }

  // ---- pickers and placement -----------------------------------------------------------------

  pickHarness(id) {
    this.store.update(() => {
      this.store.conversation.harness = id;
      this.store.conversation.model = "";
    });
    this._renderControls();
  }

  pickModel(id) {
    this.store.update(() => { this.store.conversation.model = id; });
  }

  /** The account picker: the open conversation's account (a change waits for its work: the
      settings swap), or, with none open, the one the next conversation of this harness gets. */
  pickAccount(value) {
    const name = accountName(value);
    if (this.session && this.session.status !== "closed") {
      if (this.connection?.send({ type: "configure", account: name })) {
        this.accountAsked = name;
        this.pickedAccount[this.session.harness] = name; // devhostd keeps it as the last picked, too
      } else this.hint("Not connected; the account was not changed. Pick it again once it reconnects.");
    } else {
      this.pickedAccount[this.store.conversation.harness] = name;
    }
    this._renderControls();
  }

  /** What a new conversation's request says of its account: nothing where there is no choice
      (devhostd then uses the one last picked), else the pick shown. */
  _newAccount(harnessId) {
    const harness = this._harness(harnessId);
    if (!accountChoices(harness).length) return {};
    return { account: harnessId in this.pickedAccount ? this.pickedAccount[harnessId] : harness.account ?? null };
  }

  _renderAccount() {
    const u = this.ui;
    const live = this.session && this.session.status !== "closed";
    const harnessId = this.session?.harness || this.store.conversation.harness;
    const choices = accountChoices(this._harness(harnessId));
    u.account.hidden = !choices.length;
    const info = live ? this.transcript.info || this.session : null;
    const busy = live && RUNNING.includes(this.session.status);
    // A pick is shown as waiting until its info says so and the work it waited for is over.
    if (live && this.accountAsked !== undefined && !busy && (info.account ?? null) === this.accountAsked) {
      this.accountAsked = undefined;
    }
    let shown;
    if (live) shown = this.accountAsked !== undefined ? this.accountAsked : info.account ?? null;
    else shown = this._newAccount(harnessId).account ?? null;
    u.account.replaceChildren(...choices.map((a) => el("option", {
      value: accountValue(a.name), title: a.signedIn === false ? "No login found in this account's config home" : "",
    }, accountLabel(a))));
    u.account.value = accountValue(shown);
    const notice = live && this.accountAsked !== undefined ? swapNotice(this.accountAsked, busy) : "";
    u.accountNotice.textContent = notice;
    u.accountNotice.hidden = !notice;
  }

  /** The mode switch: the open conversation's mode (devhostd remembers it for the checkout), or,
      with none open, the mode the next one starts in. */
  async pickMode(id) {
    const before = this._modeShown();
    if (id === before) return;
    if (id === "plan" && before !== "plan") this.modeBeforePlan = before;
    if (this.session && this.session.status !== "closed") {
      if (this.connection?.send(configureFrame(id))) {
        this.modeAsked = id;
        if (id !== "plan") this.pickedMode = id; // devhostd remembers it for the checkout's next conversation
      } else this.hint("Not connected; the mode was not changed. Pick it again once it reconnects.");
    } else if (id === "plan") {
      this.pendingPlan = true;
    } else {
      const target = this.store.state.target;
      this.pendingPlan = false;
      try {
        await api.saveMode(target, id);
        if (target === this.store.state.target) this.pickedMode = id;
      } catch (error) {
        this.hint(`The mode was not changed: ${error.message}`);
      }
    }
    this._renderControls();
  }

  /** The mode the switch shows: a pick on its way, else what the conversation's info says, else
      what a new conversation would start in. */
  _modeShown() {
    if (this.session && this.session.status !== "closed") {
      const shown = shownMode(this.transcript.info || this.session);
      if (this.modeAsked && shown === this.modeAsked) this.modeAsked = null; // the info shows it now
      return this.modeAsked || shown;
    }
    return this.pendingPlan ? "plan" : this.pickedMode;
  }

  _renderMode() {
    const u = this.ui;
    const shown = this._modeShown();
    u.mode.value = shown;
    u.modeLine.textContent = modeOf(shown).line;
    const live = this.session && this.session.status !== "closed";
    const info = live ? this.transcript.info || this.session : null;
    const notice = live && !this.modeAsked ? effectiveNotice(this.session.harness, info.runtimeMode, info.effectiveRuntimeMode) : "";
    u.modeNotice.textContent = notice;
    u.modeNotice.hidden = !notice;
  }

  async setTarget(target) {
    if (!TARGETS.includes(target)) return;
    this.store.update((s) => { s.target = target; });
    await this._enterTarget();
  }

  setOpen(open) {
    if (!open) this.page.picker.stop(); // no picking on a page whose panel is closed
    this.store?.update((s) => { s.open = open; });
    const focusInPanel = this.ui.panel.contains(this.root.activeElement);
    this.ui.panel.hidden = !open;
    this.ui.launcher.hidden = open;
    if (open) {
      this.view.scrollToBottom();
      this.ui.textarea.focus({ preventScroll: true });
      if (this.manifestNotice.isOpen) this.manifestNotice.refresh(); // what changed while it was closed
    } else if (focusInPanel) {
      this.ui.launcher.focus(); // focus goes back where the person opened the panel from
    }
  }

  flipSide() {
    this.store.update((s) => { s.side = s.side === "right" ? "left" : "right"; });
    this.savePosition(null); // docked again, on the other side
  }

  async savePosition(position) {
    this._applyPlacement(position);
    if (!this.config?.manifestPath) return; // kept per manifest: without one it lasts this page only
    try {
      await api.savePosition(position);
    } catch (error) {
      if (error.status !== 404) this.hint(`The position was not saved: ${error.message}`);
    }
  }

  _applyPlacement(position) {
    const side = this.store?.state.side || "right";
    this.host.dataset.side = side;
    const panel = this.ui.panel;
    if (position) {
      const rect = panel.getBoundingClientRect();
      const { left, top } = clampPosition(position, rect.width || 420, rect.height || 600);
      Object.assign(panel.style, { left: `${left}px`, top: `${top}px`, right: "auto", bottom: "auto" });
      panel.dataset.placed = "yes";
    } else {
      Object.assign(panel.style, { left: "", top: "", right: "", bottom: "" });
      panel.dataset.placed = "no";
    }
  }

  // ---- older items (a long conversation opens with its tail) -------------------------------------

  /** Scrolled to the top of what the page has: the page before it, once at a time. */
  _askOlder() {
    const cursor = this.transcript.history?.cursor;
    if (!cursor || this.askedOlder === cursor) return;
    if (this.connection?.send({ type: "history", cursor, limit: HISTORY_LIMIT })) this.askedOlder = cursor;
  }

  _olderArrived(frame) {
    const t = this.transcript;
    if (frame.cursor !== this.askedOlder) return; // asked by a socket before a reset or a new snapshot
    this.askedOlder = null;
    if (frame.cursor !== t.history?.cursor) return;
    if (frame.error) {
      // The conversation was cleared or rewound meanwhile: its reset event brought what there is now.
      t.history = null;
      if (frame.error.code !== "history-expired") t.note("error", `Older messages could not be loaded: ${frame.error.message}`);
      this._render(t.takeChanged());
      return;
    }
    t.prepend(frame.items, frame.history);
    this.showOlder = true; // once rendered, the view pages them in above what is on screen
    this._render(t.takeChanged());
  }

  // ---- rendering --------------------------------------------------------------------------------

  _render(changed, restoreScroll = false) {
    this.pendingChanges = this.pendingChanges || new Set();
    for (const key of changed) this.pendingChanges.add(key);
    this.restoreScroll = this.restoreScroll || restoreScroll;
    if (this.renderQueued) return;
    this.renderQueued = true;
    // One render per frame, however many deltas arrived: streaming stays cheap.
    requestAnimationFrame(() => {
      this.renderQueued = false;
      const pending = this.pendingChanges;
      this.pendingChanges = new Set();
      const items = this.transcript.list();
      this.view.render(items, pending);
      if (this.showOlder) {
        this.showOlder = false;
        this.view.loadOlder(); // what was on screen stays put
      }
      this.reloads.check(this.transcript, this.session);
      this.ui.empty.hidden = items.length > 0;
      if (this.restoreScroll) {
        this.restoreScroll = false;
        const scroll = this.store?.conversation.scroll;
        if (scroll) this.view.restore(scroll.fromBottom);
        else this.view.scrollToBottom();
      }
      this._renderControls();
      if (pending.has("bookmarks") || pending.has("*")) this._renderMarks();
    });
  }

  _saveScrollSoon() {
    clearTimeout(this.scrollTimer);
    this.scrollTimer = setTimeout(() => {
      if (!this.store || !this.session) return;
      const fromBottom = this.view.following ? 0 : this.view.fromBottom(); // at the end: comes back at the end
      this.store.update(() => { this.store.conversation.scroll = fromBottom < 40 ? null : { fromBottom }; });
    }, 150);
  }

  _renderControls() {
    const u = this.ui;
    const status = this.session?.status || "none";
    u.badge.dataset.status = status;
    const background = this.transcript.background().length;
    // Idle with work still running in the background (a subagent, a shell): the badge says so.
    const warning = windowWarning(this.transcript.info?.planUsage);
    u.badge.textContent = (STATUS_TEXT[status] || status) + (background ? ` · ${background} in background` : "") + warning;
    u.badge.title = u.badge.textContent; // the header may cut it short
    u.badge.dataset.warning = warning ? "usage" : "";
    u.launcher.dataset.status = status;
    const conversation = this.store?.conversation;
    if (!conversation) return;
    this._renderMode();
    if (this.harnesses) this._renderAccount();

    if (this.harnesses) {
      const current = this.session?.harness || conversation.harness;
      u.harness.replaceChildren(...this.harnesses.map((h) => el("option", {
        value: h.id, disabled: !h.available, title: h.available ? "" : h.error || "unavailable",
      }, h.available ? h.label : `${h.label} (unavailable)`)));
      u.harness.value = current;
      u.harness.disabled = Boolean(this.session && this.session.status !== "closed");
      u.harness.title = u.harness.disabled ? "A conversation keeps its CLI: start a New one to pick another"
        : "Which CLI answers (from the next conversation)";
      // The CLI's own "default" entry is what no choice means: one Default, with its label.
      const listed = this._harness(current)?.models || [];
      const cliDefault = listed.find((m) => m.id === "default");
      const models = listed.filter((m) => m.id !== "default");
      u.model.replaceChildren(el("option", { value: "", title: cliDefault?.description || "" },
        cliDefault?.label || "Default model"),
        ...models.map((m) => el("option", { value: m.id, title: m.description }, m.label)));
      u.model.value = models.some((m) => m.id === conversation.model) ? conversation.model : "";
    }
    // Nothing can answer without a CLI: Send waits until one is there (the note says how).
    const harness = this._harness(this.session?.harness || conversation.harness);
    u.send.disabled = Boolean(this.harnesses) && !harness?.available;
    u.send.title = u.send.disabled ? `${harnessLabel(harness?.id, "The CLI")} is not available: `
      + `${harness?.error || "it was not found"}` : "Send the message (Enter)";

    const options = [el("option", { value: "" }, "New conversation")];
    for (const s of this.sessions) { // newest first, named by their first message
      options.push(el("option", { value: s.id, title: s.title || "" },
        [s.title || "Untitled conversation", harnessLabel(s.harness), STATUS_TEXT[s.status] || s.status,
         startedAt(s.createdAt)].filter(Boolean).join(" · ")));
    }
    const held = new Set(this.sessions.map((s) => s.nativeSessionId).filter(Boolean));
    const saved = this.saved.filter((c) => !held.has(c.nativeSessionId));
    if (saved.length) {
      options.push(el("optgroup", { label: "Begun in a terminal (opens resumed)" }, saved.map((c) =>
        el("option", { value: `saved:${c.harness}:${c.nativeSessionId}`, title: c.title },
          [c.title, harnessLabel(c.harness), startedAt(c.updatedAt)].filter(Boolean).join(" · ")))));
    }
    u.sessionPick.replaceChildren(...options);
    u.sessionPick.value = this.session?.id || "";
    u.endButton.hidden = !this.session || status === "closed";
    u.resumeButton.hidden = status !== "closed" || !this.session?.nativeSessionId;
    u.newButton.hidden = !this.session;
    this.conversations.render();
    this.usage.render(this.transcript.info, this.session);
    u.stop.hidden = !RUNNING.includes(status);
    const label = harnessLabel(this.session?.harness || conversation.harness);
    const directory = this.session?.projectRootPath
      || (this.store.state.target === "devhost" ? this.config?.devhostSourceRootPath : this.service?.projectRootPath);
    u.empty.textContent = `Ask ${label} about this page. It works in ${directory || "this page's checkout"}, `
      + "with its own sign-in and permissions.";
    u.textarea.placeholder = status === "closed"
      ? "This conversation is closed: write to resume it"
      : `Message ${label} (Enter sends, Shift+Enter for a new line)`;
  }

  showNote(text) {
    this.ui.note.textContent = text;
    this.ui.note.hidden = !text;
  }

  hint(text) {
    this.ui.hint.textContent = text;
    this.ui.hint.title = text;
  }
}


const WINDOW_NAMES = { five_hour: "5-hour", seven_day: "weekly", one_day: "daily", one_hour: "hourly" };

/** Near the plan's usage limit: " · 93% of the 5-hour limit used" (nothing before the warning). */
function windowWarning(usage) {
  if (!usage || usage.status !== "allowed_warning" || typeof usage.utilization !== "number") return "";
  const name = WINDOW_NAMES[usage.window] || "usage";
  return ` · ${Math.round(usage.utilization * 100)}% of the ${name} limit used`;
}

/** When a conversation began: the time today, else the day. */
function startedAt(ms) {
  if (!ms) return "";
  const date = new Date(ms);
  return date.toDateString() === new Date().toDateString()
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { month: "short", day: "numeric" });
}
