"""The CLIs devhost drives, by harness id: one package per harness (claude/, codex/), each
holding the CLI's protocol, its files and transcripts, and what the agents scanner needs of its
formats. None of it is an actor."""
from actors.harness import claude, codex

HARNESSES = {claude.HARNESS_ID: claude, codex.HARNESS_ID: codex}
