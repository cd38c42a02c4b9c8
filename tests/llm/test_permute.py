"""Permutation-debiased letter scoring: a letter preference cancels out, content decides."""

import math

from medground.llm.base import ChatResult, TokenLogprob
from medground.llm.scoring import cyclic_orders, score_options, score_options_permuted
from medground.llm.prompts import format_options


class BiasedReader:
    """Likes letter A a lot, and the option whose text is 'right' a little more."""

    def __init__(self, letters_found: bool = True):
        self.calls = 0
        self.letters_found = letters_found

    def chat(self, messages, **kw) -> ChatResult:
        self.calls += 1
        shown = dict(line.split(". ", 1) for line in messages[-1]["content"].splitlines() if ". " in line)
        if not self.letters_found:
            return ChatResult(text="hmm", logprobs=[TokenLogprob("hmm", -0.1, [("hmm", -0.1), ("well", -3.0)])])
        logits = {x: (2.0 if x == "A" else 0.0) + (1.5 if t == "right" else 0.0) for x, t in shown.items()}
        z = math.log(sum(math.exp(v) for v in logits.values()))
        top = sorted(((x, v - z) for x, v in logits.items()), key=lambda kv: -kv[1])
        return ChatResult(text=top[0][0], prompt_tokens=10, completion_tokens=1,
                          logprobs=[TokenLogprob(top[0][0], top[0][1], top)])


def build(shown):
    return [{"role": "user", "content": format_options(shown)}]


OPTIONS = {"A": "wrong one", "B": "right", "C": "wrong two", "D": "wrong three"}


def test_cyclic_orders_put_every_option_under_every_letter_once():
    orders = cyclic_orders(["A", "B", "C", "D"])
    assert orders[0] == ["A", "B", "C", "D"] and orders[1] == ["B", "C", "D", "A"]
    for i in range(4):
        assert sorted(o[i] for o in orders) == ["A", "B", "C", "D"]
    assert len(cyclic_orders(["A", "B", "C"], shifts=2)) == 2


def test_plain_scoring_follows_the_letter_bias_permuted_scoring_follows_content():
    plain = score_options(BiasedReader(), build(OPTIONS), list(OPTIONS))
    assert plain.choice == "A"
    llm = BiasedReader()
    permuted = score_options_permuted(llm, build, OPTIONS)
    assert permuted.choice == "B"
    assert llm.calls == permuted.calls == 4
    assert abs(sum(permuted.probs.values()) - 1) < 1e-9
    # Token accounting adds up the passes.
    assert permuted.result.prompt_tokens == 40


def test_a_sure_first_pass_ends_the_shifts_an_unsure_one_reads_them_all():
    first = score_options(BiasedReader(), build(OPTIONS), list(OPTIONS)).probs["A"]  # ~0.53
    llm = BiasedReader()
    sure = score_options_permuted(llm, build, OPTIONS, stop_at=first - 0.01)
    assert (sure.choice, sure.calls, llm.calls) == ("A", 1, 1) and abs(sure.probs["A"] - first) < 1e-9
    llm = BiasedReader()
    unsure = score_options_permuted(llm, build, OPTIONS, stop_at=first + 0.01)
    assert (unsure.choice, unsure.calls, llm.calls) == ("B", 4, 4)


def test_no_letter_in_any_pass_is_a_parse_failure_not_a_default_letter():
    out = score_options_permuted(BiasedReader(letters_found=False), build, OPTIONS)
    assert out.outcome == "parse_failure" and out.choice is None and out.blank_passes == 4


class YesNoReader:
    """Says 'yes' to the option text it believes, with a strong 'A' habit it never gets to use."""

    def __init__(self, believed: str):
        self.believed = believed
        self.calls = 0

    def chat(self, messages, **kw) -> ChatResult:
        self.calls += 1
        user = messages[-1]["content"]
        p_yes = 0.8 if user.endswith(self.believed) else 0.3
        top = [(" Yes", math.log(p_yes)), ("No", math.log(1 - p_yes)), ("A", math.log(0.001))]
        top.sort(key=lambda kv: -kv[1])
        return ChatResult(text=top[0][0], prompt_tokens=5, completion_tokens=1,
                          logprobs=[TokenLogprob(top[0][0], top[0][1], top)])


def test_verify_scores_each_option_without_letters():
    from medground.llm.scoring import score_options_verify

    llm = YesNoReader("right")
    out = score_options_verify(llm, lambda text: [{"role": "user", "content": f"Proposed answer: {text}"}], OPTIONS)
    assert out.choice == "B" and llm.calls == 4 and out.calls == 4
    # softmax of logit(P(yes)): 0.8 -> log 4, 0.3 -> log(3/7)
    expected_b = 4 / (4 + 3 * (3 / 7))
    assert abs(out.probs["B"] - expected_b) < 1e-9


def test_verify_without_yes_or_no_is_a_parse_failure():
    from medground.llm.scoring import score_options_verify

    out = score_options_verify(BiasedReader(letters_found=False), lambda t: [{"role": "user", "content": t}], OPTIONS)
    assert out.outcome == "parse_failure" and out.choice is None
