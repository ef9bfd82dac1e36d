// The composer: the text, and the images that go with it (pasted, dropped, or an area of a
// screenshot of the page), shown as thumbnails until sent. Screenshots add a "page context"
// section to the text saying where the crop sits in the full screenshot.

import { el, clear } from "./dom.js";

export const MAX_FRAME_BYTES = 8 * 1024 * 1024; // a whole send frame, as UTF-8 JSON (devhostd's limit)
const TYPES = ["image/png", "image/jpeg"];

export function frameBytes(frame) {
  return new TextEncoder().encode(JSON.stringify(frame)).length;
}

function readDataURL(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

export class Composer {
  constructor({ textarea, tray, onDraft, onProblem }) {
    this.textarea = textarea;
    this.tray = tray;
    this.onDraft = onDraft;
    this.onProblem = onProblem;
    this.attachments = []; // {dataURL, screenshot?: {area, full, scroll}}
    textarea.addEventListener("input", () => onDraft(this.text));
    textarea.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files || [])];
      if (!files.length) return; // plain text pastes as usual
      event.preventDefault();
      this.addFiles(files);
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
      if (!TYPES.includes(file.type)) {
        this.onProblem(`${file.name || "That file"} is not a PNG or JPEG image; only those can be sent.`);
        continue;
      }
      try {
        this.add({ dataURL: await readDataURL(file) });
      } catch (error) {
        this.onProblem(`Could not read ${file.name || "the image"}: ${error?.message || error}`);
      }
    }
  }

  add(attachment) {
    this.attachments.push(attachment);
    this._renderTray();
  }

  clear() {
    this.text = "";
    this.attachments = [];
    this._renderTray();
  }

  /**
   * Takes out what a send carried (its text and attachments as captured when it began), keeping
   * anything typed or attached while it waited. Text edited in the meantime stays as it is.
   */
  removeSent(text, attachments) {
    const current = this.text;
    if (current === text) this.text = "";
    else if (current.startsWith(text)) this.text = current.slice(text.length).replace(/^\s+/, "");
    this.attachments = this.attachments.filter((a) => !attachments.includes(a));
    this._renderTray();
  }

  /** The text to send: the person's text, then the page context of any screenshot. */
  composeText() {
    const shots = this.attachments.map((a, index) => [index + 1, a.screenshot]).filter(([, s]) => s);
    if (!shots.length) return this.text;
    const lines = ["[Page context]", `Page: ${location.href}${document.title ? ` (“${document.title}”)` : ""}`];
    for (const [number, shot] of shots) {
      const { area, full, scroll } = shot;
      lines.push(`Image ${number} is an area of a screenshot of the page: x=${area.x}, y=${area.y}, ` +
        `${area.width}×${area.height} of the full ${full.width}×${full.height} screenshot (CSS pixels; ` +
        `the page was scrolled to ${scroll.x}, ${scroll.y}).`);
    }
    return this.text ? `${this.text}\n\n${lines.join("\n")}` : lines.join("\n");
  }

  _renderTray() {
    clear(this.tray);
    this.tray.hidden = this.attachments.length === 0;
    this.attachments.forEach((attachment, index) => {
      const caption = attachment.screenshot
        ? `area ${attachment.screenshot.area.width}×${attachment.screenshot.area.height}` : "image";
      this.tray.append(el("figure", { class: "thumb" },
        el("img", { src: attachment.dataURL, alt: caption }),
        el("figcaption", {}, caption),
        el("button", { type: "button", class: "remove", title: "Remove", "aria-label": `Remove ${caption}`,
                       onclick: () => { this.attachments.splice(index, 1); this._renderTray(); } }, "×")));
    });
  }
}
