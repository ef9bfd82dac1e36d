"""The recorded OpenCode ACP runs (tests/fixtures/acp/opencode/), read for the ACP harness's tests."""
import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "acp" / "opencode"
CWD = "/home/dev/tmp/work"  # the recorder's scratch folder, as the recordings name it


def lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]


def agent_frames(name: str) -> list[dict]:
    """What the agent wrote, in order."""
    return [line["msg"] for line in lines(name) if line["dir"] == "<"]


def client_frames(name: str) -> list[dict]:
    return [line["msg"] for line in lines(name) if line["dir"] == ">"]


def updates(name: str, kind: str) -> list[dict]:
    """The ``update`` of every session/update of ``kind`` the agent sent."""
    return [f["params"]["update"] for f in agent_frames(name)
            if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == kind]
