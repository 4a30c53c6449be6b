"""Retrievers behind one small interface: TF-IDF, the BM25 family, Word2Vec + FAISS, fusion."""
