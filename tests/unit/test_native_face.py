"""actors.native_face: a session's history and sockets, and what the sockets are told in what order."""
from actors.native_face import NativeFace
from tests.sinks import Sink


def face_with(*names):
    told = []
    face = NativeFace("s1")
    ids = {name: face.attach(Sink(name=name, journal=told))[0] for name in names}
    return face, ids, told


def test_events_are_stored_with_sequences_and_told_to_every_socket_in_order():
    face, ids, told = face_with("a", "b")
    try:
        face.store([b'{"n":1}', b'{"n":2}'])
        face.store([b'{"n":3}'])
        assert told == [("a", "NativeEvents"), ("b", "NativeEvents")] * 2
        _, reader = face.attach(Sink(name="late", journal=[]))
        assert [sequence for sequence, _ in reader] == [1, 2, 3]  # a late socket reads them all from disk
        reader.close()
    finally:
        face.close()


def test_the_socket_that_sent_last_is_told_first():
    face, ids, told = face_with("a", "b", "sender")
    try:
        face.watched(ids["sender"])
        face.store([b'{"n":1}'])
        face.publish({"id": "s1"}, [])
        assert [name for name, _ in told] == ["sender", "a", "b", "sender", "a", "b"]
        face.detach(ids["sender"])
        told.clear()
        face.store([b'{"n":2}'])
        assert [name for name, _ in told] == ["a", "b"]  # gone: nobody is put first
    finally:
        face.close()


def test_a_result_goes_to_its_socket_only_and_a_notice_to_all():
    face, ids, told = face_with("a", "b")
    try:
        face.answer(ids["b"], "c1", delivery="queued")
        face.tell_everyone("heads up")
        assert told == [("b", "CommandResult"), ("a", "Notice"), ("b", "Notice")]
        face.answer(999, "c2", error="gone")  # a socket that left: nobody to tell
        assert len(told) == 3
    finally:
        face.close()


def test_closing_the_sockets_closes_each_once_and_forgets_them():
    face, ids, told = face_with("a", "b")
    try:
        face.close_sockets(1001)
        face.close_sockets(1000)
        assert told == [("a", "close 1001"), ("b", "close 1001")]
        assert not face.has(ids["a"])
    finally:
        face.close()


def test_a_new_history_goes_on_numbering_and_its_snapshot_says_what_was_released():
    face, _, _ = face_with()
    try:
        face.store([b'{"n":1}'])
        face.new_history()
        face.store([b'{"n":2}'])
        _, reader = face.attach(Sink(name="x", journal=[]))
        # A client that saw event 1 takes event 2 as new: numbers never start over in a session.
        assert list(reader) == [(2, b'{"n":2}')] and reader.released and reader.base == 1
        reader.close()
    finally:
        face.close()


def test_a_released_history_holds_no_file_and_a_chat_nothing_ran_in_has_none():
    face = NativeFace("s")
    assert not face.holds_history
    _, empty = face.attach(Sink(name="x", journal=[]))
    assert list(empty) == [] and not empty.released
    face.store([b'{"n":1}', b'{"n":2}'])
    assert face.holds_history
    face.release()
    assert not face.holds_history
    _, reader = face.attach(Sink(name="y", journal=[]))
    assert list(reader) == [] and reader.released and reader.last_sequence == 2
    face.store([b'{"n":3}'])
    face.close()

