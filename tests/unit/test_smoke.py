import gevent.monkey

def test_threading_is_patched():
    assert gevent.monkey.is_module_patched("threading")


def test_the_versions_doctor_compares_against_are_the_ones_the_tests_pin():
    import re
    from pathlib import Path

    from actors.harness import claude, codex
    peers_sh = (Path(__file__).parents[1] / "peers.sh").read_text()
    pins = dict(re.findall(r"^(CLAUDE|CODEX)_VERSION=(\S+)", peers_sh, re.M))
    assert (claude.TESTED_VERSION, codex.TESTED_VERSION) == (pins["CLAUDE"], pins["CODEX"])
