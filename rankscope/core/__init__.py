"""The ground floor every other layer builds on: errors, strict file I/O, progress bars.

Nothing here imports from the rest of rankscope (``tests/test_layers.py`` enforces it).
"""
