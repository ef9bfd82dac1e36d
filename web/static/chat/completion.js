// The composer's completion: "/" at the start of the message lists the session's slash commands
// and skills, "@" after a space (or at the start) lists the files of the checkout. It is the
// ARIA combobox pattern: the textarea is the combobox, the list a listbox whose active option
// the textarea names (aria-activedescendant), so focus never leaves the text being typed.
// Arrow keys move, Enter or Tab picks, Escape closes; a click picks too.

import { el } from "./dom.js";

const SHOWN = 50; // options listed at most: the typed text narrows the rest

/** The completion the text before the caret asks for: {kind, start, query}, or null. */
export function tokenAt(text, caret) {
  const before = text.slice(0, caret);
  const slash = /^\/(\S*)$/.exec(before);
  if (slash) return { kind: "slash", start: 0, query: slash[1] };
  const mention = /(^|\s)@(\S*)$/.exec(before);
  if (mention) return { kind: "file", start: before.length - mention[2].length - 1, query: mention[2] };
  return null;
}

/** The entries that match, best first: a name that starts with the query, then one with a word
    that does, then any that contains it (case aside). */
export function ranked(entries, query) {
  const q = query.toLowerCase();
  const scored = [];
  for (const entry of entries) {
    const name = entry.value.toLowerCase();
    const base = name.slice(name.lastIndexOf("/") + 1);
    let score = -1;
    if (base.startsWith(q) || name.startsWith(q)) score = 0;
    else if (name.split(/[/._-]/).some((part) => part.startsWith(q))) score = 1;
    else if (name.includes(q)) score = 2;
    if (score >= 0) scored.push([score, entry]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].value.length - b[1].value.length || a[1].value.localeCompare(b[1].value));
  return scored.map(([, entry]) => entry);
}

export class Completion {
  /**
   * `sources`: {slash, file}, each `() => Promise<[{value, detail}]>`, asked once each time a
   * list opens (an agent may have added files or skills since); `empty`: {slash, file}, what the list says when nothing matches;
   * `onPick(kind, entry)`: told of each pick (a file becomes a mention of the message).
   */
  constructor({ textarea, sources, empty, onPick, onProblem }) {
    this.textarea = textarea;
    this.sources = sources;
    this.empty = empty;
    this.onPick = onPick;
    this.onProblem = onProblem;
    this.asking = null; // {key, entries}: the source's answer for the list now open
    this.options = [];
    this.active = -1;
    this.token = null;
    this.asked = 0;
    this.list = el("ul", { class: "completion", id: "devhost-completion", role: "listbox", hidden: true,
                           "aria-label": "Completions" });
    Object.entries({ role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false",
                     "aria-controls": this.list.id, "aria-haspopup": "listbox" })
      .forEach(([name, value]) => textarea.setAttribute(name, value));
    textarea.before(this.list); // just above the text, in the composer
    textarea.addEventListener("input", () => this.update());
    textarea.addEventListener("click", () => this.update());
    textarea.addEventListener("blur", () => this.close());
    // Capture: at the textarea itself these run before the panel's own Enter-sends handler.
    textarea.addEventListener("keydown", (event) => this._key(event), true);
  }

  get open() {
    return !this.list.hidden;
  }

  async update() {
    const token = tokenAt(this.textarea.value, this.textarea.selectionStart);
    this.token = token;
    if (!token || this.textarea.selectionStart !== this.textarea.selectionEnd) return this.close();
    const asked = ++this.asked;
    let entries;
    const key = `${token.kind}:${token.start}`;
    if (this.asking?.key !== key) this.asking = { key, entries: this.sources[token.kind]() };
    try {
      entries = await this.asking.entries;
    } catch (error) {
      this.asking = null;
      this.onProblem(`No completions: ${error.message || error}`);
      return this.close();
    }
    if (asked !== this.asked) return undefined; // typed on meanwhile: a newer update shows its own
    this._show(ranked(entries, token.query).slice(0, SHOWN));
    return undefined;
  }

  close() {
    this.asked += 1; // an answer still on its way opens nothing
    this.asking = null;
    this.list.hidden = true;
    this.options = [];
    this.active = -1;
    this.textarea.setAttribute("aria-expanded", "false");
    this.textarea.removeAttribute("aria-activedescendant");
  }

  _show(options) {
    this.options = options;
    this.active = options.length ? 0 : -1;
    const kind = this.token.kind;
    this.list.dataset.kind = kind;
    this.list.replaceChildren(...(options.length ? options.map((entry, index) => el("li", {
      id: `devhost-completion-${index}`, role: "option", class: "option", title: entry.detail || entry.value,
      // mousedown, not click: the textarea keeps its focus (and its caret) while the pick is made
      onmousedown: (event) => { event.preventDefault(); this._pick(index); },
    }, el("span", { class: "name" }, kind === "slash" ? `/${entry.value}` : entry.value),
      entry.detail ? el("span", { class: "detail" }, entry.detail) : null))
      : [el("li", { class: "none", role: "option", "aria-disabled": "true", id: "devhost-completion-none" },
        this.empty[kind])]));
    this.list.hidden = false;
    this.textarea.setAttribute("aria-expanded", "true");
    this._mark();
  }

  _mark() {
    [...this.list.querySelectorAll("[role=option]")].forEach((node, index) => {
      node.setAttribute("aria-selected", String(index === this.active));
    });
    const active = this.list.querySelector(`#devhost-completion-${this.active}`);
    if (active) {
      this.textarea.setAttribute("aria-activedescendant", active.id);
      active.scrollIntoView({ block: "nearest" });
    } else {
      this.textarea.removeAttribute("aria-activedescendant");
    }
  }

  _key(event) {
    if (!this.open || event.isComposing) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) return this.close(); // sends: the panel's own
    const plain = !event.ctrlKey && !event.metaKey && !event.altKey && !event.shiftKey;
    const count = this.options.length;
    if (event.key === "Escape") {
      this.close();
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && count) {
      this.active = (this.active + (event.key === "ArrowDown" ? 1 : -1) + count) % count;
      this._mark();
    } else if ((event.key === "Enter" || event.key === "Tab") && plain && count) {
      this._pick(this.active);
    } else {
      return; // typed on: the input event narrows the list
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  _pick(index) {
    const entry = this.options[index];
    const token = this.token;
    if (!entry || !token) return;
    const textarea = this.textarea;
    const inserted = `${token.kind === "slash" ? "/" : "@"}${entry.value} `;
    const caret = textarea.selectionStart;
    textarea.value = textarea.value.slice(0, token.start) + inserted + textarea.value.slice(caret);
    const at = token.start + inserted.length;
    textarea.setSelectionRange(at, at);
    this.close();
    this.onPick(token.kind, entry);
    textarea.dispatchEvent(new Event("input", { bubbles: true })); // the draft is kept as typed
  }
}
