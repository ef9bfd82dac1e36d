"""The CLIs devhost drives, by harness id. Each module is plain protocol logic (no actor)."""
from actors.harness import claude, codex

HARNESSES = {claude.HARNESS_ID: claude, codex.HARNESS_ID: codex}
