"""Queries → ranked Passages → fused → reranked → packed Evidence."""
