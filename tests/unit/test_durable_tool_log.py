"""actors.durable_tool_log: what the log says a tool works on."""
from __future__ import annotations

from actors.durable_tool_log import tool_subject


def test_a_tools_subject_is_its_file_or_its_folder_and_never_its_input():
    assert tool_subject({"input": {"file_path": "/src/a.py", "content": "secret"}}) == "/src/a.py"
    assert tool_subject({"input": {"command": "ls", "cwd": "/src"}}) == "/src"
    assert tool_subject({"changes": [{"path": "b.py", "diff": "+x"}]}) == "b.py"
    assert tool_subject({"input": {"command": "rm -rf /"}}) is None
