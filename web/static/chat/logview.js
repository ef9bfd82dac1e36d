// The log in the panel: the daemon's chat records of this page's directory (never a prompt, a
// reply, a tool's input or output, or an answer), as a compact minimap of recent activity (a
// tick per record: turns, tools, approvals, errors) that opens into the list. The latest
// KEEP records are kept; the stream reconnects by itself and starts again from its snapshot.

import { devhostURL, pageURL } from "./api.js";
import { ChatConnection } from "./connection.js";
import { el } from "./dom.js";

export const KEEP = 512;
const TICKS = 80; // the minimap shows this many of the newest records

/** What a record is, for its tick's colour. */
export function kindOf(record) {
  if (record === "error" || record.endsWith(".failed")) return "error";
  if (record.startsWith("turn.")) return "turn";
  if (record.startsWith("tool.")) return "tool";
  if (record.startsWith("request.")) return "request";
  if (record.startsWith("message.")) return "message";
  return "session";
}

function line(entry) {
  const time = new Date(entry.time * 1000).toLocaleTimeString([], { hour12: false });
  const fields = Object.entries(entry.fields || {})
    .map(([key, value]) => `${key}=${typeof value === "boolean" ? (value ? "yes" : "no") : value}`).join(" ");
  return `${time} ${entry.record} ${fields}`;
}

export class LogView {
  constructor() {
    this.entries = [];
    this.session = null; // the chat id whose records are shown; null: every session of the page
    this.connection = null;
    this.ui = {
      map: el("button", { type: "button", class: "logmap", title: "Chat log: recent activity (open for the list)",
                          "aria-label": "Chat log", "aria-expanded": "false", onclick: () => this.toggle() }),
      list: el("div", { class: "loglist", hidden: true, role: "log", "aria-label": "Chat log" }),
    };
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

  render() {
    const shown = this._shown();
    const { map, list } = this.ui;
    map.replaceChildren(...shown.slice(-TICKS).map((entry) =>
      el("span", { class: `tick k-${kindOf(entry.record)}`, title: line(entry) })));
    map.hidden = shown.length === 0;
    if (!list.hidden) {
      const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 20;
      list.replaceChildren(...shown.map((entry) => el("div", { class: `logline k-${kindOf(entry.record)}` }, line(entry))));
      if (atBottom) list.scrollTop = list.scrollHeight;
    }
  }
}
