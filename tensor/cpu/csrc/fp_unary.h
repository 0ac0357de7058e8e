/* The public unary functions in C (tensor/cpu/fastpath.py puts them in place of the Python
 * ones: T.exp, x.exp(), T.abs...; included once by fastpath.c, after its operators).
 *
 * A function object holds its op and the public Python function it stands in for. A call
 * f(x) with one positional tensor takes the C path when the Python one would run elementwise._fast
 * without casts: an exact Tensor on the CPU, contiguous and not empty, of a dtype whose kernel
 * Python's fast path has already resolved (the operators' table, kind K_TENSOR), not a view
 * written since its graph was made, no capture and no autocast region running. The result is
 * the one the Python path makes (same kernel, shape, strides and dtype), and when autograd
 * wants a node (an input that requires grad, grad mode on, no forward mode) the same node as
 * autograd's record (fp_graph.h's attach). Every other call, keywords included, goes to the
 * Python function unchanged.
 *
 * The object passes for that function: attributes (__name__, __doc__, __wrapped__,
 * __wrapped_op__, __class__...) are the Python function's, it binds as a method (x.exp()), and
 * copies are itself. */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int op;
    PyObject *fallback;   /* the public Python function */
} fastfunc_t;

static PyObject *s_amp;   /* "amp": tensor._hook.amp, set while an autocast region is enabled */

static inline int amp_running(void) {
    PyObject *a = PyDict_GetItemWithError(hook_dict, s_amp);
    return a == NULL || a != Py_None;
}

/* op(x) in C, or NULL: with an exception set on a real error (allocation, graph), without one
 * where the call is the Python function's. */
static PyObject *unary_fast(int op, PyObject *x) {
    opnd_t X;
    int ag = 0, need = 0;
    if (!Py_IS_TYPE(x, Tensor_t) || capture_running() || amp_running() ||
        !tensor_operand(x, &X, &ag) || !X.contig || X.n == 0)
        goto python;
    entry_t *e = &table[op][X.di][K_TENSOR];
    if (!e->fn)
        goto python;
    if (ag && (need = graph_need(x, NULL)) < 0)
        goto python;
    if (need) {   /* a node: only with a differentiable result and a rule (else record's errors) */
        PyObject *rule = e->diff ? PyDict_GetItemWithError(g_rules, op_names[op]) : NULL;
        if (!rule)
            goto python;
    }
    PyObject *st = storage_of(X.n * e->osz);
    if (!st)
        return NULL;
    int64_t meta[3] = {X.n, e->osz, itemsize[X.di]};
    run_kernel(e->fn, 1, meta, X.n, (intptr_t)long_slot(st, soff[S_PTR]), X.ptr, 0, 1);
    PyObject *res = make_tensor(st, SLOT(x, toff[T_SHAPE]), SLOT(x, toff[T_STRIDES]), zero, e->od);
    if (res && need && attach(op, x, NULL, res) < 0)
        Py_CLEAR(res);
    return res;
python:
    PyErr_Clear();
    return NULL;
}

static PyObject *ff_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    fastfunc_t *f = (fastfunc_t *)self;
    if (PyVectorcall_NARGS(nargsf) == 1 && (!kwnames || PyTuple_GET_SIZE(kwnames) == 0)) {
        PyObject *r = unary_fast(f->op, args[0]);
        if (r) {
            op_hits++;
            return r;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    op_misses++;
    return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
}

static PyObject *ff_get(PyObject *self, PyObject *obj, PyObject *type) {   /* x.exp: bound */
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *ff_self(PyObject *self, PyObject *unused) {   /* copy and deepcopy: itself */
    Py_INCREF(self);
    return self;
}

static PyMethodDef FF_METHODS[] = {
    {"__copy__", ff_self, METH_NOARGS, "The function itself (functions are not copied)."},
    {"__deepcopy__", ff_self, METH_O, "The function itself (functions are not copied)."},
    {NULL, NULL, 0, NULL},
};

static PyObject *ff_getattro(PyObject *self, PyObject *name) {
    if (PyUnicode_Check(name) && (PyUnicode_CompareWithASCIIString(name, "__copy__") == 0 ||
                                  PyUnicode_CompareWithASCIIString(name, "__deepcopy__") == 0))
        return PyObject_GenericGetAttr(self, name);
    return PyObject_GetAttr(((fastfunc_t *)self)->fallback, name);
}

static int ff_setattro(PyObject *self, PyObject *name, PyObject *v) {
    return PyObject_SetAttr(((fastfunc_t *)self)->fallback, name, v);
}

static PyObject *ff_repr(PyObject *self) { return PyObject_Repr(((fastfunc_t *)self)->fallback); }

static void ff_dealloc(PyObject *self) {
    Py_XDECREF(((fastfunc_t *)self)->fallback);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject FastFunc_t = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensor.fastfunction",
    .tp_doc = "A public unary function with a C fast path (tensor/cpu/csrc/fp_unary.h).",
    .tp_basicsize = sizeof(fastfunc_t),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(fastfunc_t, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = ff_get,
    .tp_getattro = ff_getattro,
    .tp_setattro = ff_setattro,
    .tp_repr = ff_repr,
    .tp_dealloc = ff_dealloc,
    .tp_methods = FF_METHODS,
};

/* add_ops([name, ...]): name the ops after the operators' (unary ops whose kernels register()
 * may enter); known names are skipped. False when the table is full. */
static PyObject *fp_add_ops(PyObject *self, PyObject *names) {
    if (!PyList_Check(names))
        return PyErr_Format(PyExc_TypeError, "add_ops: a list of names");
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *n = PyList_GET_ITEM(names, i);
        const char *s = PyUnicode_Check(n) ? PyUnicode_AsUTF8(n) : NULL;
        if (!s)
            return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "add_ops: %R", n);
        if (op_index(s) >= 0)
            continue;
        if (n_ops == MAX_OPS)
            Py_RETURN_FALSE;
        Py_INCREF(n);
        PyUnicode_InternInPlace(&n);   /* kept alive: OP_NAMES[] points into it */
        op_names[n_ops] = n;
        OP_NAMES[n_ops++] = PyUnicode_AsUTF8(n);
    }
    Py_RETURN_TRUE;
}

/* fast_function(op name, the public Python function) -> its C stand-in (a name add_ops knows) */
static PyObject *fp_fast_function(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *fallback;
    if (!PyArg_ParseTuple(args, "sO", &name, &fallback))
        return NULL;
    int op = op_index(name);
    if ((op != OP_NEG && op < N_FIXED) || !PyCallable_Check(fallback))   /* (unary ops only) */
        return PyErr_Format(PyExc_ValueError, "fast_function: %s is no unary op added here", name);
    if (PyType_Ready(&FastFunc_t) < 0)
        return NULL;
    fastfunc_t *f = PyObject_New(fastfunc_t, &FastFunc_t);
    if (!f)
        return NULL;
    f->vectorcall = ff_vectorcall;
    f->op = op;
    Py_INCREF(fallback);
    f->fallback = fallback;
    return (PyObject *)f;
}
