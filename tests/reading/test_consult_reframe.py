"""The patient's last question reframed for the typer (reading/consult_reframe.py)."""

from medground.reading.consult_reframe import asking_part, attribution_question, bearing_question


def test_a_question_without_its_mark_still_ties_what_was_said_to_the_medicine():
    """"… crying one minute and screaming at his sister the next … could it be the meds" (no
    '?') was typed as a question about what Keppra is for."""
    said = "hes been crying one minute and screaming at his sister the next. could it be the meds"
    assert attribution_question(said, ["keppra"]) == (
        "Can this medicine cause this: hes been crying one minute and screaming at his sister the next?")
    # a last sentence that asks nothing is no question, with or without a mark
    assert attribution_question("hes been crying a lot. it started with the meds", ["keppra"]) is None
    # an unmarked question that says what it asks is left to the typer as it is
    assert attribution_question("I take keppra. Can it be taken with food", ["keppra"]) is None


def test_a_down_to_the_tablets_ties_what_was_said_to_them():
    said = "And the telly seems quieter too, I've got it on full blast. Is that down to the tablets?"
    assert attribution_question(said) == "Can this medicine cause this: And the telly seems quieter too, I've got it on full blast?"


def test_a_bare_does_that_matter_asks_whether_what_was_said_bears_on_the_medicine():
    fit = "My neurologist mentioned Ampyra for my walking. I had one fit years ago, nothing since. Does that matter?"
    assert bearing_question(fit, ["Ampyra"]) == "Is this medicine safe with this: I had one fit years ago, nothing since?"
    assert bearing_question("I'm pregnant. Would that stop me using it?") == "Is this medicine safe with this: I'm pregnant?"
    assert bearing_question("I have asthma. Does that mean I can't take Inderal?", ["Inderal"]) is not None
    assert bearing_question("I had a clot two years ago. Does that rule it out?") is not None
    # a question that names something of its own, one about a dose, or nothing said before it
    assert bearing_question("I chew Tums daily. Does that matter with the antibiotic?", ["Tums"]) is None
    assert bearing_question("I take two at night. Is that ok?") is None
    assert bearing_question("Does that matter?") is None
    assert bearing_question("I had a fit years ago. Can I take it with food?") is None


def test_that_points_past_the_sentence_naming_the_medicine():
    turn = ("They said I'll probably have a spinal anaesthetic, the injection in the back. I take Xarelto for "
            "my AF. Does that matter?")
    assert bearing_question(turn, ["Xarelto"]) == ("Is this medicine safe with this: They said I'll probably have "
                                                   "a spinal anaesthetic, the injection in the back?")


def test_that_pointing_at_a_second_medicine_is_left_to_the_two_drug_reading():
    turn = "My GP wants me to take ibuprofen for a sprained ankle. Does that matter?"
    assert bearing_question(turn, ["ibuprofen", "lithium"]) is None


def test_a_problem_or_a_concern_is_left_to_the_typer():
    assert bearing_question("I took 8 of them yesterday. Is that a problem?") is None
    assert bearing_question("My hands have been shaking since last week. Is that a concern?") is None


def test_a_question_about_taking_both_says_so():
    from medground.reading.consult_reframe import asks_about_both

    assert asks_about_both("New cardiologist just added Lipitor. Should I be worried taking both??")
    assert asks_about_both("Is it OK to have them together?")
    assert not asks_about_both("Both of my kids have colds. Is it ok for them?")  # not in the question
    assert not asks_about_both("Is it safe in pregnancy?")
    # a helper's probes: two symptoms, two doses, a time of day, food, juice
    for turn in ["Is it normal to get both?", "If I forget can I just take both doses together at night?",
                 "Does it matter if I take it at the same time of day every day?",
                 "Should the prednisone be taken together with food?", "Can I crush it and mix it into his juice?"]:
        assert not asks_about_both(turn), turn
    assert asks_about_both("Is it ok to take aspirin on top of that?") and asks_about_both("is it safe to be on both?")


def test_what_the_question_is_about_is_its_own_words_or_what_it_points_back_at():
    coffee = "Not really. I'm a big coffee drinker, five mugs before lunch. Could that be it?"
    assert asking_part(coffee) == "I'm a big coffee drinker, five mugs before lunch. Could that be it?"
    assert asking_part("I eat breakfast right after. Is that ok?") == "I eat breakfast right after. Is that ok?"
    # a question with words of its own is about them: the cheese told before is context
    dose = "I had some cheese at lunch. What's the most Nardil I can take in a day?"
    assert asking_part(dose, ["Nardil"]) == "What's the most Nardil I can take in a day?"
    assert asking_part("Do I really have to skip the cheese??") == "Do I really have to skip the cheese??"


def test_which_of_my_medicines_is_read_by_its_grammar():
    """Session 37: "which one is doing this" names a medicine by a choice among the patient's."""
    from medground.reading.consult_reframe import which_medicine

    assert which_medicine("which one is doing this") == {"which", "one"}
    assert which_medicine("Which of these would do that?") == {"which", "of", "these"}
    assert which_medicine("which of them would cause that") == {"which", "of", "them"}
    assert which_medicine("could one of my tablets be doing it?") == {"one", "of", "my", "tablets"}
    assert {"blood", "pressure", "pills"} <= which_medicine("Could one of my blood pressure pills do that?")
    assert which_medicine("which of the two is it") == {"which", "of", "the", "two"}
    # a choice among other things names no medicine
    assert which_medicine("Is it one of my friends doing this?") == set()
    assert which_medicine("Which of the doctors should I see?") == set()
    assert which_medicine("the one I take at night") == set()


def test_which_one_ties_what_was_said_to_the_medicines_even_without_its_mark():
    said = ("I'm on the Bactrim and that Azo pain pill for a bladder infection. My pee is bright orange?? "
            "which one is doing this")
    assert attribution_question(said, ["bactrim"]) == "Can this medicine cause this: My pee is bright orange?"
    assert attribution_question("My chest is sore. Which of these would do that?") == \
        "Can this medicine cause this: My chest is sore?"
    # a which-question that asks something of its own is left to the typer
    assert attribution_question("I take metformin and lisinopril. Which one should I take first?") is None
