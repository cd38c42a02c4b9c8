"""Sources → typed Documents → Chunks (readers, chunkers, the medicine database)."""
