"""The transformers backend on a tiny random Qwen2 model built here (no weights needed)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from medground.llm.base import LLMRequestError, LLMSettings, create_llm  # noqa: E402
from medground.llm.scoring import mcq_messages, score_options  # noqa: E402

TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>", *"ABCDE", "answer", "the", "is", "x", "y", ":", "?", "\n",
                                         "<|user|>", "<|assistant|>", "<|system|>"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>")
    fast.chat_template = TEMPLATE
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                         eos_token_id=1, tie_word_embeddings=True))
    path = tmp_path_factory.mktemp("tiny-qwen2")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_generation_returns_openai_shaped_logprobs(tiny_model):
    llm = create_llm(LLMSettings(backend="transformers", model=tiny_model, device="cpu", cache=False))
    out = llm.chat([{"role": "user", "content": "the answer is ?"}], max_tokens=3, top_logprobs=4)
    assert 1 <= out.completion_tokens <= 3 or out.finish_reason == "stop"
    assert len(out.logprobs) == out.completion_tokens
    for t in out.logprobs:
        assert len(t.top) == 4 and t.top == sorted(t.top, key=lambda a: -a[1])
        assert t.logprob <= 0 and t.token == t.top[0][0]  # greedy: the chosen token is the most probable
    # The same request gives the same answer (greedy, no state carried between requests).
    again = llm.chat([{"role": "user", "content": "the answer is ?"}], max_tokens=3, top_logprobs=4)
    assert again.text == out.text and again.logprobs[0].top == out.logprobs[0].top


def test_letter_scoring_reads_a_distribution_over_the_options(tiny_model):
    llm = create_llm(LLMSettings(backend="transformers", model=tiny_model, device="cpu", cache=False))
    result = score_options(llm, mcq_messages("x ?", {"A": "x", "B": "y", "C": "x"}), ["A", "B", "C"])
    assert set(result.probs) == {"A", "B", "C"} and math.isclose(sum(result.probs.values()), 1.0, rel_tol=1e-6)


def test_constrained_decoding_is_refused_with_the_backends_that_do_it(tiny_model):
    llm = create_llm(LLMSettings(backend="transformers", model=tiny_model, device="cpu", cache=False))
    with pytest.raises(LLMRequestError, match="use backend local or openai"):
        llm.chat([{"role": "user", "content": "x"}], response_format={"type": "json_object"})


def test_a_stop_string_ends_generation_and_is_cut_from_the_text(tiny_model):
    llm = create_llm(LLMSettings(backend="transformers", model=tiny_model, device="cpu", cache=False))
    free = llm.chat([{"role": "user", "content": "the answer is ?"}], max_tokens=4, top_logprobs=1)
    first = free.logprobs[0].token.strip()
    stopped = llm.chat([{"role": "user", "content": "the answer is ?"}], max_tokens=4, stop=[first])
    assert stopped.finish_reason == "stop" and stopped.completion_tokens == 1 and first not in stopped.text
