from __future__ import annotations

from pathlib import Path

import pytest

from medground import registry
from medground.drug_schema import AttributeType as A
from medground.corpus.drug_builders import build_catalog
from medground.drug_schema import Drug, DrugAttribute, DrugCatalog
from medground.store.drugs import DrugStore
from medground.retrieve.base import EmptyQueryError
from medground.corpus.english import english_words
from medground.retrieve.drugs import (
    DrugRetriever,
    DrugRetrieverSettings,
    attribute_intents,
    make_drug_retriever,
    to_passages,
)


def _catalog() -> DrugCatalog:
    drugs = [Drug("ibuprofen", "ibuprofen", ["Advil"], "NSAID", ["brufen"]),
             Drug("warfarin", "warfarin", ["Coumadin"], "Anticoagulant"),
             Drug("carbidopa-levodopa", "carbidopa/levodopa", [], "", [],
                  ["carbidopa", "levodopa"])]
    src = "openstax-prototype:m1#t"
    attrs = [
        DrugAttribute("ibuprofen", A.DOSAGE, "200-400 mg orally every 4-6 hours", src),
        DrugAttribute("ibuprofen", A.ADVERSE_REACTIONS, "Dyspepsia\nGI bleeding\nRash", src),
        DrugAttribute("ibuprofen", A.INTERACTIONS, "Warfarin\nAspirin", src),
        DrugAttribute("ibuprofen", A.CONTRAINDICATIONS, "Aspirin allergy\nCABG surgery", src),
        DrugAttribute("warfarin", A.INTERACTIONS, "Foods rich in vitamin K such as spinach", src),
        DrugAttribute("warfarin", A.DOSAGE, "2-10 mg orally daily, adjusted to INR", src),
        DrugAttribute("carbidopa-levodopa", A.DOSAGE, "25/100 mg three times daily", src),
    ]
    return DrugCatalog(drugs, attrs)


@pytest.fixture()
def retriever(tmp_path: Path) -> DrugRetriever:
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(_catalog())
    return DrugRetriever(store)


def test_attribute_words():
    assert attribute_intents("ibuprofen side effects") == {A.ADVERSE_REACTIONS: 1.0}
    assert attribute_intents("how much advil")[A.DOSAGE] == 1.0
    assert attribute_intents("safe while pregnant")[A.SPECIAL_POPULATIONS] == 1.0
    assert attribute_intents("can I take it with food")[A.INTERACTIONS] == 1.0
    assert attribute_intents("keep in the fridge?") == {A.STORAGE: 1.0}


def test_misspelling_is_found_fuzzily_and_attribute_ranked_first(retriever):
    hits = retriever.search("ibuprofin side effects", k=3)
    assert hits[0].drug.drug_id == "ibuprofen"
    assert hits[0].attribute.type is A.ADVERSE_REACTIONS
    assert hits[0].matched.startswith("fuzzy 'ibuprofin'→'ibuprofen'")


def test_two_swapped_letters_in_a_short_name_are_one_slip(tmp_path):
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(DrugCatalog([Drug("pregabalin", "pregabalin", ["Lyrica"], "Anticonvulsant")],
                            [DrugAttribute("pregabalin", A.DOSAGE, "75 mg twice daily", "src")]))
    r = DrugRetriever(store)
    # "lyrcia": ratio 83, below the cutoff, but one transposition away from "lyrica".
    (top,) = r.find_drugs("Lyrcia, 75 twice a day")
    assert top.drug_id == "pregabalin" and top.how.startswith("fuzzy 'lyrcia'→'lyrica'")
    if "lyrics" in english_words():
        assert r.find_drugs("song lyrics") == []  # an English word is never a slip for a name


def test_brand_resolves_to_generic(retriever):
    top = retriever.search("Coumadin dose", k=1)[0]
    assert (top.drug.drug_id, top.attribute.type) == ("warfarin", A.DOSAGE)
    assert top.matched == "exact brand 'coumadin'"


def test_bm25_ranks_within_drug_without_attribute_words(retriever):
    top = retriever.search("ibuprofen aspirin allergy", k=1)[0]
    assert top.attribute.type is A.CONTRAINDICATIONS


def test_two_drugs_named_together_ask_for_interactions(retriever):
    hits = retriever.search("ibuprofen and coumadin", k=2)
    assert {(h.drug.drug_id, h.attribute.type) for h in hits} == {
        ("ibuprofen", A.INTERACTIONS), ("warfarin", A.INTERACTIONS)}


def test_component_and_fallback_to_all_attributes(retriever):
    assert retriever.search("levodopa", k=1)[0].drug.drug_id == "carbidopa-levodopa"
    hits = retriever.search("spinach vitamin", k=5)
    assert hits[0].matched == "bm25 attributes"
    assert (hits[0].drug.drug_id, hits[0].attribute.type) == ("warfarin", A.INTERACTIONS)
    assert len(hits) == 1  # attributes without any query word are not returned
    with pytest.raises(EmptyQueryError):
        retriever.search("   ")


def test_passages_are_citable(retriever):
    (p,) = to_passages(retriever.search("advil dosage", k=1))
    assert p.chunk.book == "Medicine database" and p.chunk.chapter == "Ibuprofen"
    assert p.chunk.section_path == ("dosage",)
    assert p.chunk.text == "200-400 mg orally every 4-6 hours" and p.rank == 1
    assert p.chunk.metadata["drug_id"] == "ibuprofen"


def test_registered_retriever(retriever):
    assert registry._FACTORIES[("retriever", "drugs")] is make_drug_retriever
    r = make_drug_retriever(DrugRetrieverSettings(), store=retriever.store)
    (p,) = r.search("brufen rash", k=1)
    assert p.chunk.section_path == ("adverse_reactions",) and p.source == "drugs"
    assert len(r.batch_search(["advil", "warfarin"], k=1)) == 2


@pytest.fixture(scope="module")
def real(shared_data, tmp_path_factory) -> DrugRetriever:
    pytest.importorskip("drug_named_entity_recognition", reason="extra [drugs] links brands")
    store = DrugStore(tmp_path_factory.mktemp("drugs") / "drugs.sqlite")
    store.build(build_catalog(shared_data))
    return DrugRetriever(store)


def test_real_lookups(real):
    top = real.search("Keytruda side effects", k=1)[0]
    assert (top.drug.drug_id, top.attribute.type) == ("pembrolizumab", A.ADVERSE_REACTIONS)
    top = real.search("can I eat grapefruit with coumadin", k=1)[0]
    assert (top.drug.drug_id, top.attribute.type) == ("warfarin", A.INTERACTIONS)
    assert "Grapefruit" in top.attribute.text
    top = real.search("Xarelto boxed warning", k=1)[0]
    assert (top.drug.drug_id, top.attribute.type) == ("rivaroxaban", A.BOXED_WARNING)
    assert real.search("metoprolol tartrate dosage", k=1)[0].drug.drug_id == "metoprolol"
    assert real.search("medication for gout", k=1)[0].matched == "bm25 attributes"


def test_an_ordinary_english_word_is_a_misspelt_name_only_when_no_drug_is_named(tmp_path):
    """'grandpa' is 88 % of the brand 'Grandipam' by ratio: beside a named drug an ordinary word is
    no misspelt name (the helper's "My grandpa is on morphine tablets" named sildenafil as a second
    drug)."""
    if not english_words():
        pytest.skip("no English word list (the [dense] extra's MiniLM vocabulary)")
    catalog = DrugCatalog([Drug("sildenafil", "sildenafil", ["Grandipam"], "PDE5 inhibitor"),
                           Drug("morphine", "morphine", [], "Opioid")],
                          [DrugAttribute("sildenafil", A.DOSAGE, "50 mg", "t:1"),
                           DrugAttribute("morphine", A.DOSAGE, "10 mg", "t:2")])
    store = DrugStore(tmp_path / "d.sqlite")
    store.build(catalog)
    r = DrugRetriever(store)
    assert [m.drug_id for m in r.find_drugs("My grandpa is on morphine tablets")] == ["morphine"]
    assert [m.drug_id for m in r.find_drugs("I take grandipan")] == ["sildenafil"]  # a real slip still is
    # and the ordinary word too, when nothing else names a drug ("singular 10 mg" is Singulair)
    assert [m.drug_id for m in r.find_drugs("what is my grandpa for")] == ["sildenafil"]
