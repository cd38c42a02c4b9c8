"""What the benchmark scripts share (eval/bench.py, eval/testbeds.py): a section merged into a results
file with the machine and command, the table, and the test sets loaded from their files."""

import json

from medground.eval.bench import machine, print_table, save_section
from medground.eval.testbeds import load_answerable, pubmedqa_known_item
from medground.schema import Chunk


def test_a_section_is_merged_with_the_machine_and_the_command(tmp_path, monkeypatch):
    path = tmp_path / "results" / "reader.json"
    monkeypatch.setattr("sys.argv", ["benchmarks/reader.py", "cost", "--n", "8"])
    save_section(path, "cost", {"rows": [1]})
    save_section(path, "drugs", {"rows": [2], "machine": "overwritten"})
    save_section(path, "cost", {"rows": [3]})
    data = json.loads(path.read_text())
    assert list(data) == ["cost", "drugs"] and data["cost"]["rows"] == [3] and data["drugs"]["rows"] == [2]
    assert data["cost"]["command"] == "python benchmarks/reader.py cost --n 8"
    assert set(data["drugs"]["machine"]) == set(machine()) == {"cpu_count", "load_1min_at_end", "python", "when"}
    assert path.read_text().endswith("}\n")


def test_print_table(capsys):
    print_table("T", [{"a": 1, "b": "x"}, {"a": 2}], ["a", "b"])
    assert capsys.readouterr().out == "\nT\na | b\n1 | x\n2 | \n"


def test_the_answerable_set_names_its_gold_chunks_in_this_store(tmp_path, monkeypatch):
    rows = [{"qid": "q1", "question": "Which?", "options": {"A": "x", "B": "y"}, "answer": "B",
             "evidence": "The Sentence that answers.", "chunk_id": "old-1"},
            {"qid": "q2", "question": "What?", "options": {"A": "x", "B": "y"}, "answer": "A",
             "evidence": "Nowhere in the store.", "chunk_id": "old-2"}]
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    plain = load_answerable(path, locate=False)
    assert [(q.qid, q.answer, q.dataset) for q, _ in plain] == [("q1", "B", "answerable"), ("q2", "A", "answerable")]
    assert "gold_ids" not in plain[0][1]

    class Store:
        def iter_chunks(self, corpora):
            assert corpora == ["openstax"]
            yield Chunk("new-7", "d", "openstax", "p", "Before. THE sentence, that answers. After.", "")

    monkeypatch.setattr("medground.store.settings.open_store", lambda must_exist: Store())
    located = load_answerable(path)
    assert [d["gold_ids"] for _, d in located] == [{"new-7"}, {"old-2"}]  # not found: the file's own id


def test_pubmedqa_known_item_chunks_each_paragraph_without_the_title(tmp_path):
    (tmp_path / "benchmarks/pubmedqa").mkdir(parents=True)
    (tmp_path / "benchmarks/pubmedqa/ori_pqal.json").write_text(json.dumps(
        {"11": {"QUESTION": "Does it?", "CONTEXTS": ["Background.", "Results."], "LABELS": ["BACKGROUND", "RESULTS"]}}))
    chunks, questions = pubmedqa_known_item(tmp_path)
    assert questions == [("11", "Does it?")]
    assert [(c.chunk_id, c.doc_id, c.title, c.section_path) for c in chunks] == \
        [("11-0", "11", "", ("Background",)), ("11-1", "11", "", ("Results",))]
