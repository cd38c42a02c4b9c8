"""`medground train reranker|biencoder`: the shared load / split / train / check flow."""

from __future__ import annotations

import json
from dataclasses import asdict

from typer.testing import CliRunner

from medground.cli.train import app
from medground.train.feedback import Judgement


def _feedback(tmp_path, helpful: bool):
    path = tmp_path / "fb.jsonl"
    rows = []
    for n in range(6):
        js = [Judgement(f"q{n}", f"Question {n}?", f"c{i}", f"passage {i}", i + 1, False, False, 0.3,
                        0.9 if helpful and i == 0 else 0.3) for i in range(3)]
        rows.append(json.dumps({"qid": f"q{n}", "judgements": [asdict(j) for j in js]}))
    path.write_text("\n".join(rows) + "\n")
    return path


def test_an_unknown_rule_is_refused_naming_the_option(tmp_path):
    result = CliRunner().invoke(app, ["reranker", "--feedback", str(_feedback(tmp_path, True)), "--out",
                                      str(tmp_path / "ce"), "--rule", "vibes"])
    assert result.exit_code == 2 and "--rule" in result.output


def test_feedback_without_a_helpful_passage_is_a_clear_error_not_a_model(tmp_path):
    result = CliRunner().invoke(app, ["biencoder", "--feedback", str(_feedback(tmp_path, False)), "--out",
                                      str(tmp_path / "bi"), "--no-pubmedqa"])
    assert result.exit_code == 2 and "no training triplets" in result.output
    assert not (tmp_path / "bi" / "heldout_eval.json").exists()


def test_rule_verified_needs_the_answers_dataset(tmp_path):
    result = CliRunner().invoke(app, ["biencoder", "--feedback", str(_feedback(tmp_path, True)), "--out",
                                      str(tmp_path / "bi"), "--rule", "verified", "--no-pubmedqa"])
    assert result.exit_code == 2 and "--answers" in result.output


def test_answers_from_another_dataset_are_a_clear_error(tmp_path, monkeypatch):
    from medground.train import feedback

    monkeypatch.setattr(feedback, "gold_answers", lambda name: {"elsewhere": "x"})
    result = CliRunner().invoke(app, ["biencoder", "--feedback", str(_feedback(tmp_path, True)), "--out",
                                      str(tmp_path / "bi"), "--rule", "verified", "--answers", "mirage/medqa",
                                      "--no-pubmedqa"])
    assert result.exit_code == 2 and "no gold answer for 6" in result.output


def _candidates(tmp_path, stated: bool):
    path = tmp_path / "cand.jsonl"
    rows = [{"qid": f"q{n}", "dataset": "t", "question": f"Question {n}?", "options": {"A": "Pyridoxine", "B": "Niacin"},
             "answer": "A", "passages": [{"chunk_id": f"c{n}-{i}", "text": text}
                                         for i, text in enumerate(["Unrelated.", "Give pyridoxine." if stated else "No."])]}
            for n in range(6)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_feedback_and_candidates_are_either_or(tmp_path):
    both = CliRunner().invoke(app, ["biencoder", "--feedback", str(_feedback(tmp_path, True)), "--candidates",
                                    str(_candidates(tmp_path, True)), "--out", str(tmp_path / "bi"), "--no-pubmedqa"])
    neither = CliRunner().invoke(app, ["biencoder", "--out", str(tmp_path / "bi"), "--no-pubmedqa"])
    assert both.exit_code == 2 and neither.exit_code == 2 and "--candidates" in both.output


def test_a_device_the_trainer_cannot_take_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["biencoder", "--feedback", str(_feedback(tmp_path, True)), "--out",
                                      str(tmp_path / "bi"), "--no-pubmedqa", "--device", "cuda:1"])
    assert result.exit_code == 2 and "CUDA_VISIBLE_DEVICES" in result.output and not (tmp_path / "bi").exists()


def test_candidates_that_never_state_the_answer_are_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["biencoder", "--candidates", str(_candidates(tmp_path, False)), "--out",
                                      str(tmp_path / "bi"), "--no-pubmedqa"])
    assert result.exit_code == 2 and "no training triplets" in result.output


def test_mined_candidates_without_any_answer_stating_passage_are_a_clear_error(tmp_path):
    path = tmp_path / "mined.jsonl"
    rows = [json.loads(line) | {"mined": [{"chunk_id": "m", "text": "Niacin only."}]}
            for line in _candidates(tmp_path, False).read_text().splitlines()]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(app, ["biencoder", "--mined", str(path), "--out", str(tmp_path / "bi"), "--no-pubmedqa"])
    assert result.exit_code == 2 and "no training triplets" in result.output and "(own or mined)" in result.output
    both = CliRunner().invoke(app, ["biencoder", "--mined", str(path), "--candidates", str(path), "--out",
                                    str(tmp_path / "bi"), "--no-pubmedqa"])
    assert both.exit_code == 2 and "--mined" in both.output


def test_crossfit_needs_mined_labels_and_a_fold_inside_the_split(tmp_path):
    cands = str(_candidates(tmp_path, True))
    without = CliRunner().invoke(app, ["biencoder", "--candidates", cands, "--out", str(tmp_path / "bi"),
                                       "--no-pubmedqa", "--crossfit-fold", "0"])
    assert without.exit_code == 2 and "--mined" in without.output
    path = tmp_path / "mined.jsonl"
    path.write_text("".join(json.dumps(json.loads(line) | {"mined": []}) + "\n" for line in open(cands)))
    outside = CliRunner().invoke(app, ["biencoder", "--mined", str(path), "--out", str(tmp_path / "bi"),
                                       "--no-pubmedqa", "--crossfit-fold", "2"])
    assert outside.exit_code == 2 and "0 <= fold < folds" in outside.output


def test_reader_feedback_needs_mined_labels_and_a_feedback_rule(tmp_path):
    cands = str(_candidates(tmp_path, True))
    fb = str(_feedback(tmp_path, True))
    without = CliRunner().invoke(app, ["biencoder", "--candidates", cands, "--judged", fb, "--out",
                                       str(tmp_path / "bi"), "--no-pubmedqa"])
    assert without.exit_code == 2 and "--mined" in without.output
    path = tmp_path / "mined.jsonl"
    path.write_text("".join(json.dumps(json.loads(line) | {"mined": []}) + "\n" for line in open(cands)))
    verified = CliRunner().invoke(app, ["biencoder", "--mined", str(path), "--judged", fb, "--rule", "verified",
                                        "--out", str(tmp_path / "bi"), "--no-pubmedqa"])
    assert verified.exit_code == 2 and "gain or flip" in verified.output


def test_judge_mined_refuses_question_ids_that_repeat_across_sets(tmp_path):
    rows = [json.loads(line) | {"mined": []} for line in _candidates(tmp_path, True).read_text().splitlines()]
    path = tmp_path / "mined.jsonl"
    path.write_text("".join(json.dumps(r | {"dataset": ds, "question": f"{ds}: {r['question']}"}) + "\n"
                            for r in rows[:1] for ds in ("medqa", "mmlu")))
    result = CliRunner().invoke(app, ["judge-mined", "--mined", str(path), "--out", str(tmp_path / "j.jsonl")])
    # the message names tmp_path, so where rich wraps it varies: compare it unwrapped
    assert result.exit_code == 2 and "own --out file" in " ".join(result.output.replace("│", " ").split())


def test_judge_mined_refuses_an_out_file_holding_the_same_id_for_another_question(tmp_path):
    out = _feedback(tmp_path, True)  # q0 … q5 judged as "Question n?"
    rows = [json.loads(line) | {"mined": [], "question": f"Another {n}?"}
            for n, line in enumerate(_candidates(tmp_path, True).read_text().splitlines())]
    path = tmp_path / "mined.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["judge-mined", "--mined", str(path), "--out", str(out)])
    assert result.exit_code == 2 and "another question" in result.output
