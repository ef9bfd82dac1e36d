// A chat log record in a person's words: "Turn 2 completed in 3.1 s", "Bash failed after 0.4 s
// (exit 1)", "Approval answered after 5 s". The records and their fields are the daemon's
// (actors/chatlog.py, README "The chat log"); a record this does not know is said by its name
// and fields, so nothing is hidden.

const STATUS = { requires_action: "waits for you", running: "working", idle: "idle", starting: "starting",
  closed: "closed", error: "error" };
const LIMIT = { usage: "a usage limit", rate: "a rate limit (too many requests)", overload: "an overloaded model" };

/** "3.1s" (as the daemon writes a duration) as "3.1 s"; anything else as it is. */
function span(value) {
  return typeof value === "string" ? value.replace(/^(\d+(?:\.\d+)?)s$/, "$1 s") : String(value);
}

function turn(fields) {
  return fields.turn !== undefined ? `Turn ${fields.turn}` : "The turn";
}

/** A request by the CLI's own kind: Claude Code's control subtype, Codex's method. */
function request(fields) {
  const kind = String(fields.kind || "");
  if (kind === "can_use_tool" || kind.endsWith("requestApproval")) return "Approval";
  if (/userinput|elicitation|question/i.test(kind)) return "Question";
  return kind ? `Request (${kind})` : "Request";
}

function tool(fields) {
  return fields.name || "A tool";
}

const WORDS = {
  "turn.start": (f) => `${turn(f)} started${f.model && f.model !== "default" ? ` (${f.model})` : ""}`,
  "turn.end": (f) => {
    const took = f.took ? ` ${f.outcome === "completed" ? "in" : "after"} ${span(f.took)}` : "";
    const how = { completed: "completed", interrupted: "was interrupted", failed: "failed" }[f.outcome] || `ended (${f.outcome})`;
    return `${turn(f)} ${how}${took}${f.error ? `: ${f.error}` : ""}`;
  },
  "turn.heartbeat": (f) => `${turn(f)} still running (${span(f.elapsed)}, quiet for ${span(f.quiet)})`,
  "turn.limit": (f) => `${turn(f)} stopped on ${LIMIT[f.kind] || `a limit (${f.kind})`}${f.resets ? `, resets ${f.resets}` : ""}`,
  "turn.usage": (f) => {
    const tokens = f.input_tokens !== undefined ? `: ${f.input_tokens} tokens in, ${f.output_tokens ?? 0} out` : "";
    return `${turn(f)} usage${tokens}${f.total_cost_usd !== undefined ? ` ($${f.total_cost_usd})` : ""}`;
  },
  "turn.resume-owed": (f) => `${turn(f)} will be taken up again at ${f.at}`,
  "turn.resume-lapsed": (f) => `${turn(f)}: taking it up again was given up`,
  "turn.resume-after-limit": (f) => `${turn(f)} taken up again after ${LIMIT[f.kind] || "its limit"}`,
  "tool.start": (f) => `${tool(f)} started${f.path ? ` (${f.path})` : ""}`,
  "tool.end": (f) => `${tool(f)} ${f.outcome === "error" ? "failed" : "done"}${f.took ? ` ${f.outcome === "error" ? "after" : "in"} ${span(f.took)}` : ""}${f.exit !== undefined ? ` (exit ${f.exit})` : ""}`,
  "request.open": (f) => `${request(f)} asked`,
  "request.answered": (f) => `${request(f)} answered${f.waited ? ` after ${span(f.waited)}` : ""}`,
  "request.cancelled": (f) => `${request(f)} cancelled${f.waited ? ` after ${span(f.waited)}` : ""}`,
  "message.sent": (f) => `Message sent${f.attachments ? ` with ${f.attachments} attachment${f.attachments === 1 ? "" : "s"}` : ""}${f.joined ? " (joined the running turn)" : ""}`,
  "message.ack": (f) => `Message ${f.delivery === "error" ? "refused" : f.delivery || "acknowledged"}${f.after ? ` after ${span(f.after)}` : ""}${f.error ? `: ${f.error}` : ""}`,
  "session.start": (f) => `Session started${f.model && f.model !== "default" ? ` (${f.model})` : ""}`,
  "session.resume": () => "Session resumed",
  "session.close": () => "Session closed",
  "session.ended": (f) => `The CLI exited${f.code !== undefined ? ` (code ${f.code})` : ""}`,
  "session.native": () => "The CLI named its session",
  "session.status": (f) => `Status: ${STATUS[f.status] || f.status}`,
  "usage.window": (f) => `Usage window ${f.window}: ${typeof f.used === "number" ? `${Math.round(f.used * 100)}% used` : f.status}`,
  "store.saved": () => "The chat was saved again",
  "store.unsaved": () => "The chat could not be saved",
  error: (f) => `Error${f.kind ? ` (${f.kind})` : ""}${f.error ? `: ${f.error}` : ""}`,
};

/** The record's raw line: its name and fields as the daemon's log prints them. */
export function rawLine(entry) {
  const fields = Object.entries(entry.fields || {})
    .map(([key, value]) => `${key}=${typeof value === "boolean" ? (value ? "yes" : "no") : value}`).join(" ");
  return `${entry.record} ${fields}`.trim();
}

/** What happened, in words. */
export function describe(entry) {
  const words = WORDS[entry.record];
  return words ? words(entry.fields || {}) : rawLine(entry);
}
