// The composer: the text, long pasted texts as chips (paste.js), and the images that go with it
// (pasted, dropped, or an area of a screenshot of the page; fitted to what the models take as
// they are added: images.js), shown in the tray until sent. Screenshots add a "page context"
// section to the text saying where the crop sits in the full screenshot.

import { el, clear } from "./dom.js";
import { ImageProblem, describe, fitImage } from "./images.js";
import { isLong, pasteChip, pasteLabel } from "./paste.js";
import { MAX_DRAFT } from "./store.js";

export const MAX_FRAME_BYTES = 8 * 1024 * 1024; // a whole send frame, as UTF-8 JSON (devhostd's limit)

export function frameBytes(frame) {
  return new TextEncoder().encode(JSON.stringify(frame)).length;
}

export class Composer {
  constructor({ textarea, tray, onDraft, onPastes, onProblem }) {
    this.textarea = textarea;
    this.tray = tray;
    this.onDraft = onDraft;
    this.onPastes = onPastes; // the pasted texts changed: (texts) => kept with the draft
    this.onProblem = onProblem;
    this.attachments = []; // {dataURL, width?, height?, bytes?, from?, screenshot?: {area, full, scroll}}
    this.pastes = []; // {text}: long pasted texts, sent after the typed text
    textarea.addEventListener("input", () => onDraft(this.text));
    textarea.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files || [])];
      if (files.length) {
        event.preventDefault();
        this.addFiles(files);
        return;
      }
      const pasted = event.clipboardData?.getData("text/plain") || "";
      if (!isLong(pasted)) return; // short text pastes as usual
      event.preventDefault();
      this.addPaste(pasted);
    });
  }

  get text() {
    return this.textarea.value;
  }

  set text(value) {
    this.textarea.value = value;
  }

  async addFiles(files) {
    for (const file of files) {
      try {
        this.add(await fitImage(file));
      } catch (error) {
        this.onProblem(error instanceof ImageProblem ? error.message
          : `Could not read ${file.name || "the image"}: ${error?.message || error}`);
      }
    }
  }

  /** A screenshot's area, fitted like any image (a whole page at a device pixel ratio of 2 is
   *  twice as wide as the models take); its place in the page stays as it was measured. */
  async addScreenshot(chosen) {
    try {
      const blob = await (await fetch(chosen.dataURL)).blob();
      this.add({ ...(await fitImage(new File([blob], "screenshot.png", { type: "image/png" }))), screenshot: chosen.screenshot });
    } catch (error) {
      this.onProblem(error instanceof ImageProblem ? error.message : `Could not add the screenshot: ${error?.message || error}`);
    }
  }

  addPaste(text) {
    if (text.length > MAX_DRAFT) {
      // The draft keeps it across a hot reload only up to MAX_DRAFT: a bigger one would be lost then.
      this.onProblem(`This paste is ${text.length.toLocaleString("en-US")} characters; the panel keeps at most `
        + `${MAX_DRAFT.toLocaleString("en-US")}. Save it in a file of the checkout and mention it with @ instead.`);
      return;
    }
    this.pastes.push({ text });
    this._pastesChanged();
  }

  /** The pasted texts a draft kept (a reload), as chips again. */
  restorePastes(texts) {
    this.pastes = texts.map((text) => ({ text }));
    this._renderTray();
  }

  _pastesChanged() {
    this._renderTray();
    this.onPastes?.(this.pastes.map((p) => p.text));
  }

  /** Whether there is anything to send. */
  get empty() {
    return !this.text.trim() && !this.attachments.length && !this.pastes.length;
  }

  /** The message as the person wrote it: the typed text, then each pasted text in full. */
  messageText() {
    return [this.text, ...this.pastes.map((p) => p.text)].filter((t) => t.trim()).join("\n\n");
  }

  add(attachment) {
    this.attachments.push(attachment);
    this._renderTray();
  }

  clear() {
    this.text = "";
    this.attachments = [];
    this.pastes = [];
    this._renderTray();
  }

  /**
   * Takes out what a send carried (its text and attachments as captured when it began), keeping
   * anything typed or attached while it waited. Text edited in the meantime stays as it is.
   */
  removeSent(text, attachments, pastes = []) {
    const current = this.text;
    if (current === text) this.text = "";
    else if (current.startsWith(text)) this.text = current.slice(text.length).replace(/^\s+/, "");
    this.attachments = this.attachments.filter((a) => !attachments.includes(a));
    this.pastes = this.pastes.filter((p) => !pastes.includes(p));
    this._pastesChanged();
  }

  /** The text to send: the person's text and pastes, then the page context of any screenshot. */
  composeText() {
    const own = this.messageText();
    const shots = this.attachments.map((a, index) => [index + 1, a.screenshot]).filter(([, s]) => s);
    if (!shots.length) return own;
    const lines = ["[Page context]", `Page: ${location.href}${document.title ? ` (“${document.title}”)` : ""}`];
    for (const [number, shot] of shots) {
      const { area, full, scroll } = shot;
      lines.push(`Image ${number} is an area of a screenshot of the page: x=${area.x}, y=${area.y}, ` +
        `${area.width}×${area.height} of the full ${full.width}×${full.height} screenshot (CSS pixels; ` +
        `the page was scrolled to ${scroll.x}, ${scroll.y}).`);
    }
    return own ? `${own}\n\n${lines.join("\n")}` : lines.join("\n");
  }

  _renderTray() {
    clear(this.tray);
    this.tray.hidden = this.attachments.length === 0 && this.pastes.length === 0;
    this.pastes.forEach((paste, index) => {
      const label = pasteLabel(paste.text);
      this.tray.append(el("div", { class: "paste-entry" }, pasteChip(paste.text), el("button", {
        type: "button", class: "remove", title: "Remove this pasted text", "aria-label": `Remove ${label}`,
        onclick: () => { this.pastes.splice(index, 1); this._pastesChanged(); } }, "×")));
    });
    this.attachments.forEach((attachment, index) => {
      const { caption, title } = describe(attachment);
      this.tray.append(el("figure", { class: "thumb", title: title || null },
        el("img", { src: attachment.dataURL, alt: caption }),
        el("figcaption", {}, caption),
        el("button", { type: "button", class: "remove", title: "Remove", "aria-label": `Remove ${caption}`,
                       onclick: () => { this.attachments.splice(index, 1); this._renderTray(); } }, "×")));
    });
  }
}
