"""The medicine database audit: one name, one drug; near-duplicates and local-only products named;
and the shipped build passes it with no error."""

import pytest
from typer.testing import CliRunner

from medground.corpus.drug_audit import audit, local_route, misspelt_generics, resolve_brand_conflicts
from medground.drug_schema import Drug, NameLexicon


def _drugs():
    return [Drug("fexofenadine", "fexofenadine", ["Allegra"], "Antihistamine"),
            Drug("loratadine", "loratadine", ["Allegra", "Claritin"], "Antihistamine"),
            Drug("guaifenesin", "guaifenesin", [], "Expectorant", synonyms=["robitussin"]),
            Drug("dextromethorphan", "dextromethorphan", ["Robitussin"], "Antitussive"),
            Drug("latanaprost", "latanaprost", [], "Prostaglandin analog"),
            Drug("latanoprost", "latanoprost", [], "Prostaglandin analog"),
            Drug("ciprofloxacin", "ciprofloxacin", ["Ciloxan"], "Ocular antibacterial")]


def test_audit_names_each_conflict():
    found = {(f.kind, f.name): f for f in audit(_drugs())}
    assert found[("brand_of_several", "allegra")].drug_ids == ("fexofenadine", "loratadine")
    assert found[("name_of_several", "robitussin")].severity == "error"
    assert ("near_duplicate", "latanaprost ~ latanoprost") in found
    assert found[("local_route_only", "ciprofloxacin")].severity == "info"
    assert local_route(_drugs()[-1]) == "ophthalmic" and local_route(_drugs()[0]) is None
    # a drug listed among systemic drugs too, or in a "systemic" table, is no local product
    assert local_route(Drug("azithromycin", "azithromycin", [], "Macrolide; Otic Systemic Anti-infectives")) is None
    assert local_route(Drug("azithromycin", "azithromycin", [], "Otic Systemic Anti-infectives")) is None
    assert local_route(Drug("erythromycin", "erythromycin", [], "Ocular Antibacterials")) == "ophthalmic"


def test_a_brand_that_is_another_drugs_generic_is_an_error_and_the_build_drops_it():
    drugs = [Drug("aspirin", "aspirin", [], "Salicylate"),
             Drug("salicylic-acid", "salicylic acid", ["aspirin", "Salex"], "Keratolytic")]
    found = {(f.kind, f.name): f for f in audit(drugs)}
    assert found[("brand_is_generic", "aspirin")].drug_ids == ("salicylic-acid", "aspirin")
    changes = resolve_brand_conflicts(drugs, NameLexicon())
    assert drugs[1].brand_names == ["Salex"] and len(changes) == 1
    assert not [f for f in audit(drugs) if f.severity == "error"]


def test_known_distinct_drugs_are_not_near_duplicates():
    drugs = [Drug("citalopram", "citalopram"), Drug("escitalopram", "escitalopram")]
    assert any(f.kind == "near_duplicate" for f in audit(drugs))
    lexicon = NameLexicon({"citalopram": ["citalopram"], "escitalopram": ["escitalopram"]})
    assert not any(f.kind == "near_duplicate" for f in audit(drugs, lexicon=lexicon))


def test_a_misspelt_generic_is_read_as_the_name_the_lexicon_knows():
    lexicon = NameLexicon({"latanoprost": ["latanoprost"], "citalopram": ["citalopram"],
                           "escitalopram": ["escitalopram"]})
    drugs = [*_drugs(), Drug("citalopram", "citalopram"), Drug("escitalopram", "escitalopram"),
             Drug("citalopran", "citalopran")]
    # "escitalopram" is two letters further: only citalopram is near enough
    assert misspelt_generics(drugs, lexicon) == {"latanaprost": "latanoprost", "citalopran": "citalopram"}
    assert misspelt_generics(drugs, NameLexicon()) == {}  # without the lexicon nothing is known


def test_resolution_keeps_a_brand_where_the_lexicon_puts_it():
    drugs = _drugs()
    lexicon = NameLexicon({"allegra": ["fexofenadine"], "fexofenadine": ["fexofenadine"]})
    changes = resolve_brand_conflicts(drugs, lexicon)
    by_id = {d.drug_id: d for d in drugs}
    assert by_id["loratadine"].brand_names == ["Claritin"] and by_id["fexofenadine"].brand_names == ["Allegra"]
    assert "robitussin" not in by_id["guaifenesin"].synonyms  # a source table's brand link wins
    assert len(changes) == 2
    assert not [f for f in audit(drugs) if f.severity == "error"]


@pytest.mark.slow
def test_the_shipped_build_has_no_audit_error(shared_data, tmp_path):
    from medground.corpus.drug_builders import build_catalog
    from medground.drug_schema import load_drug_ner_lexicon

    lexicon = load_drug_ner_lexicon()
    catalog = build_catalog(shared_data, lexicon)
    errors = [f for f in audit(catalog.drugs, lexicon=lexicon) if f.severity == "error"]
    assert errors == [], errors[:5]
    by_name = {d.generic_name: d for d in catalog.drugs}
    assert "Allegra" not in by_name["loratadine"].brand_names and "Allegra" in by_name["fexofenadine"].brand_names
    # a drug table's dose-only second record joins the drug's full one (catalog 5)
    assert "Depakote" in by_name["valproic acid"].brand_names and "valproic acid, divalproex" not in by_name


def test_audit_command_exits_1_on_errors(tmp_path):
    from medground.cli.drugs import app
    from medground.drug_schema import DrugCatalog
    from medground.store.drugs import DrugStore

    store = DrugStore(tmp_path / "drugs.sqlite")
    store.build(DrugCatalog(_drugs(), []))
    res = CliRunner().invoke(app, ["audit", "--db", str(tmp_path / "drugs.sqlite"), "--json"])
    assert res.exit_code == 1 and '"brand_of_several"' in res.output


def test_a_fragment_of_the_generic_name_is_not_a_synonym():
    from medground.corpus.drug_audit import audit, is_partial_name
    from medground.drug_schema import Drug

    assert is_partial_name("alcohol,", "benzyl alcohol")  # "Alcohol, benzyl" cut at its comma
    assert is_partial_name("sodium", "docusate sodium")  # the salt alone
    assert not is_partial_name("amphotericin", "amphotericin b")
    assert not is_partial_name("zoster vaccine", "herpes zoster vaccine")
    assert not is_partial_name("benzathine penicillin", "penicillin g benzathine")
    found = audit([Drug("benzyl-alcohol", "benzyl alcohol", ["Ulesfia"], "Pediculicide", synonyms=["alcohol,"])])
    assert [(f.kind, f.severity) for f in found] == [("partial_name", "error")]


def test_a_dose_only_second_record_of_a_drug_is_found_by_its_names():
    from medground.corpus.drug_audit import same_drug_records

    drugs = [Drug("valproic-acid", "valproic acid", [], "Anticonvulsant"),
             Drug("valproic-acid-divalproex", "valproic acid, divalproex", ["Depakote"], ""),
             Drug("17-beta-estradiol", "17-beta-estradiol", [], "Estrogen"),
             Drug("estradiol", "estradiol", ["Estrace"], "", synonyms=["17 beta-estradiol"]),
             Drug("conjugated-estrogen", "conjugated estrogen", [], "Estrogen"),
             Drug("estrogen", "estrogen", [], "", synonyms=["conjugated estrogens", "premarin"]),
             Drug("estradiol-levonorgestrel", "estradiol levonorgestrel", ["Aviane"], "")]
    full = {"dosage", "adverse_reactions", "contraindications"}
    types = {"valproic-acid": full, "17-beta-estradiol": full, "conjugated-estrogen": full,
             "valproic-acid-divalproex": {"dosage"}, "estradiol": {"dosage"}, "estrogen": {"dosage"},
             "estradiol-levonorgestrel": {"dosage"}}
    assert same_drug_records(drugs, types) == {"valproic-acid-divalproex": "valproic-acid",
                                               "estradiol": "17-beta-estradiol", "estrogen": "conjugated-estrogen"}
    # a record with entries of its own is its own drug, whatever its names
    assert same_drug_records(drugs, {**types, "estradiol": {"dosage", "warnings"}}).get("estradiol") is None
