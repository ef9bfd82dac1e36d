// What of the page goes with the next message, shown in the composer until it is sent: one chip
// per element picked ("Pick an element", picker.js), each sent as a "[Page context]" section
// (page_context.js), and the page's errors once the person presses "Attach page errors (N)",
// shown as the exact "[Page errors]" text that will go (page_errors_text.js) before anything is
// sent. The sections follow the person's words. None of it is stored (not in localStorage, not
// in the draft): it lives in this page's memory and in the message sent.

import { el } from "./dom.js";
import { describeElement, elementLabel, pageContextText } from "./page_context.js";
import { pageEntries, onEntry } from "./page_errors.js";
import { pageErrorsSection } from "./page_errors_text.js";
import { Picker } from "./picker.js";

/** How a chip names a picked element: `button#checkout`, else its component, else `button.primary`. */
export function chipName(ctx) {
  if (ctx.id) return `${ctx.tag}#${ctx.id}`;
  const component = ctx.components?.[0]?.name;
  return component ? `${component} (${ctx.tag})` : elementLabel(ctx, 1);
}

const entryCount = ({ errors, requests }) => errors.length + requests.length;

export class PageAttachments {
  /** `locate`: api.locate; `onProblem(text)`: the composer's hint. */
  constructor({ host, layer, locate, onProblem }) {
    this.locate = locate;
    this.onProblem = onProblem;
    this.picked = []; // {name, ready: Promise, ctx, text}
    this.errors = null; // {text} once attached
    this.picker = new Picker({ host, layer, onPick: (element) => this.addElement(element) });
    this.ui = {
      pick: this.picker.button,
      attach: el("button", { type: "button", class: "plain attach-errors", hidden: true,
        title: "Attach the page's errors and failed requests to your message (you see the text before it is sent)",
        onclick: () => this.attachErrors() }),
      tray: el("div", { class: "page-tray", hidden: true }),
    };
    onEntry(() => this._renderButton());
    this._renderButton();
  }

  /** Whether nothing of the page waits to be sent. */
  get empty() {
    return !this.picked.length && !this.errors;
  }

  addElement(element) {
    const pick = { name: element.localName + (element.id ? `#${element.id}` : ""), ctx: null, text: "" };
    // Described at once: the element may change or go before the message is sent.
    pick.ready = describeElement(element, { locate: this.locate }).then((ctx) => {
      Object.assign(pick, { ctx, name: chipName(ctx), text: pageContextText(ctx) });
    }, (error) => {
      this.onProblem?.(`That element could not be described: ${error?.message || error}`);
      this.picked = this.picked.filter((p) => p !== pick);
    }).finally(() => this._renderTray());
    this.picked.push(pick);
    this._renderTray();
  }

  async attachErrors() {
    const entries = pageEntries();
    this._renderButton();
    if (!entryCount(entries)) return;
    this.ui.attach.disabled = true;
    try {
      this.errors = { text: await pageErrorsSection(entries, this.locate) };
    } finally {
      this.ui.attach.disabled = false;
    }
    this._renderTray();
    this.ui.tray.querySelector(".page-errors")?.focus();
  }

  /** Waits until every picked element is described (a send takes what they say). */
  async ready() {
    await Promise.all(this.picked.map((p) => p.ready));
  }

  /** What a send carries: its sections' text (elements first, then the errors) and the parts, to
   *  take out once it went (anything picked while it waited stays). */
  take() {
    const parts = [...this.picked.filter((p) => p.text), ...(this.errors ? [this.errors] : [])];
    return { text: parts.map((p) => p.text).join("\n\n"), parts };
  }

  removeSent(parts) {
    this.picked = this.picked.filter((p) => !parts.includes(p));
    if (parts.includes(this.errors)) this.errors = null;
    this._renderTray();
  }

  _renderButton() {
    const count = entryCount(pageEntries());
    this.ui.attach.hidden = count === 0;
    this.ui.attach.textContent = `Attach page errors (${count})`;
  }

  _renderTray() {
    const tray = this.ui.tray;
    tray.hidden = this.empty;
    tray.replaceChildren(...this.picked.map((pick) => el("span", { class: "page-chip", title: pick.text || "Describing the element…",
                                                                    dataset: { ready: pick.ctx ? "yes" : "no" } },
      el("span", { class: "page-chip-name" }, pick.name),
      el("button", { type: "button", class: "remove", title: `Do not send ${pick.name}`, "aria-label": `Remove ${pick.name}`,
                     onclick: () => this.removeSent([pick]) }, "×"))));
    if (this.errors) {
      tray.append(el("div", { class: "page-errors", role: "region", "aria-label": "Page errors to send", tabindex: "-1" },
        el("div", { class: "page-errors-head" }, el("span", {}, "This goes with your message:"),
          el("button", { type: "button", class: "remove", title: "Do not send the page errors", "aria-label": "Remove the page errors",
                         onclick: () => this.removeSent([this.errors]) }, "×")),
        el("pre", { class: "page-errors-text", tabindex: "0", title: "The exact text added to your message" }, this.errors.text)));
    }
  }
}
