/* Autograd's record (autograd/graph.py: record and _attach) mirrored for the fast ops of
 * tensor/cpu/csrc/fastpath.c (included there once, after its declarations). Autograd puts in
 * _hook.fast_graph (state, Node, Ctx, Meta, AGMeta, RULES, node counter, edge_of, INPLACE,
 * _WRITES, meta_of, _record_tail); the C path
 * reads it when an operand takes part in autograd, and hands the call to Python where record
 * would do more than put one node on the graph (forward mode, a view to refresh). */

enum { N_OP, N_RULE, N_CTX, N_NEXT, N_NOUT, N_MULTI, N_HOOKS, N_RETAINS, N_SAVED, N_RELEASED,
       N_SEQ, N_NHOOKS, N_N };
static const char *N_NAMES[N_N] = {"op", "rule", "ctx", "next", "n_out", "multi", "hooks",
                                   "retains", "saved", "released", "seq", "nhooks"};
enum { M_SHAPE, M_DTYPE, M_DEVICE, M_N };
static const char *M_NAMES[M_N] = {"shape", "dtype", "device"};
enum { A_ACC, A_OUTPUT_NR, A_N };
static const char *A_NAMES[A_N] = {"acc", "output_nr"};
static const char *R_NAMES[3] = {"save", "reads", "layout"};
static Py_ssize_t noff[N_N], moff[M_N], aoff[A_N], roff[3];
static PyObject *graph_cfg;   /* the _hook.fast_graph tuple the offsets were read from */
static PyObject *g_state, *g_rules, *g_seq, *g_edge_of, *g_inplace, *g_writes, *g_meta_of,
    *g_tail;
static PyTypeObject *Node_t, *Ctx_t, *Meta_t, *AGMeta_t;
static PyObject *s_fast_graph, *s_record, *s_depth, *s_grad_enabled, *s_fw_level, *s_out,
    *s_args, *s_kwargs, *s_needs, *s_saved_tensors, *s_old, *empty_tuple, *empty_dict, *zero,
    *op_names[MAX_OPS];

/* 1: the config is read (graph_cfg and friends set); 0: none (autograd not loaded); -1 error */
static int graph_config(void) {
    PyObject *cfg = PyDict_GetItemWithError(hook_dict, s_fast_graph);
    if (!cfg || cfg == Py_None)
        return PyErr_Occurred() ? -1 : 0;
    if (cfg == graph_cfg)
        return 1;
    PyObject *st, *node, *ctx, *meta, *agm, *rules, *seq, *edge, *inplace, *writes, *meta_of, *tail;
    if (!PyArg_ParseTuple(cfg, "OO!O!O!O!O!OOO!O!OO", &st, &PyType_Type, &node, &PyType_Type,
                          &ctx, &PyType_Type, &meta, &PyType_Type, &agm, &PyDict_Type, &rules,
                          &seq, &edge, &PyFrozenSet_Type, &inplace, &PyFrozenSet_Type, &writes,
                          &meta_of, &tail))
        return -1;
    PyObject *rule = NULL;
    Py_ssize_t pos = 0;
    PyObject *k;
    if (!PyDict_Next(rules, &pos, &k, &rule)) {
        PyErr_SetString(PyExc_TypeError, "fastpath: no rules");
        return -1;
    }
    if (slot_offsets((PyTypeObject *)node, N_NAMES, N_N, noff) < 0 ||
        slot_offsets((PyTypeObject *)meta, M_NAMES, M_N, moff) < 0 ||
        slot_offsets((PyTypeObject *)agm, A_NAMES, A_N, aoff) < 0 ||
        slot_offsets(Py_TYPE(rule), R_NAMES, 3, roff) < 0)
        return -1;
    Py_INCREF(cfg);
    Py_XSETREF(graph_cfg, cfg);   /* holds the objects below alive */
    g_state = st; g_rules = rules; g_seq = seq; g_edge_of = edge;
    g_inplace = inplace; g_writes = writes; g_meta_of = meta_of; g_tail = tail;
    Node_t = (PyTypeObject *)node; Ctx_t = (PyTypeObject *)ctx; Meta_t = (PyTypeObject *)meta;
    AGMeta_t = (PyTypeObject *)agm;
    return 1;
}

static long state_long(PyObject *name) {
    PyObject *v = PyObject_GetAttr(g_state, name);
    if (!v)
        return -1;
    long r = PyLong_AsLong(v);   /* bools are ints */
    Py_DECREF(v);
    return r;
}

/* edge_of(t): (node, output index) receiving t's gradient, or None */
static PyObject *edge_of(PyObject *t) {
    if (SLOT(t, toff[T_RG]) != Py_True)
        Py_RETURN_NONE;
    PyObject *gf = SLOT(t, toff[T_GRADFN]), *ag = SLOT(t, toff[T_AG]);
    if (gf && gf != Py_None) {
        PyObject *nr = ag && ag != Py_None ? SLOT(ag, aoff[A_OUTPUT_NR]) : NULL;
        if (ag && ag != Py_None && (!nr || !Py_IS_TYPE(ag, AGMeta_t)))
            return PyObject_CallOneArg(g_edge_of, t);
        return nr ? PyTuple_Pack(2, gf, nr) : Py_BuildValue("(Oi)", gf, 0);
    }
    if (ag && Py_IS_TYPE(ag, AGMeta_t)) {
        PyObject *acc = SLOT(ag, aoff[A_ACC]);
        if (acc && acc != Py_None)
            return Py_BuildValue("(Oi)", acc, 0);
    }
    return PyObject_CallOneArg(g_edge_of, t);   /* a leaf's first node: its accumulator */
}

static PyObject *alias_of(PyObject *t) {   /* _alias: same storage and view, no graph */
    PyObject *st = SLOT(t, toff[T_STORAGE]);
    Py_INCREF(st);
    return make_tensor(st, SLOT(t, toff[T_SHAPE]), SLOT(t, toff[T_STRIDES]),
                       SLOT(t, toff[T_OFFSET]), SLOT(t, toff[T_DTYPE]));
}

/* saved.append((t, t._storage, t._storage.version)) */
static int save_entry(PyObject *saved, PyObject *t) {
    PyObject *st = SLOT(t, toff[T_STORAGE]);
    PyObject *e = PyTuple_Pack(3, t, st, SLOT(st, soff[S_VERSION]));
    int r = e ? PyList_Append(saved, e) : -1;
    Py_XDECREF(e);
    return r;
}

static PyObject *meta_of_tensor(PyObject *t) {
    PyObject *m = Meta_t->tp_alloc(Meta_t, 0);
    if (!m)
        return NULL;
    PyObject *v[3] = {SLOT(t, toff[T_SHAPE]), SLOT(t, toff[T_DTYPE]),
                      SLOT(SLOT(t, toff[T_STORAGE]), soff[S_DEVICE])};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(v[i]);
        SLOT(m, moff[i]) = v[i];
    }
    return m;
}

/* Put the node of op `name` (rule `rule`) on the graph for out = op(*argv), argv tensors or
 * other values (no lists), out one fresh tensor: _attach. 0 or -1. */
/* What of rule.save the node keeps: all of it, or (rule.reads, per operand what its gradient
 * reads) what the operands that need a gradient read (Rule.reads in autograd/graph.py). A new
 * reference, or NULL on error. */
static PyObject *kept_set(PyObject *rule, PyObject *needs) {
    PyObject *save = SLOT(rule, roff[0]), *reads = SLOT(rule, roff[1]);
    if (!save || !PyAnySet_Check(save)) {
        PyErr_SetString(PyExc_TypeError, "fastpath: a rule's save is not a set");
        return NULL;
    }
    if (!reads || reads == Py_None) {
        Py_INCREF(save);
        return save;
    }
    PyObject *eff = PySet_New(NULL);
    if (!eff || !PyTuple_Check(reads))
        goto bad;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(reads) && j < PyTuple_GET_SIZE(needs); j++) {
        if (PyTuple_GET_ITEM(needs, j) != Py_True)
            continue;
        PyObject *r = PyTuple_GET_ITEM(reads, j);
        if (!PyTuple_Check(r))
            goto bad;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(r); k++)
            if (PySet_Add(eff, PyTuple_GET_ITEM(r, k)) < 0)
                goto bad;
    }
    return eff;
bad:
    if (eff && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "fastpath: a rule's reads is not a tuple of tuples");
    Py_XDECREF(eff);
    return NULL;
}

static int attach_node(PyObject *name, PyObject *rule, PyObject *const *argv, Py_ssize_t nargs,
                       PyObject *out) {
    PyObject *save = NULL;
    PyObject *node = NULL, *edges = NULL, *saved = NULL, *ctx = NULL, *cargs = NULL,
             *needs = NULL, *ctx_out = Py_None, *seq = NULL, *kw = NULL;
    Py_INCREF(Py_None);
    if (!(edges = PyList_New(0)) || !(saved = PyList_New(0)) ||
        !(cargs = PyTuple_New(nargs)) || !(needs = PyTuple_New(nargs)))
        goto fail;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *x = argv[i];
        PyObject *need = Py_IS_TYPE(x, Tensor_t) && SLOT(x, toff[T_RG]) == Py_True ? Py_True
                                                                                     : Py_False;
        Py_INCREF(need);
        PyTuple_SET_ITEM(needs, i, need);
    }
    if (!(save = kept_set(rule, needs)))
        goto fail;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *x = argv[i];
        int is_t = Py_IS_TYPE(x, Tensor_t);
        if (!is_t) {
            Py_INCREF(x);
            PyTuple_SET_ITEM(cargs, i, x);
            continue;
        }
        PyObject *e = edge_of(x);
        if (!e || PyList_Append(edges, e) < 0) {
            Py_XDECREF(e);
            goto fail;
        }
        Py_DECREF(e);
        /* rule.layout (None, or the operands whose layout only the rule reads): a detached
         * alias of those (no version check), a Meta of the other unsaved ones */
        PyObject *ki = PyLong_FromSsize_t(i), *layout = SLOT(rule, roff[2]);
        int kept = ki ? PySet_Contains(save, ki) : -1;
        int lay = kept == 0 && layout && layout != Py_None ? PySet_Contains(layout, ki) : 0;
        Py_XDECREF(ki);
        if (kept < 0 || lay < 0)
            goto fail;
        if (kept) {
            if (save_entry(saved, x) < 0)
                goto fail;
            Py_INCREF(x);
            PyTuple_SET_ITEM(cargs, i, x);
        } else {
            PyObject *m = lay ? alias_of(x) : meta_of_tensor(x);
            if (!m)
                goto fail;
            PyTuple_SET_ITEM(cargs, i, m);
        }
    }
    int keep_out = PySet_Contains(save, s_out);
    if (keep_out < 0)
        goto fail;
    if (keep_out) {
        Py_DECREF(ctx_out);
        if (!(ctx_out = alias_of(out)) || save_entry(saved, ctx_out) < 0)
            goto fail;
    }
    if (!(ctx = Ctx_t->tp_new(Ctx_t, empty_tuple, NULL)) || !(kw = PyDict_New()) ||
        PyObject_SetAttr(ctx, s_args, cargs) < 0 || PyObject_SetAttr(ctx, s_kwargs, kw) < 0 ||
        PyObject_SetAttr(ctx, s_out, ctx_out) < 0 || PyObject_SetAttr(ctx, s_needs, needs) < 0 ||
        PyObject_SetAttr(ctx, s_saved_tensors, empty_tuple) < 0 ||
        PyObject_SetAttr(ctx, s_old, Py_None) < 0)
        goto fail;
    if (!(seq = PyIter_Next(g_seq))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "fastpath: the node counter ended");
        goto fail;
    }
    if (!(node = Node_t->tp_alloc(Node_t, 0)))
        goto fail;
    PyObject *nv[N_N] = {name, rule, ctx, edges, NULL, Py_False, Py_None, Py_None, saved, Py_False,
                         seq, Py_None};
    for (int i = 0; i < N_N; i++) {
        PyObject *v = i == N_NOUT ? PyLong_FromLong(1) : (Py_INCREF(nv[i]), nv[i]);
        SLOT(node, noff[i]) = v;
    }
    set_slot_ref(out, toff[T_RG], Py_True);
    set_slot(out, toff[T_GRADFN], node);   /* steals node */
    Py_DECREF(edges); Py_DECREF(saved); Py_DECREF(cargs); Py_DECREF(needs); Py_DECREF(ctx_out);
    Py_DECREF(ctx); Py_DECREF(kw); Py_DECREF(seq); Py_DECREF(save);
    return 0;
fail:
    Py_XDECREF(node); Py_XDECREF(edges); Py_XDECREF(saved); Py_XDECREF(cargs);
    Py_XDECREF(needs); Py_XDECREF(ctx_out); Py_XDECREF(ctx); Py_XDECREF(kw); Py_XDECREF(seq);
    Py_XDECREF(save);
    return -1;
}

/* attach_node for fast op `op` on (a[, b]) */
static int attach(int op, PyObject *a, PyObject *b, PyObject *out) {
    PyObject *rule = PyDict_GetItemWithError(g_rules, op_names[op]);
    if (!rule)
        return PyErr_Occurred() ? -1 : (PyErr_Format(PyExc_NotImplementedError,
                                        "autograd: no derivative rule for %R", op_names[op]), -1);
    PyObject *argv[2] = {a, b};
    return attach_node(op_names[op], rule, argv, b ? 2 : 1, out);
}

/* What autograd wants of op(a[, b]): 0 nothing (run as without it), 1 a node from attach(),
 * -1 the Python path (forward mode, autograd in a state C does not mirror). */
static int graph_need(PyObject *a, PyObject *b) {
    PyObject *rec = PyDict_GetItemWithError(hook_dict, s_record);
    if (!rec || rec == Py_None)
        return PyErr_Occurred() ? -1 : 0;
    if (graph_config() != 1)
        return -1;
    long depth = state_long(s_depth), fw = state_long(s_fw_level), en = state_long(s_grad_enabled);
    if (PyErr_Occurred() || depth < 0 || fw != 0)
        return -1;
    if (depth > 0 || !en)
        return 0;
    return (Py_IS_TYPE(a, Tensor_t) && SLOT(a, toff[T_RG]) == Py_True) ||
           (b && Py_IS_TYPE(b, Tensor_t) && SLOT(b, toff[T_RG]) == Py_True);
}

/* ---- record(name, fn, args, kwargs): autograd's hook for every public op (tensor/_hook.py),
 * in C for the common case: no forward mode, not in place, tensors as positional arguments
 * (not in lists), no stale view among them, and keyword arguments only where no node is made
 * (no input requires grad) and none of them is a tensor. Everything else, and any result but
 * one tensor, goes to autograd's Python record (or its tail, _record_tail). */

static PyObject *py_record;   /* autograd's record, wrapped by make_record */
static PyObject *record_obj;  /* the C record: what _hook.record holds */

static int set_depth(long v) {
    PyObject *d = PyLong_FromLong(v);
    int r = d ? PyObject_SetAttr(g_state, s_depth, d) : -1;
    Py_XDECREF(d);
    return r;
}

static PyObject *call_fn(PyObject *fn, PyObject *args, PyObject *kwargs) {
    return PyObject_Call(fn, args, kwargs && PyDict_GET_SIZE(kwargs) ? kwargs : NULL);
}

/* Whether a keyword argument's value is a tensor, or a list or tuple holding one (flat_tensors'
 * one level): record must then decide in Python. Other values (axes, keepdims, dtype, None)
 * leave the decision to the positional tensors, as in Python's record. */
static int kw_tensors(PyObject *kwargs) {
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(kwargs, &pos, &k, &v)) {
        if (Py_IS_TYPE(v, Tensor_t))
            return 1;
        if (PyList_Check(v) || PyTuple_Check(v)) {
            Py_ssize_t m = PySequence_Fast_GET_SIZE(v);
            for (Py_ssize_t i = 0; i < m; i++)
                if (Py_IS_TYPE(PySequence_Fast_GET_ITEM(v, i), Tensor_t))
                    return 1;
        }
    }
    return 0;
}

static PyObject *fp_record(PyObject *self, PyObject *const *a, Py_ssize_t na) {
    if (na != 4 || !PyTuple_CheckExact(a[2]) || (a[3] != Py_None && !PyDict_Check(a[3])) ||
        graph_config() != 1)
        goto python;
    PyObject *name = a[0], *fn = a[1], *args = a[2], *kwargs = a[3];
    long depth = state_long(s_depth);
    if (depth < 0 && PyErr_Occurred())
        return NULL;
    if (depth)
        return call_fn(fn, args, kwargs);
    long fw = state_long(s_fw_level), en = state_long(s_grad_enabled);
    if (PyErr_Occurred())
        return NULL;
    if (fw)
        goto python;
    if (!en)
        return call_fn(fn, args, kwargs);
    int has_kw = kwargs != Py_None && PyDict_GET_SIZE(kwargs);
    if (has_kw && kw_tensors(kwargs))   /* tensors by keyword: Python's (it sees which count) */
        goto python;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    int need = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *x = PyTuple_GET_ITEM(args, i);
        if (PyList_Check(x) || PyTuple_Check(x)) {   /* tensors in a list: flat_tensors' */
            Py_ssize_t m = PySequence_Fast_GET_SIZE(x);   /* second level, in Python */
            for (Py_ssize_t k = 0; k < m; k++)
                if (Py_IS_TYPE(PySequence_Fast_GET_ITEM(x, k), Tensor_t))
                    goto python;
            continue;   /* a shape, axes: a value */
        }
        if (!Py_IS_TYPE(x, Tensor_t))
            continue;
        PyObject *base = SLOT(x, toff[T_BASE]);
        if (base != Py_None) {   /* refresh_stale: a view written since needs Python */
            PyObject *v = SLOT(SLOT(x, toff[T_STORAGE]), soff[S_VERSION]);
            if (!PyTuple_CheckExact(base) || PyTuple_GET_SIZE(base) != 2 ||
                PyObject_RichCompareBool(PyTuple_GET_ITEM(base, 1), v, Py_EQ) != 1) {
                PyErr_Clear();
                goto python;
            }
        }
        need |= SLOT(x, toff[T_RG]) == Py_True;
    }
    if (!need) {   /* a write into a tensor autograd knows (a view made under no_grad): Python's */
        if (nargs && Py_IS_TYPE(PyTuple_GET_ITEM(args, 0), Tensor_t) &&
            SLOT(PyTuple_GET_ITEM(args, 0), toff[T_AG]) != Py_None) {
            int w = PySet_Contains(g_inplace, name);
            if (w < 0)
                return NULL;
            if (w)
                goto python;
        }
        return call_fn(fn, args, kwargs);
    }
    if (has_kw)   /* a node: its rule reads the arguments by position (Python's record moves them) */
        goto python;
    int inplace = PySet_Contains(g_inplace, name);
    if (inplace < 0)
        return NULL;
    PyObject *rule = PyDict_GetItemWithError(g_rules, name);
    if (inplace || !rule) {
        if (PyErr_Occurred())
            return NULL;
        goto python;
    }
    Py_INCREF(rule);   /* the dict may change while fn runs */
    if (set_depth(1) < 0) {
        Py_DECREF(rule);
        return NULL;
    }
    PyObject *out = call_fn(fn, args, NULL);
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    int dr = set_depth(0);
    PyErr_Restore(et, ev, tb);
    if (!out || dr < 0) {
        Py_XDECREF(out);
        Py_DECREF(rule);
        return NULL;
    }
    PyObject *const *argv = &PyTuple_GET_ITEM(args, 0);
    if (!Py_IS_TYPE(out, Tensor_t) || SLOT(out, toff[T_AG]) != Py_None) {
        PyObject *targs = PyList_New(0);   /* the tensors, for _record_tail */
        for (Py_ssize_t i = 0; targs && i < nargs; i++)
            if (Py_IS_TYPE(argv[i], Tensor_t) && PyList_Append(targs, argv[i]) < 0)
                Py_CLEAR(targs);
        PyObject *r = targs ? PyObject_CallFunctionObjArgs(g_tail, name, rule, args,
                                                           kwargs == Py_None ? empty_dict : kwargs,
                                                           out, targs, NULL) : NULL;
        Py_XDECREF(targs);
        Py_DECREF(out);
        Py_DECREF(rule);
        return r;
    }
    PyObject *ost = SLOT(out, toff[T_STORAGE]);
    int shares = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *x = argv[i];
        if (!Py_IS_TYPE(x, Tensor_t))
            continue;
        if (x == out) {   /* the op returned its input itself: already on the graph */
            Py_DECREF(rule);
            return out;
        }
        shares |= SLOT(x, toff[T_STORAGE]) == ost;
    }
    if (!shares && SLOT(out, toff[T_BASE]) != Py_None)   /* _own_outputs */
        set_slot_ref(out, toff[T_BASE], Py_None);
    PyObject *kind = NULL;
    PyObject *od = SLOT(out, toff[T_DTYPE]);
    int diff = 0;
    if ((kind = PyObject_GetAttrString(od, "kind"))) {
        diff = PyUnicode_Check(kind) && PyUnicode_GET_LENGTH(kind) == 1 &&
               (PyUnicode_READ_CHAR(kind, 0) == 'f' || PyUnicode_READ_CHAR(kind, 0) == 'c');
        Py_DECREF(kind);
    } else {
        Py_DECREF(out);
        Py_DECREF(rule);
        return NULL;
    }
    if (diff) {
        int writes = shares ? PySet_Contains(g_writes, name) : 1;
        if (writes < 0 || attach_node(name, rule, argv, nargs, out) < 0) {
            Py_DECREF(out);
            Py_DECREF(rule);
            return NULL;
        }
        if (!writes) {   /* a view of an input: meta_of(out).is_view = True */
            PyObject *m = PyObject_CallOneArg(g_meta_of, out);
            if (!m || PyObject_SetAttrString(m, "is_view", Py_True) < 0) {
                Py_XDECREF(m);
                Py_DECREF(out);
                Py_DECREF(rule);
                return NULL;
            }
            Py_DECREF(m);
        }
    }
    Py_DECREF(rule);
    return out;
python:
    if (PyErr_Occurred())
        return NULL;
    return PyObject_Vectorcall(py_record, a, na, NULL);
}

static PyMethodDef RECORD_DEF = {"record", (PyCFunction)(void (*)(void))fp_record, METH_FASTCALL,
                                 "autograd's record, in C for the common case"};

/* make_record(python record) -> the C record falling back to it */
static PyObject *fp_make_record(PyObject *self, PyObject *rec) {
    if (rec == record_obj && record_obj) {
        Py_INCREF(rec);
        return rec;
    }
    Py_INCREF(rec);
    Py_XSETREF(py_record, rec);
    if (!record_obj && !(record_obj = PyCFunction_New(&RECORD_DEF, NULL)))
        return NULL;
    Py_INCREF(record_obj);
    return record_obj;
}
