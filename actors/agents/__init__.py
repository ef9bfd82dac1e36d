"""Finding the coding agents running on this machine and reading what they do.

Plain modules, no actors: the AgentScanner actor (actors/agent_scanner.py) owns one scan and
the activity tails, and calls into these.

- ``procs``: one pass over /proc, classifying processes by harness, the top-level rule.
- ``jsonl``: reading JSON-lines transcripts from their end and tailing them from an offset.
- ``claude``, ``codex``, ``pi``, ``opencode``: where each harness keeps its sessions, which
  session a process runs, its transcript's records as agent-parser events, its state.
- ``rows``: the agents list: keys, subdirectories, order, the shape a page sees.
- ``scan``: one scan of every agent on the machine, each harness on its own.
"""
HARNESS_IDS = ("claude-code", "codex", "pi", "opencode")
STATES = ("waiting", "working", "unknown", "idle")  # the order a person needs to see them in
