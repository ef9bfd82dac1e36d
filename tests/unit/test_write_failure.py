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


def test_attachments_that_could_not_be_saved_say_nothing_was_sent():
    words = write_failure.attachments_not_saved("/state/core", _error(errno.ENOSPC))
    assert words.startswith("The message was not sent") and "is full" in words
    assert words.endswith("Free space on that disk, then send it again.")


def test_any_other_request_a_full_disk_refused_names_the_folder_of_the_file():
    words = write_failure.not_done(OSError(errno.ENOSPC, "No space left on device", "/state/core/chats/v-x.json"))
    assert "the disk holding devhostd's state folder (/state/core/chats) is full" in words
    assert words.endswith("Free space on that disk, then try again.")
