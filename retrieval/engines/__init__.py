"""Search engines as retrievers: PISA (``pisa``) and Lucene through Anserini (``lucene``), see docs/engines.md."""
