"""benchmarks/grounding.py: runs read from several roots (eval/records.newest_runs), frozen into the repo, and carried rows."""

import json
import sys
from pathlib import Path

from medground.eval.records import newest_runs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from grounding import carry, compute, freeze  # noqa: E402

LABEL = "mirage/medqa/llm=m,config="


def write_run(root: Path, run_id: str, config: str, answers: dict[str, str], gold: str = "A") -> Path:
    d = root / run_id
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"run_id": run_id, "name": LABEL + config}))
    lines = [json.dumps({"qid": q, "dataset": "medqa", "gold": gold, "choice": c, "correct": c == gold, "outcome": "answered",
                         "seconds": 1.0, "tokens": {"prompt": 10}}) for q, c in answers.items()]
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")
    return d


def test_same_run_in_two_roots_is_merged_by_qid(tmp_path):
    frozen, local = tmp_path / "frozen", tmp_path / "local"
    write_run(frozen, "r1", "amt", {"q1": "A", "q2": "B"})
    write_run(local, "r1", "amt", {"q2": "A", "q3": "A"})  # the resumed run: q2 retried
    runs, sources = newest_runs(frozen, local, tmp_path / "missing")
    recs = runs["mirage/medqa"]["amt"]
    assert [r.qid for r in recs] == ["q1", "q2", "q3"]
    assert [r.choice for r in recs] == ["A", "A", "A"]  # the later root wins
    assert sources[("mirage/medqa", "amt")] == local / "r1"


def test_a_new_run_id_supersedes_the_frozen_label(tmp_path):
    frozen, local = tmp_path / "frozen", tmp_path / "local"
    write_run(frozen, "old", "amt", {"q1": "A", "q2": "A"})
    write_run(local, "new", "amt", {"q1": "B"})
    runs, _ = newest_runs(frozen, local)
    assert [r.choice for r in runs["mirage/medqa"]["amt"]] == ["B"]


def test_freeze_round_trips_to_the_same_report(tmp_path):
    local, dest = tmp_path / "local", tmp_path / "frozen"
    write_run(local, "d", "direct-letter", {"q1": "A", "q2": "B", "q3": "B"})
    write_run(local, "a", "amt", {"q1": "A", "q2": "A", "q3": "C"})
    runs, sources = newest_runs(local)
    before = compute(runs, {})
    freeze(runs, sources, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["a", "d"]  # no run for the derived calibration row
    again, _ = newest_runs(dest)
    assert compute(again, {})["tables"] == before["tables"]
    amt = next(r for r in before["tables"]["mirage/medqa"] if r["config"] == "amt")
    assert amt["vs_direct"]["only_this_right"] == 1 and amt["vs_direct"]["only_base_right"] == 0


def test_carry_keeps_only_what_cannot_be_recomputed(tmp_path):
    fresh = {"tables": {"mirage/medqa": [{"config": "direct-letter", "accuracy": 0.3}]},
             "rag_focus_evidence_coverage": {}, "evidence_prior_mixture": {}, "holdout": {}}
    previous = {"tables": {"mirage/medqa": [{"config": "direct-letter", "accuracy": 0.9},
                                            {"config": "rag-focus", "accuracy": 0.4}],
                           "mirage/mmlu": [{"config": "amt", "accuracy": 0.5}]},
                "rag_focus_evidence_coverage": {"mirage/medqa": {"n": 200}}, "evidence_prior_mixture": {},
                "holdout": {}}
    out = carry(previous, fresh)
    medqa = {r["config"]: r for r in out["tables"]["mirage/medqa"]}
    assert medqa["direct-letter"] == {"config": "direct-letter", "accuracy": 0.3}  # recomputed wins
    assert medqa["rag-focus"]["carried"] is True
    assert out["tables"]["mirage/mmlu"][0]["carried"] is True
    assert out["rag_focus_evidence_coverage"]["mirage/medqa"] == {"n": 200}
    assert out["carried_sections"] == ["rag_focus_evidence_coverage/mirage/medqa"]
    assert "carried" not in json.dumps(fresh)  # the fresh report is not modified in place
