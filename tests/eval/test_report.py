import json

import pytest
from .eval_fakes import make_fake, make_questions

from medground.eval.axes import RunAxes
from medground.eval.metrics import mcnemar_test
from medground.eval.records import read_records
from medground.eval.report import write_report
from medground.eval.sweep import SweepSettings, run_sweep


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("runs")
    settings = SweepSettings.model_validate({
        "datasets": [{"name": "fake"}],
        "base": {"skill": 0.4, "pipeline": "rag", "llm": {"model": "m1"}},
        "base_axes": {"family": "rag", "llm": "m1"},
        "axes": {"reranker": {"off": None, "on": {"skill": 0.8, "name": "rr"}},
                 "prompt": {"key": "prompt", "values": ["zero-shot", "cot"]}},
        "include": [{"axes": {"family": "no-rag", "llm": "m1"}, "set": {"skill": 0.3, "pipeline": "direct",
                                                                        "votes": True}}],
    })
    run_sweep(settings, make_fake, d, load_questions=lambda s: make_questions(60), progress=False)
    return d


def _by_name(runs_dir):
    out = {}
    for p in runs_dir.iterdir():
        if (p / "config.json").exists():
            meta = json.loads((p / "config.json").read_text())
            out[meta["name"]] = (meta, read_records(p / "results.jsonl"))
    return out


def test_report_files_and_tables(runs_dir, tmp_path):
    rep = write_report(runs_dir, tmp_path)
    for f in ("report.md", "report.html", "accuracy_runtime.png", "vote_topk.png"):
        assert (tmp_path / f).stat().st_size > 0, f
    assert (tmp_path / "accuracy_runtime.png").read_bytes()[:4] == b"\x89PNG"
    titles = [t.title for t in rep.tables]
    assert titles[0] == "All runs" and "McNemar vs the no-RAG baseline" in titles
    main = rep.tables[0]
    assert len(main.rows) == 5
    col = {h: i for i, h in enumerate(main.headers)}
    runs = _by_name(runs_dir)
    for row in main.rows:
        name = next(n for n, (m, _) in runs.items() if m["run_id"] == row[col["run"]])
        recs = runs[name][1]
        assert row[col["accuracy %"]] == f"{100 * sum(r.correct for r in recs) / len(recs):.1f}"
        assert row[col["n"]] == 60
    base_row = next(r for r in main.rows if r[col["family"]] == "no-rag")
    assert base_row[col["reranker"]] == "—" and base_row[col["llm"]] == "m1"
    md = (tmp_path / "report.md").read_text()
    assert "| family |" in md and "![Accuracy vs runtime](accuracy_runtime.png)" in md
    assert "<table>" in (tmp_path / "report.html").read_text()


def test_technique_delta_and_mcnemar_match_direct_computation(runs_dir, tmp_path):
    rep = write_report(runs_dir, tmp_path)
    runs = _by_name(runs_dir)
    tech = next(t for t in rep.tables if t.title.startswith("Technique effects"))
    rr = next(r for r in tech.rows if r[0] == "reranker")
    assert rr[1] == "on vs off" and rr[2] == 2  # one pair per prompt label
    deltas = []
    for prompt in ("zero-shot", "cot"):
        off = {r.qid: r.correct for r in runs[f"fake/family=rag,llm=m1,reranker=off,prompt={prompt}"][1]}
        on = {r.qid: r.correct for r in runs[f"fake/family=rag,llm=m1,reranker=on,prompt={prompt}"][1]}
        deltas.append((sum(on.values()) - sum(off.values())) / 60)
    assert rr[3] == f"{100 * sum(deltas) / 2:+.1f}"

    base = next(t for t in rep.tables if t.title.startswith("McNemar vs"))
    assert len(base.rows) == 4
    name = "fake/family=rag,llm=m1,reranker=on,prompt=cot"
    row = next(r for r in base.rows if r[0] == name)
    b = {r.qid: r.correct for r in runs["fake/family=no-rag,llm=m1"][1]}
    a = {r.qid: r.correct for r in runs[name][1]}
    qids = sorted(a)
    m = mcnemar_test([b[q] for q in qids], [a[q] for q in qids])
    assert (row[6], row[7]) == (m.b_only, m.a_only)
    assert float(row[8]) == pytest.approx(m.pvalue, rel=0.05)


def test_vote_curve_table(runs_dir, tmp_path):
    rep = write_report(runs_dir, tmp_path)
    votes = next(t for t in rep.tables if t.title.startswith("Weighted vote"))
    # Fake votes: wrong 0.9, right 0.6, right 0.5 -> k=1 wrong, k=2 wrong, k=3 right (1.1 > 0.9).
    assert [r[1:] for r in votes.rows] == [[1, "0.0"], [2, "0.0"], [3, "100.0"]]


def test_axes_view_tolerates_missing_axes_and_reads_config():
    ax = RunAxes.from_meta({"config": {"pipeline": "rag", "retrieve": {"retrievers": ["bm25", "dense"],
                                                                         "sections": 20}, "llm": {"model": "q"},
                                       "reformulate": True},
                            "dataset": {"name": "mirage/medqa"}})
    assert (ax.family, ax.retrieval, ax.coarse, ax.reformulation, ax.llm, ax.dataset, ax.prompt) == (
        "rag", "bm25+dense", "20", "on", "q", "mirage/medqa", "—")
    # A closed-book run shows no retrieval columns even if its config carries a retrieve section.
    spec = RunAxes.from_meta({"config": {"retrieve": {"retrievers": [{"name": "bm25"}, {"name": "dense", "settings": {}}]}}})
    assert spec.retrieval == "bm25+dense"
    closed = RunAxes.from_meta({"config": {"pipeline": "direct", "retrieve": {"retrievers": ["bm25"]}}})
    assert (closed.family, closed.retrieval, closed.reformulation) == ("direct", "—", "—")
    assert RunAxes.from_meta({}).family == "—"
    assert RunAxes.from_meta({"axes": {"family": "no-rag"}}).is_baseline


def test_empty_runs_dir_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run directories"):
        write_report(tmp_path, tmp_path / "out")


def test_free_text_runs_get_a_claim_attribution_table(tmp_path):
    from medground.eval.attribution import ATTRIBUTION
    from medground.eval.records import RunRecord, write_json_atomic

    run = tmp_path / "runs" / "free"
    run.mkdir(parents=True)
    write_json_atomic(run / "config.json", {"run_id": "free", "name": "free-text"})
    rec = RunRecord(qid="q1", dataset="unit", gold=None, choice=None, correct=None, outcome="answered",
                    text="Pyridoxine prevents it [1].", citation_ids=["c1"], citation_numbers=[1])
    (run / "results.jsonl").write_text(rec.to_json() + "\n")
    write_json_atomic(run / ATTRIBUTION, {"judge": "llm", "threshold": 0.6, "answers": 1, "claims": 1,
                                          "claims_supported": 1.0, "citation_precision": 1.0,
                                          "citation_recall": 1.0, "per_answer": {}})
    rep = write_report(tmp_path / "runs", tmp_path / "out")
    table = next(t for t in rep.tables if t.title.startswith("Claim-level attribution"))
    assert table.rows == [["free-text", "llm", 0.6, 1, 1, "100.0", "100.0", "100.0"]]
