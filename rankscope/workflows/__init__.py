"""The three questions rankscope answers: compare, tune, diagnose."""
