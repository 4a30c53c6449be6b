"""Interaction logs, leave-one-out, full and sampled ranking protocols, on hand examples and MovieLens-100k."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankscope.core.errors import FormatError, RankscopeError, SchemaError
from rankscope.corpora.interactions import read_interactions, read_movielens
from rankscope.evaluation import evaluate
from rankscope.evaluation.loo import LeaveOneOutSplit, full_ranking_run, leave_one_out
from rankscope.evaluation.recommenders import ItemKNN, MostPopular
from rankscope.evaluation.sampled import sampled_evaluate


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _log(rows: list[tuple[str, str, float, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["user_id", "item_id", "rating", "timestamp"])


# --- reading interaction logs -------------------------------------------------------------


def test_read_interactions_types_and_trailing_whitespace(tmp_path: Path) -> None:
    frame = read_interactions(_write(tmp_path / "u.data", "196\t242\t3\t881250949\n007\t5\t4.5\t881250950\t\n"))
    assert frame["user_id"].tolist() == ["196", "007"]  # ids stay strings, "007" is not 7
    assert frame["rating"].tolist() == [3.0, 4.5]
    assert frame["timestamp"].dtype == np.int64 and frame["timestamp"].tolist() == [881250949, 881250950]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\t2\t3\t4\n1\t2\t3\n", r"line 2: expected 4 fields"),
        ("1\t2\t3\t4\n\n1\t3\t3\t4\n", r"line 2: expected 4 fields"),
        ("1\t2\tfive\t4\n", r"line 1: rating 'five' is not a finite number"),
        ("1\t2\t3\t4\n1\t3\t3\t4.5\n", r"line 2: timestamp must be an integer, found '4.5'"),
        ("1\t \t3\t4\n", r"line 1: empty item id"),
        ("", r"no interactions"),
    ],
)
def test_read_interactions_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(FormatError, match=r"u\.data.*" + message):
        read_interactions(_write(tmp_path / "u.data", text))


def test_read_movielens_refuses_unlisted_users_unless_asked(tmp_path: Path) -> None:
    _write(tmp_path / "u.data", "1\t1\t5\t10\n0\t2\t1\t11\n2\t2\t3\t12\n")
    _write(tmp_path / "u.user", "1|24|M|technician|85711\n2|53|F|other|94043\n")
    (tmp_path / "u.item").write_bytes(b"1|Caf\xe9 (1995)|...\n2|Toy Story (1995)|...\n")  # Latin-1, as shipped
    with pytest.raises(FormatError, match=r"u\.data, line 2: user '0' is not listed in u\.user"):
        read_movielens(tmp_path)
    with pytest.warns(UserWarning, match=r"left out 1 line"):
        frame = read_movielens(tmp_path, unlisted="drop")
    assert frame["user_id"].tolist() == ["1", "2"]


# --- leave-one-out --------------------------------------------------------------------------


def test_leave_one_out_targets_ties_and_exclusions() -> None:
    log = _log(
        [
            ("a", "i1", 5, 100),
            ("a", "i3", 4, 300),
            ("a", "i2", 3, 300),  # same latest time as i3: the larger item id (i3) is the target
            ("b", "i1", 4, 50),
            ("b", "i2", 2, 10),
            ("b", "i1", 5, 60),  # repeat of b's target: removed from training
            ("c", "i2", 4, 10),  # a single interaction: left out
            ("d", "i4", 1, 5),
            ("d", "i4", 1, 6),  # one distinct item, twice: left out
        ]
    )
    split = leave_one_out(log)
    assert split.qrels.to_dict("list") == {"query_id": ["a", "b"], "doc_id": ["i3", "i1"], "relevance": [1, 1]}
    assert split.n_excluded_users == 2
    assert sorted(zip(split.train["user_id"], split.train["item_id"])) == [("a", "i1"), ("a", "i2"), ("b", "i2")]
    assert split.items.tolist() == ["i1", "i2", "i3", "i4"]
    assert list(log["user_id"]).count("a") == 3  # input untouched


def test_full_ranking_excludes_seen_and_breaks_ties_like_trec_eval() -> None:
    scores = {"x": 1.0, "y": 2.0, "z": 2.0, "w": 2.0, "v": 0.5}
    seen = pd.DataFrame({"query_id": ["u"], "doc_id": ["w"]})
    run = full_ranking_run(lambda user, items: [scores[i] for i in items], ["u"], list(scores), seen, k=3)
    # w is seen; z and y tie at 2.0 -> doc_id descending puts z first
    assert run["doc_id"].tolist() == ["z", "y", "x"]
    assert run["rank"].tolist() == [1, 2, 3]
    with pytest.raises(SchemaError, match=r"query 'u'.*non-finite score \(nan\) for document 0 of 5"):
        full_ranking_run(lambda user, items: [np.nan] * len(items), ["u"], list(scores), seen)


def test_recommenders_by_hand() -> None:
    train = _log([("a", "i1", 1, 1), ("a", "i2", 1, 2), ("b", "i1", 1, 3), ("c", "i1", 1, 4), ("c", "i3", 1, 5)])
    assert MostPopular().fit(train).score("a", ["i1", "i2", "i3", "new"]).tolist() == [3.0, 1.0, 1.0, 0.0]
    knn = ItemKNN(neighbours=None).fit(train)
    # cos(i1, i2) = 1 / sqrt(3 * 1), cos(i1, i3) = 1 / sqrt(3), cos(i2, i3) = 0
    # user a saw i1, i2: score(i3) = cos(i3, i1) + cos(i3, i2) = 1/sqrt(3)
    np.testing.assert_allclose(knn.score("a", ["i3", "new"]), [1 / math.sqrt(3), 0.0])
    # user b saw i1: score(i2) = score(i3) = 1/sqrt(3)
    np.testing.assert_allclose(knn.score("b", ["i2", "i3"]), [1 / math.sqrt(3)] * 2)
    # debiasing divides by popularity ** penalty: i1 has 3 users
    debiased = ItemKNN(neighbours=None, popularity_penalty=1.0).fit(train)
    np.testing.assert_allclose(debiased.score("c", ["i1", "i2"]), [1 / math.sqrt(3) / 3, (1 / math.sqrt(3)) / 1])
    # one neighbour per item: i1's nearest is i2 (tie with i3 goes to the lower position)
    assert ItemKNN(neighbours=1).fit(train).score("c", ["i1"])[0] == pytest.approx(0.0)
    with pytest.raises(SchemaError, match=r"user 'zz'"):
        knn.score("zz", ["i1"])


# --- sampled ranking ------------------------------------------------------------------------


class _Recorder:
    """A retriever-like scorer (score(query_text, doc_ids)) that records what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query_text: str, doc_ids: np.ndarray) -> np.ndarray:
        self.calls.append((query_text, list(doc_ids)))
        return np.array([float(d[1:]) for d in doc_ids])  # "d042" scores 42


def test_sampled_candidates_exclude_relevant_and_seen_and_metrics_follow() -> None:
    docs = [f"d{i:03d}" for i in range(60)]
    qrels = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d050", "d010", "d030", "d031"], "relevance": [1, 2, 0, 1]}
    )
    exclude = pd.DataFrame({"query_id": ["q2"], "doc_id": ["d059"]})
    recorder = _Recorder()
    settings = {"queries": {"q1": "one", "q2": "two"}, "exclude": exclude, "n_negatives": 20, "repeats": 4, "seed": 3}
    result = sampled_evaluate(qrels, recorder, docs, ["hit@5", "ndcg@10"], **settings)
    assert len(recorder.calls) == 3 * 4 and result.n_pairs == 3
    expected: dict[tuple[int, str], list[float]] = {}
    for call, (text, candidates) in enumerate(recorder.calls):
        target, negatives = candidates[0], candidates[1:]
        assert len(set(negatives)) == 20
        forbidden = {"one": {"d050", "d010"}, "two": {"d031", "d059"}}[text]  # d030 is judged non-relevant
        assert not forbidden & set(negatives)
        rank = 1 + sum(n > target for n in negatives)  # scores grow with the id, no ties
        expected.setdefault((call // 3, text), []).append(float(rank <= 5))
    per_repeat = [np.mean([np.mean(expected[(r, "one")]), np.mean(expected[(r, "two")])]) for r in range(4)]
    assert result.mean["hit@5"] == pytest.approx(np.mean(per_repeat))
    assert result.std["hit@5"] == pytest.approx(np.std(per_repeat, ddof=1))
    assert result.tied_fraction == 0.0
    wide = result.wide()
    assert list(wide.columns) == ["hit@5", "ndcg@10"] and sorted(wide.index) == ["q1", "q2"]
    assert wide.loc["q1", "hit@5"] == pytest.approx(np.mean([np.mean(expected[(r, "one")]) for r in range(4)]))
    again = sampled_evaluate(qrels, _Recorder(), docs, ["hit@5", "ndcg@10"], **settings)
    pd.testing.assert_frame_equal(again.per_query, result.per_query)


def test_sampled_negatives_are_uniform_over_the_allowed_documents() -> None:
    docs = [f"d{i:02d}" for i in range(30)]
    qrels = pd.DataFrame({"query_id": ["u", "u"], "doc_id": ["d03", "d17"], "relevance": [1, 1]})
    exclude = pd.DataFrame({"query_id": ["u"] * 3, "doc_id": ["d00", "d01", "d02"]})
    drawn: list[str] = []

    def record(user: str, ids: np.ndarray) -> np.ndarray:
        drawn.extend(ids[1:])
        return np.zeros(len(ids))

    sampled_evaluate(qrels, record, docs, ["hit@1"], exclude=exclude, n_negatives=5, repeats=1000)
    counts = pd.Series(drawn).value_counts()
    assert sorted(counts.index) == sorted(set(docs) - {"d00", "d01", "d02", "d03", "d17"})
    # 2 pairs x 1000 repeats x 5 draws spread over 25 documents: 400 expected each
    assert stats.chisquare(counts.to_numpy()).pvalue > 1e-3


def test_sampled_ties_follow_the_trec_eval_rule() -> None:
    docs = [f"d{i:02d}" for i in range(11)]
    qrels = pd.DataFrame({"query_id": ["u"], "doc_id": ["d05"], "relevance": [1]})
    metrics = ["hit@5", "hit@10", "ndcg@10"]
    result = sampled_evaluate(qrels, lambda user, ids: np.zeros(len(ids)), docs, metrics, n_negatives=10, repeats=2)
    # every score ties: d06..d10 sort before d05 (doc_id descending), so the target is 6th
    assert result.mean == pytest.approx({"hit@5": 0.0, "hit@10": 1.0, "ndcg@10": 1 / math.log2(7)})
    assert result.std == pytest.approx({"hit@5": 0.0, "hit@10": 0.0, "ndcg@10": 0.0})
    assert result.tied_fraction == 1.0


def test_sampled_errors_name_the_query() -> None:
    qrels = pd.DataFrame({"query_id": ["u"], "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(RankscopeError, match=r"unknown metric 'NDGC@10'"):
        sampled_evaluate(qrels, lambda u, ids: np.zeros(len(ids)), ["d1", "d2", "d3"], ["NDGC@10"], n_negatives=1)
    with pytest.raises(SchemaError, match=r"query 'u': only 2 documents"):
        sampled_evaluate(qrels, lambda u, ids: np.zeros(len(ids)), ["d1", "d2", "d3"], n_negatives=5)
    with pytest.raises(SchemaError, match=r"query 'u' has relevant documents but no text"):
        sampled_evaluate(qrels, _Recorder(), ["d001", "d002", "d003"], n_negatives=1, queries={"v": "x"})
    bad_exclude = pd.DataFrame({"user": ["u"], "doc_id": ["d2"]})
    with pytest.raises(SchemaError, match=r"exclude: missing column\(s\) \['query_id'\].*found \['user', 'doc_id'\]"):
        sampled_evaluate(qrels, lambda u, ids: np.zeros(len(ids)), ["d1", "d2"], n_negatives=1, exclude=bad_exclude)


# --- MovieLens-100k -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def movielens(data_dir: Path) -> tuple[pd.DataFrame, LeaveOneOutSplit]:
    with warnings.catch_warnings():
        # the shared u.data carries 3 extra lines by a user 0 that u.user does not list; MovieLens-100k is the rest
        warnings.filterwarnings("ignore", message=r".*unlisted users or items", category=UserWarning)
        log = read_movielens(data_dir / "movielens-100k", unlisted="drop")
    return log, leave_one_out(log)


def test_movielens_split_counts(movielens: tuple[pd.DataFrame, LeaveOneOutSplit]) -> None:
    log, split = movielens
    assert (len(log), log["user_id"].nunique(), log["item_id"].nunique()) == (100_000, 943, 1682)
    assert not log.duplicated(["user_id", "item_id"]).any()  # so training loses exactly one line per user
    assert len(split.qrels) == 943 and split.qrels["query_id"].is_unique
    assert split.n_excluded_users == 0  # every MovieLens-100k user rated at least 20 movies
    assert len(split.train) == 100_000 - 943
    assert len(split.items) == 1682
    latest = log.groupby("user_id")["timestamp"].max()
    target_time = log.set_index(["user_id", "item_id"])["timestamp"]
    assert all(target_time[(u, i)] == latest[u] for u, i in zip(split.qrels["query_id"], split.qrels["doc_id"]))


@pytest.mark.slow
def test_movielens_full_ranking_matches_an_independent_count(movielens: tuple[pd.DataFrame, LeaveOneOutSplit]) -> None:
    _, split = movielens
    popular = MostPopular().fit(split.train)
    run = full_ranking_run(popular.score, split.qrels["query_id"], split.items, split.seen(), k=10)
    hit = evaluate(split.qrels, run, ["hit@10"]).mean["hit@10"]
    items = np.array(split.items, dtype=str)
    popularity = split.train["item_id"].value_counts().reindex(items, fill_value=0).to_numpy()
    seen = split.train.groupby("user_id")["item_id"].agg(set)
    ranks = []
    for user, target in zip(split.qrels["query_id"], split.qrels["doc_id"]):
        mine = popularity[items == target][0]
        candidate = ~np.isin(items, list(seen[user])) & (items != target)
        ahead = (popularity > mine) | ((popularity == mine) & (items > target))  # trec_eval: score desc, doc_id desc
        ranks.append(1 + int(np.sum(candidate & ahead)))
    assert hit == pytest.approx(np.mean(np.array(ranks) <= 10))
    assert 0.05 < hit < 0.08  # most-popular on ML-100k leave-one-out: about 0.066


@pytest.mark.slow
def test_movielens_sampled_metrics_rank_systems_differently_from_full_ranking(
    movielens: tuple[pd.DataFrame, LeaveOneOutSplit],
) -> None:
    _, split = movielens
    users, seen, metrics = split.qrels["query_id"], split.seen(), ["hit@10", "ndcg@10"]
    systems = {"popular": MostPopular(), "knn-debiased": ItemKNN(neighbours=20, popularity_penalty=1.0)}
    full, sampled = {}, {}
    for name, system in systems.items():
        system.fit(split.train)
        full[name] = evaluate(split.qrels, full_ranking_run(system.score, users, split.items, seen), metrics).mean
        sampled[name] = sampled_evaluate(split.qrels, system.score, split.items, metrics, exclude=seen, repeats=3).mean
    for metric in metrics:
        # full ranking: popularity wins by far; sampled among 100 negatives: the debiased kNN wins
        assert full["popular"][metric] > 2 * full["knn-debiased"][metric], (metric, full)
        assert sampled["knn-debiased"][metric] > sampled["popular"][metric] + 0.015, (metric, sampled)
