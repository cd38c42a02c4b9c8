"""HTTP API and consultation web page (the ``serve`` extra: FastAPI + uvicorn)."""
