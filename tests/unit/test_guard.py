"""actors.guard: a failure inside an actor method or a background greenlet is logged, never
fatal, and names the session of an object that works for one."""
import gevent

from actors.guard import guarded, spawn_later_logged, spawn_logged


class Worker:
    """Stands for a Chat or a CliProcess: its log_subject names the conversation it works for."""

    def __init__(self, subject=None):
        if subject is not None:
            self.log_subject = subject

    @guarded
    def handle(self, value):
        return 10 // value

    def work(self):
        raise RuntimeError("broken pipe")


def bug_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if " bug: " in line]


def test_a_failing_guarded_method_answers_none_and_its_line_names_the_session(capsys):
    assert Worker("session s-1").handle(2) == 5
    assert Worker("session s-1").handle(0) is None
    [line] = bug_lines(capsys)
    assert "bug: Worker.handle (session s-1) failed:" in line


def test_a_failing_background_task_of_a_session_names_it(capsys):
    spawn_logged(Worker("session s-2").work).join()
    spawn_later_logged(0, Worker("session s-3").work).join()
    gevent.sleep(0)  # the link runs on the next turn of the loop
    lines = bug_lines(capsys)
    assert len(lines) == 2 and "(session s-2) failed: RuntimeError('broken pipe')" in lines[0]
    assert "(session s-3) failed" in lines[1]


def test_what_works_for_no_session_is_logged_without_one(capsys):
    assert Worker().handle(0) is None
    spawn_logged(Worker().work).join()
    gevent.sleep(0)
    lines = bug_lines(capsys)
    assert "bug: Worker.handle failed:" in lines[0] and "session" not in " ".join(lines)
