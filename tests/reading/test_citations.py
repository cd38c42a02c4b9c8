"""Talk of passages in a generated answer becomes citation marks a reader (and the checks) can use."""

from medground.reading.citations import cited_numbers, plain_citations


def test_talk_of_passages_becomes_citation_marks():
    assert plain_citations("The most an adult can take is 40 mg/day, according to passage [2].") == \
        "The most an adult can take is 40 mg/day [2]."
    assert plain_citations("According to passage 3, sickle cell disease is the most common.") == \
        "Sickle cell disease is the most common [3]."
    assert plain_citations("It is about 1% for women (Passage 1).") == "It is about 1% for women [1]."
    assert plain_citations("The passage states that loop diuretics waste potassium [1].") == \
        "Loop diuretics waste potassium [1]."
    assert cited_numbers(plain_citations("Methadone lasts 59 hours, as stated in Passage 1.")) == [1]
    assert plain_citations("Methadone lasts 59 hours, as stated in Passage 1 [1].") == "Methadone lasts 59 hours [1]."
    assert plain_citations("Methadone lasts 59 hours, as stated in Passage 1. [1] Next.") == \
        "Methadone lasts 59 hours [1]. Next."
    # a clause that only says where the claim comes from (an own-words question, session 35)
    assert plain_citations("A deficiency of vitamin B12 can lead to nerve cell damage, which is supported by "
                           "passage [1].") == "A deficiency of vitamin B12 can lead to nerve cell damage [1]."


def test_a_sentence_that_only_names_its_source_becomes_the_previous_ones_mark():
    assert plain_citations("Clay eating is called geophagia. This belief is supported by passage [1].") == \
        "Clay eating is called geophagia [1]."
    assert plain_citations("It needs disinfection [1]. This level of disinfection is supported by passage [1].") == \
        "It needs disinfection [1]."
    assert plain_citations("Sweat cools the body. This is supported by passage 2. [2]") == "Sweat cools the body [2]."


def test_an_answer_without_such_talk_is_unchanged():
    for text in ("Digoxin slows the heart rate [2].", "Passages of the bowel are lined with mucosa [1].",
                 "In children, it is given orally [3]."):
        assert plain_citations(text) == text
