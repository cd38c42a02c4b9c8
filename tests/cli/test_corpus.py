from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from medground.cli.corpus import corpus_app, data_app
from medground.corpus.sources import PINS, check_pin, pin_named, tree_sha256

runner = CliRunner()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_ingest_and_stats_on_a_fixture(tmp_path):
    src = _jsonl(
        tmp_path / "notes.jsonl",
        [
            {
                "doc_id": "heart",
                "title": "Heart",
                "text": "The heart has four chambers. It pumps blood.",
                "section": "Anatomy",
                "book": "Demo",
                "chapter": "Ch 1",
            },
            {
                "doc_id": "liver",
                "title": "Liver",
                "text": "The liver makes bile.",
                "section": "Anatomy",
                "book": "Demo",
                "chapter": "Ch 2",
            },
        ],
    )
    store = tmp_path / "store.sqlite"
    args = [
        "ingest",
        "--sources",
        f"jsonl:{src}",
        "--store",
        str(store),
        "--max-tokens",
        "64",
        "--min-tokens",
        "4",
        "--json",
    ]
    result = runner.invoke(corpus_app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["ingested"], out["chunks_written"]) == (1, 2)

    again = json.loads(runner.invoke(corpus_app, args).stdout)
    assert (again["ingested"], again["unchanged"]) == (0, 1)

    stats = runner.invoke(corpus_app, ["stats", "--store", str(store), "--json"])
    assert stats.exit_code == 0
    s = json.loads(stats.stdout)
    assert (s["books"], s["chapters"], s["sections"], s["documents"], s["chunks"]) == (
        1,
        2,
        2,
        2,
        2,
    )
    assert (
        s["per_corpus"]["jsonl"]["chunks"] == 2
        and sum(s["token_histogram"].values()) == 2
    )

    table = runner.invoke(corpus_app, ["stats", "--store", str(store)])
    assert table.exit_code == 0 and "chunks 2" in table.stdout


def test_ingest_reports_bad_input_and_bad_options(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"text": "ok"}\n{broken\n{"text": "fine"}\n', encoding="utf-8")
    store = ["--store", str(tmp_path / "s.sqlite")]
    bad = runner.invoke(corpus_app, ["ingest", "-s", f"jsonl:{src}", *store])
    assert (
        bad.exit_code == 1 and "bad.jsonl" in bad.stderr and "--skip-bad" in bad.stderr
    )
    skipped = runner.invoke(
        corpus_app, ["ingest", "-s", f"jsonl:{src}", "--skip-bad", "--json", *store]
    )
    assert skipped.exit_code == 0
    assert len(json.loads(skipped.stdout)["bad_records"]) == 1
    mode = runner.invoke(
        corpus_app,
        ["ingest", "-s", f"jsonl:{src}", "--mode", "paragraph", "--json", *store],
    )
    assert mode.exit_code == 2 and "mode" in json.loads(mode.stdout)["error"]
    reader = runner.invoke(corpus_app, ["ingest", "-s", f"nosuch:{src}", *store])
    assert reader.exit_code == 1 and "no reader named 'nosuch'" in reader.stderr


def test_verify_reports_missing_sources(tmp_path):
    (tmp_path / "corpora").mkdir()
    result = runner.invoke(data_app, ["verify", "--data", str(tmp_path), "--json"])
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert len(out["pin_problems"]) == len(PINS) and "missing" in out["pin_problems"][0]


def test_verify_flags_an_lfs_pointer(tmp_path):
    (tmp_path / "x.json").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:abc\n"
    )
    out = json.loads(
        runner.invoke(data_app, ["verify", "--data", str(tmp_path), "--json"]).stdout
    )
    assert any("LFS" in p["problem"] for p in out["file_problems"])


def test_pull_offline_without_from_fails_clearly(tmp_path, monkeypatch):
    import urllib.request

    def no_network(*a, **k):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    result = runner.invoke(
        data_app, ["pull", "--to", str(tmp_path), "--source", "medquad"]
    )
    assert result.exit_code == 1 and "--from DIR" in result.stderr
    result = runner.invoke(
        data_app, ["pull", "--to", str(tmp_path), "--source", "mirage"]
    )
    assert result.exit_code == 1 and "no automatic download" in result.stderr
    result = runner.invoke(
        data_app, ["pull", "--to", str(tmp_path), "--source", "nope"]
    )
    assert result.exit_code == 1 and "no pinned source 'nope'" in result.stderr


def test_pull_from_a_directory_checks_pins(tmp_path):
    fake = tmp_path / "from" / "benchmarks" / "mirage"
    fake.mkdir(parents=True)
    (fake / "benchmark.json").write_text("{}")
    result = runner.invoke(
        data_app,
        [
            "pull",
            "--from",
            str(tmp_path / "from"),
            "--to",
            str(tmp_path / "to"),
            "--source",
            "mirage",
            "--json",
        ],
    )
    assert result.exit_code == 1
    assert (
        "content differs from the pin"
        in json.loads(result.stdout)["failed"][0]["error"]
    )
    assert not (tmp_path / "to" / "benchmarks" / "mirage").exists()


def test_pull_and_verify_real_data(shared_data, tmp_path):
    result = runner.invoke(
        data_app,
        [
            "pull",
            "--from",
            str(shared_data),
            "--to",
            str(tmp_path),
            "--source",
            "medlineplus-topics",
            "--source",
            "pubmedqa",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert check_pin(tmp_path, pin_named("pubmedqa")) is None
    assert (
        tree_sha256(tmp_path / "corpora/medlineplus-topics")[0]
        == pin_named("medlineplus-topics").sha256
    )
    linked = runner.invoke(
        data_app,
        [
            "pull",
            "--from",
            str(shared_data),
            "--to",
            str(tmp_path / "l"),
            "--source",
            "cnmleqa",
            "--link",
        ],
    )
    assert linked.exit_code == 0 and (tmp_path / "l/benchmarks/cnmleqa").is_symlink()
    shutil.rmtree(tmp_path / "corpora")


def test_shared_data_matches_every_pin(shared_data):
    assert [m for m in (check_pin(shared_data, p) for p in PINS) if m] == []
