"""Scoring rankings against relevance judgments, exactly as trec_eval does where it defines a metric."""
