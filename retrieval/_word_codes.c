/* Words of many texts as codes into their distinct words: the hot loop of indexing.
 *
 * Why it exists: analysing a batch of 20,000 MS MARCO-like passages spent most of its
 * 2.5 s of CPU outside stemming: one regular-expression findall per text, a Python str per
 * token, an object array of all the tokens, and pandas' factorize over it. Here the
 * default tokenizer (``\w\w+`` after lowercasing) runs over ASCII texts byte by byte and
 * each token is looked up in a hash table of the batch's distinct words without becoming a
 * Python object; only a distinct word is made a str, once.
 *
 * code_words(items, lowercase) -> (codes, counts, distinct)
 *   items: a list whose elements are either an ASCII str, tokenised here as
 *          retrieval.analysis.Analyzer.split does with its default pattern (runs of 2 or more of
 *          [A-Za-z0-9_], which is what Python's \w matches among ASCII characters), lowercased
 *          first when `lowercase` is true; or a list of str, tokens already split (the caller's
 *          path for non-ASCII text and for other tokenizers), taken as they are.
 *   codes: bytes of int32, each token's index in `distinct`, all items' tokens in order;
 *   counts: bytes of int64, the number of tokens of each item;
 *   distinct: list of the distinct tokens in order of first appearance (pandas.factorize's order).
 * Two tokens are the same word when their UTF-8 bytes are equal, whichever path made them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t len, cap; /* in bytes */
} Buffer;

typedef struct {
    uint64_t hash;
    int32_t code; /* -1: empty */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    Buffer arena; /* every distinct word's bytes, back to back; a token is written at its end to be looked up */
    size_t *start; /* where word `code` starts in the arena */
    uint32_t *len;
    Py_ssize_t n, cap;
    PyObject *distinct; /* list of str */
} Words;

static int buffer_reserve(Buffer *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + extra) cap *= 2;
    char *data = realloc(b->data, cap);
    if (data == NULL) return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then murmur3's finaliser to spread the low bits */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static int words_init(Words *w) {
    memset(w, 0, sizeof(*w));
    w->mask = (1 << 16) - 1;
    w->slots = malloc((w->mask + 1) * sizeof(Slot));
    w->cap = 1 << 14;
    w->start = malloc(w->cap * sizeof(size_t));
    w->len = malloc(w->cap * sizeof(uint32_t));
    w->distinct = PyList_New(0);
    if (buffer_reserve(&w->arena, 1 << 20) < 0) return -1;
    if (!w->slots || !w->start || !w->len || !w->distinct) return -1;
    for (size_t i = 0; i <= w->mask; i++) w->slots[i].code = -1;
    return 0;
}

static void words_free(Words *w) {
    free(w->slots);
    free(w->arena.data);
    free(w->start);
    free(w->len);
    Py_XDECREF(w->distinct);
}

static int grow_table(Words *w) {
    size_t mask = w->mask * 2 + 1;
    Slot *slots = malloc((mask + 1) * sizeof(Slot));
    if (slots == NULL) return -1;
    for (size_t i = 0; i <= mask; i++) slots[i].code = -1;
    for (size_t i = 0; i <= w->mask; i++) {
        if (w->slots[i].code < 0) continue;
        size_t j = w->slots[i].hash & mask;
        while (slots[j].code >= 0) j = (j + 1) & mask;
        slots[j] = w->slots[i];
    }
    free(w->slots);
    w->slots = slots;
    w->mask = mask;
    return 0;
}

/* Code of the n bytes just written at the arena's end; a new word keeps them and gets `token` (a new
 * reference, or NULL to make a str of the bytes). Returns -1 on error. */
static int32_t lookup(Words *w, size_t n, PyObject *token) {
    const char *s = w->arena.data + w->arena.len;
    uint64_t h = hash_bytes(s, n);
    size_t j = h & w->mask;
    for (; w->slots[j].code >= 0; j = (j + 1) & w->mask) {
        int32_t c = w->slots[j].code;
        if (w->slots[j].hash == h && w->len[c] == n && memcmp(w->arena.data + w->start[c], s, n) == 0) {
            Py_XDECREF(token);
            return c;
        }
    }
    if (w->n == INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 - 1 distinct words in one batch");
        Py_XDECREF(token);
        return -1;
    }
    if (token == NULL) token = PyUnicode_DecodeASCII(s, (Py_ssize_t)n, NULL);
    if (token == NULL) return -1;
    int failed = PyList_Append(w->distinct, token);
    Py_DECREF(token);
    if (failed) return -1;
    if (w->n == w->cap) {
        w->cap *= 2;
        size_t *start = realloc(w->start, w->cap * sizeof(size_t));
        if (start != NULL) w->start = start;
        uint32_t *len = realloc(w->len, w->cap * sizeof(uint32_t));
        if (len != NULL) w->len = len;
        if (start == NULL || len == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    int32_t c = (int32_t)w->n++;
    w->start[c] = w->arena.len;
    w->len[c] = (uint32_t)n;
    w->arena.len += n;
    w->slots[j].hash = h;
    w->slots[j].code = c;
    if ((size_t)w->n * 2 > w->mask && grow_table(w) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return c;
}

static const unsigned char WORD = 1, UPPER = 2;
static unsigned char ascii_class[128];

static void init_classes(void) {
    for (int c = 0; c < 128; c++) {
        int upper = c >= 'A' && c <= 'Z';
        int word = upper || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        ascii_class[c] = (unsigned char)((word ? WORD : 0) | (upper ? UPPER : 0));
    }
}

static int push_code(Buffer *codes, int32_t c) {
    if (buffer_reserve(codes, sizeof(int32_t)) < 0) return -1;
    memcpy(codes->data + codes->len, &c, sizeof(int32_t));
    codes->len += sizeof(int32_t);
    return 0;
}

/* Tokens of one ASCII text (\w\w+, lowercased if asked); returns how many, or -1. */
static Py_ssize_t code_ascii(Words *w, Buffer *codes, const unsigned char *text, Py_ssize_t size, int lowercase) {
    Py_ssize_t count = 0, i = 0;
    while (i < size) {
        while (i < size && !(ascii_class[text[i]] & WORD)) i++;
        Py_ssize_t begin = i;
        while (i < size && (ascii_class[text[i]] & WORD)) i++;
        size_t n = (size_t)(i - begin);
        if (n < 2) continue;
        if (buffer_reserve(&w->arena, n) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        char *out = w->arena.data + w->arena.len;
        for (size_t k = 0; k < n; k++) {
            unsigned char ch = text[begin + k];
            out[k] = (char)(lowercase && (ascii_class[ch] & UPPER) ? ch + ('a' - 'A') : ch);
        }
        int32_t c = lookup(w, n, NULL);
        if (c < 0 || push_code(codes, c) < 0) return -1;
        count++;
    }
    return count;
}

/* Tokens already split (a list of str), taken as they are; returns how many, or -1. */
static Py_ssize_t code_tokens(Words *w, Buffer *codes, PyObject *tokens) {
    Py_ssize_t count = PyList_GET_SIZE(tokens);
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *token = PyList_GET_ITEM(tokens, k);
        if (!PyUnicode_Check(token)) {
            PyErr_Format(PyExc_TypeError, "a token must be a str, not %.100s", Py_TYPE(token)->tp_name);
            return -1;
        }
        Py_ssize_t n;
        const char *utf8 = PyUnicode_AsUTF8AndSize(token, &n);
        if (utf8 == NULL || buffer_reserve(&w->arena, (size_t)n) < 0) {
            if (utf8 != NULL) PyErr_NoMemory();
            return -1;
        }
        memcpy(w->arena.data + w->arena.len, utf8, (size_t)n);
        Py_INCREF(token);
        int32_t c = lookup(w, (size_t)n, token);
        if (c < 0 || push_code(codes, c) < 0) return -1;
    }
    return count;
}

static PyObject *code_words(PyObject *self, PyObject *args) {
    PyObject *items;
    int lowercase;
    if (!PyArg_ParseTuple(args, "O!p", &PyList_Type, &items, &lowercase)) return NULL;
    Py_ssize_t n_items = PyList_GET_SIZE(items);
    Words w;
    Buffer codes = {0};
    PyObject *counts = PyBytes_FromStringAndSize(NULL, n_items * (Py_ssize_t)sizeof(int64_t));
    if (counts == NULL) return NULL;
    if (words_init(&w) < 0) {
        words_free(&w);
        Py_DECREF(counts);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    int64_t *count = (int64_t *)PyBytes_AS_STRING(counts);
    for (Py_ssize_t i = 0; i < n_items; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        Py_ssize_t got;
        if (PyUnicode_Check(item) && PyUnicode_IS_ASCII(item)) {
            got = code_ascii(&w, &codes, PyUnicode_1BYTE_DATA(item), PyUnicode_GET_LENGTH(item), lowercase);
        } else if (PyList_Check(item)) {
            got = code_tokens(&w, &codes, item);
        } else {
            PyErr_Format(PyExc_TypeError, "item %zd: expected an ASCII str or a list of tokens, got %.100s", i,
                         Py_TYPE(item)->tp_name);
            got = -1;
        }
        if (got < 0) {
            free(codes.data);
            words_free(&w);
            Py_DECREF(counts);
            return NULL;
        }
        count[i] = got;
    }
    PyObject *result = Py_BuildValue("(y#NO)", codes.data ? codes.data : "", (Py_ssize_t)codes.len, counts, w.distinct);
    free(codes.data);
    words_free(&w);
    return result;
}

static PyMethodDef methods[] = {
    {"code_words", code_words, METH_VARARGS,
     "code_words(items, lowercase) -> (int32 codes bytes, int64 counts bytes, distinct words list)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_word_codes", NULL, -1, methods};

PyMODINIT_FUNC PyInit__word_codes(void) {
    init_classes();
    return PyModule_Create(&module);
}
