"""storage.agent_abilities: what each ACP agent was measured to do, kept across restarts."""
import json

from storage.agent_abilities import FILE, AgentAbilities


def test_a_measurement_is_kept_with_its_time_and_read_back_after_a_restart(tmp_path):
    kept = AgentAbilities(str(tmp_path))
    assert kept.measured("opencode", {"loadSession": True, "seen": {"cancel": True}})
    kept.save()
    again = AgentAbilities(str(tmp_path))
    entry = again.get("opencode")
    assert entry["loadSession"] is True and entry["seen"] == {"cancel": True} and entry["measuredAt"] > 0
    assert json.loads((tmp_path / FILE).read_text())["opencode"] == entry


def test_what_one_session_saw_is_joined_with_what_earlier_ones_saw_and_the_same_again_changes_nothing(tmp_path):
    kept = AgentAbilities(str(tmp_path))
    kept.measured("opencode", {"loadSession": True, "seen": {"cancel": True}})
    assert kept.measured("opencode", {"loadSession": True, "seen": {"images": False}})
    assert kept.get("opencode")["seen"] == {"cancel": True, "images": False}
    assert not kept.measured("opencode", {"loadSession": True, "seen": {"images": False}})


def test_an_unreadable_file_is_no_measurement_yet(tmp_path):
    (tmp_path / FILE).write_text("{not json")
    assert AgentAbilities(str(tmp_path)).all() == {}
