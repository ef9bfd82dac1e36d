// The changes an agent makes to files, shown as diffs: Claude Code's Edit / MultiEdit / Write
// inputs and Codex's file changes. Line diffs come from jsdiff (vendored, ./vendor/diff/); a
// unified diff Codex already made is shown as it is. Text only, never HTML.

import { diffLines } from "./vendor/diff/diff/line.js";
import { el } from "./dom.js";

const MAX_DIFF_CHARS = 200_000; // past this a change is shown by its size only

/** The file changes a tool call's input describes: [{path, lines: [[sign, text]…]}], or null. */
export function fileChanges(name, input) {
  if (!input || typeof input !== "object") return null;
  if (name === "Edit" && typeof input.old_string === "string" && typeof input.new_string === "string") {
    return [{ path: input.file_path, lines: lineDiff(input.old_string, input.new_string) }];
  }
  if (name === "MultiEdit" && Array.isArray(input.edits)) {
    const lines = input.edits.flatMap((edit, index) => [
      ...(index ? [[" ", "⋯"]] : []), ...lineDiff(String(edit.old_string ?? ""), String(edit.new_string ?? ""))]);
    return [{ path: input.file_path, lines }];
  }
  if (name === "Write" && typeof input.content === "string") {
    return [{ path: input.file_path, lines: lineDiff("", input.content) }];
  }
  if (Array.isArray(input.changes)) { // Codex: {path, kind, diff} with diff a unified diff (or a new file's text)
    return input.changes.map((change) => ({ path: change.path, kind: change.kind, lines: unified(change) }));
  }
  return null;
}

function lineDiff(before, after) {
  if (before.length + after.length > MAX_DIFF_CHARS) return [[" ", `(${before.length} → ${after.length} characters)`]];
  const lines = [];
  for (const part of diffLines(before, after)) {
    const sign = part.added ? "+" : part.removed ? "-" : " ";
    for (const line of part.value.replace(/\n$/, "").split("\n")) lines.push([sign, line]);
  }
  return lines;
}

function unified(change) {
  const text = String(change.diff ?? "");
  if (text.length > MAX_DIFF_CHARS) return [[" ", `(${text.length} characters of changes)`]];
  const isPatch = /^(@@|---|\+\+\+|diff )/m.test(text);
  if (!isPatch) return text.replace(/\n$/, "").split("\n").map((line) => [change.kind === "delete" ? "-" : "+", line]);
  return text.replace(/\n$/, "").split("\n")
    .filter((line) => !/^(---|\+\+\+|diff |index )/.test(line))
    .map((line) => (line.startsWith("@@") ? ["@", line] : [line[0] === "+" || line[0] === "-" ? line[0] : " ", line.slice(1)]));
}

/** A diff block per changed file, with its counts of added and removed lines. */
export function renderChanges(changes) {
  return el("div", { class: "diffs" }, changes.map((change) => {
    const added = change.lines.filter(([sign]) => sign === "+").length;
    const removed = change.lines.filter(([sign]) => sign === "-").length;
    return el("div", { class: "diff" },
      el("div", { class: "diff-head" }, el("span", { class: "path" }, change.path || "(a file)"),
        el("span", { class: "added" }, `+${added}`), el("span", { class: "removed" }, `−${removed}`)),
      // Focusable: a diff wider or taller than the card scrolls, and the keyboard must reach it.
      el("pre", { tabindex: "0" }, change.lines.map(([sign, text]) =>
        el("span", { class: `line ${{ "+": "add", "-": "del", "@": "hunk" }[sign] || "same"}` },
          `${sign === "@" ? "" : sign === " " ? " " : sign} ${text}\n`))));
  }));
}
