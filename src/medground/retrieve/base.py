"""The retrieval protocols, re-exported where retrieval code has always found them; they live
on the ground floor (``medground.protocols``) so that ``index/`` needs nothing from ``retrieve/``."""

from medground.protocols import EmptyQueryError, Embedder, Fuser, Reranker, Retriever, check_query

__all__ = ["EmptyQueryError", "Embedder", "Fuser", "Reranker", "Retriever", "check_query"]
