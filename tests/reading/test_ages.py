"""A child's age against an item's age limit (reading/ages.py)."""

from medground.reading.ages import age_limit, child_age, names_the_childs_age


def test_a_childs_age_is_read_where_the_patient_gives_it():
    assert child_age("Can I give my 9 year old half of one of my tablets?") == (9.0, "a 9-year-old")
    assert child_age("My daughter is 6 and has a bad cough.") == (6.0, "a 6-year-old")
    assert child_age("My daughter is six and has a chesty cough.")[0] == 6.0  # a number word
    assert child_age("my boy 3yrs old has a bad cough")[0] == 3.0  # text-speak
    assert child_age("My granddaughter has a runny nose. She's 18 months.") == (1.5, "an 18-month-old")
    assert child_age("my son's 4 and he has a fever")[0] == 4.0
    assert child_age("i'm nursing my baby, she's 3 weeks old. is that ok??")[0] < 2 / 12


def test_an_age_that_is_no_childs_is_not_read():
    """Found by a helper's adversarial probes (session 33)."""
    assert child_age("He is 10 mg a day now") is None  # a dose
    assert child_age("My son is 2 tablets into the pack") is None
    assert child_age("I'm 45 and take it every day") is None and child_age("My husband is 70.") is None
    assert child_age("My son's beagle is 3 years old and keeps scratching.") is None  # a dog
    assert child_age("A bottle at the back of the kids' cupboard that's 3 years old.") is None  # a bottle
    assert child_age("My daughter is 8 months pregnant and has a dry cough") is None
    assert child_age("My wife's 6 weeks pregnant with our second baby") is None
    assert child_age("My son is 5 minutes away with my tetracycline") is None
    assert child_age("She's 18 months old, can she have it?") is None  # "she", and no child spoken of
    # two children, two ages: whose is asked about is not read here
    assert child_age("My daughter is 3 and has a cough too, but I'm asking about her brother, who is 14.") is None


def test_an_items_age_limit_takes_in_the_younger_child():
    assert age_limit("Children under age 12 (extended-release preparations)") == 12
    assert age_limit("Clients <6 months of age") == 0.5
    assert age_limit("Hypertension") is None and age_limit("Infuse under 5 minutes") is None
    assert names_the_childs_age("Children <12 years of age", 9)
    assert not names_the_childs_age("Children under age 4", 6)
    assert not names_the_childs_age("Infants younger than 2 months of age", 0.5)
