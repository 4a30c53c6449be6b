/* Sparse scoring + top-k for rankscope's term-count retrievers (BM25, TF-IDF).
 *
 * Why it exists: scipy's sparse product materialises every candidate score of every
 * query, and numpy then selects the k best; doing both per query over one reused dense
 * accumulator is about twice as fast and needs no memory proportional to the candidates.
 *
 * The scores are bit for bit those of scipy's csr_matmat (retrieval.topk.top_k_rows is
 * the reference it is tested against): each document's score is accumulated from 0.0 in
 * the order of the query row's stored terms, one `sum += query_weight * term_weight` per
 * posting, without fused multiply-add; documents whose sum is exactly zero are not
 * candidates (scipy does not store them), negative sums are. The k best candidates
 * are kept by the tie rule (score descending, then the document's byte-order rank
 * descending) and returned in that order.
 *
 * Given per-term bounds (the largest and smallest weight of each term's postings), queries are
 * instead scored by MaxScore (Turtle & Flood 1995) in Lucene's windowed form: terms sorted by
 * their score upper bound, the lowest ones whose bounds add up to less than the current k-th
 * best score are "non-essential"; documents are scored WINDOW at a time, the essential terms'
 * postings added into a small accumulator, and non-essential terms are probed only for
 * documents whose partial score plus the bounds still unprobed can reach the k-th best. The
 * result is the exhaustive one exactly: a document that may enter the top k is re-summed in
 * the query row's term order (so its score is bit for bit the exhaustive one), and a bound
 * prunes only when it falls short by more than any rounding of the sums could explain
 * (`margin`), so no document that ties or beats the k-th best is ever dropped.
 *
 * Only the CPython C API and the buffer protocol are used (no numpy headers). A Search holds the
 * queries of one search; the threads that run it release the GIL and claim queries one at a time
 * from an atomic counter (as PISA's parallel loop over queries does), each query's rows written to
 * its own place, so no thread waits while queries remain and the rows are the same on any number of
 * threads. Each thread passes its own Workspace, which keeps the scratch buffers (heap, cursors,
 * MaxScore's window, and the dense accumulator of exhaustive scoring, allocated on its first use)
 * from one query to the next: a query then costs no allocation and no clearing proportional to the
 * corpus. Between queries a workspace's accumulator and window are all zero: each query clears the
 * entries it touched.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#elif defined(_MSC_VER)
#pragma fp_contract(off)
#endif

/* An integer index array of either width (scipy picks int32 or int64 per matrix). */
typedef struct {
    const void *data;
    int wide;
    Py_ssize_t len;
} IndexArray;

static inline int64_t at(const IndexArray *a, Py_ssize_t i) {
    return a->wide ? ((const int64_t *)a->data)[i] : (int64_t)((const int32_t *)a->data)[i];
}

/* Strip a native byte-order prefix from a struct format ('=' or '@', '<' on little-endian hosts). */
static const char *native_format(const char *format) {
    if (format == NULL) return "B";
    if (format[0] == '@' || format[0] == '=') return format + 1;
#if PY_LITTLE_ENDIAN
    if (format[0] == '<') return format + 1;
#endif
    return format;
}

static int get_view(PyObject *obj, Py_buffer *view, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->ndim != 1) {
        PyErr_Format(PyExc_ValueError, "%s must be one-dimensional, got %d dimensions", name, view->ndim);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int index_array(Py_buffer *view, const char *name, IndexArray *out) {
    const char *f = native_format(view->format);
    int is_int = f[1] == '\0' && strchr("ilqn", f[0]) != NULL;
    if (!is_int || (view->itemsize != 4 && view->itemsize != 8)) {
        PyErr_Format(PyExc_TypeError, "%s must hold int32 or int64, got buffer format '%s'", name, view->format);
        return -1;
    }
    out->data = view->buf;
    out->wide = view->itemsize == 8;
    out->len = view->len / view->itemsize;
    return 0;
}

static int float_array(Py_buffer *view, const char *name, const double **out, Py_ssize_t *len) {
    const char *f = native_format(view->format);
    if (strcmp(f, "d") != 0 || view->itemsize != 8) {
        PyErr_Format(PyExc_TypeError, "%s must hold float64, got buffer format '%s'", name, view->format);
        return -1;
    }
    *out = (const double *)view->buf;
    *len = view->len / 8;
    return 0;
}

/* a ranks before b: higher score, or the same score and a later doc id in byte order */
static inline int better(double sa, int64_t ra, double sb, int64_t rb) {
    return sa > sb || (sa == sb && ra > rb);
}

/* Min-heap of (score, rank, document) keyed by (score, rank): the root is the worst kept. */
typedef struct {
    double *score;
    int64_t *rank, *doc;
    Py_ssize_t n, k;
} Heap;

static void sift_down(Heap *h, Py_ssize_t n, Py_ssize_t i) {
    for (;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && better(h->score[m], h->rank[m], h->score[l], h->rank[l])) m = l;
        if (r < n && better(h->score[m], h->rank[m], h->score[r], h->rank[r])) m = r;
        if (m == i) return;
        double s = h->score[i];
        int64_t rk = h->rank[i], d = h->doc[i];
        h->score[i] = h->score[m], h->rank[i] = h->rank[m], h->doc[i] = h->doc[m];
        h->score[m] = s, h->rank[m] = rk, h->doc[m] = d;
        i = m;
    }
}

/* Offer a candidate; returns 1 when the heap is full (then h->score[0] is the k-th best). */
static int heap_offer(Heap *h, double s, int64_t rank, int64_t d) {
    if (h->n < h->k) {
        h->score[h->n] = s, h->rank[h->n] = rank, h->doc[h->n] = d;
        h->n++;
        if (h->n == h->k)
            for (Py_ssize_t i = h->k / 2 - 1; i >= 0; i--) sift_down(h, h->n, i);
        return h->n == h->k;
    }
    if (better(s, rank, h->score[0], h->rank[0])) {
        h->score[0] = s, h->rank[0] = rank, h->doc[0] = d;
        sift_down(h, h->n, 0);
    }
    return 1;
}

/* UNBOUNDED: a query term's bound is not finite (NaN or infinite weights): score that query exhaustively */
typedef enum { OK = 0, NO_MEMORY, BAD_TERM, BAD_POSTINGS, BAD_DOC, NAN_SCORE, UNBOUNDED, NO_ROOM } Status;

typedef struct {
    IndexArray q_ptr, q_term, w_ptr, w_doc;
    const double *q_val, *w_val;
    const double *t_max, *t_min; /* per-term largest and smallest posting weight; NULL: exhaustive only */
    const int64_t *rank;
    Py_ssize_t n_queries, n_terms, n_docs, n_postings, k;
    /* results, shared by the threads of one search: query q's rows go to positions and scores from
       slot[q] (room for slot[q + 1] - slot[q], at least its rows), their number to counts[q] */
    const int64_t *slot;
    int64_t *counts, *positions;
    double *scores;
    /* each thread's own (a copy of the job per thread) */
    int64_t postings_read; /* postings whose weight was read to score: what pruning saves */
    int64_t bad_value; /* the offending index or query, for the error message */
} Job;

/* Add c * weight of each posting in [p0, p1) into acc; note first touches in touched.
   Loop invariants live in locals: the char and int64 stores could otherwise alias them. */
static inline int add_postings(const IndexArray w_doc, const double *w_val, int64_t p0, int64_t p1, double c, int64_t n_docs,
                               double *acc, char *seen, int64_t *touched, Py_ssize_t *n_touched, int64_t *bad_doc) {
    const void *docs = w_doc.data;
    const int wide = w_doc.wide;
    Py_ssize_t nt = *n_touched;
    for (int64_t p = p0; p < p1; p++) {
        int64_t d = wide ? ((const int64_t *)docs)[p] : (int64_t)((const int32_t *)docs)[p];
        if ((uint64_t)d >= (uint64_t)n_docs) {
            *bad_doc = d;
            *n_touched = nt; /* what was touched so far is cleared by the caller */
            return -1;
        }
        if (!seen[d]) {
            seen[d] = 1;
            touched[nt++] = d;
        }
        acc[d] += c * w_val[p];
    }
    *n_touched = nt;
    return 0;
}

/* The bounds [begin, end) of query row q's terms, checked. */
static Status query_row(Job *job, Py_ssize_t q, int64_t *begin, int64_t *end) {
    *begin = at(&job->q_ptr, q);
    *end = at(&job->q_ptr, q + 1);
    if (*begin < 0 || *begin > *end || *end > job->q_term.len) {
        job->bad_value = q;
        return BAD_TERM;
    }
    return OK;
}

/* The term of the query row's entry j and the bounds [p0, p1) of its postings, checked. */
static Status term_postings(Job *job, int64_t j, int64_t *t, int64_t *p0, int64_t *p1) {
    *t = at(&job->q_term, j);
    if (*t < 0 || *t >= job->n_terms) {
        job->bad_value = *t;
        return BAD_TERM;
    }
    *p0 = at(&job->w_ptr, *t);
    *p1 = at(&job->w_ptr, *t + 1);
    if (*p0 < 0 || *p0 > *p1 || *p1 > job->n_postings) {
        job->bad_value = *t;
        return BAD_POSTINGS;
    }
    return OK;
}

/* Accumulate one query's scores into acc; record each document touched once in touched. */
static Status accumulate(Job *job, Py_ssize_t q, double *acc, char *seen, int64_t *touched, Py_ssize_t *n_touched) {
    int64_t begin, end, t, p0, p1;
    Status status = query_row(job, q, &begin, &end);
    for (int64_t j = begin; status == OK && j < end; j++) {
        status = term_postings(job, j, &t, &p0, &p1);
        if (status != OK) break;
        job->postings_read += p1 - p0;
        if (add_postings(job->w_doc, job->w_val, p0, p1, job->q_val[j], job->n_docs, acc, seen, touched, n_touched,
                         &job->bad_value) < 0)
            return BAD_DOC;
    }
    return status;
}

/* Write the heap's documents to query q's slot in run order and reset the heap. */
static Status emit(Job *job, Py_ssize_t q, Heap *h) {
    Py_ssize_t n = h->n;
    if (n < h->k)
        for (Py_ssize_t i = n / 2 - 1; i >= 0; i--) sift_down(h, n, i);
    if (n > job->slot[q + 1] - job->slot[q]) { /* cannot happen: a query has at most its postings' documents */
        job->bad_value = q;
        return NO_ROOM;
    }
    int64_t *positions = job->positions + job->slot[q];
    double *scores = job->scores + job->slot[q];
    /* pop the worst first into the last free place: the places fill in run order */
    for (Py_ssize_t m = n; m > 0; m--) {
        positions[m - 1] = h->doc[0];
        scores[m - 1] = h->score[0];
        h->score[0] = h->score[m - 1], h->rank[0] = h->rank[m - 1], h->doc[0] = h->doc[m - 1];
        sift_down(h, m - 1, 0);
    }
    job->counts[q] = n;
    h->n = 0;
    return OK;
}

/* Keep the k best non-zero sums among the touched documents. */
static Status select_best(Job *job, Py_ssize_t q, const double *acc, const int64_t *touched, Py_ssize_t nt, Heap *heap) {
    for (Py_ssize_t i = 0; i < nt; i++) {
        int64_t d = touched[i];
        double s = acc[d];
        if (s == 0.0) continue;
        if (isnan(s)) {
            job->bad_value = q;
            return NAN_SCORE;
        }
        heap_offer(heap, s, job->rank[d], d);
    }
    return emit(job, q, heap);
}

/* One query term's postings as MaxScore walks them. */
typedef struct {
    int64_t pos, end; /* next posting, end of the term's postings */
    int64_t start;    /* first posting of the current window */
    double c, ub;     /* query weight; upper bound of c * weight, at least 0 (absent terms add 0) */
} Cursor;

/* Scratch space of MaxScore, sized once per batch (`longest` = most terms in a query row). */
typedef struct {
    Cursor *cur;      /* one per query term, sorted by bound ascending */
    Cursor *raw;      /* the same in row order, while sorting */
    Py_ssize_t *order, *byj; /* cur[i] is the row's order[i]-th term; byj[j]: the cursor of the j-th */
    double *cum;      /* cum[i]: sum of the bounds of cur[0..i] */
    double *acc;      /* WINDOW partial sums */
    uint64_t *bits;   /* which of them were touched */
} Scratch;

#define WINDOW 4096 /* documents scored together: the window's sums stay in the L1/L2 cache */

/* First posting in [p, end) whose document is >= d, else end (postings ascend within a term). */
static int64_t seek(const IndexArray *docs, int64_t p, int64_t end, int64_t d) {
    int64_t lo = p, hi = p, step = 1;
    while (hi < end && at(docs, hi) < d) { /* gallop: cheap when the target is near */
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    if (hi > end) hi = end;
    while (lo < hi) { /* every posting before lo is < d; hi is end or a posting >= d */
        int64_t mid = lo + (hi - lo) / 2;
        if (at(docs, mid) < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Set up one cursor per query term, sorted by bound; returns UNBOUNDED for a non-finite bound. */
static Status open_cursors(Job *job, Py_ssize_t q, Scratch *w, Py_ssize_t *n_out, double *scale) {
    int64_t begin, end, t, p0, p1;
    Status status = query_row(job, q, &begin, &end);
    if (status != OK) return status;
    Py_ssize_t n = 0;
    *scale = 0.0;
    for (int64_t j = begin; j < end; j++) {
        status = term_postings(job, j, &t, &p0, &p1);
        if (status != OK) return status;
        double c = job->q_val[j], hi = c * job->t_max[t], lo = c * job->t_min[t];
        if (!isfinite(hi) || !isfinite(lo)) return UNBOUNDED;
        double ub = hi > lo ? hi : lo;
        *scale += fabs(hi) > fabs(lo) ? fabs(hi) : fabs(lo);
        w->raw[n] = (Cursor){p0, p1, p0, c, ub > 0.0 ? ub : 0.0};
        Py_ssize_t i = n++; /* insertion sort of the terms by bound (queries hold few terms) */
        for (; i > 0 && w->raw[w->order[i - 1]].ub > w->raw[n - 1].ub; i--) w->order[i] = w->order[i - 1];
        w->order[i] = n - 1;
    }
    if (!(*scale < 1e300)) return UNBOUNDED; /* sums could overflow to inf and cancel to NaN */
    for (Py_ssize_t i = 0; i < n; i++) {
        w->cur[i] = w->raw[w->order[i]];
        w->byj[w->order[i]] = i;
    }
    *n_out = n;
    return OK;
}

/* The exhaustive score of document d: the row's terms summed in row order from 0.0. */
static double exact_score(const Job *job, const Scratch *w, Py_ssize_t n, Py_ssize_t m, int64_t d) {
    double s = 0.0;
    for (Py_ssize_t j = 0; j < n; j++) {
        const Cursor *c = &w->cur[w->byj[j]];
        /* an essential term's cursor has passed the window: look from its start; a non-essential one sits at d or after */
        int64_t p = w->byj[j] >= m ? seek(&job->w_doc, c->start, c->pos, d) : seek(&job->w_doc, c->pos, c->end, d);
        if (p < c->end && at(&job->w_doc, p) == d) s += c->c * job->w_val[p];
    }
    return s;
}

/* Add the essential terms' postings inside [ws, ws + WINDOW) into the window, in row order. */
static Status fill_window(Job *job, Scratch *w, Py_ssize_t n, Py_ssize_t m, int64_t ws) {
    const IndexArray docs = job->w_doc;
    const double *w_val = job->w_val;
    double *acc = w->acc;
    uint64_t *bits = w->bits;
    const int64_t we = ws + WINDOW;
    for (Py_ssize_t j = 0; j < n; j++) {
        Cursor *c = &w->cur[w->byj[j]];
        if (w->byj[j] < m) continue;
        int64_t p = c->pos, end = c->end, last = ws - 1;
        const double cq = c->c;
        c->start = p;
        for (; p < end; p++) {
            int64_t d = docs.wide ? ((const int64_t *)docs.data)[p] : (int64_t)((const int32_t *)docs.data)[p];
            if (d >= we) break;
            if (d <= last || d >= job->n_docs) { /* not ascending, or out of range */
                job->bad_value = d;
                return d <= last ? BAD_POSTINGS : BAD_DOC;
            }
            last = d;
            int64_t off = d - ws;
            uint64_t bit = (uint64_t)1 << (off & 63);
            if (!(bits[off >> 6] & bit)) {
                bits[off >> 6] |= bit;
                acc[off] = 0.0;
            }
            acc[off] += cq * w_val[p];
        }
        job->postings_read += p - c->start;
        c->pos = p;
    }
    return OK;
}

/* Score one query by MaxScore (Lucene's windowed variant) into the heap: the result of accumulate +
   select_best. Terms whose bounds together cannot reach the k-th best are non-essential (cur[0..m)):
   only documents of the essential terms are candidates, and non-essential terms are probed for them
   (highest bound first) only while the candidate can still reach the k-th best. */
static Status maxscore(Job *job, Py_ssize_t q, Scratch *w, Heap *heap) {
    Py_ssize_t n;
    double scale;
    Status status = open_cursors(job, q, w, &n, &scale);
    if (status != OK) return status;
    Cursor *cur = w->cur;
    double *cum = w->cum;
    for (Py_ssize_t i = 0; i < n; i++) cum[i] = (i ? cum[i - 1] : 0.0) + cur[i].ub;
    /* Sums of n terms, added in different orders, differ by less than n * DBL_EPSILON * scale:
       a bound prunes only when it falls short of the k-th best by more than four times that. */
    const double margin = 4.0 * (double)(n + 2) * DBL_EPSILON * scale;
    Py_ssize_t m = 0;
    for (;;) {
        int64_t next = INT64_MAX; /* the first window holding an essential posting */
        for (Py_ssize_t i = m; i < n; i++)
            if (cur[i].pos < cur[i].end) {
                int64_t d = at(&job->w_doc, cur[i].pos);
                if (d < next) next = d;
            }
        if (next == INT64_MAX) break;
        if (next < 0) {
            job->bad_value = next;
            return BAD_DOC;
        }
        int64_t ws = next - next % WINDOW;
        status = fill_window(job, w, n, m, ws);
        if (status != OK) return status;
        for (int word = 0; word < WINDOW / 64; word++) {
            for (uint64_t bits = w->bits[word]; bits; bits &= bits - 1) {
                int64_t off = (int64_t)word * 64 + __builtin_ctzll(bits), d = ws + off;
                double s = w->acc[off]; /* with every term essential, this is the exhaustive sum */
                if (m > 0) {
                    int pruned = 0;
                    for (Py_ssize_t i = m - 1; i >= 0 && !pruned; i--) {
                        if (s + cum[i] + margin < heap->score[0]) {
                            pruned = 1;
                            break;
                        }
                        cur[i].pos = seek(&job->w_doc, cur[i].pos, cur[i].end, d);
                        if (cur[i].pos < cur[i].end && at(&job->w_doc, cur[i].pos) == d) {
                            s += cur[i].c * job->w_val[cur[i].pos];
                            job->postings_read++;
                        }
                    }
                    if (pruned || s + margin < heap->score[0]) continue;
                    s = exact_score(job, w, n, m, d);
                }
                if (s == 0.0) continue;
                if (isnan(s)) {
                    job->bad_value = q;
                    return NAN_SCORE;
                }
                heap_offer(heap, s, job->rank[d], d);
            }
            w->bits[word] = 0;
        }
        if (heap->n == heap->k)
            while (m < n && cum[m] + margin < heap->score[0]) m++;
    }
    return emit(job, q, heap);
}

/* A thread's scratch space, kept across calls (see the top of this file). Invariant between calls:
   acc and seen are all zero, w.bits all clear; busy is set (with the GIL held) while a call uses it. */
typedef struct {
    PyObject_HEAD
    double *acc;       /* dense accumulator of exhaustive scoring, n_docs + 1 entries; NULL until needed */
    char *seen;        /* which of its entries the current query touched */
    int64_t *touched;  /* those entries, in order of first touch */
    Py_ssize_t n_docs; /* the corpus size they were allocated for (0: none) */
    Heap heap;
    Py_ssize_t heap_cap, terms_cap; /* entries of the heap arrays and of the cursor arrays */
    Scratch w;
    int busy;
} Workspace;

static void free_dense(Workspace *ws) {
    free(ws->acc);
    free(ws->seen);
    free(ws->touched);
    ws->acc = NULL, ws->seen = NULL, ws->touched = NULL, ws->n_docs = 0;
}

/* Grow an array to hold n entries of size bytes; the old contents need not be kept. */
static int reserve(void **array, size_t n, size_t size) {
    void *grown = realloc(*array, n * size);
    if (grown == NULL) return -1;
    *array = grown;
    return 0;
}

/* Make room for a heap of k and queries of up to `longest` terms; allocate the window once. */
static Status prepare(Workspace *ws, Py_ssize_t k, Py_ssize_t longest) {
    if (k + 1 > ws->heap_cap) {
        size_t n = (size_t)k + 1;
        if (reserve((void **)&ws->heap.score, n, sizeof(double)) || reserve((void **)&ws->heap.rank, n, sizeof(int64_t)) ||
            reserve((void **)&ws->heap.doc, n, sizeof(int64_t)))
            return NO_MEMORY;
        ws->heap_cap = k + 1;
    }
    if (longest + 1 > ws->terms_cap) {
        size_t n = (size_t)longest + 1;
        if (reserve((void **)&ws->w.cur, n, sizeof(Cursor)) || reserve((void **)&ws->w.raw, n, sizeof(Cursor)) ||
            reserve((void **)&ws->w.order, n, sizeof(Py_ssize_t)) || reserve((void **)&ws->w.byj, n, sizeof(Py_ssize_t)) ||
            reserve((void **)&ws->w.cum, n, sizeof(double)))
            return NO_MEMORY;
        ws->terms_cap = longest + 1;
    }
    if (ws->w.acc == NULL && reserve((void **)&ws->w.acc, WINDOW, sizeof(double))) return NO_MEMORY;
    if (ws->w.bits == NULL && (ws->w.bits = calloc(WINDOW / 64, sizeof(uint64_t))) == NULL) return NO_MEMORY;
    ws->heap.n = 0;
    ws->heap.k = k;
    return OK;
}

/* The dense accumulator for a corpus of n_docs, zeroed once when (re)allocated. */
static Status dense(Workspace *ws, Py_ssize_t n_docs) {
    if (ws->n_docs == n_docs) return OK;
    free_dense(ws);
    ws->acc = calloc((size_t)n_docs + 1, sizeof(double));
    ws->seen = calloc((size_t)n_docs + 1, 1);
    ws->touched = malloc(((size_t)n_docs + 1) * sizeof(int64_t));
    if (ws->acc == NULL || ws->seen == NULL || ws->touched == NULL) {
        free_dense(ws);
        return NO_MEMORY;
    }
    ws->n_docs = n_docs;
    return OK;
}

/* Score query q into its slot: by MaxScore given bounds, else (or for a query with unbounded terms) exhaustively. */
static Status one_query(Job *job, Workspace *ws, Py_ssize_t q) {
    if (job->t_max != NULL) {
        Status status = maxscore(job, q, &ws->w, &ws->heap);
        if (status != UNBOUNDED) return status; /* UNBOUNDED is found before anything is scored */
    }
    Status status = dense(ws, job->n_docs);
    if (status != OK) return status;
    Py_ssize_t nt = 0;
    status = accumulate(job, q, ws->acc, ws->seen, ws->touched, &nt);
    if (status == OK) status = select_best(job, q, ws->acc, ws->touched, nt, &ws->heap);
    for (Py_ssize_t i = 0; i < nt; i++) { /* reset only what this query touched */
        ws->acc[ws->touched[i]] = 0.0;
        ws->seen[ws->touched[i]] = 0;
    }
    return status;
}

static void workspace_dealloc(PyObject *self) {
    Workspace *ws = (Workspace *)self;
    free_dense(ws);
    free(ws->heap.score);
    free(ws->heap.rank);
    free(ws->heap.doc);
    free(ws->w.cur);
    free(ws->w.raw);
    free(ws->w.order);
    free(ws->w.byj);
    free(ws->w.cum);
    free(ws->w.acc);
    free(ws->w.bits);
    Py_TYPE(self)->tp_free(self);
}

PyDoc_STRVAR(workspace_doc,
    "Workspace()\n--\n\n"
    "Scratch space of Search.run kept from one call to the next: a thread searching query after query\n"
    "passes the same one, so buffers (the dense accumulator of exhaustive scoring: 17 bytes per\n"
    "document) are allocated once, and cleared only where each query touched them. One call at a\n"
    "time: a workspace passed to two threads at once is refused.");

static PyTypeObject WorkspaceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rankscope.retrieval._sparse_topk.Workspace",
    .tp_basicsize = sizeof(Workspace),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = workspace_doc,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = workspace_dealloc,
};

static void set_error(Status status, long long v, Py_ssize_t n_terms, Py_ssize_t n_postings, Py_ssize_t n_docs) {
    switch (status) {
    case NO_MEMORY: PyErr_NoMemory(); break;
    case BAD_TERM: PyErr_Format(PyExc_ValueError, "query matrix is malformed: term index or row bound %lld is out of range (%zd terms)", v, n_terms); break;
    case BAD_POSTINGS: PyErr_Format(PyExc_ValueError, "weight matrix is malformed: the postings of term %lld lie outside its %zd entries", v, n_postings); break;
    case BAD_DOC: PyErr_Format(PyExc_ValueError, "weight matrix is malformed: document position %lld is out of range (%zd documents)", v, n_docs); break;
    case NAN_SCORE: PyErr_Format(PyExc_ValueError, "query %lld of the batch has a NaN score: the weights hold NaN", v); break;
    case NO_ROOM: PyErr_Format(PyExc_SystemError, "query %lld found more documents than its postings hold", v); break;
    default: break;
    }
}

/* One search of a batch of queries, shared by the threads that run it: each claims the next query
   (an atomic counter) and writes its rows to that query's own slot, so any number of threads in any
   order give the same result, and a thread is never left idle while queries remain. Per query, room
   is kept for min(k, its postings) rows, the most it can have. The inputs are held (buffer views)
   until the search is freed. An error stops the claims after the lowest query that failed; as
   claims ascend, every query below it was scored, so the error reported is the same one a single
   thread meets first. */
typedef struct {
    PyObject_HEAD
    Py_buffer views[9];
    int n_views;
    Job job;              /* the inputs and the shared results; each run copies it */
    Py_ssize_t longest;   /* most terms in a query row */
    int64_t *slot;        /* n_queries + 1 */
    int64_t next;         /* the next query to claim (atomic) */
    int64_t stop;         /* claims stop here: the lowest query that failed so far, else n_queries (atomic) */
    int64_t done;         /* queries scored (atomic; read for progress) */
    Status status;        /* the error of the lowest query that failed (`failed`), and its bad_value */
    int64_t failed, bad_value;
    int64_t postings_read;
    int running;          /* runs in progress (with the GIL held) */
} Search;

static void search_dealloc(PyObject *self) {
    Search *s = (Search *)self;
    for (int i = 0; i < s->n_views; i++) PyBuffer_Release(&s->views[i]);
    free(s->slot);
    free(s->job.counts);
    free(s->job.positions);
    free(s->job.scores);
    Py_TYPE(self)->tp_free(self);
}

static int search_init(PyObject *self, PyObject *args, PyObject *kwargs) {
    Search *s = (Search *)self;
    static const char *names[9] = {"q_indptr", "q_indices", "q_data",      "w_indptr", "w_indices",
                                   "w_data",   "doc_id_rank", "term_max", "term_min"};
    PyObject *objs[9] = {NULL};
    Py_ssize_t k;
    if (s->n_views > 0 || s->slot != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a Search is set up once");
        return -1;
    }
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyErr_SetString(PyExc_TypeError, "Search takes positional arguments only");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "OOOOOOOn|OO:Search", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &objs[6],
                          &k, &objs[7], &objs[8]))
        return -1;
    if (k < 1) {
        PyErr_Format(PyExc_ValueError, "k must be a positive integer, got %zd", k);
        return -1;
    }
    int n_views = objs[7] != NULL && objs[7] != Py_None ? 9 : 7;
    if (n_views == 9 && (objs[8] == NULL || objs[8] == Py_None)) {
        PyErr_SetString(PyExc_TypeError, "term_max needs term_min");
        return -1;
    }
    Job *job = &s->job;
    for (; s->n_views < n_views; s->n_views++)
        if (get_view(objs[s->n_views], &s->views[s->n_views], names[s->n_views]) < 0) return -1;
    Py_buffer *views = s->views;
    IndexArray rank;
    Py_ssize_t n_q_val, n_w_val;
    if (index_array(&views[0], names[0], &job->q_ptr) < 0 || index_array(&views[1], names[1], &job->q_term) < 0 ||
        float_array(&views[2], names[2], &job->q_val, &n_q_val) < 0 || index_array(&views[3], names[3], &job->w_ptr) < 0 ||
        index_array(&views[4], names[4], &job->w_doc) < 0 || float_array(&views[5], names[5], &job->w_val, &n_w_val) < 0 ||
        index_array(&views[6], names[6], &rank) < 0)
        return -1;
    if (!rank.wide) {
        PyErr_SetString(PyExc_TypeError, "doc_id_rank must hold int64");
        return -1;
    }
    if (job->q_ptr.len < 1 || job->w_ptr.len < 1 || n_q_val != job->q_term.len || n_w_val != job->w_doc.len) {
        PyErr_SetString(PyExc_ValueError, "malformed CSR arrays: indptr is empty or data and indices differ in length");
        return -1;
    }
    if (n_views == 9) {
        Py_ssize_t n_max, n_min;
        if (float_array(&views[7], names[7], &job->t_max, &n_max) < 0 || float_array(&views[8], names[8], &job->t_min, &n_min) < 0)
            return -1;
        if (n_max != job->w_ptr.len - 1 || n_min != job->w_ptr.len - 1) {
            PyErr_SetString(PyExc_ValueError, "term_max and term_min must hold one value per term");
            return -1;
        }
    }
    job->rank = (const int64_t *)rank.data;
    job->n_queries = job->q_ptr.len - 1;
    job->n_terms = job->w_ptr.len - 1;
    job->n_docs = rank.len;
    job->n_postings = job->w_doc.len;
    job->k = k < job->n_docs ? k : job->n_docs;
    /* each query's room: min(k, its terms' postings); malformed rows and terms get none (the walk reports them) */
    s->slot = malloc(((size_t)job->n_queries + 1) * sizeof(int64_t));
    job->counts = calloc((size_t)job->n_queries + 1, sizeof(int64_t));
    if (s->slot == NULL || job->counts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    s->slot[0] = 0;
    for (Py_ssize_t q = 0; q < job->n_queries; q++) {
        int64_t begin = at(&job->q_ptr, q), end = at(&job->q_ptr, q + 1), postings = 0;
        if (begin >= 0 && begin <= end && end <= job->q_term.len) {
            if (end - begin > s->longest) s->longest = end - begin;
            for (int64_t j = begin; j < end && postings < job->k; j++) {
                int64_t t = at(&job->q_term, j);
                if (t < 0 || t >= job->n_terms) break;
                int64_t p0 = at(&job->w_ptr, t), p1 = at(&job->w_ptr, t + 1);
                if (p0 >= 0 && p0 <= p1 && p1 <= job->n_postings) postings += p1 - p0;
            }
        }
        s->slot[q + 1] = s->slot[q] + (postings < job->k ? postings : job->k);
    }
    size_t room = (size_t)s->slot[job->n_queries] + 1;
    job->positions = malloc(room * sizeof(int64_t));
    job->scores = malloc(room * sizeof(double));
    if (job->positions == NULL || job->scores == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    job->slot = s->slot;
    s->next = 0;
    s->stop = job->n_queries;
    return 0;
}

static int search_ready(Search *s) {
    if (s->slot == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "this Search was not set up");
        return 0;
    }
    return 1;
}

/* Claim queries until none is left or `limit` were scored; returns how many this call scored. On an
   error, `failed` is the query that met it, and later claims of every thread stop there. */
static Py_ssize_t claim(Search *s, Job *job, Workspace *ws, Py_ssize_t limit, Status *status, int64_t *failed) {
    Py_ssize_t scored = 0;
    *status = prepare(ws, job->k, s->longest);
    while (*status == OK && scored < limit) {
        int64_t q = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
        if (q >= __atomic_load_n(&s->stop, __ATOMIC_RELAXED)) break;
        if (job->k > 0) *status = one_query(job, ws, q);
        if (*status != OK) {
            int64_t stop = __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
            while (q < stop && !__atomic_compare_exchange_n(&s->stop, &stop, q, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
            *failed = q;
            break;
        }
        __atomic_fetch_add(&s->done, 1, __ATOMIC_RELAXED);
        scored++;
    }
    if (*status != OK && ws->w.bits != NULL) /* MaxScore may stop inside a window */
        memset(ws->w.bits, 0, WINDOW / 64 * sizeof(uint64_t));
    return scored;
}

static PyObject *search_run(PyObject *self, PyObject *args) {
    Search *s = (Search *)self;
    PyObject *given = Py_None;
    Py_ssize_t limit = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTuple(args, "|On:run", &given, &limit) || !search_ready(s)) return NULL;
    if (limit < 1) return PyErr_Format(PyExc_ValueError, "limit must be a positive integer, got %zd", limit);
    if (given != Py_None && !PyObject_TypeCheck(given, &WorkspaceType))
        return PyErr_Format(PyExc_TypeError, "workspace must be a Workspace or None, got %.100s", Py_TYPE(given)->tp_name);
    /* without one, a workspace for this call only */
    Workspace *ws = (Workspace *)(given == Py_None ? PyType_GenericNew(&WorkspaceType, NULL, NULL) : Py_NewRef(given));
    if (ws == NULL) return NULL;
    if (ws->busy) {
        Py_DECREF(ws);
        PyErr_SetString(PyExc_RuntimeError, "this Workspace is in use by another run: give each thread its own");
        return NULL;
    }
    ws->busy = 1;
    s->running++;
    Job job = s->job; /* this thread's copy: its own counters and error */
    job.postings_read = 0;
    Status status;
    Py_ssize_t scored;
    int64_t failed = -1;
    Py_BEGIN_ALLOW_THREADS
    scored = claim(s, &job, ws, limit, &status, &failed);
    Py_END_ALLOW_THREADS
    s->running--;
    ws->busy = 0;
    Py_DECREF(ws);
    s->postings_read += job.postings_read;
    if (status != OK && (s->status == OK || failed < s->failed)) { /* the lowest failed query's error */
        s->status = status;
        s->failed = failed;
        s->bad_value = job.bad_value;
    }
    return PyLong_FromSsize_t(scored);
}

/* (counts, positions, scores, postings_read) of a search every query of which was scored, or its error. */
static PyObject *search_result(PyObject *self, PyObject *unused) {
    (void)unused;
    Search *s = (Search *)self;
    const Job *job = &s->job;
    if (!search_ready(s)) return NULL;
    if (s->running > 0) {
        PyErr_SetString(PyExc_RuntimeError, "the search is still running on another thread");
        return NULL;
    }
    if (s->status != OK) {
        set_error(s->status, (long long)s->bad_value, job->n_terms, job->n_postings, job->n_docs);
        return NULL;
    }
    if (s->done < job->n_queries) {
        PyErr_Format(PyExc_RuntimeError, "%lld of the %zd queries are not scored yet: run the search first",
                     (long long)(job->n_queries - s->done), job->n_queries);
        return NULL;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t q = 0; q < job->n_queries; q++) total += job->counts[q];
    PyObject *positions = PyBytes_FromStringAndSize(NULL, total * (Py_ssize_t)sizeof(int64_t));
    PyObject *scores = PyBytes_FromStringAndSize(NULL, total * (Py_ssize_t)sizeof(double));
    PyObject *counts = PyBytes_FromStringAndSize((const char *)job->counts, job->n_queries * (Py_ssize_t)sizeof(int64_t));
    PyObject *read = PyLong_FromLongLong((long long)s->postings_read);
    PyObject *result = NULL;
    if (positions && scores && counts && read) {
        int64_t *to_pos = (int64_t *)PyBytes_AS_STRING(positions);
        double *to_score = (double *)PyBytes_AS_STRING(scores);
        for (Py_ssize_t q = 0, at_row = 0; q < job->n_queries; at_row += job->counts[q], q++) {
            memcpy(to_pos + at_row, job->positions + s->slot[q], (size_t)job->counts[q] * sizeof(int64_t));
            memcpy(to_score + at_row, job->scores + s->slot[q], (size_t)job->counts[q] * sizeof(double));
        }
        result = PyTuple_Pack(4, counts, positions, scores, read);
    }
    Py_XDECREF(positions);
    Py_XDECREF(scores);
    Py_XDECREF(counts);
    Py_XDECREF(read);
    return result;
}

static PyObject *search_done(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromLongLong((long long)__atomic_load_n(&((Search *)self)->done, __ATOMIC_RELAXED));
}

static PyMethodDef search_methods[] = {
    {"run", search_run, METH_VARARGS,
     "run(workspace=None, limit=None) -> int\n--\n\n"
     "Score queries not yet claimed by any thread, one at a time, until none is left (or `limit` were\n"
     "scored by this call), with the GIL released; returns how many this call scored. Several threads\n"
     "may run one search at once, each with its own Workspace."},
    {"result", search_result, METH_NOARGS,
     "result() -> (counts, positions, scores, postings_read)\n--\n\n"
     "Once every query is scored: bytes of int64, int64, float64 (each query's rows in query order) and\n"
     "an int; or the error of the lowest query that failed."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef search_getset[] = {
    {"done", search_done, NULL, "Queries scored so far (for progress; read while threads run).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(search_doc,
    "Search(q_indptr, q_indices, q_data, w_indptr, w_indices, w_data, doc_id_rank, k, term_max=None, term_min=None)\n--\n\n"
    "For each row of the query x term CSR matrix, the k best documents of the term x document CSR\n"
    "matrix by (score desc, doc_id_rank desc), scored by threads that each call run(workspace) and\n"
    "claim queries one at a time; result() gives them in query order. With term_max and term_min\n"
    "(float64, one per term: its largest and smallest weight) queries are scored by MaxScore, with\n"
    "the same result; the postings must then ascend within each term.");

static PyTypeObject SearchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rankscope.retrieval._sparse_topk.Search",
    .tp_basicsize = sizeof(Search),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = search_doc,
    .tp_new = PyType_GenericNew,
    .tp_init = search_init,
    .tp_dealloc = search_dealloc,
    .tp_methods = search_methods,
    .tp_getset = search_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_sparse_topk",
    .m_doc = "Compiled sparse scoring and top-k selection for retrieval.topk (see that module).",
    .m_size = -1,
};

static int add_type(PyObject *m, PyTypeObject *type, const char *name) {
    if (PyType_Ready(type) < 0) return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__sparse_topk(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (add_type(m, &WorkspaceType, "Workspace") < 0 || add_type(m, &SearchType, "Search") < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
