import json

import pytest

from medground.eval.records import (
    CorruptRecordsError,
    RecordLog,
    RunLockedError,
    RunRecord,
    read_records,
    read_run,
    record_from_answer,
)
from medground.drug_schema import ConsultChoiceDetail, ConsultDetail, SearchCall, SupportCheck
from medground.schema import Answer, ChoiceDetail, Citation, FreeTextDetail, Query, Question, Vote

Q = Question(qid="q1", dataset="d", question="?", options={"A": "x", "B": "y"}, answer="B")


def test_record_from_answer_scores_and_never_maps_failures_to_letters():
    cit = Citation(1, "c9", "book", "ch", "sec", "t", "text", 0.5)
    r = record_from_answer(Q, Answer(outcome="answered", choice="B", citations=[cit], queries=[Query("q")],
                                     tokens={"prompt": 5}, detail=ChoiceDetail(votes=[Vote("B", 1.0, "c9")])), 0.25)
    assert (r.correct, r.choice, r.n_citations, r.citation_ids, r.queries, r.seconds) == (True, "B", 1, ["c9"], ["q"], 0.25)
    assert r.votes == [Vote("B", 1.0, "c9")]
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
    assert [r.qid for r in read_records(path)] == ["q1"]
    q2 = Question(qid="q2", dataset="d", question="?", options={"A": "x"}, answer="A")
    with RecordLog(tmp_path) as log:
        assert log.done_qids() == {"q1"}
        log.append(record_from_answer(q2, Answer(outcome="answered", choice="A"), 0.1))
    lines = path.read_text().splitlines()
    assert [json.loads(x)["qid"] for x in lines] == ["q1", "q2"]


def line(qid: str, outcome: str = "answered", **more) -> str:
    """One stored record with only the fields every version wrote."""
    return json.dumps({"qid": qid, "dataset": "d", "gold": "A", "choice": "A", "correct": True,
                       "outcome": outcome, **more}) + "\n"


def test_corrupt_middle_line_is_an_error_with_line_number(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(line("a") + "GARBAGE\n" + line("b"))
    with pytest.raises(CorruptRecordsError, match=f"^{path}: line 2: expected a JSON run record"):
        read_records(path)


def test_latest_record_per_qid_wins_and_errors_can_be_retried(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(line("a", "error") + line("b") + line("a"))
    assert [(r.qid, r.outcome) for r in read_records(path)] == [("b", "answered"), ("a", "answered")]
    assert len(read_records(path, latest=False)) == 3
    path.write_text(line("a", "error") + line("b"))
    with RecordLog(tmp_path) as log:
        assert log.done_qids() == {"a", "b"} and log.done_qids(retry_errors=True) == {"b"}


def test_second_writer_is_refused(tmp_path):
    with RecordLog(tmp_path):
        with pytest.raises(RunLockedError):
            RecordLog(tmp_path).__enter__()


def test_record_from_answer_reads_the_typed_details():
    read = ChoiceDetail(scoring="logprob", letter_logprobs={"A": -2.5, "B": -0.1}, options_in_evidence={"A": [], "B": [1]},
                        score_parts={"letters": {"A": 0.1, "B": 0.9}, "check": {"A": 0.3, "B": 0.7}})
    r = record_from_answer(Q, Answer(outcome="answered", choice="B", detail=read), 0.1)
    assert (r.letter_logprobs, r.options_in_evidence) == ({"A": -2.5, "B": -0.1}, {"A": [], "B": [1]})
    assert r.score_parts == {"letters": {"A": 0.1, "B": 0.9}, "check": {"A": 0.3, "B": 0.7}}
    assert (r.votes, r.support, r.withheld) == (None, None, None)
    free = Question(qid="f", dataset="d", question="?")
    said = FreeTextDetail(support=0.25, supporting_passage=2, entity_missing=["zidovudine"], withheld="Give B6 [1].")
    r = record_from_answer(free, Answer(outcome="insufficient_evidence", text="not found", detail=said), 0.1)
    assert (r.support, r.withheld, r.letter_logprobs, r.votes) == (0.25, "Give B6 [1].", None, None)
    # the drug consultation's support pass over the database entries, typed; an untyped key is not read
    consult = ConsultDetail(search=SearchCall("warfarin spinach"), support_check=SupportCheck(0.8, 1))
    r = record_from_answer(free, Answer(outcome="answered", detail=consult), 0.1)
    assert (r.support, r.withheld) == (0.8, None)
    mcq_consult = ConsultChoiceDetail(scoring="logprob", letter_logprobs={"A": -0.1}, consult=consult)
    r = record_from_answer(Q, Answer(outcome="answered", choice="B", detail=mcq_consult), 0.1)
    assert (r.letter_logprobs, r.support) == ({"A": -0.1}, 0.8)
    assert record_from_answer(free, Answer(outcome="answered", metadata={"support": 0.8}), 0.1).support is None


FULL = RunRecord(qid="q7", dataset="medqa", gold="C", choice="C", correct=True, outcome="answered",
                 option_scores={"A": 0.1, "C": 0.9}, seconds=1.5, n_citations=2, queries=["q", "kw"],
                 tokens={"prompt": 30, "completion": 2}, text="C", citation_ids=["c1", "c2"], citation_numbers=[1, 3],
                 timings={"read": 1.25}, votes=[Vote("C", 8.0, "c1", {"A": 2.0, "C": 8.0}), Vote(None, 0.0, "c2",
                                                                                                  failure="no JSON")],
                 letter_logprobs={"A": -2.0, "C": -0.1}, options_in_evidence={"A": [], "C": [1]},
                 score_parts={"letters": {"A": 0.2, "C": 0.8}}, withheld="w", support=0.5, extra={"judge": "llm"})


def test_to_json_then_from_dict_gives_an_equal_record():
    stored = json.loads(FULL.to_json())
    assert stored["judge"] == "llm" and "extra" not in stored  # unknown keys go back where they were
    assert stored["votes"] == [{"chunk_id": "c1", "choice": "C", "confidence": 8.0, "scores": {"A": 2.0, "C": 8.0}},
                               {"chunk_id": "c2", "choice": None, "confidence": 0.0, "scores": {}, "failure": "no JSON"}]
    assert RunRecord.from_dict(stored) == FULL
    bare = RunRecord(qid="q", dataset="d", gold=None, choice=None, correct=None, outcome="error", error="boom")
    assert RunRecord.from_dict(json.loads(bare.to_json())) == bare


def test_an_old_line_with_an_unknown_key_loads_and_keeps_it(tmp_path):
    # written by an older version: no citation_numbers / options_in_evidence / score_parts / withheld /
    # support, votes without chunk ids, and a key this version does not know
    old = ('{"qid": "q1", "dataset": "medqa", "gold": "B", "choice": "B", "correct": true, "outcome": "answered", '
           '"option_scores": {"A": 0.25, "B": 0.75}, "seconds": 2, "n_citations": 0, "queries": [], "tokens": {}, '
           '"error": null, "text": "B", "citation_ids": [], "timings": {}, "votes": [{"choice": "B", '
           '"confidence": 1}], "letter_logprobs": null, "judged_by": "hand"}\n')
    (tmp_path / "results.jsonl").write_text(old)
    _, (rec,) = read_run(tmp_path)
    assert rec.extra == {"judged_by": "hand"}
    assert (rec.seconds, type(rec.seconds), rec.votes) == (2.0, float, [Vote("B", 1.0)])
    assert (rec.citation_numbers, rec.options_in_evidence, rec.score_parts, rec.support) == ([], None, None, None)
    again = json.loads(rec.to_json())
    assert {k: again[k] for k in json.loads(old) if k != "votes"} == {k: v for k, v in json.loads(old).items()
                                                                     if k != "votes"}
    with RecordLog(tmp_path) as log:  # resuming over an old file reads it typed too
        assert log.records == [rec] and log.done_qids() == {"q1"}


@pytest.mark.parametrize("fields, needle", [
    ({"correct": "yes"}, "line 2: field 'correct': expected true or false or null, got \"yes\""),
    ({"seconds": "1.5"}, "line 2: field 'seconds': expected a number, got \"1.5\""),
    ({"n_citations": True}, "line 2: field 'n_citations': expected an integer, got true"),
    ({"outcome": "answred"}, "line 2: field 'outcome': expected one of ['answered', "),
    ({"dataset": None}, "line 2: field 'dataset': expected a string, got null"),
    ({"votes": [{"choice": "B"}, {"choice": "B", "weight": 2}]}, "line 2: field 'votes', vote 1: unknown key 'weight'"),
    ({"votes": ["B"]}, "line 2: field 'votes', vote 0: expected an object, got \"B\""),
])
def test_a_malformed_record_names_its_file_line_and_field(tmp_path, fields, needle):
    path = tmp_path / "results.jsonl"
    path.write_text(line("a") + line("b", **fields))
    with pytest.raises(CorruptRecordsError) as err:
        read_records(path)
    assert str(err.value).startswith(f"{path}: {needle}")


def test_a_missing_field_or_a_non_object_line_is_named(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"qid": "a", "dataset": "d", "gold": null, "choice": null, "outcome": "error"}\n')
    with pytest.raises(CorruptRecordsError, match=f"^{path}: line 1: field 'correct' is missing$"):
        read_records(path)
    path.write_text(line("a") + "[1, 2]\n")
    with pytest.raises(CorruptRecordsError, match=f"^{path}: line 2: expected a JSON run record object, got list$"):
        read_records(path)


def test_the_log_keeps_typed_records_as_appended(tmp_path):
    with RecordLog(tmp_path) as log:
        log.append(FULL)
        assert log.records == [FULL] and log.records[0] is FULL
    assert read_records(tmp_path / "results.jsonl") == [FULL]


def test_the_frozen_runs_in_the_repository_load_typed_and_write_back_unchanged():
    """Records written by earlier versions (docs/reports/grounding/runs): every stored key comes back
    with its value; only the fields those versions did not write are added, at their defaults."""
    from pathlib import Path

    files = sorted((Path(__file__).resolve().parents[2] / "docs/reports/grounding/runs").glob("*/results.jsonl"))
    assert files
    for f in files:
        raw = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        recs = read_records(f, latest=False)
        assert len(recs) == len(raw) and all(not r.extra for r in recs), f
        for stored, rec in zip(raw, recs):
            again = json.loads(rec.to_json())
            assert {k: again[k] for k in stored} == stored, (f, rec.qid)
