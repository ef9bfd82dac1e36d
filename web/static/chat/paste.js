// Long pasted text as a chip: a 60,000-character paste drawn as text is a bubble tens of
// thousands of pixels tall (in the composer's textarea, then in the conversation). A paste past
// the threshold becomes a chip ("pasted text, 400 lines") that opens to show the whole text; the
// whole text is what is sent. In a sent bubble, any long message shows its first paragraph
// (what the person typed above the paste) and the rest as the same chip: after a reload the
// panel knows only the text devhostd kept, so the rule reads the text, not the paste event.

import { el } from "./dom.js";

export const LONG_LINES = 40;
export const LONG_CHARS = 4000;

export function lineCount(text) {
  return text ? text.split("\n").length : 0;
}

/** Whether a text is too long to be drawn as text in a bubble. */
export function isLong(text) {
  return text.length > LONG_CHARS || lineCount(text) > LONG_LINES;
}

/** "pasted text, 400 lines" (one long line: its characters). */
export function pasteLabel(text) {
  const lines = lineCount(text);
  return lines > 1 ? `pasted text, ${lines.toLocaleString("en-US")} lines`
    : `pasted text, ${text.length.toLocaleString("en-US")} characters`;
}

/** A chip that opens to show ``text``; the text is put in the DOM only when opened (a huge paste
 *  costs nothing until read), in a box of bounded height that scrolls. */
export function pasteChip(text) {
  const label = pasteLabel(text);
  const chip = el("details", { class: "pasted" }, el("summary", { title: `${label}: open to read it all` }, label));
  chip.addEventListener("toggle", () => {
    if (chip.open && !chip.querySelector(".pasted-text")) {
      chip.append(el("div", { class: "pasted-text", tabindex: "0", role: "region", "aria-label": label }, text));
    }
  });
  return chip;
}

/** A message as a bubble draws it: short, as text; long, its first paragraph as text (when
 *  that is short) and the rest as a chip. */
export function collapsed(text) {
  if (!isLong(text)) return text;
  const cut = text.indexOf("\n\n");
  const head = cut > 0 ? text.slice(0, cut) : "";
  if (!head || isLong(head)) return pasteChip(text);
  return [head, pasteChip(text.slice(cut + 2))];
}
