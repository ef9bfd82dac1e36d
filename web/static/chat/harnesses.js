// The harnesses as the panel names them, and the few things one can or cannot do that change
// what the panel says. devhostd lists them (GET /__devhost__/chat/harnesses: id, label, models,
// available): the two CLIs built in, and any agent the manifest names ([devtools.chat.<id>]
// protocol = "acp"), whose id and label are the manifest's. So the panel keeps no list of names
// of its own beyond the built-ins', which it needs before the list arrives (a reload draws the
// conversation first).
//
// Whether a harness takes a message sent during a turn into that turn: Claude Code (its streaming
// input) and Codex (turn/steer) do; an agent of `protocol: "acp"` takes one session/prompt at a
// time, so devhostd holds the message until the turn ends (actors/harness/acp/protocol.py). An
// entry's own `steers` would win, were devhostd to send one.

const BUILT_IN = {
  "claude-code": { label: "Claude Code", steers: true },
  codex: { label: "Codex", steers: true },
};

const listed = new Map(); // harness id -> devhostd's entry, as last listed

/** devhostd's list (api.harnesses): the labels and abilities every module reads from now on. */
export function knowHarnesses(entries) {
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (entry && typeof entry.id === "string") listed.set(entry.id, entry);
  }
}

/** A harness's name for a person: devhostd's label, a built-in's, else its id; `fallback` for none. */
export function harnessLabel(id, fallback = "the agent") {
  if (!id) return fallback;
  return listed.get(id)?.label || BUILT_IN[id]?.label || id;
}

/** Whether the harness takes a message sent during a turn into that turn. */
export function steers(id) {
  const entry = listed.get(id);
  if (typeof entry?.steers === "boolean") return entry.steers;
  if (entry?.protocol === "acp") return false;
  return Boolean(BUILT_IN[id]?.steers);
}

/** What a `queued` acknowledgement means for this harness, in the words under the message. */
export function queuedText(id) {
  return steers(id) ? "queued" : `queued: ${harnessLabel(id)} takes it when this turn ends`;
}
