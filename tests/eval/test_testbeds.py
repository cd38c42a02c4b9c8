"""The test sets the benchmark scripts share (eval/testbeds.py)."""

from pathlib import Path

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.eval.testbeds import exact_drug
from medground.retrieve.drugs import DrugRetriever
from medground.store.drugs import DrugStore

SRC = "openstax-prototype:m1#t"


def test_a_writers_drug_name_is_the_drug_it_names_exactly_with_the_entries_it_holds(tmp_path: Path):
    drugs = [Drug("isosorbide-dinitrate", "isosorbide dinitrate", ["Isordil"], "Nitrate"),
             Drug("hydralazine-isosorbide", "hydralazine/isosorbide dinitrate", ["BiDil"], "", [],
                  ["hydralazine", "isosorbide dinitrate"])]
    attrs = [DrugAttribute("isosorbide-dinitrate", A.DOSAGE, "5-40 mg orally", SRC),
             DrugAttribute("hydralazine-isosorbide", A.DOSAGE, "1 tablet three times daily", SRC),
             DrugAttribute("hydralazine-isosorbide", A.ADVERSE_REACTIONS, "Headache\nDizziness", SRC)]
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(DrugCatalog(drugs, attrs))
    retriever = DrugRetriever(store)
    # the combination's own generic name comes first, not its component
    assert exact_drug(retriever, "hydralazine/isosorbide dinitrate") == \
        ("hydralazine-isosorbide", {"dosage", "adverse_reactions"})
    assert exact_drug(retriever, "Isordil") == ("isosorbide-dinitrate", {"dosage"})
    assert exact_drug(retriever, "zolgensma") == (None, set())
