"""What every workflow's output is made of: tables as text, plots, LaTeX, the report (Markdown and
HTML) and its provenance record, and the one way a workflow ends (:func:`~rankscope.reporting.finish.finish`).

A layer under the workflows: it knows reports, not retrievers or datasets' loading, so any workflow
(and the ones to come) writes its folder the same way.
"""
