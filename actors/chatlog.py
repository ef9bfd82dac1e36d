"""Chat activity lines for the daemon's terminal.

Every line names the devhost session and harness. Lines never carry prompts, replies, tool
input or output, or approval answers: callers pass ids, counts, paths and outcomes only.
Error details are cut at 512 bytes and a whole line at 2 KiB.
"""
from __future__ import annotations

import sys
import time

from actors.session_rules import ERROR_DETAIL_BYTES, LOG_LINE_BYTES, cut_utf8


def format_line(session_id: str, harness: str, record: str, fields: dict) -> str:
    parts = [time.strftime("%H:%M:%S"), "chat", f"session={session_id}", f"harness={harness}", record]
    for key, value in fields.items():
        if value is None:
            continue
        text = " ".join(str(value).split())  # one record, one line, whatever a value holds
        if key in ("error", "stderr"):
            text = cut_utf8(text, ERROR_DETAIL_BYTES)
        parts.append(f"{key}={text}" if " " not in text else f'{key}="{text}"')
    return cut_utf8(" ".join(parts), LOG_LINE_BYTES)


def log(session_id: str, harness: str, record: str, **fields) -> None:
    print(format_line(session_id, harness, record, fields), file=sys.stderr, flush=True)


def daemon_log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} devhostd {cut_utf8(message, LOG_LINE_BYTES)}", file=sys.stderr, flush=True)
