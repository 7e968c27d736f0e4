"""The fuzzers of tests/support/wire_fuzz.py, seeded and bounded (``make fuzz`` runs 100,000 lines per
side): no side dies, hangs, loses or repeats an answer, answers with a code the rules do not
give, or lets the stub client's file service outside its cwd."""

from __future__ import annotations

from support import wire_fuzz


def _assert_clean(counts: wire_fuzz.Counts) -> None:
    assert counts.failures == 0, "\n".join(counts.examples)
    assert counts.requests > counts.lines // 2  # most lines are requests that must be answered
    assert counts.answers == counts.requests


def test_the_stub_agent_survives_fuzzed_lines_and_answers_each_request_once():
    _assert_clean(wire_fuzz.fuzz_agent(3000, seed=7, per_process=1000, huge=False))


def test_the_stub_client_survives_fuzzed_lines_and_serves_no_file_outside_its_cwd():
    _assert_clean(wire_fuzz.fuzz_client(2000, seed=7, per_process=2000, huge=False))


def test_the_oracle_gives_the_documented_codes():
    assert wire_fuzz.oracle(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN}}') == wire_fuzz._null(-32700)
    assert wire_fuzz.oracle(b'{"jsonrpc":"2.0","method":"x","params":{"a":1e400},"id":2}').id == 2
    assert wire_fuzz.oracle(b'[{"jsonrpc":"2.0","id":1,"method":"x"}]') == wire_fuzz._null(-32600)
    assert wire_fuzz.oracle(b'{"jsonrpc":"2.0","id":3,"result":{}}') == wire_fuzz.NOTHING
    assert wire_fuzz.oracle(b'{"jsonrpc":"2.0","method":1}') == wire_fuzz._null(-32600)
    assert wire_fuzz.oracle(b"\xed\xa0\x80") == wire_fuzz._null(-32700)
