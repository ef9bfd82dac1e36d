"""storage.write_failure: what a failed write to the state folder is called and what a person
is told to do about it."""
import errno

from storage import write_failure


def _error(number):
    return OSError(number, __import__("os").strerror(number))


def test_a_full_disk_or_quota_says_so_and_says_to_free_space():
    for number in (errno.ENOSPC, errno.EDQUOT):
        words = write_failure.chat_not_saved("/state/core", _error(number))
        assert "the disk holding devhostd's state folder (/state/core) is full" in words
        assert "Free space on that disk, then send again (or reload the page)" in words
        assert "nothing the agent said is lost" in words
        assert write_failure.code(_error(number)) == "storage-full"


def test_another_write_failure_is_named_by_what_the_system_said():
    words = write_failure.chat_not_saved("/state/core", _error(errno.EIO))
    assert "writing devhostd's state folder (/state/core) failed: Input/output error" in words
    assert "is full" not in words and "Check that disk" in words
    assert write_failure.code(_error(errno.EIO)) == "storage-failed"

