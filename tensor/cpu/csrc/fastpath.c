/* The eager fast path in C (tensor/cpu/fastpath.py installs it; the Python code it shortcuts
 * stays the reference and the fallback for everything else).
 *
 * 1. Storage.__del__ for the common case: a block of the process-wide CPU caching allocator
 *    dies and parks in the allocator's exact-size cache, as CachingAllocator.free does, on the
 *    same Python objects (its `_quick` lists, counters and Block slots), so statistics and
 *    every later Python path see the same state.
 * 2. new_storage(nbytes): a Storage from that exact-size cache (malloc's hot path, mirrored).
 * 3. Tensor.__add__/__sub__/__mul__/__truediv__/__neg__ when the Python fast path
 *    (elementwise._fast) would run: contiguous operands of one shape, dtype and device (the CPU)
 *    or a Python scalar, no autograd involvement (no input requires grad, has a tangent or is a
 *    tracked view) and no capture running. Its kernels come from a table the Python fast path
 *    fills on its first resolution of an (op, dtype, operand kind), so the C path runs only
 *    what Python has already decided, with the same kernel and the same result.
 *
 * Any check that fails, any allocator state that is not the plain one (another thread inside
 * the allocator, queued frees, an empty cache) hands the call to the Python code unchanged.
 * Everything here runs with the GIL held and calls no Python code between a check and the
 * mutation it guards.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

/* slot offsets, read from the classes' member descriptors at install */
enum { T_STORAGE, T_SHAPE, T_STRIDES, T_OFFSET, T_DTYPE, T_CONTIG, T_RO, T_RG, T_GRAD, T_GRADFN,
       T_AG, T_BASE, T_N };
static const char *T_NAMES[T_N] = {"_storage", "_shape", "_strides", "_offset", "_dtype", "_contig",
                                   "_ro", "_requires_grad", "grad", "grad_fn", "_ag", "_base"};
enum { S_PTR, S_NBYTES, S_DEVICE, S_BLOCK, S_ALLOC, S_OWNER, S_RELEASE, S_VERSION, S_STREAMS,
       S_READONLY, S_N };
static const char *S_NAMES[S_N] = {"ptr", "nbytes", "device", "_block", "_alloc", "owner",
                                   "release", "version", "streams", "readonly"};
enum { B_ALLOCATED, B_PTR, B_QUICK, B_REQUESTED, B_SEGMENT, B_SIZE, B_STREAM, B_N };
static const char *B_NAMES[B_N] = {"allocated", "ptr", "quick", "requested", "segment", "size",
                                   "stream"};
static Py_ssize_t toff[T_N], soff[S_N], boff[B_N], seg_ptr_off;

static PyTypeObject *Tensor_t, *Storage_t, *Block_t;
static PyObject *cpu_alloc;      /* the CachingAllocator instance */
static PyObject *alloc_dict;     /* its __dict__ (counters, _quick, _segments, ...) */
static PyObject *busy;           /* tensor.memory._BUSY: thread ident -> depth */
static PyObject *hook_dict;      /* tensor._hook's globals (capture) */
static PyObject *kernels_dict;   /* tensor.cpu.kernels' globals (_num_threads) */
static PyObject *cpu_device;
static PyObject *py_storage_del; /* the Python Storage.__del__ */
static PyObject *py_new_storage; /* the backend's new_storage(nbytes, device) */
static long long quick_max;
/* calls served here (op_hits, storage_hits, del_hits) and handed to Python (op_misses): tests
 * check that the C path runs where it should */
static unsigned long long op_hits, op_misses, storage_hits, del_hits;

/* interned names */
static PyObject *s_capture, *s_threads, *s_quick, *s_segments, *s_adopt, *s_pending,
    *s_allocated, *s_allocated_peak, *s_requested, *s_requested_peak, *s_active, *s_active_peak,
    *s_num_mallocs, *s_num_frees;

static int slot_offsets(PyTypeObject *t, const char **names, int n, Py_ssize_t *out) {
    for (int i = 0; i < n; i++) {
        PyObject *d = PyObject_GetAttrString((PyObject *)t, names[i]);
        if (!d)
            return -1;
        if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
            PyErr_Format(PyExc_TypeError, "fastpath: %s.%s is not a slot", t->tp_name, names[i]);
            Py_DECREF(d);
            return -1;
        }
        out[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
    }
    return 0;
}

static inline void set_slot(PyObject *o, Py_ssize_t off, PyObject *v) { /* steals v */
    PyObject *old = SLOT(o, off);
    SLOT(o, off) = v;
    Py_XDECREF(old);
}

static inline void set_slot_ref(PyObject *o, Py_ssize_t off, PyObject *v) {
    Py_INCREF(v);
    set_slot(o, off, v);
}

#include "fp_alloc.h"   /* Storage.__del__, new_storage: the allocator's hot path */

/* ------------------------------------------------------------------ elementwise fast path */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG, N_OPS };
static const char *OP_NAMES[N_OPS] = {"add", "subtract", "multiply", "true_divide", "negative"};
#define N_DT 32
enum { K_TENSOR, K_FLOAT, K_INT, N_KINDS };   /* the other operand: same-dtype tensor, float, int */
enum { C_OTHER, C_F32, C_F64, C_I32, C_I64 }; /* dtypes whose Python scalars C encodes */

typedef struct { void *fn; PyObject *od; int64_t osz; int diff; } entry_t;   /* diff: od float */
static entry_t table[N_OPS][N_DT][N_KINDS];
static PyObject *dtypes[N_DT];
static int64_t itemsize[N_DT];
static int dcode[N_DT];
static int n_dtypes;
static PyObject *py_ops[N_OPS];   /* the Python dunder methods: the fallback */

typedef void (*bin_fn)(int, const int64_t *, intptr_t, intptr_t, intptr_t, int);
typedef void (*un_fn)(int, const int64_t *, intptr_t, intptr_t, int);

static inline int dtype_index(PyObject *d) {
    for (int i = 0; i < n_dtypes; i++)
        if (dtypes[i] == d)
            return i;
    return -1;
}

/* A plain operand: an exact Tensor on the CPU, contiguous, not a tracked view (autograd would
 * refresh it first). Its element count goes to *n, its address to *ptr; *ag is set when it
 * takes part in autograd (requires grad or has autograd state). */
static int plain_tensor(PyObject *t, int64_t isz, int64_t *n, intptr_t *ptr, int *ag) {
    if (!Py_IS_TYPE(t, Tensor_t))
        return 0;
    PyObject *st = SLOT(t, toff[T_STORAGE]), *shape = SLOT(t, toff[T_SHAPE]);
    if (!st || !shape || !PyTuple_CheckExact(shape) || SLOT(t, toff[T_BASE]) != Py_None ||
        !Py_IS_TYPE(st, Storage_t) || SLOT(st, soff[S_DEVICE]) != cpu_device)
        return 0;
    PyObject *contig = SLOT(t, toff[T_CONTIG]);
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    int64_t count = 1;
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *s = PyTuple_GET_ITEM(shape, i);
        if (!PyLong_CheckExact(s))
            return 0;
        count *= PyLong_AsLongLong(s);
    }
    if (contig != Py_True) {   /* is_contiguous(), computed and cached as the Python one does */
        PyObject *strides = SLOT(t, toff[T_STRIDES]);
        if (contig != Py_None || !strides || !PyTuple_CheckExact(strides) ||
            PyTuple_GET_SIZE(strides) != nd)
            return 0;
        int c = 1;
        if (count != 0) {
            int64_t acc = 1;
            for (Py_ssize_t i = nd - 1; i >= 0; i--) {
                int64_t sz = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
                int64_t sd = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    return 0;
                }
                if (sz != 1 && sd != acc) {
                    c = 0;
                    break;
                }
                acc *= sz;
            }
        }
        set_slot_ref(t, toff[T_CONTIG], c ? Py_True : Py_False);
        if (!c)
            return 0;
    }
    long long base = long_slot(st, soff[S_PTR]), off = long_slot(t, toff[T_OFFSET]);
    if (base < 0 || off < 0 || PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *n = count;
    *ptr = (intptr_t)(base + off * isz);
    *ag |= SLOT(t, toff[T_RG]) != Py_False || SLOT(t, toff[T_AG]) != Py_None;
    return 1;
}

/* A Python float or int encoded as one element of dtype code `code` (as scalar_bytes would);
 * 0: not here (the Python path encodes it, or raises). */
static int encode_scalar(PyObject *v, int code, int kind, char *buf) {
    if (kind == K_FLOAT) {
        double x = PyFloat_AS_DOUBLE(v);
        if (code == C_F64) { memcpy(buf, &x, 8); return 1; }
        if (code == C_F32) {
            float y = (float)x;
            if (isinf(y) && !isinf(x))
                return 0;   /* past float32: the Python path (inf, as NumPy) */
            memcpy(buf, &y, 4);
            return 1;
        }
        return 0;
    }
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (i == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    switch (code) {
    case C_F64: { if (i > (1LL << 53) || i < -(1LL << 53)) return 0;
                  double x = (double)i; memcpy(buf, &x, 8); return 1; }
    case C_F32: { if (i > (1LL << 24) || i < -(1LL << 24)) return 0;
                  float x = (float)i; memcpy(buf, &x, 4); return 1; }
    case C_I64: memcpy(buf, &i, 8); return 1;
    case C_I32: { if (i > INT32_MAX || i < INT32_MIN) return 0;
                  int32_t x = (int32_t)i; memcpy(buf, &x, 4); return 1; }
    }
    return 0;
}

static inline int threads(void) {
    PyObject *v = PyDict_GetItemWithError(kernels_dict, s_threads);
    long r = v ? PyLong_AsLong(v) : 1;
    if (r == -1 && PyErr_Occurred()) { PyErr_Clear(); r = 1; }
    return (int)r;
}

static PyObject *new_tensor(PyObject *st, PyObject *like, PyObject *od) {
    PyObject *t = Tensor_t->tp_alloc(Tensor_t, 0);
    if (!t) {
        Py_DECREF(st);
        return NULL;
    }
    SLOT(t, toff[T_STORAGE]) = st;
    PyObject *v;
    v = SLOT(like, toff[T_SHAPE]); Py_INCREF(v); SLOT(t, toff[T_SHAPE]) = v;
    v = SLOT(like, toff[T_STRIDES]); Py_INCREF(v); SLOT(t, toff[T_STRIDES]) = v;
    SLOT(t, toff[T_OFFSET]) = PyLong_FromLong(0);
    Py_INCREF(od); SLOT(t, toff[T_DTYPE]) = od;
    static const int nones[] = {T_CONTIG, T_RO, T_GRAD, T_GRADFN, T_AG, T_BASE};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(Py_None);
        SLOT(t, toff[nones[i]]) = Py_None;
    }
    Py_INCREF(Py_False); SLOT(t, toff[T_RG]) = Py_False;
    return t;
}


#include "fp_graph.h"   /* autograd's record for these ops */

#define GIL_FREE_ABOVE 32768   /* elements: a longer kernel lets other Python threads run */

static PyObject *fast_op(int op, PyObject *a, PyObject *b) {
    if (capture_running())
        goto python;
    PyObject *d = Py_IS_TYPE(a, Tensor_t) ? SLOT(a, toff[T_DTYPE]) : NULL;
    int di = d ? dtype_index(d) : -1;
    if (di < 0)
        goto python;
    int64_t n, nb;
    intptr_t pa, pb = 0;
    char sbuf[16];
    int kind = K_TENSOR, ag = 0, need = 0;
    if (!plain_tensor(a, itemsize[di], &n, &pa, &ag))
        goto python;
    if (b == NULL) {
        /* unary */
    } else if (Py_IS_TYPE(b, Tensor_t)) {
        if (SLOT(b, toff[T_DTYPE]) != d || !plain_tensor(b, itemsize[di], &nb, &pb, &ag))
            goto python;
        PyObject *sa = SLOT(a, toff[T_SHAPE]), *sb = SLOT(b, toff[T_SHAPE]);
        if (sa != sb) {
            int eq = PyObject_RichCompareBool(sa, sb, Py_EQ);
            if (eq != 1) {
                PyErr_Clear();
                goto python;
            }
        }
    } else if (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) {
        kind = PyFloat_CheckExact(b) ? K_FLOAT : K_INT;
        if (!encode_scalar(b, dcode[di], kind, sbuf))
            goto python;
        pb = (intptr_t)sbuf;
    } else {
        goto python;
    }
    entry_t *e = &table[op][di][kind];
    if (!e->fn || n == 0)
        goto python;
    if (ag && (need = graph_need(a, b)) < 0)
        goto python;
    if (need && !e->diff)   /* a non-differentiable output: record's checks, in Python */
        goto python;
    PyObject *st = storage_of(n * e->osz);
    if (!st)
        return NULL;
    long long out = long_slot(st, soff[S_PTR]);
    int64_t isz = itemsize[di];
    int nt = threads();
    if (b == NULL) {
        int64_t meta[3] = {n, e->osz, isz};
        if (n > GIL_FREE_ABOVE) {
            Py_BEGIN_ALLOW_THREADS
            ((un_fn)e->fn)(1, meta, (intptr_t)out, pa, nt);
            Py_END_ALLOW_THREADS
        } else {
            ((un_fn)e->fn)(1, meta, (intptr_t)out, pa, nt);
        }
    } else {
        int64_t meta[4] = {n, e->osz, isz, kind == K_TENSOR ? isz : 0};
        if (n > GIL_FREE_ABOVE) {
            Py_BEGIN_ALLOW_THREADS
            ((bin_fn)e->fn)(1, meta, (intptr_t)out, pa, pb, nt);
            Py_END_ALLOW_THREADS
        } else {
            ((bin_fn)e->fn)(1, meta, (intptr_t)out, pa, pb, nt);
        }
    }
    op_hits++;
    PyObject *res = new_tensor(st, a, e->od);
    if (res && need && attach(op, a, b, res) < 0)
        Py_CLEAR(res);
    return res;
python:
    PyErr_Clear();
    op_misses++;
    if (b == NULL)
        return PyObject_CallOneArg(py_ops[op], a);
    PyObject *args[2] = {a, b};
    return PyObject_Vectorcall(py_ops[op], args, 2, NULL);
}

static PyObject *fp_add(PyObject *a, PyObject *b) { return fast_op(OP_ADD, a, b); }
static PyObject *fp_sub(PyObject *a, PyObject *b) { return fast_op(OP_SUB, a, b); }
static PyObject *fp_mul(PyObject *a, PyObject *b) { return fast_op(OP_MUL, a, b); }
static PyObject *fp_div(PyObject *a, PyObject *b) { return fast_op(OP_DIV, a, b); }
static PyObject *fp_neg(PyObject *a, PyObject *unused) { return fast_op(OP_NEG, a, NULL); }

static PyMethodDef DUNDERS[N_OPS] = {
    {"__add__", fp_add, METH_O, "self + other (C fast path; else the Python operator)"},
    {"__sub__", fp_sub, METH_O, "self - other (C fast path; else the Python operator)"},
    {"__mul__", fp_mul, METH_O, "self * other (C fast path; else the Python operator)"},
    {"__truediv__", fp_div, METH_O, "self / other (C fast path; else the Python operator)"},
    {"__neg__", fp_neg, METH_NOARGS, "-self (C fast path; else the Python operator)"},
};
static PyMethodDef DEL_DEF = {"__del__", fp_storage_del, METH_NOARGS,
                              "Give the memory back (C fast path; else the Python finalizer)"};

/* register(op name, dtype, itemsize, dtype code, kind, out dtype, out itemsize, address,
 *          out dtype carries gradients) */
static PyObject *fp_register(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *d, *od;
    long long isz, osz;
    int code, kind, diff;
    unsigned long long addr;
    if (!PyArg_ParseTuple(args, "sOLiiOLKp", &name, &d, &isz, &code, &kind, &od, &osz, &addr,
                          &diff))
        return NULL;
    int op = -1;
    for (int i = 0; i < N_OPS; i++)
        if (strcmp(name, OP_NAMES[i]) == 0)
            op = i;
    if (op < 0 || kind < 0 || kind >= N_KINDS || addr == 0)
        Py_RETURN_FALSE;
    int di = dtype_index(d);
    if (di < 0) {
        if (n_dtypes == N_DT)
            Py_RETURN_FALSE;
        di = n_dtypes++;
        Py_INCREF(d);
        dtypes[di] = d;
        itemsize[di] = isz;
        dcode[di] = code;
    }
    entry_t *e = &table[op][di][kind];
    Py_INCREF(od);
    Py_XSETREF(e->od, od);
    e->osz = osz;
    e->diff = diff;
    e->fn = (void *)(uintptr_t)addr;
    Py_RETURN_TRUE;
}

static PyObject *get_dict(PyObject *o) {
    PyObject *d = PyObject_GetAttrString(o, "__dict__");
    if (d && !PyDict_CheckExact(d)) {
        PyErr_SetString(PyExc_TypeError, "fastpath: object without a plain __dict__");
        Py_CLEAR(d);
    }
    return d;
}

/* install(Tensor, Storage, Block, Segment, allocator, busy, hook, kernels, cpu, new_storage,
 *         quick_max): read the slot offsets, then put the C methods on the classes. */
static PyObject *fp_install(PyObject *self, PyObject *args) {
    PyObject *tt, *stt, *bt, *segt, *alloc, *bz, *hook, *kern, *cpu, *ns;
    long long qmax;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OO!OOOOL", &PyType_Type, &tt, &PyType_Type, &stt,
                          &PyType_Type, &bt, &PyType_Type, &segt, &alloc, &PyDict_Type, &bz,
                          &hook, &kern, &cpu, &ns, &qmax))
        return NULL;
    Py_ssize_t segoff[1];
    static const char *SEG_NAMES[1] = {"ptr"};
    if (slot_offsets((PyTypeObject *)tt, T_NAMES, T_N, toff) < 0 ||
        slot_offsets((PyTypeObject *)stt, S_NAMES, S_N, soff) < 0 ||
        slot_offsets((PyTypeObject *)bt, B_NAMES, B_N, boff) < 0 ||
        slot_offsets((PyTypeObject *)segt, SEG_NAMES, 1, segoff) < 0)
        return NULL;
    seg_ptr_off = segoff[0];
    PyObject *ad = get_dict(alloc), *hd = get_dict(hook), *kd = get_dict(kern);
    if (!ad || !hd || !kd)
        return NULL;
    PyObject *pydel = PyObject_GetAttrString(stt, "__del__");
    if (!pydel)
        return NULL;
    PyObject *pyops[N_OPS];
    for (int i = 0; i < N_OPS; i++) {
        pyops[i] = PyObject_GetAttrString(tt, DUNDERS[i].ml_name);
        if (!pyops[i] || Py_IS_TYPE(pyops[i], &PyMethodDescr_Type)) {   /* installed twice */
            PyErr_SetString(PyExc_RuntimeError, "fastpath: already installed");
            return NULL;
        }
    }
    Tensor_t = (PyTypeObject *)tt; Storage_t = (PyTypeObject *)stt; Block_t = (PyTypeObject *)bt;
    Py_INCREF(tt); Py_INCREF(stt); Py_INCREF(bt);
    cpu_alloc = alloc; Py_INCREF(alloc);
    alloc_dict = ad; hook_dict = hd; kernels_dict = kd;
    busy = bz; Py_INCREF(bz);
    cpu_device = cpu; Py_INCREF(cpu);
    py_new_storage = ns; Py_INCREF(ns);
    py_storage_del = pydel;
    quick_max = qmax;
    for (int i = 0; i < N_OPS; i++)
        py_ops[i] = pyops[i];
#define INTERN(var, s) if (!(var = PyUnicode_InternFromString(s))) return NULL;
    INTERN(s_capture, "capture") INTERN(s_threads, "_num_threads") INTERN(s_quick, "_quick")
    INTERN(s_segments, "_segments") INTERN(s_adopt, "_adopt") INTERN(s_pending, "_pending")
    INTERN(s_allocated, "_allocated") INTERN(s_allocated_peak, "_allocated_peak")
    INTERN(s_requested, "_requested") INTERN(s_requested_peak, "_requested_peak")
    INTERN(s_active, "_active") INTERN(s_active_peak, "_active_peak")
    INTERN(s_num_mallocs, "_num_mallocs") INTERN(s_num_frees, "_num_frees")
    INTERN(s_fast_graph, "fast_graph") INTERN(s_record, "record") INTERN(s_depth, "depth")
    INTERN(s_grad_enabled, "grad_enabled") INTERN(s_fw_level, "fw_level") INTERN(s_out, "out")
    INTERN(s_args, "args") INTERN(s_kwargs, "kwargs") INTERN(s_needs, "needs")
    INTERN(s_saved_tensors, "saved_tensors") INTERN(s_old, "old")
    for (int i = 0; i < N_OPS; i++)
        INTERN(op_names[i], OP_NAMES[i])
    if (!(empty_tuple = PyTuple_New(0)))
        return NULL;
    PyObject *del = PyDescr_NewMethod(Storage_t, &DEL_DEF);
    if (!del || PyObject_SetAttrString(stt, "__del__", del) < 0)
        return NULL;
    Py_DECREF(del);
    for (int i = 0; i < N_OPS; i++) {
        PyObject *m = PyDescr_NewMethod(Tensor_t, &DUNDERS[i]);
        if (!m || PyObject_SetAttrString(tt, DUNDERS[i].ml_name, m) < 0)
            return NULL;
        Py_DECREF(m);
    }
    Py_RETURN_NONE;
}

static PyObject *fp_counters(PyObject *self, PyObject *unused) {
    return Py_BuildValue("{sKsKsKsK}", "op_hits", op_hits, "op_misses", op_misses,
                         "storage_hits", storage_hits, "del_hits", del_hits);
}

static PyMethodDef METHODS[] = {
    {"counters", fp_counters, METH_NOARGS, "Calls served in C and handed to Python, so far."},
    {"install", fp_install, METH_VARARGS, "Put the C fast paths on Tensor and Storage."},
    {"register", fp_register, METH_VARARGS, "Enter an (op, dtype, operand kind) kernel."},
    {"new_storage", fp_new_storage, METH_O, "A CPU Storage from the exact-size cache, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "fastpath", NULL, -1, METHODS};

PyMODINIT_FUNC SX_MODINIT(void) { return PyModule_Create(&MODULE); }
