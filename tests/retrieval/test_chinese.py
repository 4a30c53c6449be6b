"""Chinese text: the default ``\\w+`` tokenizer keeps whole runs of characters as one token,
so queries only match documents that contain the identical run; jieba segments words."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rankscope.cli import main
from rankscope.retrieval.analysis import AnalyzerMismatchWarning, get_analyzer, script_mismatch
from rankscope.retrieval.bm25 import BM25

CORPUS = pd.DataFrame(
    {
        "doc_id": ["capital", "shanghai", "panda"],
        "text": [
            "北京是中国的首都，有很多历史古迹。",  # Beijing is China's capital, with many historic sites.
            "上海是一个国际化的大都市，金融业发达。",  # Shanghai is an international city with a strong finance sector.
            "熊猫生活在四川的山区，喜欢吃竹子。",  # Pandas live in Sichuan's mountains and like eating bamboo.
        ],
    }
)
QUERIES = pd.DataFrame(
    {
        "query_id": ["q-capital", "q-panda", "q-shanghai"],
        "text": [
            "中国的首都在哪里？",
            "熊猫吃竹子",
            "上海的大都市",
        ],  # Where is China's capital? / pandas eat bamboo / ...
    }
)
EXPECTED_FIRST = {"q-capital": "capital", "q-panda": "panda", "q-shanghai": "shanghai"}


def test_default_tokenizer_finds_nothing_and_says_what_to_set() -> None:
    with pytest.warns(
        AnalyzerMismatchWarning, match=r"100% of the corpus's letters .* --analyzer chinese \(analyzer=chinese"
    ):
        run = BM25().index(CORPUS).search(QUERIES)
    assert run.empty  # every query is one token that no document contains


def test_no_warning_for_english_or_a_few_chinese_words() -> None:
    mixed = ["boundary layer flow over a flat plate 平板", "heat transfer", "中文 words in an English corpus"]
    assert script_mismatch(mixed, get_analyzer("english")) is None
    assert script_mismatch(CORPUS["text"].tolist(), get_analyzer("english")) is not None


def write_beir(folder):
    """The mini-corpus as a BEIR folder, each query's expected document judged relevant."""
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}, ensure_ascii=False) + "\n" for d, t in CORPUS.values)
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in QUERIES.values)
    )
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in EXPECTED_FIRST.items())
    )
    return folder


def test_the_cli_prints_the_warning_as_one_line(tmp_path, capsys) -> None:
    write_beir(tmp_path)
    assert main(["search", "--dataset", str(tmp_path), "--retriever", "bm25", "--out", str(tmp_path / "r.trec")]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 1
    assert warned[0].startswith("rankscope search: warning: 100% of the corpus's letters are Chinese")
    assert "analyzer=chinese" in warned[0]


def test_chinese_preset_drops_chinese_stopwords() -> None:
    pytest.importorskip("jieba")
    pytest.importorskip("stopwordsiso")
    tokens = get_analyzer("chinese").tokenize("北京是中国的首都")
    assert tokens == ["北京", "中国", "首都"]  # 是 (is) and 的 (possessive particle) are stopwords


def test_jieba_ranks_the_right_document_first() -> None:
    pytest.importorskip("jieba")  # the optional extra; the test above needs no jieba
    run = BM25(analyzer="chinese").index(CORPUS).search(QUERIES)
    first = run[run["rank"] == 1].set_index("query_id")["doc_id"].to_dict()
    assert first == EXPECTED_FIRST


@pytest.mark.slow
def test_one_dataset_level_analyzer_option_reaches_every_spec(tmp_path, capsys) -> None:
    """--analyzer chinese (alias --language) instead of analyzer=chinese in every spec: the warning
    is gone, the baseline keeps its name, and a spec that sets its own analyzer keeps it."""
    pytest.importorskip("jieba")
    pytest.importorskip("stopwordsiso")
    from rankscope.retrieval.registry import make_retriever, with_analyzer

    assert with_analyzer("bm25", "chinese") == "bm25:analyzer=chinese"
    assert with_analyzer("bm25:k1=0.9", "chinese") == "bm25:k1=0.9,analyzer=chinese"
    assert with_analyzer("tfidf:analyzer=plain", "chinese") == "tfidf:analyzer=plain"
    assert with_analyzer("hybrid:retrievers=bm25+tfidf", "chinese") == "hybrid:retrievers=bm25+tfidf"
    assert with_analyzer("bm25", None) == "bm25"
    assert make_retriever(with_analyzer("bm25", "chinese")).get_params()["analyzer"] == "chinese"
    (tmp_path / "zh").mkdir()
    folder = write_beir(tmp_path / "zh")
    out = tmp_path / "cmp"
    argv = ["--quiet", "compare", "--dataset", str(folder), "--retrievers", "tfidf", "bm25", "--language", "chinese"]
    assert main([*argv, "--metrics", "ndcg@10", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["baseline"] == "bm25" and summary["mean"]["bm25"]["ndcg@10"] == pytest.approx(1.0)
    assert "analyzer=chinese" in summary["provenance"]["systems"]["tfidf"]
