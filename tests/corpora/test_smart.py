"""SMART/Glasgow collections: exact counts on the real files, layouts on hand-made files."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.core.errors import FormatError
from rankscope.corpora.smart import SPECS, detect_smart, parse_sections, read_smart


def _raw_lines(path: Path) -> list[str]:
    """The file's lines by an independent route (no rankscope code)."""
    return path.read_bytes().decode("ascii").replace("\r\n", "\n").split("\n")


def _raw_section(path: Path, rec_id: str, section: str) -> str:
    """Text of one section of one record, found by scanning the raw lines."""
    lines = _raw_lines(path)
    start = lines.index(f".I {rec_id}")
    body = lines[start + 1 :]
    end = next((i for i, line in enumerate(body) if line.startswith(".I ")), len(body))
    record = body[:end]
    first = record.index(f".{section}") + 1
    markers = {".T", ".A", ".B", ".W", ".X", ".K", ".C"}
    stop = next((i for i in range(first, len(record)) if record[i][:2] in markers), len(record))
    return "\n".join(record[first:stop]).strip()


# --- real collections ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def cranfield(data_dir: Path):
    return read_smart(data_dir / "cranfield")


@pytest.fixture(scope="module")
def cisi(data_dir: Path):
    return read_smart(data_dir / "cisi")


def test_cranfield_counts(cranfield, data_dir: Path) -> None:
    stats = cranfield.stats()
    assert (stats["documents"], stats["queries"], stats["judgments"]) == (1400, 225, 1837)
    raw_codes = [line.split()[2] for line in _raw_lines(data_dir / "cranfield" / "cranqrel") if line.strip()]
    assert len(raw_codes) == 1837
    # cranqrel codes -1:225, 1:128, 2:387, 3:734, 4:363 -> grades 0,4,3,2,1 (higher is better)
    raw_levels = {c: raw_codes.count(c) for c in sorted(set(raw_codes))}
    assert raw_levels == {"-1": 225, "1": 128, "2": 387, "3": 734, "4": 363}
    assert stats["judgments_per_level"] == {0: 225, 4: 128, 3: 387, 2: 734, 1: 363}
    # every judged code 1..4 is relevant at trec_eval's relevance >= 1; -1 is not
    assert len(cranfield.relevant) == 1837 - 225
    assert stats["judged_queries"] == 225 and cranfield.unjudged_query_ids == []


def test_cranfield_queries_renumbered_by_position(cranfield, data_dir: Path) -> None:
    qry = data_dir / "cranfield" / "cran.qry"
    raw_ids = [line[3:] for line in _raw_lines(qry) if line.startswith(".I ")]
    assert raw_ids[:5] == ["001", "002", "004", "008", "009"] and raw_ids[-1] == "365"
    assert cranfield.queries["query_id"].tolist() == [str(i) for i in range(1, 226)]
    texts = dict(zip(cranfield.queries["query_id"], cranfield.queries["text"]))
    assert texts["3"] == _raw_section(qry, "004", "W")
    assert texts["3"] == "what problems of heat conduction in composite slabs have been solved so\nfar ."
    assert texts["225"] == _raw_section(qry, "365", "W")
    qrels = {(q, d): r for q, d, r in cranfield.qrels.itertuples(index=False)}
    assert qrels[("1", "184")] == 3  # "1 184 2"
    assert qrels[("1", "486")] == 0  # "1 486 -1"
    assert qrels[("225", "1188")] == 0  # last line "225 1188 -1"


def test_cranfield_documents_match_raw_file(cranfield, data_dir: Path) -> None:
    raw = data_dir / "cranfield" / "cran.all.1400"
    docs = cranfield.corpus.set_index("doc_id")
    assert docs.index.tolist() == [str(i) for i in range(1, 1401)]
    for doc_id in ("1", "700", "1400"):
        assert docs.loc[doc_id, "title"] == _raw_section(raw, doc_id, "T")
        assert docs.loc[doc_id, "text"] == _raw_section(raw, doc_id, "W")
    assert docs.loc["1", "title"] == "experimental investigation of the aerodynamics of a\nwing in a slipstream ."
    assert "brenckman" not in docs.loc["1", "text"]  # the .A section is not text
    # two documents carry a stray second .W; it is appended and reported
    assert len([w for w in cranfield.warnings if "repeats section(s) W" in w]) == 2
    assert docs.loc["578", "text"].endswith(" air .")


def test_cisi_counts_and_unjudged_queries_kept(cisi) -> None:
    stats = cisi.stats()
    assert (stats["documents"], stats["queries"], stats["judged_queries"], stats["judgments"]) == (1460, 112, 76, 3114)
    assert stats["judgments_per_level"] == {1: 3114}
    assert len(cisi.unjudged_query_ids) == 36
    assert "36 of 112 queries have no relevant document (kept; see Dataset.unjudged_query_ids)" in cisi.warnings


def test_cisi_texts_exclude_citations_and_keywords(cisi, data_dir: Path) -> None:
    raw = data_dir / "cisi" / "CISI.ALL"
    docs = cisi.corpus.set_index("doc_id")
    assert docs.loc["1", "title"] == "18 Editions of the Dewey Decimal Classifications"
    assert docs.loc["1", "text"] == _raw_section(raw, "1", "W")
    assert docs.loc["1", "text"].endswith("librarianship in this country and abroad.")
    assert docs.loc["321", "title"] == "An Information-Theoretic Approach to Text Searching\nin Direct Access Systems"
    assert docs.loc["321", "title"] == _raw_section(raw, "321", "T")
    assert "bit vector" not in docs.loc["321", "text"]  # .K keywords are not text
    assert "3.42 3.70" not in docs.loc["321", "text"]  # nor .C classification codes
    queries = dict(zip(cisi.queries["query_id"], cisi.queries["text"]))
    assert queries["112"] == _raw_section(data_dir / "cisi" / "CISI.QRY", "112", "W")
    assert "Information Processing & Management" not in queries["112"]  # the query's .B
    pairs = set(zip(cisi.qrels["query_id"], cisi.qrels["doc_id"]))
    assert ("1", "28") in pairs and ("111", "509") in pairs


def test_detection_by_file_names(data_dir: Path) -> None:
    assert detect_smart(data_dir / "cranfield").name == "cranfield"
    assert detect_smart(data_dir / "cisi").name == "cisi"
    assert detect_smart(data_dir / "movielens-100k") is None


# --- hand-made files in each remaining collection's layout ----------------------------------
def _files(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


ALL_COLUMNS = ["doc_id", "title", "text"]

# (collection, files, corpus columns checked, corpus rows, query rows, qrels rows); expected rows read off the files
LAYOUTS = [
    pytest.param(
        "cacm",
        {
            "cacm.all": ".I 1\n.T\nPreliminary Report\n.B\nCACM December, 1958\n.A\nPerlis, A. J.\n.N\nCA581203 JB\n"
            ".X\n100\t5\t1\n.I 2\n.T\nExtraction of Roots\n.W\nA method is given.\n.B\nCACM 1958\n",
            "query.text": ".I 1\n.W\n What articles exist on roots?\n.N\n 1. Richard Alexander\n"
            ".I 2\n.W\nPerlis\n.A\nX\n",
            "qrels.text": "01 0002  0 0\n01 0001  0 0\n",
        },
        ALL_COLUMNS,
        [["1", "Preliminary Report", ""], ["2", "Extraction of Roots", "A method is given."]],
        [["1", "What articles exist on roots?"], ["2", "Perlis"]],
        [["1", "2", 1], ["1", "1", 1]],  # zero-padded ids "01 0002" -> "1", "2"
        id="cacm-zero-padded-qrels",
    ),
    pytest.param(
        "adi",
        {
            "ADI.ALL": ".I 1\n.T\nA Computerized Information Center\n.A\nJ. M. Doe\n.W\n   This is an abstract.\n",
            "ADI.QRY": ".I 1\n.W\nWhat is information science?\n",
            "ADI.REL": "    1     1 0 0.000000\n",
        },
        ALL_COLUMNS,
        [["1", "A Computerized Information Center", "This is an abstract."]],
        [["1", "What is information science?"]],
        [["1", "1", 1]],
        id="adi",
    ),
    pytest.param(
        "time",
        {
            "TIME.ALL": "*TEXT 017 01/04/63 PAGE 020\n\nTHE ALLIES AFTER NASSAU\n\n*TEXT 020 01/04/63 PAGE 021\n\n"
            "THE ROAD TO JAIL IS PAVED WITH\n\n*TEXT 563 12/27/63 PAGE 030\n\nLAST ONE\n\n*STOP\n",
            "TIME.QUE": "*FIND    1\n\n KENNEDY ADMINISTRATION PRESSURE ON NGO DINH DIEM TO STOP\n\n SUPPRESSING .\n\n"
            "*FIND    2\n\n EFFORTS OF AMBASSADOR LODGE .\n\n*STOP\n",
            "TIME.REL": "  1   1   3\n\n  2   2\n",
        },
        ["doc_id", "text"],
        # documents numbered by position (1, 2, 3), not by their *TEXT numbers (017, 020, 563)
        [["1", "THE ALLIES AFTER NASSAU"], ["2", "THE ROAD TO JAIL IS PAVED WITH"], ["3", "LAST ONE"]],
        [
            ["1", "KENNEDY ADMINISTRATION PRESSURE ON NGO DINH DIEM TO STOP\n\n SUPPRESSING ."],
            ["2", "EFFORTS OF AMBASSADOR LODGE ."],
        ],
        [["1", "1", 1], ["1", "3", 1], ["2", "2", 1]],
        id="time-documents-numbered-by-position",
    ),
    pytest.param(
        "npl",
        {
            "doc-text": "1\ncompact memories have flexible capacities\nis described\n   /\n2\nanother\n   /\n",
            "query-text": "1\nMEASUREMENT OF DIELECTRIC CONSTANT\n/\n2\nMAGNETIC FIELDS\n/\n",
            "rlv-ass": "1\n     2   1\n   /\n2\n    1\n   /\n",
        },
        ALL_COLUMNS,
        [["1", "", "compact memories have flexible capacities\nis described"], ["2", "", "another"]],
        [["1", "MEASUREMENT OF DIELECTRIC CONSTANT"], ["2", "MAGNETIC FIELDS"]],
        [["1", "2", 1], ["1", "1", 1], ["2", "1", 1]],
        id="npl",
    ),
]


@pytest.mark.parametrize(("name", "files", "columns", "corpus", "queries", "qrels"), LAYOUTS)
def test_collection_layouts_detected_and_read(
    tmp_path: Path, name: str, files: dict[str, str], columns: list[str], corpus: list, queries: list, qrels: list
) -> None:
    ds = read_smart(_files(tmp_path / name, files))
    assert ds.name == name
    assert ds.corpus[columns].values.tolist() == corpus
    assert ds.queries.values.tolist() == queries
    assert ds.qrels.values.tolist() == qrels


def test_med_layout_trec_style_qrels(tmp_path: Path) -> None:
    folder = _files(
        tmp_path / "med",
        {
            "MED.ALL": ".I 1\n.W\ncorrelation between maternal and fetal plasma levels of glucose and free\n"
            "fatty acids .                                                           \n.I 2\n.W\nthe renal handling\n",
            "MED.QRY": ".I 1\n.W\n the crossing of fatty acids through the placental barrier.\n",
            "MED.REL": "1 0 2 1\n1 0 1 1\n",
        },
    )
    ds = read_smart(folder, "med")
    assert ds.corpus["text"].tolist()[0].endswith("fatty acids .")  # padding spaces stripped at the end
    assert ds.corpus["title"].tolist() == ["", ""]
    assert ds.qrels.values.tolist() == [["1", "2", 1], ["1", "1", 1]]


def test_every_collection_has_a_spec() -> None:
    assert sorted(SPECS) == ["adi", "cacm", "cisi", "cranfield", "med", "npl", "time"]


# --- malformed input ----------------------------------------------------------------------
def _cran(tmp_path: Path, docs: str, qry: str = ".I 001\n.W\nq one\n", rel: str = "1 1 1\n") -> Path:
    return _files(tmp_path / "cranfield", {"cran.all.1400": docs, "cran.qry": qry, "cranqrel": rel})


GOOD_DOC = ".I 1\n.T\nt\n.W\nw\n"


@pytest.mark.parametrize(
    "docs, line, fragment",
    [
        ("junk\n" + GOOD_DOC, 1, "expected a record start '.I <id>'"),
        (".I\n.W\nx\n", 1, "'.I' line without an id"),
        (".I 1\nloose text\n.W\nx\n", 2, "text before any section marker in record '1'"),
        (".I one\n.W\nx\n", 1, "record id must be a number, found 'one'"),
        (GOOD_DOC + ".I 001\n.W\nx\n", 6, "duplicate id '1' (first at line 1)"),
        ("", None, "no records found"),
    ],
)
def test_bad_documents(tmp_path: Path, docs: str, line: int | None, fragment: str) -> None:
    folder = _cran(tmp_path, docs)
    with pytest.raises(FormatError) as info:
        read_smart(folder)
    assert info.value.line == line and fragment in str(info.value)
    assert info.value.path.endswith("cran.all.1400")


@pytest.mark.parametrize(
    "rel, line, fragment",
    [
        ("1 1 1\n1 1\n", 2, "expected 3 fields, found 2"),
        ("1 1 5\n", 1, "unknown Cranfield relevance code '5'"),
        ("1 1 high\n", 1, "relevance code must be an integer, found 'high'"),
        ("1 1 2\n1 001 3\n", 2, "'1', '1' (first at line 1) with conflicting grades 3 and 2"),
        ("1 1 2\n1 1 2\n", 2, "duplicate judgment of query, document '1', '1' (first at line 1)"),
        ("1 d1 2\n", 1, "document id must be a number, found 'd1'"),
        ("\n\n", None, "no judgments found"),
    ],
)
def test_bad_qrels(tmp_path: Path, rel: str, line: int | None, fragment: str) -> None:
    folder = _cran(tmp_path, GOOD_DOC, rel=rel)
    with pytest.raises(FormatError) as info:
        read_smart(folder)
    assert info.value.line == line and fragment in str(info.value)
    assert info.value.path.endswith("cranqrel")


def test_unknown_documents_are_kept_and_counted(tmp_path: Path) -> None:
    folder = _cran(tmp_path, GOOD_DOC, rel="1 1 1\n1 7 2\n1 9 3\n")
    ds = read_smart(folder)
    assert len(ds.qrels) == 3
    assert "2 judgment(s) name 2 document(s) not in the corpus (kept; e.g. ['7', '9'])" in ds.warnings


def test_a_query_judged_past_the_last_position_is_an_error(tmp_path: Path) -> None:
    """cranqrel numbers queries by position: judging query 2 of a one-query file means one was lost."""
    folder = _cran(tmp_path, GOOD_DOC, rel="1 1 1\n2 1 1\n")
    with pytest.raises(FormatError, match=r"cranqrel, line 2: judges record 2 by position, but cran.qry holds 1"):
        read_smart(folder)


def test_invalid_utf8_bom_and_crlf(tmp_path: Path) -> None:
    folder = _cran(tmp_path, GOOD_DOC)
    (folder / "cran.all.1400").write_bytes(b"\xef\xbb\xbf.I 1\r\n.T\r\ntitle\r\n.W\r\ntext\r\n")
    ds = read_smart(folder)
    assert ds.corpus.values.tolist() == [["1", "title", "text"]]
    (folder / "cran.qry").write_bytes(b".I 001\n.W\nna\xefve\xff\n")
    with pytest.raises(FormatError) as info:
        read_smart(folder)
    assert info.value.line == 3 and "invalid UTF-8" in str(info.value)


def test_repeated_author_sections_are_joined(tmp_path: Path) -> None:
    path = tmp_path / "x.all"
    path.write_text(".I 5\n.A\nOne, A.\n.A\nTwo, B.\n.W\ntext\n", encoding="utf-8")
    (record,) = parse_sections(path)
    assert record.sections["A"] == "One, A.\nTwo, B."
    assert record.repeated == ("A (line 4)",)
