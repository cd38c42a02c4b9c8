"""RagPULSE's tool-call training data and the LoRA smoke test."""

from __future__ import annotations

import json

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute
from medground.train.toolcall_data import build, split_of, write_jsonl

DRUGS = [Drug("lisinopril", "lisinopril", ["Zestril"]), Drug("ibuprofen", "ibuprofen", ["Advil"]),
         Drug("metformin", "metformin", []), Drug("nothing", "nothing", [])]
ATTRS = [DrugAttribute("lisinopril", A.DOSAGE, "10 mg daily", "s"),
         DrugAttribute("lisinopril", A.INTERACTIONS, "Potassium supplements", "s"),
         DrugAttribute("ibuprofen", A.ADVERSE_REACTIONS, "Dyspepsia", "s"),
         DrugAttribute("metformin", A.DOSAGE, "500 mg twice daily", "s")]


def test_examples_are_seeded_chat_format_tool_calls_naming_the_drug_as_the_patient_did():
    ex = build(DRUGS, ATTRS, 40, seed=1)
    assert ex == build(DRUGS, ATTRS, 40, seed=1) and ex != build(DRUGS, ATTRS, 40, seed=2)
    assert build(DRUGS, ATTRS, 10, seed=1) == ex[:10]  # example i does not depend on n
    for e in ex:
        system, user, assistant = e["messages"]
        assert (system["role"], user["role"], assistant["role"]) == ("system", "user", "assistant")
        call = assistant["tool_calls"][0]["function"]
        keywords = json.loads(call["arguments"])["keywords"]
        assert call["name"] == "search_engine" and e["tools"][0]["function"]["name"] == "search_engine"
        drug = next(d for d in DRUGS if d.drug_id == e["target"]["drug_id"])
        named = next(n for n in (*drug.brand_names, drug.display_name) if n in user["content"].split("\n")[2])
        assert keywords.startswith(named)  # the name the patient used, brand or generic
        assert (drug.drug_id, A(e["target"]["attribute"])) in {(a.drug_id, a.type) for a in ATTRS}
        assert e["split"] == split_of(drug.drug_id, 0.1)
    assert "nothing" not in {e["target"]["drug_id"] for e in ex}  # a drug without records is never asked about


def test_split_is_by_drug_and_written_one_example_a_line(tmp_path):
    ex = build(DRUGS, ATTRS, 30, seed=0, dev_share=0.5)
    by_drug = {}
    for e in ex:
        by_drug.setdefault(e["target"]["drug_id"], set()).add(e["split"])
    assert all(len(s) == 1 for s in by_drug.values())  # no drug in both splits
    counts = write_jsonl(ex, tmp_path / "d.jsonl")
    assert sum(counts.values()) == 30 and len((tmp_path / "d.jsonl").read_text().splitlines()) == 30
    with pytest.raises(ValueError, match="at least two drugs"):
        build(DRUGS[:1], ATTRS[:1], 5)


@pytest.mark.slow
def test_lora_smoke_on_the_bundled_135m(tmp_path):
    pytest.importorskip("peft")
    pytest.importorskip("gguf")
    from medground.llm.models import pull
    from medground.train.lora import LoraSettings, train_lora

    path = pull("smollm2-135m", progress=False)
    write_jsonl(build(DRUGS, ATTRS, 8, seed=0, dev_share=0.0), tmp_path / "d.jsonl")
    summary = train_lora(tmp_path / "d.jsonl", tmp_path / "lora",
                         LoraSettings(base=str(path), steps=2, batch_size=2, max_length=256))
    assert summary["steps"] == 2 and summary["examples"] == 8 and summary["trainable_parameters"] > 0
    assert (tmp_path / "lora" / "adapter_config.json").exists()
    assert summary["loss_first"] == summary["loss_first"] and summary["loss_last"] > 0  # finite
