"""From a folder of documents to a test collection: ingest, pool, sample, label, export (issue 27)."""
