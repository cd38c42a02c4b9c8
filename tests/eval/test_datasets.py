import hashlib
import json
from collections import Counter

import pytest

from medground.corpus.base import BadInputError, ErrorPolicy
from medground.eval.datasets import DATASETS, load_dataset, subset
from medground.eval.loaders import parse_medicineqa_prompt
from medground.schema import Question


def _write_jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_medqa_jsonl_4_and_5_options(tmp_path):
    p = _write_jsonl(tmp_path / "t.jsonl", [
        {"question": "Q1?", "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer_idx": "C", "meta_info": "step1"},
        {"question": "Q2?", "options": {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e"}, "answer_idx": "E",
         "answer": "e"},
    ])
    qs = load_dataset("medqa-jsonl", path=p)
    assert [q.qid for q in qs] == ["0000", "0001"]
    assert qs[0].answer == "C" and qs[0].metadata["meta_info"] == "step1"
    assert list(qs[1].options) == list("ABCDE") and qs[1].answer == "E" and qs[1].metadata["answer_text"] == "e"


def test_bad_jsonl_record_names_file_and_line(tmp_path):
    p = _write_jsonl(tmp_path / "t.jsonl", [
        {"question": "Q1?", "options": {"A": "a", "B": "b"}, "answer_idx": "A"},
        {"question": "Q2?", "options": {"A": "a", "B": "b"}, "answer_idx": "F"},
        "{not json",
    ])
    with pytest.raises(BadInputError) as err:
        load_dataset("medqa-jsonl", path=p)
    assert str(p) in str(err.value) and "line 2" in str(err.value) and "'F'" in str(err.value)
    policy = ErrorPolicy(skip=True)
    qs = load_dataset("medqa-jsonl", path=p, policy=policy)
    assert [q.question for q in qs] == ["Q1?"]
    assert [b.where for b in policy.problems] == ["line 2", "line 3"]


def test_medmcqa_one_based_and_hf_zero_based(tmp_path):
    row = {"id": "x1", "question": "Q?", "opa": "a", "opb": "b", "opc": "c", "opd": "d", "cop": 1,
           "subject_name": "Anatomy"}
    p = _write_jsonl(tmp_path / "dev.json", [row])
    (q,) = load_dataset("medmcqa-json", path=p)
    assert (q.qid, q.answer, q.options["D"], q.metadata["subject_name"]) == ("x1", "A", "d", "Anatomy")
    (q0,) = load_dataset("medmcqa-hf", path=p)
    assert q0.answer == "B"
    _write_jsonl(p, [{**row, "cop": 0}])
    with pytest.raises(BadInputError, match="line 1.*cop"):
        load_dataset("medmcqa-json", path=p)


def test_duplicate_ids_rejected(tmp_path):
    row = {"realidx": 7, "question": "Q?", "options": {"A": "a", "B": "b"}, "answer_idx": "A"}
    p = _write_jsonl(tmp_path / "t.jsonl", [row, row])
    with pytest.raises(BadInputError, match="unique"):
        load_dataset("medqa-jsonl", path=p)


def test_user_format_needs_path_and_unknown_name():
    with pytest.raises(ValueError, match="needs a path"):
        load_dataset("medqa-jsonl")
    with pytest.raises(KeyError, match="unknown dataset 'nope'"):
        load_dataset("nope")


def test_medicineqa_prompt_parsing():
    prompt = ("目标：\n...\n文档：\n[1]阿莫西林胶囊\n不良反应:恶心。\n2 皮疹\n\n[2]布洛芬片\n用法用量：口服。\n\n"
              "聊天记录:\n用户：阿莫西林有什么副作用？")
    docs, dialogue = parse_medicineqa_prompt(prompt)
    assert docs == [
        {"number": 1, "drug": "阿莫西林胶囊", "attribute": "不良反应", "text": "恶心。\n2 皮疹"},
        {"number": 2, "drug": "布洛芬片", "attribute": "用法用量", "text": "口服。"},
    ]
    assert dialogue == "用户：阿莫西林有什么副作用？"


def _qs(n):
    return [Question(qid=f"id{i}", dataset="d", question="?", metadata={"s": "abc"[i % 3] if i < 60 else "a"})
            for i in range(n)]


def test_subset_is_sha256_ranked_and_order_independent():
    qs = _qs(100)
    picked = subset(qs, 10, seed=3)
    expected = sorted(qs, key=lambda q: hashlib.sha256(f"3\x1f{q.qid}".encode()).hexdigest())[:10]
    assert {q.qid for q in picked} == {q.qid for q in expected}
    assert [q.qid for q in picked] == [q.qid for q in qs if q in expected]  # original order kept
    assert {q.qid for q in subset(list(reversed(qs)), 10, seed=3)} == {q.qid for q in picked}
    assert {q.qid for q in subset(qs, 10, seed=4)} != {q.qid for q in picked}
    assert subset(qs, None) == qs and len(subset(qs, 1000)) == 100


def test_subset_stratified_keeps_proportions():
    qs = _qs(100)  # s: a=60, b=20, c=20
    picked = subset(qs, 10, seed=0, stratify_by="s")
    assert Counter(q.metadata["s"] for q in picked) == {"a": 6, "b": 2, "c": 2}
    picked = subset(qs, 7, seed=0, stratify_by="s")  # quotas 4.2, 1.4, 1.4 -> remainders tie: b first
    assert Counter(q.metadata["s"] for q in picked) == {"a": 4, "b": 2, "c": 1}


EXPECTED_SIZES = {
    ("mirage/medqa", "test"): 1273, ("mirage/medmcqa", "test"): 4183, ("mirage/pubmedqa", "test"): 500,
    ("mirage/bioasq", "test"): 618, ("mirage/mmlu", "test"): 1089, ("medagents/medqa", "test"): 1273,
    ("medagents/medqa_5options", "test"): 1273, ("medagents/mmlu", "test"): 1089,
    ("medagents/pubmedqa", "test"): 500, ("medagents/medmcqa", "test"): 2816, ("pubmedqa", "test"): 500,
    ("pubmedqa", "train"): 500, ("pubmedqa", "all"): 1000, ("cnmleqa", "test"): 2949,
    ("medicineqa-zh", "test"): 150, ("medication-qa", "test"): 690,
}


def test_every_known_dataset_loads_with_documented_size(shared_data):
    assert {n for n, _ in EXPECTED_SIZES} == {n for n, i in DATASETS.items() if i.relpath}
    for (name, split), size in EXPECTED_SIZES.items():
        qs = load_dataset(name, split=split, data_dir=shared_data)
        assert len(qs) == size, name
        for q in qs:
            if DATASETS[name].kind == "multiple-choice":
                assert q.answer in q.options, (name, q.qid)


def test_real_dataset_details(shared_data):
    gt = json.loads((shared_data / "benchmarks/pubmedqa/test_ground_truth.json").read_text())
    test = load_dataset("pubmedqa", data_dir=shared_data)
    assert {q.qid for q in test} == set(gt)
    letter = {"yes": "A", "no": "B", "maybe": "C"}
    assert all(q.answer == letter[gt[q.qid]] and q.context for q in test)
    mirage = {q.qid: q for q in load_dataset("mirage/pubmedqa", data_dir=shared_data)}
    assert all(mirage[q.qid].answer == q.answer for q in test)  # MIRAGE's PubMedQA is the same test set

    medqa = load_dataset("medagents/medqa", data_dir=shared_data)
    assert Counter(q.metadata["meta_info"] for q in medqa) == {"step1": 679, "step2&3": 594}
    mmlu = load_dataset("medagents/mmlu", data_dir=shared_data)
    assert len({q.metadata["subject"] for q in mmlu}) == 6
    pmq = load_dataset("medagents/pubmedqa", data_dir=shared_data)[0]
    assert pmq.question == "Is anorectal endosonography valuable in dyschesia?" and "endosonography" in pmq.context

    cn = load_dataset("cnmleqa", data_dir=shared_data)
    assert cn[0].answer == "B" and list(cn[0].options) == list("ABCDE")
    assert Counter(q.answer for q in cn) == {"A": 650, "B": 608, "C": 599, "D": 558, "E": 534}

    mq = load_dataset("medicineqa-zh", data_dir=shared_data)
    assert mq[0].question == "血吸虫病吃吡喹酮片会有什么副作用吗？"
    assert mq[0].metadata["gold_attributes"] == [["吡喹酮片", "不良反应"]]
    assert sum(len(q.metadata["gold_documents"]) for q in mq) == 101 + 34 * 5 + 8 * 2 + 4 * 3 + 3 * 4
    assert all(d["attribute"] for q in mq for d in q.metadata["gold_documents"])

    med = load_dataset("medication-qa", data_dir=shared_data)
    assert med[0].metadata["focus_drug"] == "rivastigmine" and med[0].metadata["question_type"] == "Interaction"
    assert Counter(q.metadata["question_type"] for q in med)["Information"] == 112
