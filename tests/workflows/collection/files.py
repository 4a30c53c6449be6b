"""Files made at test time for the collection tests: a PDF through matplotlib's PDF backend, real texts."""

from __future__ import annotations

import pydoc
from collections.abc import Sequence
from pathlib import Path

import pytest


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


STDLIB = ("json", "csv", "heapq", "bisect", "textwrap", "string", "shlex", "fractions", "statistics", "difflib",
          "functools", "itertools", "collections", "pathlib", "gzip", "zipfile", "sqlite3", "argparse", "logging",
          "datetime", "calendar", "random", "hashlib", "hmac", "secrets", "uuid", "base64", "html", "urllib.parse",
          "email.message", "contextlib", "dataclasses", "enum", "typing", "decimal", "math", "operator", "copy",
          "pprint", "tempfile")  # fmt: skip


def debian_folders(wanted: int) -> list[Path]:
    """Package folders of /usr/share/doc holding HTML, text or Markdown, in name order, until they hold
    ``wanted`` files; those with HTML pages first (libffi's manual, base-passwd's)."""
    root = Path("/usr/share/doc")
    if not root.is_dir():
        pytest.skip("no /usr/share/doc on this machine")
    folders = [p for p in sorted(root.iterdir()) if p.is_dir() and not p.is_symlink()]
    chosen, count = [], 0
    for folder in sorted(folders, key=lambda p: not any(p.rglob("*.html"))):
        files = [p for p in folder.rglob("*") if p.is_file()]
        if any(p.suffix in (".html", ".md", ".txt") for p in files) and len(files) < wanted:
            chosen.append(folder)
            count += len(files)
        if count >= wanted:
            break
    return chosen


def stdlib_docs(folder: Path) -> tuple[Path, list[str]]:
    """The modules' pydoc text, one file each, and the lines drawn into a 3-page PDF of the first one."""
    folder.mkdir()
    for name in STDLIB:
        (folder / f"{name}.txt").write_text(pydoc.plain(pydoc.render_doc(name)))
    lines = [line[:90] for line in (folder / "json.txt").read_text().splitlines() if line.strip()][:120]
    return make_pdf(folder / "json-manual.pdf", ["\n".join(lines[i : i + 40]) for i in (0, 40, 80)], "json"), lines


def debian_texts() -> dict[str, Path]:
    """Real files of /usr/share/doc whose suffix names no known type, found at test time: a
    ``README.Debian``, a ``NEWS.Debian.gz`` and a gzipped ``README.<something>.gz`` (``README.tun.gz``)."""
    from rankscope.workflows.collection.readers import KINDS

    root = Path("/usr/share/doc")
    found = {}
    for pattern in ("README.Debian", "NEWS.Debian.gz", "README.*.gz"):
        hits = [
            p
            for p in sorted(root.glob(f"*/{pattern}"))
            if p.is_file()
            and not p.is_symlink()
            and Path(p.name.removesuffix(".gz")).suffix.lower() not in KINDS
            and (pattern != "README.*.gz" or "Debian" not in p.name)
        ]
        if not hits:
            pytest.skip(f"no {pattern} under {root} on this machine")
        found[pattern] = hits[0]
    return found


def legacy_text() -> tuple[Path, bytes]:
    """A real text of /usr/share/doc that is not UTF-8 (a Latin-1 NEWS first, else a changelog or any
    other), gzipped or not, with its bytes as inflated, found at test time."""
    import gzip

    root = Path("/usr/share/doc")
    for pattern in ("*/NEWS*", "*/*"):
        for path in sorted(root.glob(pattern)):
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            if path.suffix == ".gz":
                try:
                    data = gzip.decompress(data)
                except (OSError, EOFError):
                    continue
            if b"\x00" in data:
                continue
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return path, data
    pytest.skip(f"no text under {root} that is not UTF-8")
