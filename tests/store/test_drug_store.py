from __future__ import annotations

from pathlib import Path

import pytest

from medground.drug_schema import AttributeType as A
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog, UnknownHeading
from medground.store.drugs import DrugStore, EmptyDrugStoreError


def small_catalog() -> DrugCatalog:
    drugs = [
        Drug("ibuprofen", "ibuprofen", ["Advil", "Motrin"], "NSAID", ["advil", "brufen"], [],
             ["openstax-prototype", "fda-tac2017"]),
        Drug("carbidopa-levodopa", "carbidopa/levodopa", ["Sinemet"], "", [],
             ["carbidopa", "levodopa"], ["openstax-prototype"]),
    ]
    attrs = [DrugAttribute("ibuprofen", t, f"text {t.value}", "openstax-prototype:m1#t")
             for t in (A.DOSAGE, A.ADVERSE_REACTIONS, A.INTERACTIONS, A.INTERACTIONS,
                       A.CONTRAINDICATIONS)]
    attrs.append(DrugAttribute("ibuprofen", A.BOXED_WARNING, "GI risk", "fda-tac2017:train/Advil"))
    attrs.append(DrugAttribute("carbidopa-levodopa", A.DOSAGE, "25/100 mg", "openstax-prototype:m2#t"))
    return DrugCatalog(drugs, attrs, [UnknownHeading("openstax-prototype:m1#t", "Tablet:")],
                       [], {"prototype_tables": 2})


def test_build_and_stats(tmp_path: Path):
    with DrugStore(tmp_path / "d.sqlite") as store:
        store.build(small_catalog())
        s = store.stats()
    assert s.drugs == 2 and s.attributes == 7
    assert s.attributes_by_type == {"adverse_reactions": 1, "boxed_warning": 1,
                                    "contraindications": 1, "dosage": 2, "interactions": 2}
    assert s.drugs_with_4plus_types == 1
    # "advil" is a brand, so the synonym copy is not stored twice.
    assert s.names_by_kind == {"brand": 3, "component": 2, "generic": 2, "synonym": 1}
    assert s.drugs_by_source == {"fda-tac2017": 1, "openstax-prototype": 2}
    assert s.attributes_by_source == {"fda-tac2017": 1, "openstax-prototype": 6}
    assert s.build == {"prototype_tables": 2} and s.unknown_headings == 1


def test_lookup_roundtrip_and_rebuild_replaces(tmp_path: Path):
    path = tmp_path / "d.sqlite"
    with DrugStore(path) as store:
        store.build(small_catalog())
    with DrugStore(path) as store:  # reopened from disk
        assert store.lookup("  ADVIL ") == [("ibuprofen", "brand")]
        assert store.lookup("levodopa") == [("carbidopa-levodopa", "component")]
        assert store.drug("ibuprofen").brand_names == ["Advil", "Motrin"]
        assert [a.type for a in store.attributes("carbidopa-levodopa")] == [A.DOSAGE]
        cat = small_catalog()
        cat.drugs, cat.attributes = cat.drugs[1:], cat.attributes[-1:]
        store.build(cat)
        assert [d.drug_id for d in store.drugs()] == ["carbidopa-levodopa"]
        assert store.lookup("advil") == []


def test_default_path_is_in_home_and_empty_store_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path))
    with DrugStore() as store:
        assert store.path == tmp_path / "drugs.sqlite"
        with pytest.raises(EmptyDrugStoreError, match="medground drugs build"):
            store.require_built()


def test_a_database_built_by_older_builders_says_to_rebuild(tmp_path: Path):
    import warnings

    with DrugStore(tmp_path / "d.sqlite") as store:
        store.build(small_catalog())
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            store.require_built()  # built now: silent
        store._conn.execute("DELETE FROM meta WHERE key = 'catalog_version'")  # as before version 2
        with pytest.warns(UserWarning, match="run `medground drugs build`"):
            store.require_built()
