"""The embedded PostgreSQL a Postgres-backed store starts listens on a Unix socket only, never on
a network address (its trust authentication would let anyone who reaches the port in)."""

from pathlib import Path

import pytest


def test_embedded_postgres_listens_on_no_network_address(tmp_path, monkeypatch):
    pytest.importorskip("pgserver")
    pytest.importorskip("psycopg")
    psutil = pytest.importorskip("psutil")
    from medground.store.postgres import EMBEDDED, connect

    monkeypatch.setenv("MEDGROUND_HOME", str(tmp_path))
    with connect(EMBEDDED) as conn:  # what a Postgres-backed request does first
        assert conn.execute("SELECT 1").fetchone() == (1,)
        pid = int((Path(tmp_path) / "pgdata" / "postmaster.pid").read_text().split()[0])
        server = psutil.Process(pid)
        procs = [server, *server.children(recursive=True)]
        listening = {(c.laddr.ip, c.laddr.port) for p in procs for c in p.net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN}
        assert listening == set()  # the connection above came through the Unix socket
