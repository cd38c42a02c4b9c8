import json

import pytest

from medground.eval.records import (
    CorruptRecordsError,
    RecordLog,
    RunLockedError,
    read_records,
    record_from_answer,
)
from medground.schema import Answer, Citation, Query, Question

Q = Question(qid="q1", dataset="d", question="?", options={"A": "x", "B": "y"}, answer="B")


def test_record_from_answer_scores_and_never_maps_failures_to_letters():
    cit = Citation(1, "c9", "book", "ch", "sec", "t", "text", 0.5)
    r = record_from_answer(Q, Answer(outcome="answered", choice="B", citations=[cit], queries=[Query("q")],
                                     tokens={"prompt": 5}, metadata={"votes": [{"choice": "B", "confidence": 1}]}), 0.25)
    assert (r.correct, r.choice, r.n_citations, r.citation_ids, r.queries, r.seconds) == (True, "B", 1, ["c9"], ["q"], 0.25)
    assert r.votes == [{"choice": "B", "confidence": 1}]
    pf = record_from_answer(Q, Answer(outcome="parse_failure", choice="A", text="hmm"), 0.1)
    assert (pf.correct, pf.choice, pf.outcome) == (False, None, "parse_failure")
    bad = record_from_answer(Q, Answer(outcome="answered", choice="Z"), 0.1)
    assert (bad.correct, bad.choice, bad.outcome) == (False, None, "parse_failure") and "'Z'" in bad.error
    ie = record_from_answer(Q, Answer(outcome="insufficient_evidence"), 0.1)
    assert ie.correct is False
    free = Question(qid="f", dataset="d", question="?", answer="long text")
    assert record_from_answer(free, Answer(outcome="answered", text="t"), 0.1).correct is None


def test_torn_last_line_is_cut_and_resume_appends_cleanly(tmp_path):
    with RecordLog(tmp_path) as log:
        log.append(record_from_answer(Q, Answer(outcome="answered", choice="B"), 0.1))
    path = tmp_path / "results.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"qid": "q2", "dataset": "d", "go')  # a kill in the middle of a write
    assert [r["qid"] for r in read_records(path)] == ["q1"]
    q2 = Question(qid="q2", dataset="d", question="?", options={"A": "x"}, answer="A")
    with RecordLog(tmp_path) as log:
        assert log.done_qids() == {"q1"}
        log.append(record_from_answer(q2, Answer(outcome="answered", choice="A"), 0.1))
    lines = path.read_text().splitlines()
    assert [json.loads(x)["qid"] for x in lines] == ["q1", "q2"]


def test_corrupt_middle_line_is_an_error_with_line_number(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"qid": "a"}\nGARBAGE\n{"qid": "b"}\n')
    with pytest.raises(CorruptRecordsError, match="line 2"):
        read_records(path)


def test_latest_record_per_qid_wins_and_errors_can_be_retried(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"qid": "a", "outcome": "error"}\n{"qid": "b", "outcome": "answered"}\n'
                    '{"qid": "a", "outcome": "answered"}\n')
    assert [(r["qid"], r["outcome"]) for r in read_records(path)] == [("b", "answered"), ("a", "answered")]
    assert len(read_records(path, latest=False)) == 3
    path.write_text('{"qid": "a", "outcome": "error"}\n{"qid": "b", "outcome": "answered"}\n')
    with RecordLog(tmp_path) as log:
        assert log.done_qids() == {"a", "b"} and log.done_qids(retry_errors=True) == {"b"}


def test_second_writer_is_refused(tmp_path):
    with RecordLog(tmp_path):
        with pytest.raises(RunLockedError):
            RecordLog(tmp_path).__enter__()
