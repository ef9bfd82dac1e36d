"""web.hub_monitor: gevent's monitor reports, one log line per block of the daemon's own hub."""
import gevent
import gevent.events
from gevent import monkey

from web.hub_monitor import HubBlockReports, report, where

REPORT = ["=" * 80, "\n2026-01-01T00:00:00Z : Greenlet <Greenlet at 0x1: work> appears to be blocked",
          "    Reported by <tracer>", "Blocked Stack (for thread id 0x1):",
          '  File "a.py", line 1, in outer\n    outer()\n  File "b.py", line 2, in inner\n    clip(text)\n',
          "Info:", "(the rest of the report)"]


def _from_the_monitor_thread(reports: HubBlockReports, *events) -> None:
    start_new_thread = monkey.get_original("_thread", "start_new_thread")
    allocate_lock = monkey.get_original("_thread", "allocate_lock")
    done = allocate_lock()
    done.acquire()

    def run():
        for event in events:
            reports.on_event(event)
        done.release()
    start_new_thread(run, ())
    while not done.acquire(False):
        gevent.sleep(0.001)


def _blocked(hub) -> gevent.events.EventLoopBlocked:
    return gevent.events.EventLoopBlocked(None, 0.05, list(REPORT), hub=hub)


def test_the_reports_of_one_block_are_one_line_written_by_the_hub_once_it_runs_again():
    lines = []
    hub = gevent.get_hub()
    reports = HubBlockReports(hub, log=lines.append)
    _from_the_monitor_thread(reports, _blocked(hub), _blocked(hub), _blocked(hub))
    gevent.sleep(0.01)
    assert len(lines) == 1, lines
    assert lines[0].startswith("warning: the hub was blocked for ") and "3 reports" in lines[0]
    assert lines[0].endswith('<Greenlet at 0x1: work>: File "a.py", line 1, in outer | outer() | '
                             'File "b.py", line 2, in inner | clip(text)')


def test_a_hub_of_another_thread_is_never_reported():
    lines = []
    reports = HubBlockReports(gevent.get_hub(), log=lines.append)
    _from_the_monitor_thread(reports, _blocked(object()), gevent.events.EventLoopBlocked(None, 0.05, [], hub=None))
    gevent.sleep(0.01)
    assert lines == []


def test_where_says_so_when_the_report_has_no_stack():
    assert where(["something else"]) == "?: "


def test_the_cheap_report_names_the_blocked_greenlet_and_its_innermost_frames():
    import sys

    class Work:
        def __repr__(self):
            return "<Greenlet at 0x2: work>"

    def clip_it():
        return report(1, Work(), sys._getframe())
    found = where(clip_it())
    assert found.startswith("<Greenlet at 0x2: work>: ") and "clip_it" in found
