"""actors.harness.skills: the skills of a chat's folder, as each pinned CLI reports them
(tests/fixtures/modes/claude-skills.jsonl, codex-skills.jsonl) and as the disk holds them."""
import json
import os
from pathlib import Path

from actors.harness import skills
from actors.harness.claude import protocol as claude
from actors.harness.codex import protocol as codex

MODES = Path(__file__).resolve().parent.parent / "fixtures" / "modes"
SKILL = "---\nname: {name}\ndescription: Says hello the {name} way.\n---\n\nSay hello.\n"


def frames(name: str, direction: str = "cli->host") -> list[dict]:
    rows = [json.loads(line) for line in (MODES / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    return [r["frame"] for r in rows if r["dir"] == direction]


def by_name(listed):
    return {s["name"]: s for s in listed}


# ---- what the running CLI reports -------------------------------------------------------------

def test_claude_names_its_skills_in_system_init_described_by_initialize():
    driver = claude.ClaudeDriver(cwd="/home/dev/tmp/project")
    driver.start_frames()  # its initialize is devhost-1
    recorded = frames("claude-skills")
    answer = next(f for f in recorded if f.get("type") == "control_response")
    driver.read({**answer, "response": {**answer["response"], "request_id": "devhost-1"}})
    assert driver.skills is None  # initialize lists commands, not which are skills
    driver.read(next(f for f in recorded if f.get("subtype") == "init"))
    found = by_name(driver.skills)
    assert found["greet-claude"] == {"name": "greet-claude", "description": "Says hello the greet-claude way.",
                                     "source": "project"}
    assert "hello-cmd" not in found  # a command, not a skill
    assert found["dataviz"]["source"] == "plugin"  # the CLI's own
    assert "greet-agents" not in found and "greet-codex" not in found  # Claude Code does not read those


def test_codex_reports_its_folder_skills_with_their_paths():
    reply = next(f for f in frames("codex-skills") if f.get("id") == 2)
    found = by_name(skills.codex_reported(reply["result"]))
    assert found["greet-agents"] == {
        "name": "greet-agents", "description": "Says hello the greet-agents way.", "source": "project",
        "path": "/home/dev/tmp/project/.agents/skills/greet-agents/SKILL.md"}
    assert found["greet-codex"]["source"] == "project"
    assert found["imagegen"]["source"] == "plugin"  # bundled with Codex (scope system)
    assert skills.public([found["greet-agents"]]) == [{"name": "greet-agents", "source": "project",
                                                        "description": "Says hello the greet-agents way."}]


def test_the_codex_driver_asks_skills_list_for_its_folder_and_reads_the_answer():
    driver = codex.CodexDriver(cwd="/work/project")
    frame, deadline = driver.skills_frames()
    assert frame["method"] == "skills/list" and frame["params"] == {"cwds": ["/work/project"]}
    reply = next(f for f in frames("codex-skills") if f.get("id") == 2)
    keep, found, _ = driver.read({**reply, "id": frame["id"]})
    assert not keep and [s["name"] for s in found[0].listed][:2] == ["greet-agents", "greet-codex"]
    assert driver.skills == list(found[0].listed)
    again, _ = driver.skills_frames()
    assert driver.expire(again["id"])[0].listed is None  # no answer in time: the disk says instead
    refused = driver.read({"id": driver.skills_frames()[0]["id"], "error": {"message": "no"}})
    assert refused[1][0].listed is None


# ---- the disk -----------------------------------------------------------------------------------

def test_front_matter_reads_name_and_description_only():
    assert skills.front_matter(SKILL.format(name="x")) == {"name": "x", "description": "Says hello the x way."}
    assert skills.front_matter('---\nname: "q: x"\ndescription: >\n  one\n  two\nother: 1\n---\n') == {
        "name": "q: x", "description": "one two"}
    assert skills.front_matter("---\nname: x\n") == {}  # never closed
    assert skills.front_matter("no front matter") == {}


def test_the_disk_gives_the_project_then_the_person_and_follows_no_link_out(tmp_path):
    project, home, elsewhere = tmp_path / "project", tmp_path / "home", tmp_path / "elsewhere"
    for folder, name in ((project / ".claude/skills", "mine"), (home / "skills", "personal"),
                         (home / "skills", "mine"), (elsewhere, "secret")):
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "SKILL.md").write_text(SKILL.format(name=name))
    os.symlink(elsewhere / "secret", project / ".claude/skills/linked")  # a link out of the folder
    (project / ".claude/skills/nameless").mkdir()
    (project / ".claude/skills/nameless/SKILL.md").write_text("just text")
    found = skills.on_disk(skills.CLAUDE_FOLDERS, str(project), str(home))
    assert [(s["name"], s["source"]) for s in found] == [("mine", "project"), ("nameless", "project"),
                                                         ("personal", "user")]
    assert found[0]["path"] == str(project / ".claude/skills/mine/SKILL.md")
    codex_sees = skills.on_disk(skills.CODEX_FOLDERS, str(project), str(home))  # not .claude/skills
    assert [(s["name"], s["source"]) for s in codex_sees] == [("mine", "user"), ("personal", "user")]


def test_a_huge_skill_file_is_read_only_so_far(tmp_path):
    folder = tmp_path / ".agents/skills/big"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: big\ndescription: " + "d" * 100_000 + "\n---\n")
    found = skills.on_disk(skills.CODEX_FOLDERS, str(tmp_path), str(tmp_path / "nohome"))
    assert found == [{"name": "big", "description": "", "source": "project", "path": str(folder / "SKILL.md")}]
