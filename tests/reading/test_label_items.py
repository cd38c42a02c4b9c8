"""An FDA label section's scaffolding is left out of its items; its content is kept."""

from __future__ import annotations

from medground.reading.label_items import is_label, label_item, label_items


def test_headings_boilerplate_and_table_rows_are_scaffolding():
    for line in ["6 ADVERSE REACTIONS", "6.1 Clinical Trials Experience", "6.2 Clinical Trials Experience in Asthma",
                 "To report SUSPECTED ADVERSE REACTIONS, contact Takeda Pharmaceuticals at 1-877-825-3327",
                 "EXCERPT: To report SUSPECTED ADVERSE REACTIONS, contact Merck",
                 "Because clinical trials are conducted under widely varying conditions, adverse reaction rates …",
                 "Table 2: Percentage of Patients with Adverse Reactions", "N=198 N=99", "Men (n)",
                 "Mean Age (years)", "Severe (%)", "Nervous system disorders", "Infections and Infestations",
                 "Body as a Whole", "Placebo BELSOMRA(20 mg in non-elderly)", "10 <1 5 2",
                 "A total of 2757 subjects with hyperuricemia and gout were treated with ULORIC 40 mg or 80 mg daily.",
                 "The data described below reflect exposure to LINZESS in two placebo-controlled trials.",
                 "TUDORZA PRESSAIR was studied in two 3-month (Trials B and C) and one 6-month trial.",
                 "The population had a median age of 64 years (range 40-91), 73% were male."]:
        assert label_item(line) is None, line


def test_content_is_kept_and_a_numbered_heading_keeps_its_title():
    assert label_item("5.5 Hyponatremia") == "Hyponatremia"
    assert label_item("5.1 Hypersensitivity Reactions, Including Anaphylaxis") == "Hypersensitivity Reactions, Including Anaphylaxis"
    # a MedDRA class glued to its first row: the row (a one-word body system is no such prefix)
    assert label_item("Infections and infestations Malaria") == "Malaria"
    assert label_item("Psychiatric disorders Sleep disorder") == "Sleep disorder"
    for line in ["Headache", "Dizziness and Ataxia", "Gastrointestinal bleeding", "Upper respiratory tract infection",
                 "5 mg twice daily", "In the clinical trial program, pancreatitis was reported in 11 of 5902 patients (0.2%).",
                 "Sleep paralysis, an inability to move or speak for up to several minutes, can occur."]:
        assert label_item(line) == line, line
    assert label_items(["6 ADVERSE REACTIONS", "Headache", "N=5 N=6", "Headache", "Cough"]) == ["Headache", "Cough"]
    # a paragraph going on past its scaffolding sentence keeps the rest, verbatim
    assert label_item("The population had a mean age of 39 (range: 18 to 75), 94% were female. In these trials, "
                      "93% of patients treated with BENLYSTA reported an adverse reaction.") == \
        "In these trials, 93% of patients treated with BENLYSTA reported an adverse reaction."
    assert is_label("fda-tac2017:demner-fushman-train-labels/Nesina") and not is_label("openstax-prototype:m1#t")
