// The conversation as items, folded from the CLIs' own native events (Claude Code's stream-json
// frames, Codex's app-server notifications and requests) plus what this page alone knows: the
// messages it sent and their acknowledgements, and errors the daemon told it.
//
// Folding is deterministic: the same events give the same items, and items are ordered by the
// event that first mentioned them. A snapshot after a reconnect therefore rebuilds exactly what
// was on screen, without duplicates; what only this page knows is kept across it (`local`) and
// merged back in by the event sequence it came after.

const PROMPT_MARKER = "\n\n---\nInstructions from devhost:\n";

/** The person's own text of a message: devhost appends its prompt as a labelled section. */
export function ownText(text) {
  if (typeof text !== "string") return "";
  const at = text.indexOf(PROMPT_MARKER);
  return at === -1 ? text : text.slice(0, at);
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("\n");
}

function imagesOf(content) {
  if (!Array.isArray(content)) return [];
  const found = [];
  for (const block of content) {
    if (block?.type === "image" && block.source?.type === "base64") {
      found.push(`data:${block.source.media_type};base64,${block.source.data}`);
    } else if (block?.type === "image" && typeof block.url === "string" && block.url.startsWith("data:image/")) {
      found.push(block.url); // Codex's userMessage input
    }
  }
  return found;
}

function toolOutput(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((b) => (b?.type === "text" ? b.text : b?.type === "image" ? "[image]" : JSON.stringify(b)))
      .join("\n");
  }
  return content == null ? "" : JSON.stringify(content, null, 2);
}

export class Transcript {
  constructor() {
    this.local = new Map(); // commandId -> {text, images, anchor, delivery, error}
    this.notes = []; // {key, kind, text, anchor}: errors told to this page
    this.answers = new Map(); // requestId (as a string) -> what this page answered; memory only
    this.awaiting = new Set(); // requestIds answered on the current socket, not yet seen leave pendingRequestIds
    this.pending = new Set(); // pendingRequestIds, as strings: set by snapshot and state frames
    this.reset([]);
  }

  /** Rebuilds every item from a snapshot's events. */
  reset(events) {
    this.items = new Map();
    this.firstSeen = new Map(); // key -> sequence of the event that created it
    this.lastSequence = 0;
    this.sequence = 0;
    this.streams = new Map(); // Claude api message id -> block index -> item key
    this.finalized = new Map(); // Claude message id -> keys already given their final text
    this.sorted = null;
    this.changed = new Set();
    for (const event of events) this.apply(event);
    for (const key of this.local.keys()) this._touch(`msg:${key}`);
    this.changed = new Set(["*"]);
  }

  /** Folds one event frame ({sequence, payload}); an event seen already is ignored. */
  apply(event) {
    if (!event || typeof event.sequence !== "number" || event.sequence <= this.lastSequence) return false;
    this.lastSequence = event.sequence;
    this.sequence = event.sequence;
    const payload = event.payload || {};
    if (typeof payload.method === "string") this._codex(payload);
    else if (typeof payload.type === "string") this._claude(payload);
    return true;
  }

  /**
   * pendingRequestIds from a snapshot or state frame. An answered request that leaves the list
   * was taken. `fresh` (a snapshot: a new socket) also drops this page's answers to requests still
   * listed: the socket they went out on died before devhostd took them, so they are open again.
   * (A state frame alone cannot tell: it may have left before devhostd read the answer.)
   */
  setPending(ids, fresh = false) {
    const next = new Set((ids || []).map(String));
    for (const id of this.awaiting) if (!next.has(id)) this.awaiting.delete(id);
    if (fresh) {
      for (const id of [...this.answers.keys()]) {
        if (next.has(id)) this._unanswer(id);
      }
      this.awaiting.clear();
    }
    for (const id of new Set([...next, ...this.pending])) {
      if (next.has(id) !== this.pending.has(id) && this.items.has(`req:${id}`)) this._bump(`req:${id}`);
    }
    this.pending = next;
  }

  // ---- what only this page knows ----------------------------------------------------------

  addLocal(commandId, text, images) {
    this.local.set(commandId, { text, images, anchor: this.lastSequence, delivery: null, error: null });
    this._touch(`msg:${commandId}`);
  }

  acknowledge(commandId, delivery, error) {
    const local = this.local.get(commandId);
    if (!local) return;
    local.delivery = delivery || null;
    local.error = error || null;
    this._touch(`msg:${commandId}`);
  }

  note(kind, text) {
    const key = `note:${this.notes.length}`;
    this.notes.push({ key, kind, text, anchor: this.lastSequence });
    this.sorted = null;
    this.changed.add(key);
  }

  answered(requestId, label) {
    this.answers.set(String(requestId), label);
    this.awaiting.add(String(requestId));
    this._bump(`req:${requestId}`);
  }

  /**
   * devhostd refused a command with an `error` frame (a respond to a request no longer pending,
   * a page whose checkout changed): answers it has not taken yet are open again. Returns whether
   * any was.
   */
  refused() {
    let any = false;
    for (const id of this.awaiting) {
      if (this.pending.has(id)) {
        this._unanswer(id);
        any = true;
      }
    }
    this.awaiting.clear();
    return any;
  }

  _unanswer(id) {
    this.answers.delete(id);
    this.awaiting.delete(id);
    if (this.items.has(`req:${id}`)) this._bump(`req:${id}`);
  }

  /** Whether events show that a message reached the CLI (its native id came back). */
  seen(commandId) {
    const item = this.items.get(`msg:${commandId}`);
    return Boolean(item && (item.lifecycle || item.text !== null));
  }

  // ---- reading ---------------------------------------------------------------------------

  /** Every item in conversation order. */
  list() {
    if (!this.sorted) {
      const entries = [];
      for (const [key, item] of this.items) entries.push([this.firstSeen.get(key), key, item]);
      for (const [commandId, local] of this.local) {
        const key = `msg:${commandId}`;
        const seenAt = this.firstSeen.get(key);
        const order = Math.min(local.anchor + 0.5, seenAt ?? Infinity);
        if (seenAt === undefined) entries.push([order, key, this._userItem(key, commandId)]);
        else entries[entries.findIndex((e) => e[1] === key)][0] = order;
      }
      for (const note of this.notes) entries.push([note.anchor + 0.25, note.key, note]);
      entries.sort((a, b) => a[0] - b[0]);
      this.sorted = entries.map((e) => e[2]);
    }
    return this.sorted.map((item) => this._view(item));
  }

  /** Keys changed since the last call ("*" when everything may have). */
  takeChanged() {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  _view(item) {
    if (item.kind === "user") {
      const local = this.local.get(item.commandId);
      return { ...item, text: item.text ?? local?.text ?? null, images: item.images?.length ? item.images : local?.images || [],
               delivery: deliveryOf(item, local), rev: item.rev + (local ? 0.5 : 0) };
    }
    if (item.kind === "approval" || item.kind === "question") {
      const id = String(item.requestId);
      return { ...item, pending: this.pending.has(id), answer: this.answers.get(id) || item.outcome || null };
    }
    return item;
  }

  // ---- item bookkeeping --------------------------------------------------------------------

  _item(key, create) {
    let item = this.items.get(key);
    if (!item) {
      item = { key, rev: 0, ...create() };
      this.items.set(key, item);
      this.firstSeen.set(key, this.sequence ?? this.lastSequence);
      this.sorted = null;
    }
    this._bump(key);
    return item;
  }

  _bump(key) {
    const item = this.items.get(key);
    if (item) item.rev += 1;
    this.changed.add(key);
  }

  _touch(key) {
    this.sorted = null;
    this.changed.add(key);
  }

  _userItem(key, commandId) {
    return this.items.get(key) || { key, kind: "user", commandId, text: null, images: [], lifecycle: null, rev: 0 };
  }

  _user(commandId) {
    return this._item(`msg:${commandId}`, () => ({ kind: "user", commandId, text: null, images: [], lifecycle: null }));
  }

  _endStreaming() {
    for (const item of this.items.values()) {
      if (item.streaming) {
        item.streaming = false;
        this._bump(item.key);
      }
    }
  }

  _noteItem(key, kind, text) {
    const item = this._item(key, () => ({ kind, text }));
    item.text = text;
  }

  // ---- Claude Code (stream-json) ------------------------------------------------------------

  _claude(p) {
    switch (p.type) {
      case "command_lifecycle": {
        if (typeof p.command_uuid !== "string") return;
        const item = this._user(p.command_uuid);
        item.lifecycle = laterState(item.lifecycle, p.state);
        return;
      }
      case "user":
        return this._claudeUser(p);
      case "stream_event":
        return this._claudeStream(p);
      case "assistant":
        return this._claudeAssistant(p);
      case "control_request":
        return this._claudeRequest(p);
      case "control_cancel_request": {
        const key = `req:${p.request_id}`;
        if (this.items.has(key)) {
          this.items.get(key).withdrawn = true;
          this._bump(key);
        }
        return;
      }
      case "result":
        this._endStreaming();
        if (!p.is_error) return;
        if (p.terminal_reason === "aborted_streaming" || p.terminal_reason === "aborted_tools") {
          this._noteItem(`res:${this.sequence}`, "notice", "Interrupted.");
        } else {
          const errors = Array.isArray(p.errors) ? p.errors.filter((e) => typeof e === "string") : [];
          const text = (typeof p.result === "string" && p.result.trim()) || errors.join("; ")
            || `The turn failed (${p.terminal_reason || p.subtype || "no reason given"}).`;
          this._noteItem(`res:${this.sequence}`, "error", text);
        }
        return;
      case "system":
        if (p.subtype === "api_retry") {
          const status = p.error_status ? `${p.error_status} ` : "";
          this._noteItem(`sys:${this.sequence}`, "notice",
            `API error ${status}${p.error || ""}; retrying (attempt ${p.attempt} of ${p.max_retries}).`);
        } else if (p.subtype === "permission_denied") {
          this._noteItem(`sys:${this.sequence}`, "notice", p.message || `${p.tool_name} was not allowed.`);
        } else if (p.subtype === "compact_boundary") {
          this._noteItem(`sys:${this.sequence}`, "notice", "The conversation was compacted.");
        }
        return;
      case "rate_limit_event":
        if (p.rate_limit_info?.status === "rejected") {
          this._noteItem(`sys:${this.sequence}`, "error", "Usage limit reached.");
        }
        return;
      default:
    }
  }

  _claudeUser(p) {
    const content = p.message?.content;
    if (p.isReplay && typeof p.uuid === "string") {
      const item = this._user(p.uuid);
      item.text = ownText(textOf(content));
      item.images = imagesOf(content);
      item.lifecycle = laterState(item.lifecycle, "started");
      return;
    }
    if (!Array.isArray(content)) return;
    content.forEach((block) => {
      if (block?.type === "tool_result") {
        const tool = this._tool(`tool:${block.tool_use_id}`, "tool");
        tool.output = toolOutput(block.content);
        tool.isError = block.is_error === true;
        tool.done = true;
        tool.streaming = false;
        if (tool.request) this._answeredBy(`req:${tool.request}`, claudeOutcome(tool));
      }
      // "[Request interrupted by user]" markers are not shown: the turn's result says it once.
    });
  }

  /** What a request's answer was, read from what followed it (a reloaded page never saw the
      answer go out): only where no answer is known already. */
  _answeredBy(key, outcome) {
    const request = this.items.get(key);
    if (!outcome || !request || request.outcome) return;
    request.outcome = outcome; // what this page answered itself, if it did, still wins (_view)
    this._bump(key);
  }

  _tool(key, name) {
    return this._item(key, () => ({ kind: "tool", name, input: null, inputText: "", output: null, isError: false,
                                     done: false, streaming: true, status: null }));
  }

  _claudeStream(p) {
    const event = p.event || {};
    const messageId = p.api_message_id || event.message?.id || this.streamMessage;
    if (event.type === "message_start") {
      this.streamMessage = event.message?.id;
      return;
    }
    if (!messageId) return;
    const blocks = this.streams.get(messageId) || new Map();
    this.streams.set(messageId, blocks);
    if (event.type === "content_block_start") {
      const block = event.content_block || {};
      let item;
      if (block.type === "tool_use") {
        item = this._tool(`tool:${block.id}`, block.name);
        item.name = block.name;
      } else if (block.type === "thinking" || block.type === "redacted_thinking") {
        item = this._item(`blk:${messageId}:${event.index}`, () => ({ kind: "thinking", text: "", streaming: true }));
      } else if (block.type === "text") {
        item = this._item(`blk:${messageId}:${event.index}`, () => ({ kind: "assistant", text: "", streaming: true }));
      } else {
        return;
      }
      item.sub = Boolean(p.parent_tool_use_id);
      blocks.set(event.index, item.key);
      return;
    }
    const key = blocks.get(event.index);
    const item = key && this.items.get(key);
    if (!item) return;
    if (event.type === "content_block_delta") {
      const delta = event.delta || {};
      if (delta.type === "text_delta") item.text += delta.text || "";
      else if (delta.type === "thinking_delta") item.text += delta.thinking || "";
      else if (delta.type === "input_json_delta") item.inputText += delta.partial_json || "";
      else return;
      this._bump(key);
    } else if (event.type === "content_block_stop" && item.kind !== "tool") {
      item.streaming = false;
      this._bump(key);
    }
  }

  _claudeAssistant(p) {
    const message = p.message || {};
    const content = Array.isArray(message.content) ? message.content : [];
    if (message.model === "<synthetic>" || p.is_api_error_message) {
      this._noteItem(`err:${p.uuid || this.sequence}`, "error", textOf(content) || p.error || "The API call failed.");
      return;
    }
    const done = this.finalized.get(message.id) || new Set();
    this.finalized.set(message.id, done);
    const streamed = this.streams.get(message.id) || new Map();
    content.forEach((block, position) => {
      if (block?.type === "tool_use") {
        const tool = this._tool(`tool:${block.id}`, block.name);
        tool.name = block.name;
        tool.input = block.input ?? null;
        tool.sub = Boolean(p.parent_tool_use_id);
        return;
      }
      const kind = block?.type === "text" ? "assistant" : block?.type === "thinking" ? "thinking" : null;
      if (!kind) return;
      // One assistant frame per content block: it completes the first streamed block of its
      // kind not yet completed, or stands alone when nothing was streamed (no partial messages).
      let key = [...streamed.values()].find((k) => !done.has(k) && this.items.get(k)?.kind === kind);
      if (!key) key = `blk:${message.id}:a${done.size}:${position}`;
      done.add(key);
      const item = this._item(key, () => ({ kind, text: "", streaming: false }));
      item.text = kind === "assistant" ? block.text || "" : block.thinking || "";
      item.streaming = false;
      item.aborted = p.aborted === true;
      item.sub = Boolean(p.parent_tool_use_id);
    });
  }

  _claudeRequest(p) {
    const request = p.request || {};
    if (request.subtype !== "can_use_tool") return;
    const key = `req:${p.request_id}`;
    const input = request.input || {};
    if (request.tool_name === "AskUserQuestion" && Array.isArray(input.questions)) {
      const item = this._item(key, () => ({ kind: "question", harness: "claude-code", requestId: p.request_id }));
      item.questions = input.questions.map((q, index) => ({
        id: String(index), text: q.question || "", header: q.header || "", multiple: q.multiSelect === true,
        options: (q.options || []).map((o) => ({ label: o.label, description: o.description || "" })),
      }));
      item.input = input;
      return;
    }
    const item = this._item(key, () => ({ kind: "approval", harness: "claude-code", requestId: p.request_id }));
    item.title = `${request.display_name || request.tool_name || "A tool"}`;
    item.detail = request.description || "";
    item.input = input;
    item.toolName = request.tool_name;
    item.sessionRules = (request.permission_suggestions || []).filter((s) => s?.type === "addRules");
    if (request.tool_use_id && this.items.has(`tool:${request.tool_use_id}`)) {
      this.items.get(`tool:${request.tool_use_id}`).request = p.request_id;
    }
  }

  // ---- Codex (app-server) -------------------------------------------------------------------

  _codex(p) {
    const params = p.params || {};
    if (p.id !== undefined && p.id !== null) return this._codexRequest(p, params);
    switch (p.method) {
      case "item/started":
      case "item/completed":
        return this._codexItem(params.item || {}, p.method === "item/completed");
      case "item/agentMessage/delta":
      case "item/reasoning/summaryTextDelta":
      case "item/reasoning/textDelta":
      case "item/plan/delta": {
        const key = `it:${params.itemId}`;
        const kind = p.method === "item/agentMessage/delta" ? "assistant" : "thinking";
        const item = this._item(key, () => ({ kind, text: "", streaming: true }));
        item.text += params.delta || "";
        return;
      }
      case "item/commandExecution/outputDelta": {
        const item = this._tool(`it:${params.itemId}`, "Shell");
        item.output = (item.output || "") + (params.delta || "");
        return;
      }
      case "serverRequest/resolved": {
        const key = `req:${params.requestId}`;
        if (this.items.has(key)) {
          this.items.get(key).resolved = true;
          this._bump(key);
        }
        return;
      }
      case "turn/completed": {
        this._endStreaming();
        const turn = params.turn || {};
        if (turn.status === "failed") {
          this._noteItem(`res:${this.sequence}`, "error", turn.error?.message || "Native Codex turn failed");
        } else if (turn.status === "interrupted") {
          this._noteItem(`res:${this.sequence}`, "notice", "Interrupted.");
        }
        return;
      }
      case "error":
        if (params.willRetry) this._noteItem(`sys:${this.sequence}`, "notice", params.error?.message || "Retrying…");
        return;
      default:
    }
  }

  _codexItem(item, completed) {
    const key = `it:${item.id}`;
    switch (item.type) {
      case "userMessage": {
        const user = this._user(item.clientId || item.id);
        user.text = ownText(textOf(item.content));
        user.images = imagesOf(item.content);
        user.lifecycle = laterState(user.lifecycle, "started");
        return;
      }
      case "agentMessage": {
        const message = this._item(key, () => ({ kind: "assistant", text: "", streaming: true }));
        if (completed || item.text) message.text = item.text || message.text;
        message.streaming = !completed;
        return;
      }
      case "reasoning": {
        const thinking = this._item(key, () => ({ kind: "thinking", text: "", streaming: true }));
        const parts = [...(item.summary || []), ...(item.content || [])].filter((s) => typeof s === "string");
        if (parts.length) thinking.text = parts.join("\n");
        thinking.streaming = !completed;
        return;
      }
      case "commandExecution": {
        const tool = this._tool(key, "Shell");
        tool.input = { command: item.command, cwd: item.cwd };
        if (completed) {
          tool.output = item.aggregatedOutput ?? tool.output;
          tool.done = true;
          tool.streaming = false;
          tool.status = item.status;
          tool.isError = item.status === "failed" || item.status === "declined";
          tool.exitCode = item.exitCode;
          if (tool.request !== undefined) this._answeredBy(`req:${tool.request}`, codexOutcome(item.status));
        }
        return;
      }
      case "fileChange": {
        const tool = this._tool(key, "Edit files");
        tool.input = { changes: (item.changes || []).map((c) => ({ path: c.path, kind: c.kind?.type, diff: c.diff })) };
        if (completed) {
          tool.done = true;
          tool.streaming = false;
          tool.status = item.status;
          tool.isError = item.status === "failed" || item.status === "declined";
          tool.output = item.status === "completed" ? "Applied." : item.status;
          if (tool.request !== undefined) this._answeredBy(`req:${tool.request}`, codexOutcome(item.status));
        }
        return;
      }
      case "mcpToolCall":
      case "webSearch":
      case "dynamicToolCall": {
        const name = item.type === "webSearch" ? "Web search" : [item.server, item.tool].filter(Boolean).join(".") || item.type;
        const tool = this._tool(key, name);
        tool.input = item.arguments ?? item.query ?? null;
        if (completed) {
          tool.done = true;
          tool.streaming = false;
          tool.status = item.status;
          tool.output = item.error ? toolOutput(item.error.message || item.error) : toolOutput(item.result ?? "");
          tool.isError = Boolean(item.error) || item.status === "failed";
        }
        return;
      }
      default:
    }
  }

  _codexRequest(p, params) {
    const key = `req:${p.id}`;
    if (p.method === "item/commandExecution/requestApproval") {
      const item = this._item(key, () => ({ kind: "approval", harness: "codex", requestId: p.id }));
      if (this.items.has(`it:${params.itemId}`)) this.items.get(`it:${params.itemId}`).request = p.id;
      item.title = "Run a command";
      item.detail = params.reason || "";
      item.input = { command: params.command, cwd: params.cwd };
      return;
    }
    if (p.method === "item/fileChange/requestApproval") {
      const item = this._item(key, () => ({ kind: "approval", harness: "codex", requestId: p.id }));
      const change = this.items.get(`it:${params.itemId}`);
      if (change) change.request = p.id;
      item.title = "Change files";
      item.detail = params.reason || "";
      item.input = change?.input || { itemId: params.itemId };
      return;
    }
    if (p.method === "item/tool/requestUserInput") {
      const item = this._item(key, () => ({ kind: "question", harness: "codex", requestId: p.id }));
      item.questions = (params.questions || []).map((q) => ({
        id: q.id, text: q.question || "", header: q.header || "", multiple: false, secret: q.isSecret === true,
        other: q.isOther === true, options: (q.options || []).map((o) => ({ label: o.label, description: o.description || "" })),
      }));
      return;
    }
    const item = this._item(key, () => ({ kind: "approval", harness: "codex", requestId: p.id, unsupported: true }));
    item.title = p.method;
    item.detail = "The panel cannot answer this kind of request; interrupt the turn to go on.";
    item.input = params;
  }
}

/** Claude Code: a tool that ran was allowed; one refused with the words of a denial was denied. */
function claudeOutcome(tool) {
  if (!tool.isError) return "allowed";
  const said = String(tool.output || "");
  return /denied|doesn't want to proceed|rejected/i.test(said) ? "denied" : null;
}

/** Codex: a declined item was declined; one that ran (whatever it exited with) was accepted. */
function codexOutcome(status) {
  if (status === "declined") return "declined";
  return status === "completed" || status === "failed" ? "accepted" : null;
}

const ORDER = ["queued", "started", "completed"];

/** The furthest state a message reached: a cancelled or refused one stays so, and one the agent
    had started on stays started when its turn is interrupted (the reply is what was cut off). */
function laterState(current, next) {
  if (!next) return current;
  if (["cancelled", "discarded", "refused"].includes(current)) return current;
  if (next === "cancelled" && (current === "started" || current === "completed")) return current;
  if (!current || !ORDER.includes(next)) return next;
  return ORDER.indexOf(next) > ORDER.indexOf(current) ? next : current;
}

// devhostd's command_result error for a send an interrupt cancelled before the CLI got it.
const CANCELLED_BY_INTERRUPT = "not sent: an interrupt cancelled";

/** What the page shows under a message it sent: sending… queued started unconfirmed failed cancelled. */
function deliveryOf(item, local) {
  if (local?.error?.startsWith(CANCELLED_BY_INTERRUPT)) return { state: "cancelled", text: "cancelled by the interrupt" };
  if (local?.error) return { state: "failed", text: `failed: ${local.error}` };
  if (item.lifecycle === "cancelled") return { state: "cancelled", text: "cancelled" };
  if (item.lifecycle === "discarded" || item.lifecycle === "refused") {
    return { state: "failed", text: `failed: ${item.lifecycle} by the CLI` };
  }
  if (item.lifecycle === "started" || item.lifecycle === "completed" || local?.delivery === "started") {
    return { state: "started", text: "started" };
  }
  if (item.lifecycle === "queued" || local?.delivery === "queued") return { state: "queued", text: "queued" };
  if (local?.delivery === "unconfirmed") return { state: "unconfirmed", text: "unconfirmed" };
  if (local) return { state: "sending", text: "sending…" };
  return { state: "unknown", text: "" };
}
