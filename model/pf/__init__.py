"""Public folder replication, backfill and replica lifecycle (Exchange Server 2003; seeds 001, 003, 004)."""
