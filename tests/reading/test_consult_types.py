"""The consultation reader's value types and shared rules (reading/consult_types.py)."""

from medground.drug_schema import Drug


def test_a_hyphenated_word_holds_its_parts():
    from medground.reading.consult_types import word_set

    assert {"reddish-orange", "reddish", "orange", "urine"} <= word_set("Reddish-orange color of saliva, tears, and urine")
    assert "x" not in word_set("X-ray")  # one-letter parts are no words


def test_a_combinations_own_component_is_no_second_drug():
    from medground.reading.consult_types import part_of

    combo = Drug("amoxicillin-clavulanate", "amoxicillin/clavulanate", ["Augmentin"], "", [],
                 ["amoxicillin", "clavulanate"])
    assert part_of(combo, Drug("amoxicillin", "amoxicillin", [], ""))
    assert part_of(Drug("amoxicillin", "amoxicillin", [], ""), combo)
    assert not part_of(combo, Drug("warfarin", "warfarin", [], ""))


def test_a_matched_part_stands_for_the_item_it_came_from():
    from medground.reading.consult_types import ItemMatch, distinct

    got = distinct([ItemMatch("diarrhea", 0.9, "loose stools"), ItemMatch("Nausea/vomiting/diarrhea", 0.8, "x"),
                    ItemMatch("Arthralgia/myalgia", 0.7, "y")])
    assert [m.text for m in got] == ["diarrhea", "Arthralgia/myalgia"]


def test_a_short_items_head_is_a_part_and_is_named_as_the_whole_item():
    from medground.reading.consult_types import ItemMatch, distinct
    from medground.reading.consult_text import with_parts

    assert with_parts(["Pregnancy (fetal toxicity)"]) == ["Pregnancy (fetal toxicity)", "Pregnancy"]
    table_row = "Hemorrhage (including hematoma) 67 (1.1)"
    assert with_parts([table_row]) == [table_row]  # a table row stays whole
    got = distinct([ItemMatch("Pregnancy", 0.94, "pregnant")], ["Pregnancy (fetal toxicity)", "Pregnancy"])
    assert [m.text for m in got] == ["Pregnancy (fetal toxicity)"]
