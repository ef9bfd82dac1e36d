// The panel's keyboard shortcuts, and the "Keyboard shortcuts" help that lists them (the "?"
// button in the header, or "?" while the focus is in the panel outside a text field).
//
// Only Alt+Shift+D listens on the whole page (browsers and dev servers such as Vite leave it
// free); every other shortcut listens inside the panel's shadow root, so typing in the page's
// own inputs never reaches one. Escape never interrupts the agent: it is what closes a list or
// this help, and a stray press must not cost a turn. Interrupting by key is Ctrl+C in an empty
// message while a turn runs, as in a terminal: with nothing typed there is nothing to copy.

import { el } from "./dom.js";

export const TOGGLE = "Alt+Shift+D";
const RUNNING = ["running", "requires_action"];

export const SHORTCUTS = [
  [TOGGLE, "Open the chat and put the cursor in the message; when the focus is already in the chat, close it. Works anywhere on the page."],
  ["Enter", "Send the message"],
  ["Ctrl+Enter / ⌘+Enter", "Send the message, also while a completion list is open"],
  ["Shift+Enter", "A new line in the message"],
  ["↑", "In an empty message: bring back the last message of this conversation, to edit and send again"],
  ["Ctrl+C", "In an empty message while the agent works: interrupt it"],
  ["/", "At the start of the message: the slash commands and skills"],
  ["@", "Mention a file of the checkout"],
  ["↑ ↓, Enter or Tab, Escape", "In a completion list: move, pick, close"],
  ["Escape", "Close a completion list or this help, else the chat (it never interrupts the agent)"],
  ["?", "This help, while the focus is in the chat outside the message"],
];

function typing(node) {
  return node instanceof HTMLElement && (node.isContentEditable || ["TEXTAREA", "INPUT", "SELECT"].includes(node.tagName));
}

export class Shortcuts {
  constructor(panel) {
    this.panel = panel;
    const u = panel.ui;
    this.returnTo = null; // where the focus was before a shortcut moved it into the panel
    this.button = el("button", { type: "button", class: "icon help", title: "Keyboard shortcuts (?)",
                                 "aria-label": "Keyboard shortcuts", "aria-keyshortcuts": "?", "aria-expanded": "false",
                                 onclick: () => this.toggleHelp() }, "?");
    this.help = el("div", { class: "shortcuts-help", role: "dialog", "aria-label": "Keyboard shortcuts", tabindex: "-1",
                            hidden: true },
      el("div", { class: "help-head" }, el("strong", {}, "Keyboard shortcuts"),
        el("button", { type: "button", class: "icon", title: "Close the keyboard shortcuts", "aria-label":
                       "Close the keyboard shortcuts", onclick: () => this.toggleHelp(false) }, "×")),
      el("dl", {}, SHORTCUTS.flatMap(([keys, what]) => [el("dt", {}, el("kbd", {}, keys)), el("dd", {}, what)])));
    u.close.before(this.button);
    u.header.after(this.help);
    u.launcher.title = `devhost chat (${TOGGLE})`;
    u.launcher.setAttribute("aria-keyshortcuts", TOGGLE);
    u.close.title = `Close the chat (${TOGGLE})`;
    u.close.setAttribute("aria-keyshortcuts", TOGGLE);
    // Capture: the page's own handlers (which may stop the event) come after this one.
    window.addEventListener("keydown", (event) => this._global(event), true);
    u.panel.addEventListener("keydown", (event) => this._inPanel(event));
    u.textarea.addEventListener("keydown", (event) => this._inMessage(event));
  }

  /** Whether the focus is somewhere in the panel (its shadow root's active element). */
  focused() {
    const active = this.panel.root.activeElement;
    return Boolean(active && this.panel.ui.panel.contains(active));
  }

  _global(event) {
    if (!(event.altKey && event.shiftKey && !event.ctrlKey && !event.metaKey && event.code === "KeyD") || event.repeat) return;
    event.preventDefault();
    event.stopPropagation();
    const panel = this.panel;
    if (panel.ui.panel.hidden || !this.focused()) {
      const active = document.activeElement;
      this.returnTo = active && active !== panel.host && active !== document.body ? active : null;
      if (panel.ui.panel.hidden) panel.setOpen(true);
      else panel.ui.textarea.focus({ preventScroll: true });
    } else {
      this.toggleHelp(false);
      panel.setOpen(false);
      const back = this.returnTo;
      this.returnTo = null;
      if (back?.isConnected) back.focus({ preventScroll: true });
      else panel.ui.launcher.focus();
    }
  }

  _inPanel(event) {
    if (event.key === "Escape" && !this.help.hidden) {
      event.preventDefault();
      this.toggleHelp(false);
    } else if (event.key === "?" && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(event.composedPath()[0])) {
      event.preventDefault();
      this.toggleHelp(true);
    }
  }

  _inMessage(event) {
    const panel = this.panel;
    const textarea = panel.ui.textarea;
    if (textarea.value !== "" || event.isComposing || event.defaultPrevented) return;
    const modifiers = event.ctrlKey || event.metaKey || event.altKey || event.shiftKey;
    if (event.key === "ArrowUp" && !modifiers) {
      const last = panel.transcript.list().filter((item) => item.kind === "user" && item.text).pop();
      if (!last) return;
      event.preventDefault();
      textarea.value = last.text;
      textarea.setSelectionRange(last.text.length, last.text.length);
      textarea.dispatchEvent(new Event("input", { bubbles: true })); // kept as the draft
    } else if (event.key === "c" && event.ctrlKey && !event.metaKey && !event.altKey && !event.shiftKey
               && RUNNING.includes(panel.session?.status)) {
      event.preventDefault();
      panel.interrupt();
    }
  }

  toggleHelp(open = this.help.hidden) {
    if (open === !this.help.hidden) return;
    this.help.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (open) {
      this.helpReturn = this.panel.root.activeElement;
      this.help.focus();
    } else if (this.focused() || this.panel.root.activeElement === null) {
      (this.helpReturn?.isConnected ? this.helpReturn : this.button).focus();
    }
  }
}
