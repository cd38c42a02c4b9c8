"""medground.llm: one typed chat interface over llama.cpp (in-process) and OpenAI-compatible servers.

    from medground.llm import LLMSettings, create_llm
    llm = create_llm(LLMSettings(model="qwen2.5-coder-1.5b"))           # or backend="openai", base_url=...
    llm.chat([{"role": "user", "content": "..."}], max_tokens=64)

Scoring helpers live in medground.llm.scoring, schema-constrained outputs in
medground.llm.structured, the model catalog in medground.llm.models.
"""

from medground.llm.base import (
    LLM,
    ChatRequest,
    ChatResult,
    LLMError,
    LLMRequestError,
    LLMSettings,
    Message,
    TokenLogprob,
    ToolCall,
    create_llm,
)

__all__ = ["LLM", "ChatRequest", "ChatResult", "LLMError", "LLMRequestError", "LLMSettings", "Message",
           "TokenLogprob", "ToolCall", "create_llm"]
