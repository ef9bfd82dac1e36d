// What the bookmarks menu shows of a bookmark: plain words, never the Markdown an answer was
// written in. devhostd keeps an excerpt of the item's raw text (cut at 160 characters); when the
// item is in the page its whole text is read instead, so an emphasis or a code fence the cut
// split open does not leave its marks behind.

import { plainText } from "./markdown.js";

const EXCERPT_CHARS = 160; // as devhostd's (actors/core/bookmarks.py)
// Marks a cut excerpt can leave unclosed, which Markdown then shows as they are.
const LEFT_OPEN = /\*\*|__|~~|```/g;

export function markExcerpt(mark, item) {
  const source = typeof item?.text === "string" && item.text ? item.text : mark.excerpt || "";
  const text = plainText(source).replace(LEFT_OPEN, "").trim();
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS - 1).trimEnd()}…` : text;
}
