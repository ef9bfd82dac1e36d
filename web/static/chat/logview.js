// The log in the panel: the daemon's chat records of this page's directory (never a prompt, a
// reply, a tool's input or output, or an answer), as a compact minimap of recent activity (a
// tick per record: turns, tools, approvals, errors) that opens into a list a person reads: the
// time, what happened in words (log_words.js), a filter by kind, and each record's raw line
// behind its "raw" disclosure. The latest KEEP records are kept; the stream reconnects by
// itself and starts again from its snapshot.

import { devhostURL, pageURL } from "./api.js";
import { ChatConnection } from "./connection.js";
import { el } from "./dom.js";
import { describe, rawLine } from "./log_words.js";

export const KEEP = 512;
const TICKS = 80; // the minimap shows this many of the newest records

// The filter's choices: a record's kind (kindOf), or everything.
const KINDS = [["all", "Everything"], ["turn", "Turns"], ["tool", "Tools"], ["request", "Approvals and questions"],
  ["message", "Messages"], ["error", "Errors and failures"], ["session", "Sessions"]];

/** What a record is, for its tick's colour and the filter: a failure counts as an error. */
export function kindOf(entry) {
  const record = entry.record, outcome = entry.fields?.outcome;
  if (record === "error" || record.endsWith(".failed") || outcome === "failed" || outcome === "error") return "error";
  if (record.startsWith("turn.")) return "turn";
  if (record.startsWith("tool.")) return "tool";
  if (record.startsWith("request.")) return "request";
  if (record.startsWith("message.")) return "message";
  return "session";
}

function clock(entry) {
  return new Date(entry.time * 1000).toLocaleTimeString([], { hour12: false });
}

function row(entry) {
  const time = clock(entry);
  return el("li", { class: `logline k-${kindOf(entry)}` },
    el("time", { datetime: new Date(entry.time * 1000).toISOString() }, time), " ",
    el("span", { class: "what" }, describe(entry)), " ",
    el("details", { class: "raw" }, el("summary", { title: "The record as the daemon's log has it" }, "raw"),
      el("code", {}, `${time} ${rawLine(entry)}`)));
}

export class LogView {
  constructor() {
    this.entries = [];
    this.openRaw = new Set(); // the records whose raw line the person opened
    this.session = null; // the chat id whose records are shown; null: every session of the page
    this.connection = null;
    this.ui = {
      map: el("button", { type: "button", class: "logmap", title: "Chat log: recent activity (open for the list)",
                          "aria-label": "Chat log", "aria-expanded": "false", onclick: () => this.toggle() }),
      filter: el("select", { class: "logfilter", "aria-label": "Show in the log", title: "Which records the log shows",
                             onchange: () => this.render() },
        KINDS.map(([value, label]) => el("option", { value }, label))),
      rows: el("ol", { class: "logrows", role: "log", "aria-label": "Chat log" }),
    };
    this.ui.list = el("div", { class: "loglist", hidden: true }, this.ui.filter, this.ui.rows);
  }

  /** Starts reading the log of this page's directory for `target`. */
  start(target) {
    this.connection?.stop();
    this.entries = [];
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = new URLSearchParams({ pageURL: pageURL(), chatTarget: target }).toString();
    const url = `${scheme}://${new URL(devhostURL("/")).host}/__devhost__/ws/log?${query}`;
    this.connection = new ChatConnection(() => url, { onFrame: (frame) => this._onFrame(frame), onState: () => {} });
    this.render();
  }

  show(chatId) {
    this.session = chatId || null;
    this.render();
  }

  toggle() {
    const open = this.ui.list.hidden;
    this.ui.list.hidden = !open;
    this.ui.map.setAttribute("aria-expanded", String(open));
    this.render();
  }

  _onFrame(frame) {
    if (frame.type === "snapshot") this.entries = (frame.entries || []).slice(-KEEP);
    else if (frame.type === "entry") {
      this.entries.push(frame.entry);
      if (this.entries.length > KEEP) this.entries.splice(0, this.entries.length - KEEP);
    } else return;
    this.render();
  }

  _shown() {
    return this.session ? this.entries.filter((e) => e.session === this.session) : this.entries;
  }

  _filtered(shown) {
    const kind = this.ui.filter.value;
    return kind === "all" ? shown : shown.filter((entry) => kindOf(entry) === kind);
  }

  render() {
    const shown = this._shown();
    const { map, list, rows } = this.ui;
    map.replaceChildren(...shown.slice(-TICKS).map((entry) =>
      el("span", { class: `tick k-${kindOf(entry)}`, title: `${clock(entry)} ${describe(entry)}` })));
    map.hidden = shown.length === 0;
    if (!list.hidden) {
      const atBottom = rows.scrollHeight - rows.scrollTop - rows.clientHeight < 20;
      const filtered = this._filtered(shown);
      rows.replaceChildren(...filtered.map((entry) => {
        const node = row(entry), raw = node.querySelector("details"), key = `${entry.time}|${entry.session}|${entry.record}`;
        raw.open = this.openRaw.has(key); // a raw line opened stays open while the list is drawn again
        raw.addEventListener("toggle", () => { if (raw.open) this.openRaw.add(key); else this.openRaw.delete(key); });
        return node;
      }));
      if (!filtered.length) rows.append(el("li", { class: "muted" }, "Nothing of this kind yet."));
      if (atBottom) rows.scrollTop = rows.scrollHeight;
    }
  }
}
