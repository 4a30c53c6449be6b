"""Known collections: where each is officially distributed and how to check the download.

The University of Glasgow IR group hosts the classic test collections at
``http://ir.dcs.gla.ac.uk/resources/test_collections/``. Glasgow publishes no
checksums; the Cranfield archive's MD5 and size are the ones ir_datasets pins.
For the others rankscope records the archive's size and SHA-256 in
``download.json`` beside the files on first download (see docs/corpora.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from rankscope.core.errors import DatasetNotFoundError

GLASGOW = "http://ir.dcs.gla.ac.uk/resources/test_collections"


@dataclass(frozen=True)
class Collection:
    """One downloadable collection; ``layout`` names its reader spec in :mod:`corpora.smart`."""

    name: str
    description: str
    url: str
    layout: str
    sha256: str | None = None
    md5: str | None = None
    size: int | None = None


COLLECTIONS: dict[str, Collection] = {
    c.name: c
    for c in (
        Collection(
            "cranfield",
            "aeronautics abstracts, graded judgments (Cleverdon)",
            f"{GLASGOW}/cran/cran.tar.gz",
            "cranfield",
            md5="1730f7be572d95a5a4b56c59a7b900a5",
            size=506_960,
        ),
        Collection("cisi", "library and information science abstracts", f"{GLASGOW}/cisi/cisi.tar.gz", "cisi"),
        Collection("cacm", "Communications of the ACM titles and abstracts", f"{GLASGOW}/cacm/cacm.tar.gz", "cacm"),
        Collection("med", "MEDLARS medical abstracts", f"{GLASGOW}/medl/med.tar.gz", "med"),
        Collection("adi", "American Documentation Institute abstracts", f"{GLASGOW}/adi/adi.tar.gz", "adi"),
        Collection("time", "TIME magazine articles (1963)", f"{GLASGOW}/time/time.tar.gz", "time"),
        Collection("npl", "National Physical Laboratory (Vaswani) physics titles", f"{GLASGOW}/npl/npl.tar.gz", "npl"),
    )
}


def get_collection(name: str) -> Collection:
    """The registry entry for ``name`` (case-insensitive); unknown names list the known ones."""
    found = COLLECTIONS.get(name.lower())
    if found is None:
        raise DatasetNotFoundError(f"unknown collection {name!r}; known collections: {', '.join(COLLECTIONS)}")
    return found
