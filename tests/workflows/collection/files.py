"""Files made at test time for the collection tests: a PDF through matplotlib's PDF backend, real texts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def make_pdf(path: Path, pages: Sequence[str], title: str = "") -> Path:
    """A PDF with one page per text (lines split on newlines), its text drawn in an embedded TrueType font."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(path, metadata={"Title": title} if title else {}) as pdf:
        for text in pages:
            figure = plt.figure(figsize=(8.5, 11))
            for row, line in enumerate(text.split("\n")):
                figure.text(0.05, 0.95 - 0.02 * row, line, fontsize=8)
            pdf.savefig(figure)
            plt.close(figure)
    return path
