// Renders the conversation's items into the panel. Only the tail is in the DOM (PAGE items,
// more while the conversation streams at the bottom); scrolling to the top pages older items
// in, keeping what is on screen in place; at the top of what the page has, ``onTop`` asks devhostd
// for the page before it (a long conversation opens with its tail). Nodes are keyed by item, so a delta re-renders one
// node, and a snapshot after a reconnect replaces nodes in place instead of flashing.

import { el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { changesLine } from "./changes.js";
import { fileChanges, renderChanges } from "./diffs.js";
import { MODES, RUNTIME_MODES } from "./modes.js";
import { notSentActions } from "./not_sent.js";
import { collapsed } from "./paste.js";

export const PAGE = 60;
const LONG_LINES = 12;
const LONG_CHARS = 1500;
const BOTTOM_SLACK = 40; // px from the bottom that still counts as "following the conversation"

export class ConversationView {
  constructor(scroller, list, actions) {
    this.scroller = scroller;
    this.list = list;
    this.actions = actions; // approve(item, decision), answer(item, answers)
    this.nodes = new Map(); // key -> element
    this.items = [];
    this.start = 0;
    this.onScrolled = null;
    this.onTop = null;
    // Whether the person follows the conversation at its end. Only their own scrolling changes it:
    // layout that moves the end (the panel's style sheet arriving after the first render of a
    // reload, a highlighted block, a visual sizing itself) must not leave them above it.
    this.following = true;
    this.scrolledTo = null; // the scrollTop this view set last: the scroll event it causes is not the person's
    scroller.addEventListener("scroll", () => {
      if (this.scrolledTo === null || Math.abs(this.scroller.scrollTop - this.scrolledTo) > 1) {
        this.following = this.atBottom();
        this.scrolledTo = null;
      }
      if (this.scroller.scrollTop < 80) {
        if (this.start > 0) this.loadOlder();
        else this.onTop?.(); // older items are on devhostd only: ui.js asks for them
      }
      this.onScrolled?.();
    });
    // Content or the panel changed size: at the end, stay at the end.
    const keepEnd = new ResizeObserver(() => { if (this.following) this.scrollToBottom(); });
    keepEnd.observe(list);
    keepEnd.observe(scroller);
  }

  get rendered() {
    return this.items.length - this.start;
  }

  atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < BOTTOM_SLACK;
  }

  fromBottom() {
    const s = this.scroller;
    return Math.max(0, s.scrollHeight - s.scrollTop - s.clientHeight);
  }

  /** items: every item in order; changed: keys to re-render ("*": all). */
  render(items, changed) {
    const following = this.following;
    // New content: more items, or the last one changed (a reply streaming in).
    const grew = items.length > this.items.length || changed.has(items.at(-1)?.key);
    const everything = changed.has("*");
    const keepRendered = Math.max(PAGE, this.rendered);
    this.items = items;
    if (everything) this.start = Math.max(0, items.length - keepRendered);
    else if (following && this.rendered > 2 * PAGE) this.start = items.length - PAGE; // bound the DOM
    this.start = Math.min(this.start, Math.max(0, items.length - 1));
    this._sync(everything ? null : changed);
    if (following) this.scrollToBottom();
    else if (grew) this.onNewContentBelow?.(); // jumplatest.js
  }

  scrollToBottom() {
    this.following = true;
    this._scrollTo(this.scroller.scrollHeight);
  }

  _scrollTo(top) {
    this.scroller.scrollTop = top;
    this.scrolledTo = this.scroller.scrollTop; // as the browser clamped it
  }

  /** Brings the item ``key`` into view (paging older items in when it is above them) and marks it
   *  for a moment, so the eye finds it. */
  reveal(key) {
    const index = this.items.findIndex((item) => item.key === key);
    if (index < 0) return false;
    if (index < this.start) {
      this.start = index;
      this._sync(new Set());
    }
    const node = this.nodes.get(key);
    if (!node) return false;
    node.scrollIntoView({ block: "center" });
    node.classList.add("flash");
    setTimeout(() => node.classList.remove("flash"), 1600);
    return true;
  }

  loadOlder() {
    const before = this.scroller.scrollHeight;
    this.start = Math.max(0, this.start - PAGE);
    this._sync(new Set());
    this._scrollTo(this.scroller.scrollTop + this.scroller.scrollHeight - before); // what was on screen stays put
    if (this.start === 0) this.onTop?.(); // the page before comes while the person reads these
  }

  /** Puts the view `fromBottom` px above the bottom, paging older items in as needed. */
  restore(fromBottom) {
    const s = this.scroller;
    while (this.start > 0 && s.scrollHeight - s.clientHeight < fromBottom) {
      this.start = Math.max(0, this.start - PAGE);
      this._sync(new Set());
    }
    this._scrollTo(s.scrollHeight - s.clientHeight - fromBottom);
    this.following = this.atBottom();
  }

  _sync(changed) {
    const wanted = this.items.slice(this.start);
    const keys = new Set(wanted.map((item) => item.key));
    for (const [key, node] of this.nodes) {
      if (!keys.has(key)) {
        node.remove();
        this.nodes.delete(key);
      }
    }
    let cursor = this.list.firstChild;
    for (const item of wanted) {
      let node = this.nodes.get(item.key);
      if (!node || changed === null || changed.has(item.key)) {
        const fresh = renderItem(item, this.actions);
        if (node) keepOpened(node, fresh);
        if (node) node.replaceWith(fresh);
        if (node === cursor) cursor = fresh;
        node = fresh;
        this.nodes.set(item.key, node);
      }
      if (node !== cursor) this.list.insertBefore(node, cursor);
      else cursor = cursor.nextSibling;
    }
  }
}

// ---- items ------------------------------------------------------------------------------------

// A limited turn's heading: a 429 is this account's rate, not a busy model (core/limits.py).
const LIMIT_HEADING = { usage: "Usage limit reached", rate: "Rate-limited: too many requests", overload: "The model is overloaded" };

// A plan entry's status: a mark for the eye, the word for everyone (a screen reader reads the word).
const PLAN_MARK = { pending: "○", in_progress: "◐", completed: "●" };
const PLAN_WORDS = { pending: "to do", in_progress: "doing", completed: "done" };

function renderItem(item, actions) {
  const node = RENDERERS[item.kind]?.(item, actions) || el("div", { class: "item notice" }, item.kind);
  node.dataset.key = item.key;
  if (item.sub) node.classList.add("sub");
  for (const details of disclosures(node)) {
    details.querySelector(":scope > summary")?.addEventListener("click", () => { details.dataset.touched = "yes"; });
  }
  return node;
}

/** The item's own <details> and those inside it (a bubble's pasted text, page context), in order. */
function disclosures(node) {
  return [...(node.tagName === "DETAILS" ? [node] : []), ...node.querySelectorAll("details")];
}

/** What the person opened or closed stays so as the item is drawn anew (a turn's later news
    redraws its messages): each disclosure they touched, matched by its place in the item. */
function keepOpened(old, fresh) {
  const before = disclosures(old);
  const after = disclosures(fresh);
  before.forEach((details, i) => {
    if (details.dataset.touched && after[i]) {
      after[i].open = details.open;
      after[i].dataset.touched = "yes";
    }
  });
}

const PAGE_SECTION = /(?:^|\n\n)\[Page (?:context|errors)\]\n/; // a screenshot's, a picked element's, the page's errors

/** A message's own text, and the page context a screenshot, a pick or the page's errors added to
    it as a chip that opens. */
function withPageContext(text) {
  const found = PAGE_SECTION.exec(text);
  if (!found) return collapsed(text); // a long paste is a chip that opens (paste.js)
  const at = found.index;
  const own = collapsed(text.slice(0, at));
  const context = text.slice(at).replace(/^\n*\[Page context\]\n/, "");
  return [own, el("details", { class: "context" }, el("summary", {}, "page context"), el("div", { class: "pre" }, context))];
}

/** Retry's click: the button waits while the message goes out, and is given back when it did not
 *  (a send already in flight, a message too large, images this page no longer holds): a refused
 *  retry must leave a retry the person can press again. */
async function retryOnce(button, retry) {
  button.disabled = true;
  let sent = null;
  try {
    sent = await retry();
  } finally {
    if (!sent) button.disabled = false;
  }
}

/** The star that bookmarks a message or an answer (null: this one cannot be bookmarked yet). */
function markButton(item, actions) {
  if (item.bookmarked === null || item.bookmarked === undefined) return null;
  const label = item.bookmarked ? "Remove the bookmark" : "Bookmark this";
  return el("button", { type: "button", class: `mark${item.bookmarked ? " on" : ""}`, title: label, "aria-label": label,
                        "aria-pressed": item.bookmarked ? "true" : "false",
                        onclick: () => actions.bookmark(item.itemId, !item.bookmarked) }); // the star is CSS: no text
}

const RENDERERS = {
  user: (item, actions) => el("div", { class: "item user" },
    el("div", { class: "bubble" }, withPageContext(item.text),
      item.images.length ? el("div", { class: "images" }, item.images.map((src) => el("img", { src, alt: "attached image" })))
        : item.imageCount ? el("div", { class: "muted" }, item.imageCount === 1 ? "1 image" : `${item.imageCount} images`) : null),
    el("div", { class: "delivery", dataset: { state: item.delivery.state } }, markButton(item, actions), item.delivery.text,
      notSentActions(item, actions))),

  assistant: (item, actions) => el("div", { class: `item assistant${item.streaming ? " streaming" : ""}` },
    markButton(item, actions), renderMarkdown(item.text)),

  thinking: (item) => el("details", { class: "item thinking" },
    el("summary", {}, item.streaming ? "Thinking…" : "Thinking"), el("div", { class: "pre" }, item.text)),

  tool: (item, actions) => {
    // One line (name, subject, status); what went in and came out opens below it. A file
    // change is a diff, and a call waiting for the person's approval asks inside its card:
    // both shown open.
    const status = item.state === "running" ? "running" : item.state === "error" ? "error" : "done";
    const asking = item.approval?.open;
    const label = asking ? "waiting for you" : status === "running" ? "running…" : status;
    const changes = fileChanges(item.toolName, item.input);
    const head = el("summary", { class: "tool-head" }, el("strong", {}, item.name),
      el("span", { class: "summary" }, summarize(item.input)),
      el("span", { class: "state" }, item.exitCode != null && item.exitCode !== 0 ? `${label} (exit ${item.exitCode})` : label));
    return el("details", { class: "item tool", dataset: { status: asking ? "asking" : status }, open: Boolean(changes || asking) },
      head, changes ? renderChanges(changes) : block("Input", item.input),
      item.output !== null && item.output !== "" ? block("Output", item.output) : null,
      item.approval?.detail ? el("div", { class: "muted why" }, item.approval.detail) : null,
      item.approval ? approvalControls(item.approval, actions) : null);
  },

  approval: (item, actions) => item.plan ? planCard(item, actions) : el("div", { class: "item approval", dataset: { open: item.open ? "yes" : "no" } },
    el("div", { class: "approval-head" }, `${item.label} asks to use ${item.title}`),
    item.detail ? el("div", { class: "muted" }, item.detail) : null,
    fileChanges(item.toolName, item.input) ? renderChanges(fileChanges(item.toolName, item.input))
      : block("Details", item.input, true),
    approvalControls(item, actions)),

  question: (item, actions) => {
    const form = el("form", { class: "item question", dataset: { open: item.open ? "yes" : "no" } },
      el("div", { class: "approval-head" }, `${item.label} asks`));
    item.questions.forEach((q, index) => {
      const name = `q${index}`;
      const given = item.answers?.[q.id];
      form.append(el("fieldset", { disabled: !item.open },
        el("legend", {}, q.header ? `${q.header}: ${q.text}` : q.text),
        q.options.map((option) => el("label", { class: "option" },
          el("input", { type: q.multiple ? "checkbox" : "radio", name, value: option.label, title: option.description || option.label,
                        checked: typeof given === "string" && given.split(", ").includes(option.label) }),
          el("span", {}, option.label), option.description ? el("small", {}, ` ${option.description}`) : null)),
        item.open ? el("input", { type: "text", name: `${name}-other`, placeholder: "Or type an answer",
                                  "aria-label": "Or type an answer", title: "Your own answer, instead of an option" }) : null));
    });
    if (item.open) {
      form.append(el("div", { class: "buttons" },
        el("button", { type: "submit", class: "allow", title: "Send these answers to the agent" }, "Answer")));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const data = new FormData(form);
        const answers = Object.fromEntries(item.questions.map((q, index) => {
          const picked = data.getAll(`q${index}`).map(String);
          const other = String(data.get(`q${index}-other`) || "").trim();
          return [q.id, (other ? [...picked, other] : picked).join(", ")];
        }));
        actions.answer(item, answers);
      });
    } else {
      form.append(el("div", { class: "muted answer" }, item.answer ? `You ${item.answer}.` : item.settled));
    }
    return form;
  },

  subagent: (item, actions) => {
    // A delegated agent: a collapsible transcript of its own, with its live status.
    const running = item.status === "running";
    const node = el("details", { class: "item subagent", dataset: { status: item.status }, open: running },
      el("summary", { class: "tool-head" }, el("strong", {}, "Agent"),
        el("span", { class: "summary" }, item.description || item.subagentType || "a delegated agent"),
        el("span", { class: "state" }, running ? "working…" : item.status),
        running ? el("button", { type: "button", class: "plain stop-agent", title: "Stop this agent",
                                 onclick: (event) => { event.preventDefault(); actions.stopSubagent(item); } }, "Stop")
          : null),
      el("div", { class: "children" }, item.children.map((child) => renderItem(child, actions))));
    return node;
  },

  task: (item, actions) => el("div", { class: "item task", dataset: { status: item.status } },
    el("span", { class: "label" }, "Background"),
    el("span", { class: "summary" }, item.description || oneLine(item.command)),
    item.command ? el("code", {}, oneLine(item.command)) : null,
    el("span", { class: "state" }, item.status === "running" ? "running…" : item.status),
    item.status === "running" ? el("button", { type: "button", class: "plain stop-task", title: "Stop this task",
                                               onclick: () => actions.stopTask(item) }, "Stop") : null),

  error: (item) => el("div", { class: "item error", role: "alert" }, item.text),
  retry: (item, actions) => el("div", { class: "item retry" },
    el("button", { type: "button", class: "plain", "aria-label": "Retry",
                   title: `Send your last message again: “${item.text.split("\n")[0].slice(0, 80)}”`,
                   onclick: (event) => retryOnce(event.currentTarget, () => actions.retry(item)) }, "↻ Retry")),
  notice: (item) => el("div", { class: "item notice" }, item.text),
  changes: (item, actions) => changesLine(item, actions), // a turn's files changed: opens the review (changes.js)
  visual: (item, actions) => {
    // A page an agent published: shown in a sandboxed frame (scripts, but no same-origin rights,
    // no popups, no top navigation) from the visuals origin, sized by what its page reports.
    const { visual, url } = item;
    const theme = encodeURIComponent(JSON.stringify({ appearance: actions.theme?.() || "light", variables: {} }));
    const height = actions.visualHeight?.(visual.id) || initialHeight(visual);
    return el("figure", { class: "item visual", dataset: { visual: visual.id } },
      el("figcaption", {}, el("span", { class: "title" }, visual.title),
        url ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: "open" }, "Open in a tab") : null),
      url ? el("iframe", { class: "visual-frame", src: `${url}#visual-theme=${theme}`, sandbox: "allow-scripts",
                           referrerpolicy: "no-referrer", loading: "lazy", title: visual.title,
                           dataset: { visual: visual.id, maxHeight: String(visual.maxHeight || 2000) },
                           style: `height:${height}px` }) : el("div", { class: "muted" }, "This visual cannot be shown here."));
  },
  limit: (item, actions) => {
    const { kind, resetsAt, message } = item.limit;
    const lines = [el("strong", {}, LIMIT_HEADING[kind] || LIMIT_HEADING.overload),
      el("div", { class: "muted" }, message || "")];
    if (resetsAt) {
      lines.push(el("div", { class: "resets" }, `${kind === "rate" ? "Try again at" : "Resets at"} ${clockTime(resetsAt)}`,
        item.current ? [" · ", el("span", { class: "countdown", dataset: { until: String(resetsAt) } },
          countdown(resetsAt))] : null));
    }
    if (item.queued) lines.push(el("div", { class: "held" }, `${item.queued} queued ${item.queued === 1 ? "message waits" : "messages wait"} until then.`));
    if (item.resumeAt) lines.push(el("div", { class: "muted" }, `Goes on by itself at ${clockTime(item.resumeAt)}.`));
    if (item.canResume) {
      const box = el("input", { type: "checkbox", checked: item.resumeOn,
                                onchange: () => actions.configure({ resumeAtReset: box.checked }) });
      lines.push(el("label", { class: "resume-at-reset" }, box, " Resume at reset"));
    }
    return el("div", { class: "item limit", dataset: { kind } }, lines);
  },
  plan: (item) => el("div", { class: "item plan-list", role: "group", "aria-label": `${item.label}'s plan` },
    el("div", { class: "approval-head" }, `${item.label}'s plan`),
    el("ol", {}, item.entries.map((entry) => el("li", { dataset: { status: entry.status } },
      el("span", { class: "plan-mark", "aria-hidden": "true" }, PLAN_MARK[entry.status]),
      el("span", { class: "content" }, entry.content),
      el("span", { class: "state" }, PLAN_WORDS[entry.status]))))),
  hidden: () => el("div", { class: "item hidden", hidden: true }),
};

/** A plan the agent proposes: rendered, then Approve (and the mode to go on in) or Send back
 *  with what to change. */
function planCard(item, actions) {
  const cli = item.label;
  const card = el("div", { class: "item approval plan", role: "group", "aria-label": `${cli}'s plan`,
                           dataset: { open: item.open ? "yes" : "no" } },
    el("div", { class: "approval-head" }, `${cli} proposes a plan`),
    el("div", { class: "plan-text" }, renderMarkdown(item.plan.text)),
    item.plan.path ? el("div", { class: "muted plan-path" }, `Kept in ${item.plan.path}`) : null);
  if (!item.open) {
    const said = item.answer === null ? item.settled : item.answer === "denied" || item.answer === "declined"
      ? "You sent the plan back." : "You approved the plan.";
    card.append(el("div", { class: "muted answer" }, said));
    return card;
  }
  const after = actions.modeAfterPlan?.() || "auto-accept-edits";
  const then = el("select", { class: "after-plan", "aria-label": "Mode to go on in", title: "The mode the agent goes on in once you approve" },
    MODES.filter((m) => RUNTIME_MODES.includes(m.id)).map((m) =>
      el("option", { value: m.id, title: m.line, selected: m.id === after }, m.label)));
  const message = el("textarea", { class: "send-back-text", rows: 2, "aria-label": "What to change in the plan",
                                   title: "What to change in the plan",
                                   placeholder: "What should change? (sent back to the agent)" });
  card.append(
    el("div", { class: "buttons" }, el("label", { class: "then" }, "Then ", then),
      el("button", { type: "button", class: "allow", title: "Approve the plan: the agent goes on in the mode picked",
                     onclick: () => actions.approvePlan(item, then.value) }, "Approve")),
    el("div", { class: "send-back" }, message,
      el("button", { type: "button", class: "deny", title: "Send the plan back with what to change",
                     onclick: () => actions.sendBack(item, message.value.trim()) },
        "Send back")));
  return card;
}

// The buttons' words: Codex's own (it accepts and declines); every other harness allows or denies.
const DECISION_WORDS = { allow: { allow: "Allow", "allow-always": "Allow for session", deny: "Deny" },
                         codex: { allow: "Accept", "allow-always": "Accept for session", deny: "Decline" } };
const DECISION_TITLE = { allow: "Let the agent do this, this once", "allow-always": "Let the agent do this for the rest of the session",
                         deny: "Refuse: the agent is told you did not allow it" };

/** An approval's buttons while it waits, or what was answered. */
function approvalControls(item, actions) {
  if (!item.open) {
    return el("div", { class: "muted answer" }, item.answer ? `You ${item.answer}.` : item.settled);
  }
  const words = DECISION_WORDS[item.harness] || DECISION_WORDS.allow;
  return el("div", { class: "buttons" }, item.decisions.map((decision) => [words[decision], decision]).map(([label, decision]) =>
    el("button", { type: "button", class: decision === "deny" ? "deny" : "allow", title: DECISION_TITLE[decision],
                   onclick: (event) => { event.preventDefault(); actions.approve(item, decision); } }, label)));
}

/** A shell command as the agent wrote it: Codex reports it wrapped in `/bin/bash -lc '…'`. */
function unwrapShell(command) {
  const wrapped = typeof command === "string" && command.match(/^\/bin\/(?:ba|z)?sh -l?c '(.*)'$/s);
  return wrapped ? wrapped[1].replaceAll("'\\''", "'") : command;
}

function summarize(input) {
  if (input === null || input === undefined) return "";
  if (typeof input === "string") return oneLine(input);
  const value = unwrapShell(input.command) ?? input.file_path ?? input.path ?? input.pattern ?? input.url ?? input.description
    ?? (Array.isArray(input.changes) ? input.changes.map((c) => c.path).join(", ") : null);
  return oneLine(typeof value === "string" ? value : JSON.stringify(input));
}

function oneLine(text) {
  const line = String(text).split("\n")[0];
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** Flat objects (most tool inputs) as "key: value" lines; anything nested as JSON. */
function readable(value) {
  if (typeof value === "string") return value;
  const flat = value && typeof value === "object" && !Array.isArray(value)
    && Object.values(value).every((v) => v === null || ["string", "number", "boolean"].includes(typeof v));
  if (!flat) return JSON.stringify(value, null, 2);
  return Object.entries(value).map(([key, v]) => `${key}: ${v}`).join("\n");
}

/** A labelled block of text; a long one starts collapsed behind its first lines. */
function block(label, value, open = false) {
  if (value === null || value === undefined || value === "") return null;
  const text = readable(value);
  const lines = text.split("\n").length;
  if (lines <= LONG_LINES && text.length <= LONG_CHARS) {
    return el("div", { class: "block" }, el("div", { class: "label" }, label), el("pre", {}, text));
  }
  const details = el("details", { class: "block long", open: open && text.length <= 4 * LONG_CHARS },
    el("summary", {}, `${label} (${lines} lines)`));
  // The full text is built only when opened: a huge tool output costs nothing until read.
  const fill = () => {
    if (details.querySelector("pre")) return;
    details.append(el("pre", {}, text));
  };
  if (details.open) fill();
  details.addEventListener("toggle", fill);
  return details;
}


/** A visual's frame height before its page reports one: from its measured heights at about the
 *  panel's width, else a modest default. */
function initialHeight(visual) {
  const widths = visual.heights || [];
  const near = widths.filter(([w]) => w <= 400).pop() || widths[0];
  return Math.max(80, Math.min(near ? near[1] : 240, visual.maxHeight || 2000));
}

/** A time in the person's own clock (and day, when it is not today). */
export function clockTime(ms) {
  const date = new Date(ms);
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return date.toDateString() === new Date().toDateString() ? time
    : `${date.toLocaleDateString([], { weekday: "short", month: "short", day: "numeric" })} ${time}`;
}

/** How long until ``ms``: "in 2 h 08 min", "in 4 min 05 s", "now". */
export function countdown(ms, now = Date.now()) {
  const seconds = Math.max(0, Math.round((ms - now) / 1000));
  if (seconds === 0) return "now";
  const h = Math.floor(seconds / 3600), m = Math.floor((seconds % 3600) / 60), s = seconds % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h ? `in ${h} h ${two(m)} min` : m ? `in ${m} min ${two(s)} s` : `in ${s} s`;
}
