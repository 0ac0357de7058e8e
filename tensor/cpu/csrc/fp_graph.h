/* Autograd's record (autograd/graph.py: record and _attach) mirrored for the fast ops of
 * tensor/cpu/csrc/fastpath.c (included there once, after its declarations). Autograd puts in
 * _hook.fast_graph (state, Node, Ctx, Meta, AGMeta, RULES, node counter, edge_of); the C path
 * reads it when an operand takes part in autograd, and hands the call to Python where record
 * would do more than put one node on the graph (forward mode, a view to refresh). */

enum { N_NAME, N_RULE, N_CTX, N_NEXT, N_NOUT, N_MULTI, N_HOOKS, N_SAVED, N_RELEASED, N_SEQ, N_N };
static const char *N_NAMES[N_N] = {"name", "rule", "ctx", "next", "n_out", "multi", "hooks",
                                   "saved", "released", "seq"};
enum { M_SHAPE, M_DTYPE, M_DEVICE, M_N };
static const char *M_NAMES[M_N] = {"shape", "dtype", "device"};
enum { A_ACC, A_OUTPUT_NR, A_N };
static const char *A_NAMES[A_N] = {"acc", "output_nr"};
static const char *R_NAMES[1] = {"save"};
static Py_ssize_t noff[N_N], moff[M_N], aoff[A_N], rsave_off;
static PyObject *graph_cfg;   /* the _hook.fast_graph tuple the offsets were read from */
static PyObject *g_state, *g_rules, *g_seq, *g_edge_of;
static PyTypeObject *Node_t, *Ctx_t, *Meta_t, *AGMeta_t;
static PyObject *s_fast_graph, *s_record, *s_depth, *s_grad_enabled, *s_fw_level, *s_out,
    *s_args, *s_kwargs, *s_needs, *s_saved_tensors, *s_old, *empty_tuple, *op_names[5];

/* 1: the config is read (graph_cfg and friends set); 0: none (autograd not loaded); -1 error */
static int graph_config(void) {
    PyObject *cfg = PyDict_GetItemWithError(hook_dict, s_fast_graph);
    if (!cfg || cfg == Py_None)
        return PyErr_Occurred() ? -1 : 0;
    if (cfg == graph_cfg)
        return 1;
    PyObject *st, *node, *ctx, *meta, *agm, *rules, *seq, *edge;
    if (!PyArg_ParseTuple(cfg, "OO!O!O!O!O!OO", &st, &PyType_Type, &node, &PyType_Type, &ctx,
                          &PyType_Type, &meta, &PyType_Type, &agm, &PyDict_Type, &rules, &seq,
                          &edge))
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
        slot_offsets(Py_TYPE(rule), R_NAMES, 1, &rsave_off) < 0)
        return -1;
    Py_INCREF(cfg);
    Py_XSETREF(graph_cfg, cfg);   /* holds the objects below alive */
    g_state = st; g_rules = rules; g_seq = seq; g_edge_of = edge;
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
    PyObject *r = Tensor_t->tp_alloc(Tensor_t, 0);
    if (!r)
        return NULL;
    static const int same[] = {T_STORAGE, T_SHAPE, T_STRIDES, T_OFFSET, T_DTYPE};
    for (int i = 0; i < 5; i++) {
        PyObject *v = SLOT(t, toff[same[i]]);
        Py_INCREF(v);
        SLOT(r, toff[same[i]]) = v;
    }
    static const int nones[] = {T_CONTIG, T_RO, T_GRAD, T_GRADFN, T_AG, T_BASE};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(Py_None);
        SLOT(r, toff[nones[i]]) = Py_None;
    }
    Py_INCREF(Py_False);
    SLOT(r, toff[T_RG]) = Py_False;
    return r;
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

/* Put op's node on the graph for out = op(a[, b]) (_attach, for one output). 0 or -1. */
static int attach(int op, PyObject *a, PyObject *b, PyObject *out) {
    PyObject *rule = PyDict_GetItemWithError(g_rules, op_names[op]);
    if (!rule)
        return PyErr_Occurred() ? -1 : (PyErr_Format(PyExc_NotImplementedError,
                                        "autograd: no derivative rule for %R", op_names[op]), -1);
    PyObject *save = SLOT(rule, rsave_off);
    int nargs = b ? 2 : 1;
    PyObject *argv[2] = {a, b};
    PyObject *node = NULL, *edges = NULL, *saved = NULL, *ctx = NULL, *cargs = NULL,
             *needs = NULL, *ctx_out = Py_None, *seq = NULL, *kw = NULL;
    Py_INCREF(Py_None);
    int ntensors = 0;
    if (!save || !PyAnySet_Check(save) || !(edges = PyList_New(0)) || !(saved = PyList_New(0)) ||
        !(cargs = PyTuple_New(nargs)) || !(needs = PyTuple_New(nargs)))
        goto fail;
    for (int i = 0; i < nargs; i++) {
        PyObject *x = argv[i];
        int is_t = Py_IS_TYPE(x, Tensor_t);
        PyObject *need = is_t && SLOT(x, toff[T_RG]) == Py_True ? Py_True : Py_False;
        Py_INCREF(need);
        PyTuple_SET_ITEM(needs, i, need);
        if (!is_t) {
            Py_INCREF(x);
            PyTuple_SET_ITEM(cargs, i, x);
            continue;
        }
        ntensors++;
        PyObject *e = edge_of(x);
        if (!e || PyList_Append(edges, e) < 0) {
            Py_XDECREF(e);
            goto fail;
        }
        Py_DECREF(e);
        PyObject *ki = PyLong_FromLong(i);
        int kept = ki ? PySet_Contains(save, ki) : -1;
        Py_XDECREF(ki);
        if (kept < 0)
            goto fail;
        if (kept) {
            if (save_entry(saved, x) < 0)
                goto fail;
            Py_INCREF(x);
            PyTuple_SET_ITEM(cargs, i, x);
        } else {
            PyObject *m = meta_of_tensor(x);
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
    PyObject *nv[N_N] = {op_names[op], rule, ctx, edges, NULL, Py_False, Py_None, saved,
                         Py_False, seq};
    for (int i = 0; i < N_N; i++) {
        PyObject *v = i == N_NOUT ? PyLong_FromLong(1) : (Py_INCREF(nv[i]), nv[i]);
        SLOT(node, noff[i]) = v;
    }
    set_slot_ref(out, toff[T_RG], Py_True);
    set_slot(out, toff[T_GRADFN], node);   /* steals node */
    Py_DECREF(edges); Py_DECREF(saved); Py_DECREF(cargs); Py_DECREF(needs); Py_DECREF(ctx_out);
    Py_DECREF(ctx); Py_DECREF(kw); Py_DECREF(seq);
    (void)ntensors;
    return 0;
fail:
    Py_XDECREF(node); Py_XDECREF(edges); Py_XDECREF(saved); Py_XDECREF(cargs);
    Py_XDECREF(needs); Py_XDECREF(ctx_out); Py_XDECREF(ctx); Py_XDECREF(kw); Py_XDECREF(seq);
    return -1;
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
