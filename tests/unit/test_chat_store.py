"""storage.chat_store: a core chat on disk, a record plus an append-only log."""
import errno
import json
import os
import stat

import pytest

from storage import chat_store
from actors.core.thread import new_info
from storage.chat_store import ChatStore, ChatUnreadable, encode_id, read_log
from tests.small_disk import small_disk

ODD_IDS = ["../x", "../../etc/passwd", "/", "/abs/path", ".", "..", "a/b", "a\\b", "~", "-rf", ".hidden", " ",
           "100%", "%2F", "c-x.json", "x.log", "naïve", "日本語のチャット", "emoji 🎉", "\u202eevil", "\ud800lone",
           "a" * 80, "tab\there", "new\nline"]


@pytest.fixture
def store(tmp_path) -> ChatStore:
    return ChatStore(str(tmp_path / "data"))


def info(n=0) -> dict:
    value = new_info("c1", "claude", "/tmp/project", None, "full-access")
    value["usage"]["turns"] = n
    value["createdAt"] = 1_700_000_000_000
    return value


def record(text="hello", seq=0) -> dict:
    return {"info": info(), "items": [{"id": "u", "kind": "user", "text": text}], "seq": seq, "resetSeq": 0}


# ---- ids ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("chat_id", ODD_IDS)
def test_an_encoded_id_is_one_ordinary_file_name(chat_id):
    name = encode_id(chat_id)
    assert name.startswith("c-") and name not in (".", "..")
    assert "/" not in name and "\\" not in name and "\x00" not in name and name.isascii()


@pytest.mark.parametrize("chat_id", ODD_IDS)
def test_every_id_names_files_inside_the_chats_folder(store, chat_id):
    store.write_record(chat_id, record())
    store.append(chat_id, 1, {"type": "info", "info": info()})
    assert sorted(os.listdir(store.folder)) == [encode_id(chat_id) + ".json", encode_id(chat_id) + ".log"]
    assert os.listdir(os.path.dirname(store.folder)) == ["chats"]


def test_ids_round_trip_through_the_folder_listing(store):
    for chat_id in ODD_IDS:
        store.write_record(chat_id, record())
    assert store.chat_ids() == sorted(ODD_IDS)


def test_a_chat_with_only_a_log_is_listed_once(store):
    store.append("only-log", 1, {"type": "info", "info": info()})
    store.write_record("both", record())
    store.append("both", 1, {"type": "info", "info": info()})
    assert store.chat_ids() == ["both", "only-log"]


def test_files_that_are_not_chats_are_not_listed(store):
    store.write_record("c1", record())
    for stray in ("notes.txt", "c-x.visuals.tmp", ".tmp-abc"):
        open(os.path.join(store.folder, stray), "w").close()
    assert store.chat_ids() == ["c1"]


def test_no_folder_yet_lists_no_chats(store):
    assert store.chat_ids() == [] and not store.exists("c1")


def test_distinct_ids_never_share_a_file():
    assert len({encode_id(chat_id) for chat_id in ODD_IDS}) == len(ODD_IDS)
    assert encode_id("a/b") != encode_id("a%2Fb")


def test_an_id_too_long_for_a_file_name_is_refused_up_front(store):
    with pytest.raises(ValueError):
        encode_id("/" * 200)  # 600 characters encoded: no file system takes that name
    longest = "a" * (chat_store.MAX_NAME - len("c-"))
    store.write_record(longest, record())
    store.append(longest, 1, {"type": "info", "info": info()})
    assert store.chat_ids() == [longest]


# ---- the log ------------------------------------------------------------------------------------

def test_append_writes_one_json_line_per_event_with_seq_and_time(store):
    store.append("c1", 1, {"type": "info", "info": {"a": 1}})
    store.append("c1", 2, {"type": "delta", "itemId": "x", "text": "y"})
    lines = read_log(store.log_path("c1"))
    assert [(line["seq"], line["event"]["type"]) for line in lines] == [(1, "info"), (2, "delta")]
    assert all(isinstance(line["at"], int) for line in lines)
    with open(store.log_path("c1"), "rb") as handle:
        assert handle.read().count(b"\n") == 2


def test_append_answers_the_logs_size(store):
    first = store.append("c1", 1, {"type": "info", "info": info()})
    second = store.append("c1", 2, {"type": "info", "info": info()})
    assert second == os.path.getsize(store.log_path("c1")) and 0 < first < second


def test_a_torn_last_line_is_ignored(store):
    store.append("c1", 1, {"type": "info", "info": {"n": 1}})
    with open(store.log_path("c1"), "ab") as handle:
        handle.write(b'{"seq":2,"at":1,"event":{"type":"in')  # a crash mid-append
    assert [line["seq"] for line in read_log(store.log_path("c1"))] == [1]


def test_the_append_after_a_torn_line_starts_on_a_fresh_line(store):
    store.append("c1", 1, {"type": "info", "info": {"n": 1}})
    with open(store.log_path("c1"), "ab") as handle:
        handle.write(b'{"seq":2,"at":1,"ev')
    store.append("c1", 2, {"type": "info", "info": {"n": 2}})
    store.append("c1", 3, {"type": "info", "info": {"n": 3}})
    assert [line["event"]["info"]["n"] for line in read_log(store.log_path("c1"))] == [1, 2, 3]


def test_a_write_the_disk_takes_in_part_is_written_on_until_whole(tmp_path):
    fd = os.open(tmp_path / "log", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    calls = []

    def three_bytes_at_a_time(fd, data):  # what a filling disk or a signal does to one write
        calls.append(len(data))
        return os.write(fd, bytes(data[:3]))

    try:
        chat_store.write_all(fd, b"0123456789\n", write=three_bytes_at_a_time)
    finally:
        os.close(fd)
    assert (tmp_path / "log").read_bytes() == b"0123456789\n"
    assert calls == [11, 8, 5, 2]


def test_a_write_the_disk_takes_nothing_of_is_an_error(tmp_path):
    fd = os.open(tmp_path / "log", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError) as caught:
            chat_store.write_all(fd, b"line\n", write=lambda fd, data: 0)
    finally:
        os.close(fd)
    assert caught.value.errno == errno.ENOSPC


def test_an_append_a_full_disk_refuses_leaves_the_log_as_it_was_and_the_next_one_whole(tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        store = ChatStore(disk.path)
        store.append("c1", 1, {"type": "info", "info": info(1)})
        before = open(store.log_path("c1"), "rb").read()
        disk.fill()
        big = {"type": "delta", "itemId": "x", "text": "y" * 20_000}  # more than the page the log has left
        with pytest.raises(OSError) as caught:
            store.append("c1", 2, big)
        assert caught.value.errno == errno.ENOSPC
        assert open(store.log_path("c1"), "rb").read() == before  # no half line left behind
        disk.free()
        store.append("c1", 2, big)
        assert [line["seq"] for line in read_log(store.log_path("c1"))] == [1, 2]


def test_lines_whose_seq_does_not_climb_are_skipped(store):
    os.makedirs(store.folder)
    lines = [{"seq": 1}, {"seq": 2}, {"seq": 2}, {"seq": 1}, {"seq": 3}, {"seq": 5}, {"seq": 4}]
    with open(store.log_path("c1"), "w") as handle:
        for n, line in enumerate(lines):
            handle.write(json.dumps({**line, "at": 0, "event": {"type": "info", "info": {"n": n}}}) + "\n")
    kept = read_log(store.log_path("c1"))
    assert [line["seq"] for line in kept] == [1, 2, 3, 5]
    assert [line["event"]["info"]["n"] for line in kept] == [0, 1, 4, 5]


@pytest.mark.parametrize("garbage", [b"not json", b"[1,2]", b'{"seq":"2","event":{}}', b'{"seq":2}',
                                     b'{"seq":2,"event":"x"}', b'{"seq":true,"event":{}}', b"\xff\xfe", b"[" * 5000])
def test_a_garbled_line_in_the_middle_is_skipped(store, garbage):
    store.append("c1", 1, {"type": "info", "info": info()})
    with open(store.log_path("c1"), "ab") as handle:
        handle.write(garbage + b"\n")
    store.append("c1", 3, {"type": "info", "info": info()})
    assert [line["seq"] for line in read_log(store.log_path("c1"))] == [1, 3]


def test_a_missing_log_reads_as_empty(store):
    assert read_log(store.log_path("nobody")) == []


def test_the_log_is_private(store):
    store.append("c1", 1, {"type": "info", "info": info()})
    assert stat.S_IMODE(os.stat(store.log_path("c1")).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700


# ---- the record ---------------------------------------------------------------------------------

def _record_path(store, chat_id):
    return os.path.join(store.folder, encode_id(chat_id) + ".json")


def test_write_record_makes_a_0600_file_in_a_0700_folder(store):
    store.write_record("c1", record())
    assert stat.S_IMODE(os.stat(_record_path(store, "c1")).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700


def test_write_record_folds_the_log_it_covers(store):
    store.append("c1", 1, {"type": "info", "info": info()})
    store.write_record("c1", record(seq=1))
    assert not os.path.exists(store.log_path("c1"))
    assert store.load("c1") == (record(seq=1), [])


def test_write_record_leaves_no_temporary_file(store):
    store.write_record("c1", record())
    store.write_record("c1", record("again"))
    assert os.listdir(store.folder) == [encode_id("c1") + ".json"]


def test_a_record_write_that_fails_leaves_the_old_record_whole(store, monkeypatch):
    store.write_record("c1", record("old"))
    store.append("c1", 1, {"type": "info", "info": info()})
    before = open(_record_path(store, "c1"), "rb").read()

    def broken_replace(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.write_record("c1", record("new"))
    assert open(_record_path(store, "c1"), "rb").read() == before
    assert sorted(os.listdir(store.folder)) == [encode_id("c1") + ".json", encode_id("c1") + ".log"]  # log kept


def test_load_is_the_record_plus_the_log_lines_after_its_seq(store):
    for seq in (1, 2, 3):
        store.append("c1", seq, {"type": "info", "info": info(seq)})
    with open(store.log_path("c1"), "rb") as handle:
        log = handle.read()
    store.write_record("c1", record(seq=2))
    with open(store.log_path("c1"), "wb") as handle:
        handle.write(log)  # a crash between writing the record and folding the log
    loaded, lines = store.load("c1")
    assert loaded["seq"] == 2 and [line["seq"] for line in lines] == [3]


def test_a_chat_with_only_a_log_loads_with_no_record(store):
    store.append("c1", 1, {"type": "info", "info": info()})
    loaded, lines = store.load("c1")
    assert loaded is None and [line["seq"] for line in lines] == [1]


@pytest.mark.parametrize("content", [b"{not json", b"", b"[]", b'{"info": {}}', b'{"info": [], "items": []}',
                                     b'{"info": {}, "items": {}}', b"\xff\xfe\x00", b"[" * 100_000])
def test_an_unreadable_record_is_refused_and_left_byte_identical_with_its_log(store, content):
    store.append("c1", 1, {"type": "info", "info": info()})
    os.makedirs(store.folder, exist_ok=True)
    with open(_record_path(store, "c1"), "wb") as handle:
        handle.write(content)
    with open(store.log_path("c1"), "rb") as handle:
        log = handle.read()
    with pytest.raises(ChatUnreadable):
        store.load("c1")
    assert open(_record_path(store, "c1"), "rb").read() == content
    assert open(store.log_path("c1"), "rb").read() == log
    assert store.exists("c1") and store.chat_ids() == ["c1"]


def test_remove_deletes_record_and_log(store):
    store.write_record("c1", record())
    store.append("c1", 1, {"type": "info", "info": info()})
    store.write_record("c2", record())
    store.remove("c1")
    assert not store.exists("c1") and store.chat_ids() == ["c2"]


def test_remove_of_a_chat_that_has_no_files_is_no_error(store):
    store.remove("nobody")
    store.append("log-only", 1, {"type": "info", "info": info()})
    store.remove("log-only")
    assert store.chat_ids() == []


@pytest.mark.parametrize("bad", [{"info": {"chatId": "c1"}, "items": []},
                                 {"info": info(), "items": [{"kind": "user"}]},
                                 {"info": {**info(), "cwd": "relative"}, "items": []}])
def test_a_record_that_is_not_the_shape_of_a_chat_is_unreadable(store, bad):
    store.write_record("c1", bad)
    with pytest.raises(ChatUnreadable):
        store.load("c1")


def test_a_log_event_that_is_not_an_event_makes_the_chat_unreadable(store):
    store.append("c1", 1, {"type": "info", "info": info()})
    store.append("c1", 2, {"type": "info"})
    with pytest.raises(ChatUnreadable, match="not one"):
        store.load("c1")


def test_a_log_without_its_record_only_rebuilds_a_chat_from_its_start(store):
    store.append("c1", 5, {"type": "item", "item": {"id": "a", "kind": "assistant", "text": "x"}})
    with pytest.raises(ChatUnreadable, match="no record"):
        store.load("c1")


# ---- the log's end, after a seq (a reconnect) -----------------------------------------------------

def _long_log(store, count: int, first: int = 1) -> None:
    with open(_made(store), "ab") as handle:
        for seq in range(first, first + count):
            handle.write(ChatStore.line(seq, {"type": "delta", "itemId": "a", "text": f"word {seq} " * 8}))


def _made(store) -> str:
    os.makedirs(store.folder, mode=0o700, exist_ok=True)
    return store.log_path("c1")


@pytest.mark.parametrize("since", [0, 1, 2500, 9999, 10_000])
def test_the_lines_after_a_seq_are_those_read_log_gives_after_it(store, since):
    _long_log(store, 10_000)
    assert chat_store.read_log_after(store.log_path("c1"), since) == \
        [line for line in read_log(store.log_path("c1")) if line["seq"] > since]


def test_only_the_logs_end_is_parsed_for_a_recent_seq(store, monkeypatch):
    _long_log(store, 10_000)
    parsed = []
    real = json.loads
    monkeypatch.setattr(chat_store.json, "loads", lambda raw: parsed.append(raw) or real(raw))
    lines = chat_store.read_log_after(store.log_path("c1"), 9_990)
    assert [line["seq"] for line in lines] == list(range(9_991, 10_001)) and len(parsed) == 10


def test_a_log_that_starts_after_the_seq_gives_nothing_and_parses_nothing(store, monkeypatch):
    _long_log(store, 3_000, first=5_001)  # seqs 1..5000 were folded into the record
    monkeypatch.setattr(chat_store.json, "loads", lambda raw: pytest.fail("a line was parsed"))
    assert chat_store.read_log_after(store.log_path("c1"), 4_000) == []
    assert chat_store.read_log_after(store.log_path("nobody"), 3) == []


def test_a_torn_line_after_the_seq_is_skipped_as_read_log_skips_it(store):
    _long_log(store, 5)
    with open(store.log_path("c1"), "ab") as handle:
        handle.write(b'{"seq":6,"at":1,"event":{"ty')
    store.append("c1", 7, {"type": "info", "info": {"n": 7}})
    assert [line["seq"] for line in chat_store.read_log_after(store.log_path("c1"), 3)] == [4, 5, 7]
