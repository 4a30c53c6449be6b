"""Known collections: where each is officially distributed and how to check the download.

The University of Glasgow IR group hosts the classic test collections at
``http://ir.dcs.gla.ac.uk/resources/test_collections/``. Glasgow publishes no
checksums; the Cranfield archive's MD5 and size are the ones ir_datasets pins.
For the others rankscope records the archive's size and SHA-256 in
``download.json`` beside the files on first download (see docs/corpora.md).

``counts`` (documents, queries, judgment lines) are those ir_datasets documents for
Cranfield and NPL and those of the Glasgow CISI files; ``files`` pins the text of
the Cranfield and CISI files as distributed (measured on the Glasgow copies).
A damaged file must be an error, not a shifted qrels: Cranfield's qrels number the
queries by position, so one lost ``.I`` line moves every later query onto other
judgments (:mod:`corpora.integrity` checks both).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rankscope.core.errors import DatasetNotFoundError
from rankscope.core.suggest import did_you_mean

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
    counts: tuple[int, int, int] | None = None
    """Documents, queries and judgment lines of the distributed files (None: not published)."""
    files: Mapping[str, str] = field(default_factory=dict)
    """SHA-256 of each distributed file's text (UTF-8, BOM dropped, CRLF read as LF, .gz unpacked)."""
    quirks: tuple[str, ...] = ()
    """Warnings the distributed files (those ``files`` pins) always give, each handled by the reader as
    documented: loaded by name from verified files they are the dataset's ``notes`` (printed with
    ``--verbose``), not warnings that open every command."""


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
            counts=(1400, 225, 1837),
            files={
                "cran.all.1400": "b234544b6ceccd131520df4a3cb6d42aee6576eb577933d047e722bbfe7b0b09",
                "cran.qry": "dd9b1419f678874daf66d5239ca372193722d74f5ea749f3b0f46a6b37cd9274",
                "cranqrel": "92e54b58dac0b980152178f350d892fae66c8a239b8a11715b835fb8d2f6bc0e",
            },
            quirks=(
                "cran.all.1400: record 576 repeats section(s) W (line 16283); their lines were appended to that section",
                "cran.all.1400: record 578 repeats section(s) W (line 16320); their lines were appended to that section",
            ),
        ),
        Collection(
            "cisi",
            "library and information science abstracts",
            f"{GLASGOW}/cisi/cisi.tar.gz",
            "cisi",
            counts=(1460, 112, 3114),
            files={
                "CISI.ALL": "c13934ad921234b571e7b424af3461fe39dccb16757cb21954b3aea5250d072e",
                "CISI.QRY": "b72de0e0cb8aa5c93ac988e5be0400cc18949d0a94913a248783a37dd97d5470",
                "CISI.REL": "f7396c92586c61953ccb7ae99ad8d3ac749ac3b989041fc93a9e311568f58997",
            },
        ),
        Collection("cacm", "Communications of the ACM titles and abstracts", f"{GLASGOW}/cacm/cacm.tar.gz", "cacm"),
        Collection("med", "MEDLARS medical abstracts", f"{GLASGOW}/medl/med.tar.gz", "med"),
        Collection("adi", "American Documentation Institute abstracts", f"{GLASGOW}/adi/adi.tar.gz", "adi"),
        Collection("time", "TIME magazine articles (1963)", f"{GLASGOW}/time/time.tar.gz", "time"),
        Collection(
            "npl",
            "National Physical Laboratory (Vaswani) physics titles",
            f"{GLASGOW}/npl/npl.tar.gz",
            "npl",
            counts=(11429, 93, 2083),
        ),
    )
}


def get_collection(name: str) -> Collection:
    """The registry entry for ``name`` (case-insensitive); unknown names list the known ones."""
    found = COLLECTIONS.get(name.lower())
    if found is None:
        raise DatasetNotFoundError(
            f"unknown collection {name!r}{did_you_mean(name.lower(), COLLECTIONS)}; "
            f"known collections: {', '.join(COLLECTIONS)}"
        )
    return found
