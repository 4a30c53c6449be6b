"""What each metric family is, for people: its definition, its names in trec_eval and ir_measures, and whose
definition it follows. The registry (:mod:`evaluation.metrics`) attaches one :class:`About` to each family;
docs/metrics.md's table of measures and the tests' map to pytrec_eval's names are made from them.

Notation per query: ``R`` = relevant judgments (label >= relevance level, retrieved or not), ``N`` = judged
non-relevant (0 <= label < level), ``rel(i)`` = 1 if the document at rank ``i`` is relevant, ``ret`` =
documents retrieved. A value whose denominator is 0 is 0. In a trec_eval name, ``k`` is the cutoff."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class About:
    """One family's description. ``trec_eval`` holds trec_eval's ``-m`` forms (its printed form writes ``_``
    for ``.``), ``ir_measures`` ir_measures' names; both empty where the tool has no such measure."""

    definition: str
    trec_eval: tuple[str, ...] = ()
    ir_measures: tuple[str, ...] = ()
    source: str = ""


ABOUT: dict[str, About] = {
    "precision": About(
        "at k: relevant in top k / **k** (also when fewer than k were retrieved); without k: relevant retrieved"
        " / ret over the whole list; `precision(threshold=x)` counts as retrieved only scores >= x",
        ("P.k", "set_P"), ("P@k", "SetP"), "trec_eval",
    ),
    "recall": About(
        "at k: relevant in top k / R; without k: relevant retrieved / R; `recall(threshold=x)` as precision's",
        ("recall.k", "set_recall"), ("R@k", "SetR"), "trec_eval",
    ),
    "f1": About(
        "2·P·R / (P + R) of precision and recall above, at k with P@k dividing by k",
        ("set_F",), ("SetF",), "trec_eval (set_F, beta 1); f1@k: none",
    ),
    "hit": About("1 if a relevant document is in the top k, else 0 (hit rate)", ("success.k",), ("Success@k",), "trec_eval"),
    "mrr": About(
        "1 / rank of the first relevant document (0 if none); at k, 0 if that rank is below k",
        ("recip_rank",), ("RR", "RR@k"), "Voorhees 1999 (TREC-8 QA)",
    ),
    "map": About(
        "(1/R) Σ over relevant retrieved at rank i of (relevant in top i)/i; at k the sum stops at rank k,"
        " still divided by all R",
        ("map", "map_cut.k"), ("AP", "AP@k"), "trec_eval",
    ),
    "ndcg": About(
        "DCG@k / IDCG@k, DCG@k = Σ_{i<=k} gain(label_i)/log2(i+1), **gain = label** (linear); the ideal ranking"
        " sorts all positive judgments by label; labels <= 0 give 0; ignores the relevance level."
        " `ndcg(gains={2:3,3:7})` gives labels other gains, as ir_measures' `gains=`",
        ("ndcg", "ndcg_cut.k"), ("nDCG", "nDCG@k"), "Järvelin & Kekäläinen 2002; trec_eval's gains",
    ),
    "ndcg_exp": About(
        "the same with **gain = 2^label − 1** (the recommender convention); equals `ndcg` on binary labels",
        (), ("nDCG(dcg='exp-log2')@k",), "Burges et al. 2005 (ranx's ndcg_burges)",
    ),
    "rprec": About("relevant in top R / R", ("Rprec",), ("Rprec",), "trec_eval"),
    "bpref": About(
        "(1/R) Σ over relevant retrieved r of 1 − min(n_r, R)/min(N, R); n_r = judged non-relevant above r"
        " (term 1 when n_r = 0)",
        ("bpref",), ("Bpref",), "Buckley & Voorhees 2004, as trec_eval",
    ),
    "infap": About(
        "inferred AP for qrels that judged a random sample of a pool: a document absent from the qrels is"
        " outside the pool, a **negative label** is pooled but not judged; for the relevant document at rank"
        " i > 1 with r relevant, n judged non-relevant and u pooled-unjudged above it, the term is 1/i +"
        " ((i−1)/i)·((r+n+u)/(i−1))·((r+ε)/(r+n+2ε)), ε = 0.00001 (1 at rank 1); infAP = Σ/R",
        ("infAP",), ("infAP",), "Yilmaz & Aslam 2006, as trec_eval's m_infAP.c",
    ),
    "judged": About(
        "documents in the top k with **any** judgment for the query (negative labels too) / min(k, ret);"
        " 0 when nothing was retrieved (ir_measures breaks score ties by doc_id ascending, rankscope descending)",
        (), ("Judged@k",), "ir_measures",
    ),
    "num_ret": About(
        "ret, per query (averaged over queries like every metric: trec_eval prints sums)",
        ("num_ret",), ("NumRet",), "trec_eval",
    ),
    "num_rel": About("R, per query", ("num_rel",), ("NumRel",), "trec_eval"),
    "num_rel_ret": About(
        "relevant retrieved, per query", ("num_rel_ret",), ("NumRet(rel=n)",), "trec_eval (pytrec_eval's num_rel_ret)"
    ),
    "iprec": About(
        "interpolated precision at recall level x: with c relevant documents needed, the best (relevant so"
        " far)/rank over the ranks of the c-th and later relevant documents; 0 if fewer than c were retrieved;"
        " c = round(x·R) (halves up) as trec_eval 10, `iprec(trec=9)@x` c = floor(x·R + 0.9) as trec_eval 9,"
        " pytrec_eval and ir_measures",
        ("iprec_at_recall_x",), ("IPrec@x",), "trec_eval (11-point interpolated precision)",
    ),
    "err": About(
        "Σ_{i<=k} R_i/i · Π_{j<i}(1 − R_j), R = (2^label − 1)/2^4 (labels <= 0: 0); a label above 4 is refused",
        (), ("ERR@k",), "Chapelle et al. 2009, as gdeval.pl",
    ),
    "rbp": About(
        "(1 − p) Σ_{i(<=k)} p^(i−1) g(i): without `rel`, **graded**, g = the label (labels <= 0 give 0); with"
        " `rel=n`, binary; `p` is always written (ir_measures' RBP means 0.8, trec_eval's 0.9); trec_eval"
        " rescales gains above 1 to [0, 1], so it differs there",
        ("rbp.p=x",), ("RBP(p=x)", "RBP(p=x,rel=n)"), "Moffat & Zobel 2008",
    ),
}  # fmt: skip


def trec_eval_name(about: About, k: int | None) -> tuple[str, str] | None:
    """trec_eval's ``-m`` form and its printed form of a family's measure at cutoff ``k`` (None: the whole
    list), or None where trec_eval has none (a parameter in the name, a cutoff it does not take)."""
    plain = [form for form in about.trec_eval if "=" not in form and not form.endswith("_x")]
    wanted = [form for form in plain if form.endswith(".k") == (k is not None)]
    if len(wanted) != 1:
        return None
    measure = wanted[0][:-1] + str(k) if k is not None else wanted[0]
    return measure, measure.replace(".", "_")


def _cell(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in names) or "—"


def markdown_table(rows: list[tuple[list[str], About]]) -> str:
    """The table of measures: a row per family, its forms and its :class:`About`."""
    lines = ["| name | definition | trec_eval | ir_measures | source |", "|---|---|---|---|---|"]
    for forms, about in rows:
        names = ", ".join(f"`{form}`" for form in forms)
        cells = [names, about.definition, _cell(about.trec_eval), _cell(about.ir_measures), about.source]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
