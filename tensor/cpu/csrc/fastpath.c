/* The eager fast path in C (tensor/cpu/fastpath.py installs it; the Python code it shortcuts
 * stays the reference and the fallback for everything else).
 *
 * 1. Storage.__del__ for the common case: a block of the process-wide CPU caching allocator
 *    dies and parks in the allocator's exact-size cache, as CachingAllocator.free does, on the
 *    same Python objects (its `_quick` lists, counters and Block slots), so statistics and
 *    every later Python path see the same state.
 * 2. new_storage(nbytes): a Storage from that exact-size cache (malloc's hot path, mirrored).
 * 3. Tensor.__add__/__sub__/__mul__/__truediv__/__neg__ and the comparisons (__lt__, __le__,
 *    __gt__, __ge__, __eq__, __ne__: a bool result, which never carries a gradient, so a call
 *    that autograd must see takes the Python path) when the Python fast path
 *    (elementwise._fast) would run: contiguous operands of one shape, dtype and device (the CPU)
 *    or a Python scalar, no autograd involvement (no input requires grad, has a tangent or is a
 *    tracked view) and no capture running. Its kernels come from a table the Python fast path
 *    fills on its first resolution of an (op, dtype, operand kind), so the C path runs only
 *    what Python has already decided, with the same kernel and the same result.
 *
 * 4. The public unary functions (T.exp, x.exp()...: fp_unary.h) on the same table, for a
 *    contiguous CPU tensor whose kernel the Python fast path has resolved.
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
                                   "_ro", "_requires_grad", "_grad", "grad_fn", "_ag", "_base"};
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

/* The operators' ops first (fixed indices); the public unary functions' ops follow, named at
 * install (add_ops: fp_unary.h), up to MAX_OPS in all. */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, N_FIXED };
#define MAX_OPS 192
static const char *OP_NAMES[MAX_OPS] = {"add", "subtract", "multiply", "true_divide", "negative",
                                        "less", "less_equal", "greater", "greater_equal", "equal",
                                        "not_equal"};
static int n_ops = N_FIXED;
#define PLANNED(op) ((op) < OP_NEG)   /* the ops with plans (fastpath.py's _PLANNED) */
#define N_DT 32
enum { K_TENSOR, K_FLOAT, K_INT, N_KINDS };   /* the other operand: same-dtype tensor, float, int */
enum { C_OTHER, C_F32, C_F64, C_I32, C_I64 }; /* dtypes whose Python scalars C encodes */

typedef struct { void *fn; PyObject *od; int64_t osz; int diff; } entry_t;   /* diff: od float */
static entry_t table[MAX_OPS][N_DT][N_KINDS];
static PyObject *dtypes[N_DT];
static int64_t itemsize[N_DT];
static int dcode[N_DT];
static int n_dtypes;

typedef void (*bin_fn)(int, const int64_t *, intptr_t, intptr_t, intptr_t, int);
typedef void (*un_fn)(int, const int64_t *, intptr_t, intptr_t, int);

static inline int dtype_index(PyObject *d) {
    for (int i = 0; i < n_dtypes; i++)
        if (dtypes[i] == d)
            return i;
    return -1;
}

/* An operand as the C paths see it: a Tensor (its dtype index, element count, address,
 * contiguity) or a Python float/int (kind K_FLOAT/K_INT). */
typedef struct { PyObject *obj; int kind, di, contig; int64_t n; intptr_t ptr; } opnd_t;

/* A tensor operand: an exact Tensor on the CPU of a known dtype, not a view whose memory was
 * written since its graph was made (autograd would refresh it first). 0: not for C. *ag is
 * set when it takes part in autograd (requires grad or has autograd state). */
static int tensor_operand(PyObject *t, opnd_t *o, int *ag) {
    PyObject *st = SLOT(t, toff[T_STORAGE]), *shape = SLOT(t, toff[T_SHAPE]);
    PyObject *base = SLOT(t, toff[T_BASE]);
    if (!st || !shape || !PyTuple_CheckExact(shape) || !Py_IS_TYPE(st, Storage_t) ||
        SLOT(st, soff[S_DEVICE]) != cpu_device)
        return 0;
    if (base != Py_None) {   /* (root, version then): fresh when the version still holds */
        PyObject *v = SLOT(st, soff[S_VERSION]);
        if (!base || !PyTuple_CheckExact(base) || PyTuple_GET_SIZE(base) != 2 || !v ||
            PyObject_RichCompareBool(PyTuple_GET_ITEM(base, 1), v, Py_EQ) != 1) {
            PyErr_Clear();
            return 0;
        }
    }
    int di = dtype_index(SLOT(t, toff[T_DTYPE]));
    if (di < 0)
        return 0;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    int64_t count = 1;
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *s = PyTuple_GET_ITEM(shape, i);
        if (!PyLong_CheckExact(s))
            return 0;
        count *= PyLong_AsLongLong(s);
    }
    PyObject *contig = SLOT(t, toff[T_CONTIG]);
    if (contig != Py_True && contig != Py_False) {   /* is_contiguous(), cached as Python does */
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
        contig = c ? Py_True : Py_False;
        set_slot_ref(t, toff[T_CONTIG], contig);
    }
    long long ptr = long_slot(st, soff[S_PTR]), off = long_slot(t, toff[T_OFFSET]);
    if (ptr < 0 || off == -1 || PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    o->obj = t;
    o->kind = K_TENSOR;
    o->di = di;
    o->contig = contig == Py_True;
    o->n = count;
    o->ptr = (intptr_t)(ptr + off * itemsize[di]);
    *ag |= SLOT(t, toff[T_RG]) != Py_False || SLOT(t, toff[T_AG]) != Py_None;
    return 1;
}

/* x as an operand: a tensor, or a Python float/int (bools are the Python path's) */
static int operand(PyObject *x, opnd_t *o, int *ag) {
    if (Py_IS_TYPE(x, Tensor_t))
        return tensor_operand(x, o, ag);
    if (!PyFloat_CheckExact(x) && !PyLong_CheckExact(x))
        return 0;
    o->obj = x;
    o->kind = PyFloat_CheckExact(x) ? K_FLOAT : K_INT;
    o->di = -1;
    return 1;
}

/* ---- plans: the general (broadcasting, strided) binary path's kernel calls, by operand
 * layout. elementwise.binary registers one (through the backend's elementwise_resolved) when
 * it ran an op without casts into a fresh result; its key is what decided it. */

typedef struct {
    void *fn;
    int nd, ld;                  /* ld: the loop dtype's index (scalars are encoded in it) */
    int64_t meta[3 * 8 * 4];     /* the kernel's shape and byte strides (coalesced, <= 8 dims) */
    PyObject *shape, *strides, *od;
    int64_t osz, n;
    int diff;
} plan_t;
static PyObject *plans;          /* key tuple -> capsule of a plan_t */
#define MAX_PLANS 4096

static void plan_free(PyObject *cap) {
    plan_t *p = PyCapsule_GetPointer(cap, "sx_plan");
    if (p) {
        Py_XDECREF(p->shape); Py_XDECREF(p->strides); Py_XDECREF(p->od);
        PyMem_Free(p);
    }
}

static PyObject *operand_key(opnd_t *o) {   /* (dtype index or -kind, shape, strides) */
    if (o->kind != K_TENSOR)
        return Py_BuildValue("(iOO)", -o->kind, Py_None, Py_None);
    return Py_BuildValue("(iOO)", o->di, SLOT(o->obj, toff[T_SHAPE]),
                         SLOT(o->obj, toff[T_STRIDES]));
}

static PyObject *plan_key(int op, opnd_t *x, opnd_t *y) {
    PyObject *kx = operand_key(x), *ky = kx ? operand_key(y) : NULL;
    PyObject *k = ky ? Py_BuildValue("(iOO)", op, kx, ky) : NULL;
    Py_XDECREF(kx);
    Py_XDECREF(ky);
    return k;
}

/* The plan for op(x, y) and its capsule (a new reference: the caller holds it while the plan
 * is in use, so a table cleared meanwhile by another thread cannot free it), or NULL. */
static plan_t *find_plan(int op, opnd_t *x, opnd_t *y, PyObject **cap_out) {
    if (!plans || PyDict_GET_SIZE(plans) == 0)
        return NULL;
    PyObject *k = plan_key(op, x, y);
    PyObject *cap = k ? PyDict_GetItemWithError(plans, k) : NULL;
    Py_XDECREF(k);
    plan_t *p = cap ? PyCapsule_GetPointer(cap, "sx_plan") : NULL;
    if (!p) {
        PyErr_Clear();
        return NULL;
    }
    if (cap_out) {
        Py_INCREF(cap);
        *cap_out = cap;
    }
    return p;
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

/* Tensor._make: a tensor viewing st (a reference the call takes) with the other slots
 * borrowed; no autograd state, flags unknown. */
static PyObject *make_tensor(PyObject *st, PyObject *shape, PyObject *strides, PyObject *offset,
                             PyObject *od) {
    PyObject *t = Tensor_t->tp_alloc(Tensor_t, 0);
    if (!t) {
        Py_DECREF(st);
        return NULL;
    }
    SLOT(t, toff[T_STORAGE]) = st;
    Py_INCREF(shape); SLOT(t, toff[T_SHAPE]) = shape;
    Py_INCREF(strides); SLOT(t, toff[T_STRIDES]) = strides;
    Py_INCREF(offset); SLOT(t, toff[T_OFFSET]) = offset;
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

/* (the reflected ones last: fast_op swaps the operands back for them; comparisons need no
 * reflected forms: Python itself tries y.__gt__(x) for x < y) */
enum { D_ADD, D_SUB, D_MUL, D_DIV, D_NEG, D_LT, D_LE, D_GT, D_GE, D_EQ, D_NE, D_RADD, D_RSUB,
       D_RMUL, D_RDIV, N_DUNDERS };
static PyObject *py_dunders[N_DUNDERS];   /* the Python operators: the fallback */

static void run_kernel(void *fn, int nd, const int64_t *meta, int64_t n, intptr_t out,
                       intptr_t a, intptr_t b, int unary) {
    int nt = threads();
    PyThreadState *ts = n > GIL_FREE_ABOVE ? PyEval_SaveThread() : NULL;
    if (unary)
        ((un_fn)fn)(nd, meta, out, a, nt);
    else
        ((bin_fn)fn)(nd, meta, out, a, b, nt);
    if (ts)
        PyEval_RestoreThread(ts);
}

/* op(x[, y]) for Tensor operator `dunder` (self is x, or y for a reflected one): the table
 * (a contiguous tensor, and a same-shape contiguous tensor or a scalar) or a plan; else the
 * Python operator, unchanged. */
static PyObject *fast_op(int dunder, int op, PyObject *x, PyObject *y) {
    opnd_t X, Y;
    int ag = 0, need = 0;
    char sbuf[2][16];
    PyObject *cap = NULL;   /* the plan's capsule, held while the plan is in use */
    if (capture_running() || !operand(x, &X, &ag) || (y && !operand(y, &Y, &ag)))
        goto python;
    opnd_t *T0 = X.kind == K_TENSOR ? &X : &Y;   /* a tensor operand (one is: self) */
    if (y && X.kind == K_TENSOR && Y.kind == K_TENSOR && X.di != Y.di)
        goto python;   /* promotion: the Python path */
    void *fn;
    int nd = 1, ld = T0->di, diff;
    int64_t n, osz, meta1[4];
    const int64_t *meta = meta1;
    PyObject *shape, *strides, *od;
    entry_t *e = NULL;
    if (X.kind == K_TENSOR && X.contig &&
        (!y || Y.kind != K_TENSOR || (Y.contig && (SLOT(x, toff[T_SHAPE]) == SLOT(y, toff[T_SHAPE]) ||
         PyObject_RichCompareBool(SLOT(x, toff[T_SHAPE]), SLOT(y, toff[T_SHAPE]), Py_EQ) == 1))))
        e = &table[op][X.di][y ? Y.kind : K_TENSOR];
    if (e && e->fn) {
        fn = e->fn; n = X.n; osz = e->osz; od = e->od; diff = e->diff;
        shape = SLOT(x, toff[T_SHAPE]); strides = SLOT(x, toff[T_STRIDES]);
        meta1[0] = n; meta1[1] = osz; meta1[2] = itemsize[ld];
        meta1[3] = y && Y.kind == K_TENSOR ? itemsize[ld] : 0;
    } else {
        PyErr_Clear();
        plan_t *p = y && PLANNED(op) ? find_plan(op, &X, &Y, &cap) : NULL;
        if (!p)
            goto python;
        fn = p->fn; nd = p->nd; meta = p->meta; n = p->n; osz = p->osz; od = p->od;
        diff = p->diff; shape = p->shape; strides = p->strides; ld = p->ld;
    }
    if (n == 0)
        goto python;
    opnd_t *ops[2] = {&X, &Y};
    for (int i = 0; i < (y ? 2 : 1); i++)
        if (ops[i]->kind != K_TENSOR) {
            if (!encode_scalar(ops[i]->obj, dcode[ld], ops[i]->kind, sbuf[i]))
                goto python;
            ops[i]->ptr = (intptr_t)sbuf[i];
        }
    if (ag && (need = graph_need(x, y)) < 0)
        goto python;
    if (need && !diff)   /* a non-differentiable output: record's checks, in Python */
        goto python;
    PyObject *st = storage_of(n * osz);
    if (!st) {
        Py_XDECREF(cap);
        return NULL;
    }
    run_kernel(fn, nd, meta, n, (intptr_t)long_slot(st, soff[S_PTR]), X.ptr, y ? Y.ptr : 0, !y);
    op_hits++;
    PyObject *res = make_tensor(st, shape, strides, zero, od);
    Py_XDECREF(cap);
    if (res && need && attach(op, x, y, res) < 0)
        Py_CLEAR(res);
    return res;
python:
    Py_XDECREF(cap);
    PyErr_Clear();
    op_misses++;
    if (!y)
        return PyObject_CallOneArg(py_dunders[dunder], x);
    PyObject *args[2] = {dunder >= D_RADD ? y : x, dunder >= D_RADD ? x : y};
    return PyObject_Vectorcall(py_dunders[dunder], args, 2, NULL);
}

static PyObject *fp_add(PyObject *a, PyObject *b) { return fast_op(D_ADD, OP_ADD, a, b); }
static PyObject *fp_sub(PyObject *a, PyObject *b) { return fast_op(D_SUB, OP_SUB, a, b); }
static PyObject *fp_mul(PyObject *a, PyObject *b) { return fast_op(D_MUL, OP_MUL, a, b); }
static PyObject *fp_div(PyObject *a, PyObject *b) { return fast_op(D_DIV, OP_DIV, a, b); }
static PyObject *fp_neg(PyObject *a, PyObject *unused) { return fast_op(D_NEG, OP_NEG, a, NULL); }
static PyObject *fp_lt(PyObject *a, PyObject *b) { return fast_op(D_LT, OP_LT, a, b); }
static PyObject *fp_le(PyObject *a, PyObject *b) { return fast_op(D_LE, OP_LE, a, b); }
static PyObject *fp_gt(PyObject *a, PyObject *b) { return fast_op(D_GT, OP_GT, a, b); }
static PyObject *fp_ge(PyObject *a, PyObject *b) { return fast_op(D_GE, OP_GE, a, b); }
static PyObject *fp_eq(PyObject *a, PyObject *b) { return fast_op(D_EQ, OP_EQ, a, b); }
static PyObject *fp_ne(PyObject *a, PyObject *b) { return fast_op(D_NE, OP_NE, a, b); }
static PyObject *fp_radd(PyObject *a, PyObject *b) { return fast_op(D_RADD, OP_ADD, b, a); }
static PyObject *fp_rsub(PyObject *a, PyObject *b) { return fast_op(D_RSUB, OP_SUB, b, a); }
static PyObject *fp_rmul(PyObject *a, PyObject *b) { return fast_op(D_RMUL, OP_MUL, b, a); }
static PyObject *fp_rdiv(PyObject *a, PyObject *b) { return fast_op(D_RDIV, OP_DIV, b, a); }

static PyMethodDef DUNDERS[N_DUNDERS] = {
    {"__add__", fp_add, METH_O, "self + other (C fast path; else the Python operator)"},
    {"__sub__", fp_sub, METH_O, "self - other (C fast path; else the Python operator)"},
    {"__mul__", fp_mul, METH_O, "self * other (C fast path; else the Python operator)"},
    {"__truediv__", fp_div, METH_O, "self / other (C fast path; else the Python operator)"},
    {"__neg__", fp_neg, METH_NOARGS, "-self (C fast path; else the Python operator)"},
    {"__lt__", fp_lt, METH_O, "self < other (C fast path; else the Python operator)"},
    {"__le__", fp_le, METH_O, "self <= other (C fast path; else the Python operator)"},
    {"__gt__", fp_gt, METH_O, "self > other (C fast path; else the Python operator)"},
    {"__ge__", fp_ge, METH_O, "self >= other (C fast path; else the Python operator)"},
    {"__eq__", fp_eq, METH_O, "self == other (C fast path; else the Python operator)"},
    {"__ne__", fp_ne, METH_O, "self != other (C fast path; else the Python operator)"},
    {"__radd__", fp_radd, METH_O, "other + self (C fast path; else the Python operator)"},
    {"__rsub__", fp_rsub, METH_O, "other - self (C fast path; else the Python operator)"},
    {"__rmul__", fp_rmul, METH_O, "other * self (C fast path; else the Python operator)"},
    {"__rtruediv__", fp_rdiv, METH_O, "other / self (C fast path; else the Python operator)"},
};
static PyMethodDef DEL_DEF = {"__del__", fp_storage_del, METH_NOARGS,
                              "Give the memory back (C fast path; else the Python finalizer)"};

static int op_index(const char *name) {
    for (int i = 0; i < n_ops; i++)
        if (strcmp(name, OP_NAMES[i]) == 0)
            return i;
    return -1;
}

static int add_dtype(PyObject *d, long long isz, int code) {   /* its index; -1: table full */
    int di = dtype_index(d);
    if (di >= 0 || n_dtypes == N_DT)
        return di;
    di = n_dtypes++;
    Py_INCREF(d);
    dtypes[di] = d;
    itemsize[di] = isz;
    dcode[di] = code;
    return di;
}

/* register_plan(op name, a, b, out, loop dtype, its itemsize, its code, out itemsize, address,
 *               nd, meta, out dtype carries gradients): out = op(a, b) ran kernel `address` over
 *               (nd, meta) into out, a fresh tensor, without casts. */
static PyObject *fp_register_plan(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *a, *b, *out, *ld, *meta;
    long long lisz, osz;
    int lcode, nd, diff;
    unsigned long long addr;
    if (!PyArg_ParseTuple(args, "sOOO!OLiLKiO!p", &name, &a, &b, Tensor_t, &out, &ld, &lisz, &lcode,
                          &osz, &addr, &nd, &PyList_Type, &meta, &diff))
        return NULL;
    int op = op_index(name), di = add_dtype(ld, lisz, lcode), ag = 0;
    opnd_t X, Y;
    if (op < 0 || di < 0 || addr == 0 || nd < 1 || nd > 8 ||
        PyList_GET_SIZE(meta) > (Py_ssize_t)(sizeof(((plan_t *)0)->meta) / 8) ||
        !operand(a, &X, &ag) || !operand(b, &Y, &ag) || (X.kind != K_TENSOR && Y.kind != K_TENSOR)) {
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    if (find_plan(op, &X, &Y, NULL))   /* known (the Python path ran it while C stepped aside) */
        Py_RETURN_FALSE;
    plan_t *p = PyMem_Calloc(1, sizeof(plan_t));
    if (!p)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(meta); i++)
        p->meta[i] = PyLong_AsLongLong(PyList_GET_ITEM(meta, i));
    p->fn = (void *)(uintptr_t)addr;
    p->nd = nd;
    p->ld = di;
    p->shape = SLOT(out, toff[T_SHAPE]); Py_INCREF(p->shape);
    p->strides = SLOT(out, toff[T_STRIDES]); Py_INCREF(p->strides);
    p->od = SLOT(out, toff[T_DTYPE]); Py_INCREF(p->od);
    p->osz = osz;
    p->n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(p->shape); i++)
        p->n *= PyLong_AsLongLong(PyTuple_GET_ITEM(p->shape, i));
    p->diff = diff;
    PyObject *cap = PyCapsule_New(p, "sx_plan", plan_free);
    if (!cap) {
        PyMem_Free(p);
        return NULL;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(cap);
        return NULL;
    }
    if (!plans && !(plans = PyDict_New())) {
        Py_DECREF(cap);
        return NULL;
    }
    if (PyDict_GET_SIZE(plans) >= MAX_PLANS)
        PyDict_Clear(plans);
    PyObject *k = plan_key(op, &X, &Y);
    int r = k ? PyDict_SetItem(plans, k, cap) : -1;
    Py_XDECREF(k);
    Py_DECREF(cap);
    if (r < 0)
        return NULL;
    Py_RETURN_TRUE;
}

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
    int op = op_index(name), di = add_dtype(d, isz, code);
    if (op < 0 || di < 0 || kind < 0 || kind >= N_KINDS || addr == 0)
        Py_RETURN_FALSE;
    entry_t *e = &table[op][di][kind];
    Py_INCREF(od);
    Py_XSETREF(e->od, od);
    e->osz = osz;
    e->diff = diff;
    e->fn = (void *)(uintptr_t)addr;
    Py_RETURN_TRUE;
}

#include "fp_unary.h"   /* T.exp, x.exp() and the other public unary functions, in C */

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
    PyObject *pyops[N_DUNDERS];
    for (int i = 0; i < N_DUNDERS; i++) {
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
    for (int i = 0; i < N_DUNDERS; i++)
        py_dunders[i] = pyops[i];
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
    INTERN(s_amp, "amp")
    for (int i = 0; i < N_FIXED; i++)
        INTERN(op_names[i], OP_NAMES[i])
    if (!(empty_tuple = PyTuple_New(0)) || !(empty_dict = PyDict_New()) ||
        !(zero = PyLong_FromLong(0)))
        return NULL;
    PyObject *del = PyDescr_NewMethod(Storage_t, &DEL_DEF);
    if (!del || PyObject_SetAttrString(stt, "__del__", del) < 0)
        return NULL;
    Py_DECREF(del);
    for (int i = 0; i < N_DUNDERS; i++) {
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
    {"register_plan", fp_register_plan, METH_VARARGS, "Enter an op's kernel call for a layout."},
    {"add_ops", fp_add_ops, METH_O, "Name more ops (unary) whose kernels register() may enter."},
    {"fast_function", fp_fast_function, METH_VARARGS, "A public unary function's C stand-in."},
    {"make_record", fp_make_record, METH_O, "autograd's record in C, falling back to the given one."},
    {"new_storage", fp_new_storage, METH_O, "A CPU Storage from the exact-size cache, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "fastpath", NULL, -1, METHODS};

PyMODINIT_FUNC SX_MODINIT(void) { return PyModule_Create(&MODULE); }
