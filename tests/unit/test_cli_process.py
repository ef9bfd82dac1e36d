"""actors.cli_process: how a CLI's stdout is cut into lines and batches.

Each read of the pipe becomes one batch of the complete lines it brought, so a busy CLI costs
one message to its chat per read, not per line. Nothing is reordered, lost or split, however
the output falls into reads.
"""
import json
import random

import pytest

from actors.cli_process import LineTooLong, _decode, decode_lines, read_line_batches


def reads_of(chunks):
    pieces = iter(chunks)
    return lambda: next(pieces, b"")


def test_every_complete_line_of_a_read_goes_up_as_one_batch():
    batches = list(read_line_batches(reads_of([b'{"a":1}\n{"b":2}\n{"c"', b':3}\n'])))
    assert batches == [[b'{"a":1}', b'{"b":2}'], [b'{"c":3}']]


def test_lines_come_back_whole_and_in_order_however_the_output_is_cut():
    lines = [json.dumps({"n": n, "text": "x" * random.Random(n).randrange(0, 3000)}).encode()
             for n in range(300)]
    output = b"\n".join(lines) + b"\n"
    rng = random.Random(7)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(output)), 40))
        chunks = [output[a:b] for a, b in zip([0, *cuts], [*cuts, len(output)])]
        got = [line for batch in read_line_batches(reads_of(chunks)) for line in batch]
        assert got == lines


def test_a_line_longer_than_many_reads_is_gathered():
    line = b'{"big":"' + b"y" * 200_000 + b'"}'
    chunks = [line[i:i + 4096] for i in range(0, len(line), 4096)] + [b"\n"]
    assert list(read_line_batches(reads_of(chunks))) == [[line]]


def test_a_line_still_unended_past_the_bound_stops_the_reading_with_its_size():
    chunks = [b'{"a":1}\n{"big":"', *[b"z" * 4096] * 3]  # 12 KiB and more of one line, no line break
    batches = read_line_batches(reads_of(chunks), max_line=10_000)
    assert next(batches) == [b'{"a":1}']  # what came before it still goes up
    with pytest.raises(LineTooLong) as raised:
        next(batches)
    assert int(str(raised.value)) == 8 + 3 * 4096


def test_a_line_up_to_the_bound_is_read_whole():
    line = b'{"big":"' + b"y" * 9_000 + b'"}'
    chunks = [line[i:i + 4096] for i in range(0, len(line), 4096)] + [b"\n"]
    assert list(read_line_batches(reads_of(chunks), max_line=10_000)) == [[line]]


def test_blank_lines_and_carriage_returns_are_no_frames_and_a_last_unterminated_line_counts():
    batches = list(read_line_batches(reads_of([b"\n\r\n  \n", b'{"a":1}\r\n', b'{"end":true}'])))
    assert batches == [[b'{"a":1}'], [b'{"end":true}']]


def test_only_a_json_object_is_a_frame():
    assert _decode(b'{"type":"x"}') == {"type": "x"}
    assert _decode(b"[1,2]") is None
    assert _decode(b"Claude says hi") is None
    assert _decode(b"[" * 100_000) is None  # nested past the recursion limit


def test_a_batch_is_decoded_whole_and_a_line_that_is_no_object_spoils_none_of_the_others():
    assert decode_lines([b'{"a":1}', b'{"b":[2]}']) == [{"a": 1}, {"b": [2]}]
    assert decode_lines([b'{"a":1}', b"[1]", b'{"b":2}']) == [{"a": 1}, None, {"b": 2}]
    assert decode_lines([b'{"a":1}', b"not json", b'{"b":2}']) == [{"a": 1}, None, {"b": 2}]
    # Two objects on one line are not one frame, even where the count of a whole batch would match.
    assert decode_lines([b'{"a":"x', b'y"}', b'{"p":1},{"q":2}']) == [None, None, None]
    assert decode_lines([b'{"p":1},{"q":2}', b'{"b":2}']) == [None, {"b": 2}]


@pytest.mark.parametrize("odd", [b'{"text":"\\ud83d"}', b'{"cost":NaN}', b'{"big":1e999}'])
def test_a_line_the_fast_parser_refuses_reads_as_the_standard_parser_reads_it(odd):
    # A delta cut inside a surrogate pair, a NaN, an infinity: alone and in a batch (compared as
    # text: a NaN equals nothing, itself included).
    expected = _decode(odd)
    assert expected is not None
    assert str(decode_lines([odd])) == str([expected])
    assert str(decode_lines([b'{"a":1}', odd, b'{"b":2}'])) == str([{"a": 1}, expected, {"b": 2}])
