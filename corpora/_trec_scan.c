/* One pass over a TREC run or qrels file in memory: fields split, ids coded, numbers parsed.
 *
 * Why it exists: pandas' CSV reader, then a separate completeness check, a duplicate
 * check and string hashing for evaluation cost about six times the evaluation itself on a
 * 77 MB run. Here every line is split on spaces and tabs (as trec_eval does), each id field
 * is interned into its own table of distinct ids (so Python builds one str per distinct id
 * and evaluation codes rows by object), and each number is checked against the grammar of
 * corpora/checks.py (NUMBER, INTEGER) and parsed as float() parses it.
 *
 * It never words an error: on any doubt (wrong field count, a value the grammar refuses,
 * a NUL byte or quotes in an id, a non-finite number) it returns None and the caller checks
 * the file line by line, which says where and why. So both paths accept the same files.
 *
 * Field kinds, one letter each: 'i' id (coded), 'a' any (skipped), 'n' finite number (checked,
 * not kept), 'f' float (checked, kept), 'l' label (integer, kept).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 16
#define MAX_NUMBER 64 /* longer numbers (400 digits) are left to the line-by-line path */

typedef struct {
    const char *start;
    Py_ssize_t len;
} Slice;

/* Open-addressing table of distinct ids. A slot is 16 bytes: the hash's high bits with the length in
 * its low byte, the code, and the id's first 8 bytes; so a lookup usually touches one slot and, for
 * ids of 8 bytes or less, never the far-away file buffer. The table stays small (4 MB for 100k ids):
 * on a 77 MB run the cache and TLB misses of this lookup were most of the scan's time. */
typedef struct {
    uint32_t tag;  /* hash & ~0xff | min(len, 255) */
    int32_t code;  /* -1: empty */
    uint64_t head; /* first 8 bytes, zero padded */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    Slice *ids;
    Py_ssize_t n, cap;
} Interner;

static inline uint64_t id_head(const char *s, Py_ssize_t n) {
    uint64_t head = 0;
    memcpy(&head, s, n < 8 ? (size_t)n : 8);
    return head;
}

/* id_head() of an id with `end` - s bytes readable from s: one 8-byte load on little-endian machines. */
static inline uint64_t id_head_in(const char *s, Py_ssize_t n, const char *end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - s >= 8) {
        uint64_t word;
        memcpy(&word, s, 8);
        return n >= 8 ? word : word & ((1ULL << (8 * n)) - 1);
    }
#endif
    return id_head(s, n);
}

static inline uint64_t mix(uint64_t h) { /* murmur3's finaliser */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t hash_id(uint64_t head, const char *s, Py_ssize_t n) {
    uint64_t h = mix(head ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL));
    for (Py_ssize_t i = 8; i < n; i += 8) {
        uint64_t word = 0;
        memcpy(&word, s + i, n - i < 8 ? (size_t)(n - i) : 8);
        h = mix(h ^ word);
    }
    return h;
}

static inline uint32_t slot_tag(uint64_t h, Py_ssize_t n) {
    return ((uint32_t)(h >> 32) & ~0xffU) | (uint32_t)(n < 255 ? n : 255);
}

static Slot *new_slots(size_t count) {
    Slot *slots = malloc(count * sizeof(Slot));
    if (slots)
        for (size_t i = 0; i < count; i++) slots[i].code = -1;
    return slots;
}

static int interner_init(Interner *t) {
    t->mask = 1023;
    t->slots = new_slots(t->mask + 1);
    t->cap = 512;
    t->ids = malloc(t->cap * sizeof(Slice));
    t->n = 0;
    return t->slots && t->ids ? 0 : -1;
}

static void interner_free(Interner *t) {
    free(t->slots);
    free(t->ids);
}

static int interner_grow(Interner *t) {
    size_t mask = t->mask * 2 + 1;
    Slot *slots = new_slots(mask + 1);
    if (!slots) return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].code < 0) continue;
        const Slice *id = &t->ids[t->slots[i].code];
        size_t at = hash_id(t->slots[i].head, id->start, id->len) & mask;
        while (slots[at].code >= 0) at = (at + 1) & mask;
        slots[at] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* The code of id `s` (a new one if unseen) given its head and hash; -1 when out of memory. */
static int64_t intern(Interner *t, const char *s, Py_ssize_t n, uint64_t head, uint64_t h) {
    uint32_t tag = slot_tag(h, n);
    size_t at = h & t->mask;
    while (t->slots[at].code >= 0) {
        const Slot *slot = &t->slots[at];
        if (slot->tag == tag && slot->head == head) {
            const Slice *known = &t->ids[slot->code];
            if (n <= 8 || (known->len == n && memcmp(known->start + 8, s + 8, n - 8) == 0)) return slot->code;
        }
        at = (at + 1) & t->mask;
    }
    if (t->n >= INT32_MAX) return -1;
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap * 2;
        Slice *ids = realloc(t->ids, cap * sizeof(Slice));
        if (!ids) return -1;
        t->ids = ids;
        t->cap = cap;
    }
    int64_t code = t->n++;
    t->ids[code] = (Slice){s, n};
    t->slots[at] = (Slot){tag, (int32_t)code, head};
    if ((size_t)t->n * 2 > t->mask && interner_grow(t) < 0) return -1;
    return code;
}

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Does the whole field match NUMBER: [+-]?(digits(.digits*)?|.digits)([eE][+-]?digits)? */
static int is_number(const char *s, Py_ssize_t n) {
    Py_ssize_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && is_digit(s[i])) i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) i++, digits++;
    }
    if (!digits) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        Py_ssize_t exponent = 0;
        while (i < n && is_digit(s[i])) i++, exponent++;
        if (!exponent) return 0;
    }
    return i == n;
}

/* Powers of ten a double holds exactly (10^22 is the largest). */
static const double EXACT_POWERS[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Powers of ten a long double holds exactly (5^27 < 2^64). */
static const long double EXACT_POWERS_LONG[] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

/* Does long double arithmetic here round to 64 bits (x87 extended precision)? Set at import. */
static int extended_precision = 0;

static void check_extended_precision(void) {
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
    volatile long double one = 1.0L, tiny = 1.0L / 9223372036854775808.0L; /* 2^-63 */
    extended_precision = one + tiny != one;
#endif
}

/* mantissa / 10^-exponent for the 17-19 digit decimals doubles are written with (repr gives up to 17):
 * the x87 unit divides exact operands rounding once to 64 bits, and rounding that to 53 bits gives the
 * correctly rounded double unless the 64-bit quotient lies exactly halfway between two doubles (its low
 * 11 bits are 0x400); then 0, and the full parser decides. */
static int extended_quotient(uint64_t mantissa, int exponent, double *out) {
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
    if (!extended_precision || exponent > 0 || exponent < -27) return 0;
    long double value = (long double)mantissa / EXACT_POWERS_LONG[-exponent];
    uint64_t significand;
    memcpy(&significand, &value, sizeof significand); /* x87 layout: the 64-bit significand comes first */
    if ((significand & 0x7ff) == 0x400) return 0;
    *out = (double)value;
    return 1;
#else
    (void)mantissa;
    (void)exponent;
    (void)out;
    (void)EXACT_POWERS_LONG;
    return 0;
#endif
}

/* Decimals without an exponent part and with at most 19 significant digits (an exact uint64 mantissa m
 * and decimal exponent e), read in one pass that checks the grammar too: 1 and the value for
 * [+-]?(digits(.digits*)?|.digits) of at most MAX_NUMBER bytes, else 0 (the field may still be a number:
 * parse_float decides). Clinger's fast path: m <= 2^53 and |e| <= 22 give the correctly rounded double as
 * one exact-operand division (12.5, 0.84442185152504); longer ones (repr's 16-17 digits) take the
 * extended-precision quotient. What judged() reads scores and ranks with, and parse_float's first try. */
static inline int simple_decimal(const char *s, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0;
    int negative = 0, seen = 0, digits = 0, exponent = 0;
    if (n > MAX_NUMBER) return 0;
    if (n && (s[0] == '+' || s[0] == '-')) negative = s[i++] == '-';
    uint64_t mantissa = 0;
    for (; i < n && is_digit(s[i]); i++) {
        seen = 1;
        if (mantissa == 0 && s[i] == '0') continue;
        if (++digits > 19) return 0;
        mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        for (i++; i < n && is_digit(s[i]); i++) {
            seen = 1;
            exponent--;
            if (mantissa == 0 && s[i] == '0') continue;
            if (++digits > 19) return 0;
            mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
        }
    }
    if (i != n || !seen) return 0;
    double value;
    if (mantissa <= (1ULL << 53) && exponent >= -22) {
        value = (double)mantissa;
        value = exponent < 0 ? value / EXACT_POWERS[-exponent] : value;
    } else if (!extended_quotient(mantissa, exponent, &value)) {
        return 0;
    }
    *out = negative ? -value : value;
    return 1;
}

/* The field as a finite double, read as float() reads it (every path rounds correctly); 0 on doubt.
 * `c_locale`: the C library's strtod reads '.' as the decimal point (faster than Python's parser). */
static int parse_float(const char *s, Py_ssize_t n, int c_locale, double *out) {
    char buffer[MAX_NUMBER + 1];
    if (n > MAX_NUMBER || !is_number(s, n)) return 0;
    if (simple_decimal(s, n, out)) return 1;
    memcpy(buffer, s, n);
    buffer[n] = '\0';
    char *end;
    double value;
    if (c_locale) {
        value = strtod(buffer, &end);
    } else {
        value = PyOS_string_to_double(buffer, &end, NULL);
        if (value == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    }
    if (end != buffer + n || !isfinite(value)) return 0;
    *out = value;
    return 1;
}

/* A NUMBER that is surely finite without parsing it: 15 characters or fewer, no exponent. */
static int short_plain_number(const char *s, Py_ssize_t n) {
    return n <= 15 && !memchr(s, 'e', n) && !memchr(s, 'E', n) && is_number(s, n);
}

/* The field as an INTEGER ([+-]?[0-9]{1,18}); 0 on doubt. */
static int parse_label(const char *s, Py_ssize_t n, int64_t *out) {
    Py_ssize_t i = 0;
    int negative = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (n - i < 1 || n - i > 18) return 0;
    int64_t value = 0;
    for (; i < n; i++) {
        if (!is_digit(s[i])) return 0;
        value = value * 10 + (s[i] - '0');
    }
    *out = negative ? -value : value;
    return 1;
}

/* An id files may hold: no NUL byte, not quoted at either end (corpora.checks.id_problem). */
static inline int plain_id(const char *s, Py_ssize_t n) {
    if (n < 32) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (!s[i]) return 0;
    } else if (memchr(s, '\0', n)) {
        return 0;
    }
    return !(s[0] == '"' || s[0] == '\'' || s[n - 1] == '"' || s[n - 1] == '\'');
}

/* A growable array of fixed-size items. */
typedef struct {
    char *data;
    Py_ssize_t n, cap, item;
} Column;

static inline int column_push(Column *c, const void *value) {
    if (__builtin_expect(c->n == c->cap, 0)) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 4096;
        char *data = realloc(c->data, cap * c->item);
        if (!data) return -1;
        c->data = data;
        c->cap = cap;
    }
    memcpy(c->data + c->n * c->item, value, c->item);
    c->n++;
    return 0;
}

static PyObject *distinct_ids(const Interner *t) {
    PyObject *list = PyList_New(t->n);
    if (!list) return NULL;
    for (Py_ssize_t code = 0; code < t->n; code++) {
        PyObject *id = PyBytes_FromStringAndSize(t->ids[code].start, t->ids[code].len);
        if (!id) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, code, id);
    }
    return list;
}

/* Split the line starting at *p on spaces and tabs (keeping the first `keep` fields) and move *p past
 * its end ('\n' or '\r'); returns how many fields the line has. */
/* Byte classes of split_line: 0 a field's byte, SEPARATOR (space, tab), LINE_END ('\n', '\r'); one load
 * and compare a byte instead of four. */
#define SEPARATOR 1
#define LINE_END 2
static unsigned char byte_class[256];

static void init_byte_classes(void) {
    byte_class[' '] = byte_class['\t'] = SEPARATOR;
    byte_class['\n'] = byte_class['\r'] = LINE_END;
}

static Py_ssize_t split_line(const char **p, const char *end, Slice *fields, Py_ssize_t keep) {
    const unsigned char *q = (const unsigned char *)*p, *stop = (const unsigned char *)end;
    Py_ssize_t found = 0;
    for (;;) {
        while (q < stop && byte_class[*q] == SEPARATOR) q++;
        if (q == stop || byte_class[*q] == LINE_END) break;
        const unsigned char *start = q;
        while (q < stop && byte_class[*q] == 0) q++;
        if (found < keep) fields[found] = (Slice){(const char *)start, (const char *)q - (const char *)start};
        found++;
    }
    *p = q < stop ? (const char *)q + 1 : end;
    return found;
}

#define BATCH 64 /* lines split before their ids are looked up */

/* scan(data, kinds, trailing) -> None on doubt, else one entry per kept field, in field order:
 * ('i': (codes as int64 bytes, [distinct id bytes]), 'f': float64 bytes, 'l': int64 bytes). */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    const char *kinds;
    int trailing;
    if (!PyArg_ParseTuple(args, "y*sp", &view, &kinds, &trailing)) return NULL;
    Py_ssize_t n_fields = (Py_ssize_t)strlen(kinds);
    PyObject *result = NULL;
    Interner tables[MAX_FIELDS];
    Column columns[MAX_FIELDS];
    Slice last[MAX_FIELDS];
    int64_t last_code[MAX_FIELDS];
    int ready = 0;
    memset(columns, 0, sizeof(columns));
    memset(last, 0, sizeof(last));
    if (n_fields < 1 || n_fields > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "kinds must name 1 to 16 fields");
        goto done;
    }
    for (; ready < n_fields; ready++) {
        char kind = kinds[ready];
        if (!strchr("iafnl", kind)) {
            PyErr_Format(PyExc_ValueError, "unknown field kind %c", kind);
            goto done;
        }
        columns[ready].item = kind == 'f' ? sizeof(double) : sizeof(int64_t);
        if (kind == 'i' && interner_init(&tables[ready]) < 0) {
            interner_free(&tables[ready]);
            PyErr_NoMemory();
            goto done;
        }
    }
    const struct lconv *conventions = localeconv();
    int c_locale = conventions->decimal_point[0] == '.' && conventions->decimal_point[1] == '\0';
    const char *p = view.buf, *end = p + view.len;
    Py_ssize_t rows = 0;
    int doubt = 0;
    Slice batch[BATCH][MAX_FIELDS];
    uint64_t heads[BATCH][MAX_FIELDS], hashes[BATCH][MAX_FIELDS];
    while (p < end && !doubt) {
        Py_ssize_t filled = 0;
        while (filled < BATCH && p < end) {
            Py_ssize_t found = split_line(&p, end, batch[filled], n_fields);
            if (found == 0) continue; /* blank line (also the \n of a \r\n) */
            if (found < n_fields || (found > n_fields && !trailing)) {
                doubt = 1;
                break;
            }
            filled++;
        }
        if (doubt) break;
        /* hash the batch's ids and ask for their slots first: the lookups then rarely wait on memory */
        for (Py_ssize_t f = 0; f < n_fields; f++) {
            if (kinds[f] != 'i') continue;
            for (Py_ssize_t r = 0; r < filled; r++) {
                heads[r][f] = id_head(batch[r][f].start, batch[r][f].len);
                hashes[r][f] = hash_id(heads[r][f], batch[r][f].start, batch[r][f].len);
                __builtin_prefetch(&tables[f].slots[hashes[r][f] & tables[f].mask]);
            }
        }
        for (Py_ssize_t r = 0; r < filled && !doubt; r++) {
            for (Py_ssize_t f = 0; f < n_fields && !doubt; f++) {
                const char *s = batch[r][f].start;
                Py_ssize_t n = batch[r][f].len;
                switch (kinds[f]) {
                case 'i': {
                    if (!plain_id(s, n)) {
                        doubt = 1;
                        break;
                    }
                    int64_t code;
                    if (last[f].start && last[f].len == n && memcmp(last[f].start, s, n) == 0) {
                        code = last_code[f]; /* runs are grouped by query: mostly the previous row's id */
                    } else {
                        code = intern(&tables[f], s, n, heads[r][f], hashes[r][f]);
                        last[f] = (Slice){s, n};
                        last_code[f] = code;
                    }
                    if (code < 0 || column_push(&columns[f], &code) < 0) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    break;
                }
                case 'n': {
                    double unused;
                    if (!short_plain_number(s, n) && !parse_float(s, n, c_locale, &unused)) doubt = 1;
                    break;
                }
                case 'f': {
                    double value;
                    if (!parse_float(s, n, c_locale, &value)) doubt = 1;
                    else if (column_push(&columns[f], &value) < 0) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    break;
                }
                case 'l': {
                    int64_t value;
                    if (!parse_label(s, n, &value)) doubt = 1;
                    else if (column_push(&columns[f], &value) < 0) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    break;
                }
                default:
                    break;
                }
            }
        }
        rows += filled;
    }
    if (doubt || rows == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    result = PyList_New(0);
    if (!result) goto done;
    for (Py_ssize_t f = 0; f < n_fields; f++) {
        char kind = kinds[f];
        if (kind == 'a' || kind == 'n') continue;
        PyObject *values = PyBytes_FromStringAndSize(columns[f].data, columns[f].n * columns[f].item);
        PyObject *entry = values;
        if (values && kind == 'i') {
            PyObject *ids = distinct_ids(&tables[f]);
            entry = ids ? PyTuple_Pack(2, values, ids) : NULL;
            Py_DECREF(values);
            Py_XDECREF(ids);
        }
        if (!entry || PyList_Append(result, entry) < 0) {
            Py_XDECREF(entry);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(entry);
    }
done:
    for (Py_ssize_t f = 0; f < ready; f++) {
        if (kinds[f] == 'i') interner_free(&tables[f]);
    }
    for (Py_ssize_t f = 0; f < MAX_FIELDS; f++) free(columns[f].data);
    PyBuffer_Release(&view);
    return result;
}

/* repeats(query_codes, doc_codes, n_docs) -> does a (query, document) pair occur twice? Codes are int64,
 * numbered in order of first appearance as scan() gives them. Decided in one pass when each query's rows
 * are contiguous (as runs are written): a document seen under the current query repeats. None when the
 * rows are not grouped by query (the caller sorts the pairs). */
static PyObject *repeats(PyObject *self, PyObject *args) {
    Py_buffer queries, docs;
    Py_ssize_t n_docs;
    if (!PyArg_ParseTuple(args, "y*y*n", &queries, &docs, &n_docs)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = queries.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *q = queries.buf, *d = docs.buf;
    int64_t *seen = NULL;
    if (docs.len != queries.len || n_docs < 0) {
        PyErr_SetString(PyExc_ValueError, "two int64 code arrays of one length and a document count");
        goto done;
    }
    seen = malloc((n_docs ? n_docs : 1) * sizeof(int64_t));
    if (!seen) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_docs; i++) seen[i] = -1;
    int64_t next = 0; /* the code a query seen for the first time gets */
    result = Py_False;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (d[i] < 0 || d[i] >= n_docs) {
            PyErr_SetString(PyExc_ValueError, "document code out of range");
            result = NULL;
            goto done;
        }
        if (i == 0 || q[i] != q[i - 1]) {
            if (q[i] != next) { /* a query seen before comes back: rows not grouped */
                result = Py_None;
                break;
            }
            next++;
        }
        if (seen[d[i]] == q[i]) {
            result = Py_True;
            break;
        }
        seen[d[i]] = q[i];
    }
    Py_INCREF(result);
done:
    free(seen);
    PyBuffer_Release(&queries);
    PyBuffer_Release(&docs);
    return result;
}

/* ---- judged(): a run's pieces scored against the judgments, no document coded ---------------------------
 *
 * Evaluation needs, per query, the retrieved count, every row's score (score thresholds) and the rank and
 * label of each retrieved document that has a judgment; scan() codes every document id into a table of
 * distinct ids (millions on a large run: cache misses and one str object each), which a streamed evaluation
 * of 10^8 rows cannot afford. judged() reads a piece of whole queries once: each row's query is the previous
 * row's or a new one (looked up among the judged queries), its document is looked up only among its own
 * query's judgments (a small table that stays in cache) and in the query's set of documents seen (a
 * repeated pair is doubt: the caller's checks word it), and each judged row's rank follows the tie rule of
 * evaluation/ranking.py (score descending, then doc_id descending in byte order), counted among the rows
 * of equal score or, when the query's scores are not in descending order, from a sort of its rows. */

typedef struct {
    Interner queries;  /* the judged query ids (slices into `names`) */
    char *names;       /* query ids, then document ids, back to back */
    Py_ssize_t n;      /* judged queries */
    Py_ssize_t *first; /* first judgment of each query, n + 1 entries */
    size_t *table_at;  /* each query's table of judged documents: offset into `slots`, */
    size_t *mask;      /* and its size - 1 */
    Slot *slots;       /* code: the judgment's index */
    Slice *docs;       /* each judgment's document id */
    int64_t *labels;
} Judgments;

static void judgments_free(PyObject *capsule) {
    Judgments *j = PyCapsule_GetPointer(capsule, "rankscope.judgments");
    if (!j) return;
    interner_free(&j->queries);
    free(j->names);
    free(j->first);
    free(j->table_at);
    free(j->mask);
    free(j->slots);
    free(j->docs);
    free(j->labels);
    free(j);
}

static Py_ssize_t bytes_total(PyObject *list) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (!PyBytes_Check(item)) return -1;
        total += PyBytes_GET_SIZE(item);
    }
    return total;
}

/* judgments(query_ids, first, doc_ids, labels) -> capsule. query_ids: distinct bytes; first: int64 bytes,
 * len(query_ids) + 1 offsets; doc_ids: bytes, one per judgment, each query's from first[q] to first[q + 1]
 * (distinct within a query); labels: int64 bytes, one per judgment. */
static PyObject *judgments(PyObject *self, PyObject *args) {
    PyObject *query_ids, *doc_ids;
    Py_buffer first_view, label_view;
    if (!PyArg_ParseTuple(args, "O!y*O!y*", &PyList_Type, &query_ids, &first_view, &PyList_Type, &doc_ids,
                          &label_view))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = PyList_GET_SIZE(query_ids), n_docs = PyList_GET_SIZE(doc_ids);
    const int64_t *first = first_view.buf;
    Py_ssize_t query_bytes = bytes_total(query_ids), doc_bytes = bytes_total(doc_ids);
    if (query_bytes < 0 || doc_bytes < 0 || first_view.len != (n + 1) * (Py_ssize_t)sizeof(int64_t) ||
        label_view.len != n_docs * (Py_ssize_t)sizeof(int64_t) || first[0] != 0 || first[n] != n_docs) {
        PyErr_SetString(PyExc_ValueError, "judgments: query ids, n + 1 offsets, document ids, one label each");
        goto fail;
    }
    for (Py_ssize_t q = 0; q < n; q++) {
        if (first[q + 1] < first[q]) {
            PyErr_SetString(PyExc_ValueError, "judgments: offsets must not decrease");
            goto fail;
        }
    }
    Judgments *j = calloc(1, sizeof(Judgments));
    if (!j) {
        PyErr_NoMemory();
        goto fail;
    }
    result = PyCapsule_New(j, "rankscope.judgments", judgments_free);
    if (!result) {
        free(j);
        goto fail;
    }
    j->n = n;
    j->names = malloc(query_bytes + doc_bytes + 1);
    j->first = malloc((n + 1) * sizeof(Py_ssize_t));
    j->table_at = malloc((n + 1) * sizeof(size_t));
    j->mask = malloc((n + 1) * sizeof(size_t));
    j->docs = malloc((n_docs + 1) * sizeof(Slice));
    j->labels = malloc((n_docs + 1) * sizeof(int64_t));
    if (!j->names || !j->first || !j->table_at || !j->mask || !j->docs || !j->labels ||
        interner_init(&j->queries) < 0) {
        PyErr_NoMemory();
        goto fail;
    }
    memcpy(j->labels, label_view.buf, n_docs * sizeof(int64_t));
    char *at = j->names;
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *id = PyList_GET_ITEM(query_ids, q);
        Py_ssize_t len = PyBytes_GET_SIZE(id);
        memcpy(at, PyBytes_AS_STRING(id), len);
        uint64_t head = id_head(at, len);
        int64_t code = intern(&j->queries, at, len, head, hash_id(head, at, len));
        if (code != q) {
            if (code < 0) PyErr_NoMemory();
            else PyErr_SetString(PyExc_ValueError, "judgments: repeated query id");
            goto fail;
        }
        at += len;
    }
    size_t slots = 0;
    for (Py_ssize_t q = 0; q < n; q++) {
        size_t size = 2;
        while (size < 2 * (size_t)(first[q + 1] - first[q])) size *= 2;
        j->first[q] = first[q];
        j->table_at[q] = slots;
        j->mask[q] = size - 1;
        slots += size;
    }
    j->first[n] = first[n];
    j->slots = new_slots(slots ? slots : 1);
    if (!j->slots) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t q = 0; q < n; q++) {
        Slot *table = j->slots + j->table_at[q];
        for (Py_ssize_t k = first[q]; k < first[q + 1]; k++) {
            PyObject *id = PyList_GET_ITEM(doc_ids, k);
            Py_ssize_t len = PyBytes_GET_SIZE(id);
            memcpy(at, PyBytes_AS_STRING(id), len);
            j->docs[k] = (Slice){at, len};
            uint64_t head = id_head(at, len), h = hash_id(head, at, len);
            size_t slot = h & j->mask[q];
            while (table[slot].code >= 0) slot = (slot + 1) & j->mask[q];
            table[slot] = (Slot){slot_tag(h, len), (int32_t)k, head};
            at += len;
        }
    }
    PyBuffer_Release(&first_view);
    PyBuffer_Release(&label_view);
    return result;
fail:
    Py_XDECREF(result);
    PyBuffer_Release(&first_view);
    PyBuffer_Release(&label_view);
    return NULL;
}

/* The code of id `s` in `t`, or -1 (nothing added). */
static int64_t find_id(const Interner *t, const char *s, Py_ssize_t n, uint64_t head, uint64_t h) {
    uint32_t tag = slot_tag(h, n);
    for (size_t at = h & t->mask; t->slots[at].code >= 0; at = (at + 1) & t->mask) {
        const Slot *slot = &t->slots[at];
        if (slot->tag == tag && slot->head == head) {
            const Slice *known = &t->ids[slot->code];
            if (n <= 8 || (known->len == n && memcmp(known->start + 8, s + 8, n - 8) == 0)) return slot->code;
        }
    }
    return -1;
}

/* The judgment of document `s` for judged query `q`, or -1. */
static int64_t find_judgment(const Judgments *j, Py_ssize_t q, const char *s, Py_ssize_t n, uint64_t head,
                             uint64_t h) {
    const Slot *table = j->slots + j->table_at[q];
    size_t mask = j->mask[q];
    uint32_t tag = slot_tag(h, n);
    for (size_t at = h & mask; table[at].code >= 0; at = (at + 1) & mask) {
        if (table[at].tag == tag && table[at].head == head) {
            const Slice *known = &j->docs[table[at].code];
            if (n <= 8 || (known->len == n && memcmp(known->start + 8, s + 8, n - 8) == 0)) return table[at].code;
        }
    }
    return -1;
}

/* Byte order of two ids (shorter first when one is the other's prefix): Python's order of their str. */
static int id_order(const char *a, Py_ssize_t na, const char *b, Py_ssize_t nb) {
    int c = memcmp(a, b, na < nb ? (size_t)na : (size_t)nb);
    return c ? c : (na > nb) - (na < nb);
}

typedef struct {
    double score;
    const char *doc;
    Py_ssize_t len;
    int64_t judgment; /* -1: not judged */
} Row;

/* The tie rule's order: score descending, then doc_id descending. */
static int rank_order(const void *a, const void *b) {
    const Row *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return -id_order(x->doc, x->len, y->doc, y->len);
}

/* Documents seen under the current query: slots stamped with the query's number + 1, so none is cleared. */
typedef struct {
    uint64_t stamp;
    uint64_t head;
    const char *doc;
    Py_ssize_t len;
} Seen;

typedef struct {
    Seen *slots;
    size_t mask;
    uint64_t stamp;
    Py_ssize_t count; /* documents of the current query */
} SeenSet;

/* Add a document to the current query's set: 1 if it was there already, 0 if not, -1 out of memory. */
static int seen_add(SeenSet *set, const char *s, Py_ssize_t n, uint64_t head, uint64_t h) {
    if ((size_t)set->count * 2 >= set->mask) {
        size_t mask = set->mask * 2 + 1;
        Seen *slots = calloc(mask + 1, sizeof(Seen));
        if (!slots) return -1;
        for (size_t i = 0; i <= set->mask; i++) {
            const Seen *old = &set->slots[i];
            if (old->stamp != set->stamp) continue;
            size_t at = hash_id(old->head, old->doc, old->len) & mask;
            while (slots[at].stamp == set->stamp) at = (at + 1) & mask;
            slots[at] = *old;
        }
        free(set->slots);
        set->slots = slots;
        set->mask = mask;
    }
    size_t at = h & set->mask;
    for (; set->slots[at].stamp == set->stamp; at = (at + 1) & set->mask) {
        const Seen *slot = &set->slots[at];
        if (slot->head == head && slot->len == n && (n <= 8 || memcmp(slot->doc + 8, s + 8, n - 8) == 0)) return 1;
    }
    set->slots[at] = (Seen){set->stamp, head, s, n};
    set->count++;
    return 0;
}

typedef struct {
    Column row_query, row_score, query, pos, label, score;
} Outputs;

static int push_judged(Outputs *out, int64_t number, int64_t pos, int64_t label, double score) {
    return column_push(&out->query, &number) < 0 || column_push(&out->pos, &pos) < 0 ||
                   column_push(&out->label, &label) < 0 || column_push(&out->score, &score) < 0
               ? -1
               : 0;
}

/* Append one query's rows (rows[0..count), file order; `number`: the query's in the piece) and its judged
 * rows with their 0-based ranks to the outputs (rows may be reordered); -1 out of memory. */
static int emit_query(Outputs *out, const int64_t *labels, Row *rows, Py_ssize_t count, int64_t number) {
    int in_order = 1, judged = 0;
    for (Py_ssize_t r = 0; r < count; r++) {
        if (r && rows[r].score > rows[r - 1].score) in_order = 0;
        judged |= rows[r].judgment >= 0;
        if (column_push(&out->row_query, &number) < 0 || column_push(&out->row_score, &rows[r].score) < 0) return -1;
    }
    if (!judged) return 0;
    for (Py_ssize_t r = 0; r < count && in_order; r++) { /* stretches of equal scores short enough to count in */
        if (rows[r].judgment < 0) continue;
        Py_ssize_t a = r, b = r + 1;
        while (a > 0 && rows[a - 1].score == rows[r].score) a--;
        while (b < count && rows[b].score == rows[r].score) b++;
        in_order = b - a <= 64;
    }
    if (in_order) { /* a judged row's rank: the rows before its stretch of ties, and those of it ordered first */
        for (Py_ssize_t r = 0; r < count; r++) {
            if (rows[r].judgment < 0) continue;
            Py_ssize_t a = r, b = r + 1;
            while (a > 0 && rows[a - 1].score == rows[r].score) a--;
            while (b < count && rows[b].score == rows[r].score) b++;
            int64_t pos = a;
            for (Py_ssize_t k = a; k < b; k++) pos += id_order(rows[k].doc, rows[k].len, rows[r].doc, rows[r].len) > 0;
            if (push_judged(out, number, pos, labels[rows[r].judgment], rows[r].score) < 0) return -1;
        }
        return 0;
    }
    qsort(rows, count, sizeof(Row), rank_order);
    for (Py_ssize_t r = 0; r < count; r++) {
        if (rows[r].judgment >= 0 && push_judged(out, number, r, labels[rows[r].judgment], rows[r].score) < 0)
            return -1;
    }
    return 0;
}

/* judged(data, judgments, ignore_self) -> None on doubt (as scan()'s, or a (query, document) pair twice),
 * False when a query's lines are in two places of `data`, else (query ids of the piece in order of
 * appearance [bytes], each one's judged-query code or -1, then for the rows of judged queries: query
 * number, score; for their judged rows: query number, 0-based rank, label, score (numbers int64 bytes,
 * scores float64 bytes), and the count of rows read). With ignore_self, rows whose doc_id is their
 * query_id are dropped, after the repeat check. */
static PyObject *judged(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *capsule;
    int ignore_self;
    if (!PyArg_ParseTuple(args, "y*Op", &view, &capsule, &ignore_self)) return NULL;
    PyObject *result = NULL;
    Interner queries;
    Column codes = {NULL, 0, 0, sizeof(int64_t)};
    Outputs out = {{NULL, 0, 0, sizeof(int64_t)}, {NULL, 0, 0, sizeof(double)},  {NULL, 0, 0, sizeof(int64_t)},
                   {NULL, 0, 0, sizeof(int64_t)}, {NULL, 0, 0, sizeof(int64_t)}, {NULL, 0, 0, sizeof(double)}};
    Row *rows = NULL;
    Py_ssize_t n_rows = 0, cap_rows = 0, total = 0;
    SeenSet seen = {calloc(1024, sizeof(Seen)), 1023, 0, 0};
    int queries_ready = interner_init(&queries) == 0;
    Judgments *j = PyCapsule_GetPointer(capsule, "rankscope.judgments");
    if (!j) goto done;
    if (!queries_ready || !seen.slots) {
        PyErr_NoMemory();
        goto done;
    }
    const struct lconv *conventions = localeconv();
    int c_locale = conventions->decimal_point[0] == '.' && conventions->decimal_point[1] == '\0';
    const char *p = view.buf, *end = p + view.len;
    Slice f[6], current = {NULL, 0};
    int64_t number = -1, code = -1;
    int doubt = 0, interleaved = 0;
    while (p < end) {
        Py_ssize_t found = split_line(&p, end, f, 6);
        if (found == 0) continue;
        double score, unused;
        if (found < 6 || !plain_id(f[0].start, f[0].len) || !plain_id(f[2].start, f[2].len) ||
            (!simple_decimal(f[3].start, f[3].len, &unused) && !short_plain_number(f[3].start, f[3].len) &&
             !parse_float(f[3].start, f[3].len, c_locale, &unused)) ||
            (!simple_decimal(f[4].start, f[4].len, &score) && !parse_float(f[4].start, f[4].len, c_locale, &score))) {
            doubt = 1;
            break;
        }
        total++;
        const char *q = f[0].start, *d = f[2].start;
        Py_ssize_t nq = f[0].len, nd = f[2].len;
        if (!current.start || current.len != nq || memcmp(current.start, q, nq) != 0) {
            if (code >= 0 && emit_query(&out, j->labels, rows, n_rows, number) < 0) goto no_memory;
            n_rows = 0;
            uint64_t head = id_head_in(q, nq, end), h = hash_id(head, q, nq);
            Py_ssize_t before = queries.n;
            number = intern(&queries, q, nq, head, h);
            if (number < 0) goto no_memory;
            if (number < before) {
                interleaved = 1;
                break;
            }
            current = (Slice){q, nq};
            code = find_id(&j->queries, q, nq, head, h);
            if (column_push(&codes, &code) < 0) goto no_memory;
            seen.stamp++;
            seen.count = 0;
        }
        uint64_t head = id_head_in(d, nd, end), h = hash_id(head, d, nd);
        int again = seen_add(&seen, d, nd, head, h);
        if (again < 0) goto no_memory;
        if (again) {
            doubt = 1;
            break;
        }
        if (code < 0 || (ignore_self && nd == nq && memcmp(d, q, nd) == 0)) continue;
        if (n_rows == cap_rows) {
            Py_ssize_t cap = cap_rows ? cap_rows * 2 : 1024;
            Row *grown = realloc(rows, cap * sizeof(Row));
            if (!grown) goto no_memory;
            rows = grown;
            cap_rows = cap;
        }
        rows[n_rows++] = (Row){score, d, nd, find_judgment(j, code, d, nd, head, h)};
    }
    if (doubt || interleaved) {
        result = doubt ? Py_None : Py_False;
        Py_INCREF(result);
        goto done;
    }
    if (code >= 0 && emit_query(&out, j->labels, rows, n_rows, number) < 0) goto no_memory;
    PyObject *names = distinct_ids(&queries);
    if (!names) goto done;
    Column *columns[] = {&codes, &out.row_query, &out.row_score, &out.query, &out.pos, &out.label, &out.score};
    result = PyTuple_New(9);
    if (!result) {
        Py_DECREF(names);
        goto done;
    }
    PyTuple_SET_ITEM(result, 0, names);
    for (int c = 0; c < 7; c++) {
        PyObject *values = PyBytes_FromStringAndSize(columns[c]->data, columns[c]->n * columns[c]->item);
        if (!values) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, c + 1, values);
    }
    PyObject *count = PyLong_FromSsize_t(total);
    if (!count) {
        Py_CLEAR(result);
        goto done;
    }
    PyTuple_SET_ITEM(result, 8, count);
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    if (queries_ready) interner_free(&queries);
    free(codes.data);
    free(out.row_query.data);
    free(out.row_score.data);
    free(out.query.data);
    free(out.pos.data);
    free(out.label.data);
    free(out.score.data);
    free(rows);
    free(seen.slots);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "scan(data, kinds, trailing) -> kept columns, or None when a line is in doubt"},
    {"repeats", repeats, METH_VARARGS, "repeats(query_codes, doc_codes, n_docs) -> True, False or None (not grouped)"},
    {"judgments", judgments, METH_VARARGS, "judgments(query_ids, first, doc_ids, labels) -> the judgments judged() reads"},
    {"judged", judged, METH_VARARGS, "judged(data, judgments, ignore_self) -> a piece's rows for evaluation, False or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trec_scan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__trec_scan(void) {
    check_extended_precision();
    init_byte_classes();
    return PyModule_Create(&module);
}
