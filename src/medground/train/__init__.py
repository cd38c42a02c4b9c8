"""Training from LLM feedback: relevance labels (feedback.py) and a cross-encoder reranker fine-tuned on them (reranker.py)."""
