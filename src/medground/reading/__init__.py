"""Readers: what turns retrieved evidence into a reply (the consultation reader first)."""
