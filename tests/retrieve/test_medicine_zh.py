"""The Chinese medicine database built from MedicineQA documents, and its search."""

from __future__ import annotations

from medground.drug_schema import AttributeType as A
from medground.eval.loaders import parse_medicineqa_prompt
from medground.retrieve.medicine_zh import ZhMedicineSearch, base_name, catalog_from_medicineqa, zh_tokens
from medground.schema import Question

PROMPT = ("目标：\n回复。\n\n文档：\n[1]异烟肼片\n禁忌症:肝功能不正常者，精神病患者和癫痫患者禁用。\n"
          "[2]异烟肼片\n不良反应:常见肝毒性、周围神经炎。\n[3]阿莫西林胶囊\n适应症:敏感菌所致的呼吸道感染。\n\n"
          "聊天记录:\n用户：肺结核吃异烟肼有什么禁忌吗？")


def _items():
    docs, dialogue = parse_medicineqa_prompt(PROMPT)
    q = Question(qid="000", dataset="medicineqa-zh", question="肺结核吃异烟肼有什么禁忌吗？", context=dialogue,
                 metadata={"gold_documents": docs, "gold_attributes": [["异烟肼片", "禁忌症"]]})
    other = Question(qid="001", dataset="medicineqa-zh", question="x", metadata={"gold_documents": [
        {"number": 1, "drug": "阿莫西林胶囊", "attribute": "适应症", "text": "敏感菌所致的呼吸道感染。"},
        {"number": 2, "drug": "维生素C片", "attribute": "神秘属性", "text": "无"}]})
    return [q, other]


def test_tokens_and_base_names():
    assert zh_tokens("异烟肼 0.1g") == ["异", "烟", "肼", "异烟", "烟肼", "0.1", "g"]
    assert base_name("异烟肼片") == "异烟肼" and base_name("注射用英夫利西单抗") == "英夫利西单抗"
    assert base_name("阿莫西林胶囊") == "阿莫西林" and base_name("片") == "片"


def test_catalog_deduplicates_and_reports_unknown_attributes():
    catalog = catalog_from_medicineqa(_items())
    assert sorted(d.drug_id for d in catalog.drugs) == ["异烟肼片", "阿莫西林胶囊"]
    assert len(catalog.attributes) == 3  # the amoxicillin document appears twice, stored once
    types = {(a.drug_id, a.type) for a in catalog.attributes}
    assert ("异烟肼片", A.CONTRAINDICATIONS) in types and ("异烟肼片", A.ADVERSE_REACTIONS) in types
    assert len(catalog.problems) == 1 and "神秘属性" in catalog.problems[0]


def test_entity_first_finds_the_drug_by_its_base_name_and_the_asked_attribute():
    search = ZhMedicineSearch(catalog_from_medicineqa(_items()))
    assert search.find_drugs("肺结核吃异烟肼有什么禁忌吗") == [("异烟肼片", 4)]
    hits = search.search("肺结核吃异烟肼有什么禁忌吗？", k=3)
    assert [h.drug_id for h in hits[:2]] == ["异烟肼片", "异烟肼片"] and hits[0].heading == "禁忌症"
    typed = search.search("异烟肼会怎样", k=3, attribute_scores=lambda _: {A.ADVERSE_REACTIONS: 1.0})
    assert typed[0].heading == "不良反应"
    # No drug named: BM25 over every record.
    assert search.search("呼吸道感染", k=1)[0].drug_id == "阿莫西林胶囊"
