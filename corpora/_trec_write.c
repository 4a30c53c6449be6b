/* The lines of a TREC run file, made in one pass (rankscope.corpora.trec.write_trec_run).
 *
 * ``run_lines(query_ids, doc_ids, ranks, scores, tail, shortest=None)`` gives the text
 * ``f"{q} Q0 {d} {k} {s!r}{tail}"`` of every row, joined: the bytes of the f-string loop it replaces
 * (tests/corpora/test_trec_write.py), with no Python object made per row. A score is written by
 * PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0), which is what ``repr`` of a float calls: the
 * shortest text that reads back to the same double, closest to it.
 *
 * That call (David Gay's dtoa, with big-number arithmetic) costs about 0.9 us a score, most of writing
 * a run. ``shortest``, when given, is the JSON array of the same scores as orjson writes it (Ryu: the
 * same shortest, closest digits, 0.05 us a score). A number it writes positionally in the range where
 * ``repr`` does too (1e-4 <= |x| < 1e16: at most 16 integer digits, not 0.0000...) is already
 * ``repr``'s text and is copied; any other (an exponent, null for NaN and infinities) is written by
 * PyOS_double_to_string as without it.
 *
 * CPython API only. Ids must be str, ranks int, scores float: anything else is a TypeError, never a
 * different text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buffer;

static int reserve(Buffer *buffer, Py_ssize_t more) {
    if (buffer->len + more <= buffer->cap) {
        return 0;
    }
    Py_ssize_t cap = buffer->cap ? buffer->cap : 1 << 16;
    while (cap < buffer->len + more) {
        cap *= 2;
    }
    char *data = PyMem_Realloc(buffer->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buffer->data = data;
    buffer->cap = cap;
    return 0;
}

static int put(Buffer *buffer, const char *text, Py_ssize_t size) {
    if (reserve(buffer, size) < 0) {
        return -1;
    }
    memcpy(buffer->data + buffer->len, text, (size_t)size);
    buffer->len += size;
    return 0;
}

static int put_str(Buffer *buffer, PyObject *item, const char *what) {
    if (!PyUnicode_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what, Py_TYPE(item)->tp_name);
        return -1;
    }
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(item, &size);
    return text == NULL ? -1 : put(buffer, text, size);
}

/* Whether orjson's text of a number, ``text[0:size]``, is what ``repr`` writes: ``-?`` then ``0.`` not
 * followed by ``0000``, or 1 to 16 digits (the first not 0) and ``.``; then digits only. */
static int is_repr_text(const char *text, Py_ssize_t size) {
    Py_ssize_t i = text[0] == '-';
    if (i + 2 < size && text[i] == '0' && text[i + 1] == '.') {
        if (i + 6 <= size && memcmp(text + i + 2, "0000", 4) == 0) {
            return 0;
        }
        i += 2;
    } else {
        Py_ssize_t start = i;
        if (i >= size || text[i] < '1' || text[i] > '9') {
            return 0;
        }
        while (i < size && text[i] >= '0' && text[i] <= '9') {
            i++;
        }
        if (i - start > 16 || i + 1 >= size || text[i] != '.') {
            return 0;
        }
        i++;
    }
    for (; i < size; i++) {
        if (text[i] < '0' || text[i] > '9') {
            return 0;
        }
    }
    return 1;
}

static PyObject *run_lines(PyObject *self, PyObject *args) {
    PyObject *queries, *docs, *ranks, *scores, *tail;
    Py_buffer shortest = {NULL, NULL};
    if (!PyArg_ParseTuple(args, "OOOOU|y*", &queries, &docs, &ranks, &scores, &tail, &shortest)) {
        return NULL;
    }
    const char *json = shortest.buf; /* the next number's text in orjson's array, past its '[' or ',' */
    const char *json_end = json == NULL ? NULL : json + shortest.len;
    if (json != NULL && (shortest.len < 2 || json[0] != '[' || json_end[-1] != ']')) {
        PyErr_SetString(PyExc_ValueError, "shortest must be a JSON array of the scores");
        PyBuffer_Release(&shortest);
        return NULL;
    }
    if (json != NULL) {
        json++;
        json_end--; /* the closing ']' */
    }
    PyObject *columns[4] = {NULL, NULL, NULL, NULL};
    PyObject *given[4] = {queries, docs, ranks, scores};
    const char *names[4] = {"query ids", "doc ids", "ranks", "scores"};
    Buffer buffer = {NULL, 0, 0};
    PyObject *result = NULL;
    for (int c = 0; c < 4; c++) {
        columns[c] = PySequence_Fast(given[c], names[c]);
        if (columns[c] == NULL) {
            goto done;
        }
    }
    Py_ssize_t rows = PySequence_Fast_GET_SIZE(columns[0]);
    for (int c = 1; c < 4; c++) {
        if (PySequence_Fast_GET_SIZE(columns[c]) != rows) {
            PyErr_SetString(PyExc_ValueError, "query ids, doc ids, ranks and scores differ in length");
            goto done;
        }
    }
    Py_ssize_t tail_size;
    const char *tail_text = PyUnicode_AsUTF8AndSize(tail, &tail_size);
    if (tail_text == NULL) {
        goto done;
    }
    PyObject **q = PySequence_Fast_ITEMS(columns[0]);
    PyObject **d = PySequence_Fast_ITEMS(columns[1]);
    PyObject **k = PySequence_Fast_ITEMS(columns[2]);
    PyObject **s = PySequence_Fast_ITEMS(columns[3]);
    for (Py_ssize_t i = 0; i < rows; i++) {
        if (!PyLong_Check(k[i])) {
            PyErr_Format(PyExc_TypeError, "ranks must be int, not %.100s", Py_TYPE(k[i])->tp_name);
            goto done;
        }
        if (!PyFloat_Check(s[i])) {
            PyErr_Format(PyExc_TypeError, "scores must be float, not %.100s", Py_TYPE(s[i])->tp_name);
            goto done;
        }
        long long rank = PyLong_AsLongLong(k[i]);
        if (rank == -1 && PyErr_Occurred()) {
            goto done;
        }
        char number[32];
        int number_size = snprintf(number, sizeof number, "%lld", rank);
        const char *text = NULL; /* the score's text: orjson's when it is repr's, else PyOS_double_to_string's */
        Py_ssize_t text_size = 0;
        if (json != NULL) {
            const char *comma = json;
            while (comma < json_end && *comma != ',') {
                comma++;
            }
            if (comma == json) {
                PyErr_SetString(PyExc_ValueError, "shortest holds fewer numbers than there are scores");
                goto done;
            }
            if (is_repr_text(json, comma - json)) {
                text = json;
                text_size = comma - json;
            }
            json = comma < json_end ? comma + 1 : comma;
        }
        char *made = NULL;
        if (text == NULL) {
            made = PyOS_double_to_string(PyFloat_AS_DOUBLE(s[i]), 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
            if (made == NULL) {
                goto done;
            }
            text = made;
            text_size = (Py_ssize_t)strlen(made);
        }
        int failed = put_str(&buffer, q[i], "query ids") < 0 || put(&buffer, " Q0 ", 4) < 0 ||
                     put_str(&buffer, d[i], "doc ids") < 0 || put(&buffer, " ", 1) < 0 ||
                     put(&buffer, number, number_size) < 0 || put(&buffer, " ", 1) < 0 ||
                     put(&buffer, text, text_size) < 0 || put(&buffer, tail_text, tail_size) < 0;
        PyMem_Free(made);
        if (failed) {
            goto done;
        }
    }
    if (json != NULL && json != json_end) {
        PyErr_SetString(PyExc_ValueError, "shortest holds more numbers than there are scores");
        goto done;
    }
    result = PyUnicode_DecodeUTF8(buffer.data ? buffer.data : "", buffer.len, "strict");
done:
    for (int c = 0; c < 4; c++) {
        Py_XDECREF(columns[c]);
    }
    if (shortest.obj != NULL) {
        PyBuffer_Release(&shortest);
    }
    PyMem_Free(buffer.data);
    return result;
}

static PyMethodDef methods[] = {
    {"run_lines", run_lines, METH_VARARGS,
     "run_lines(query_ids, doc_ids, ranks, scores, tail, shortest=None) -> str: f'{q} Q0 {d} {k} {s!r}{tail}' of "
     "every row, joined; shortest: orjson's JSON array of the scores, whose repr-identical texts are copied."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trec_write", NULL, -1, methods};

PyMODINIT_FUNC PyInit__trec_write(void) { return PyModule_Create(&module); }
