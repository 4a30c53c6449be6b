"""Chinese text: the default ``\\w+`` tokenizer keeps whole runs of characters as one token,
so queries only match documents that contain the identical run; jieba segments words."""

from __future__ import annotations

import pandas as pd
import pytest

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


def test_default_tokenizer_finds_nothing() -> None:
    run = BM25().index(CORPUS).search(QUERIES)
    assert run.empty  # every query is one token that no document contains


def test_jieba_ranks_the_right_document_first() -> None:
    pytest.importorskip("jieba")  # the optional extra; the test above needs no jieba
    run = BM25(analyzer="chinese").index(CORPUS).search(QUERIES)
    first = run[run["rank"] == 1].set_index("query_id")["doc_id"].to_dict()
    assert first == EXPECTED_FIRST
