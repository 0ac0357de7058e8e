/* The CPU caching allocator's hot path in C, for tensor/cpu/csrc/fastpath.c (included once,
 * after its declarations): malloc's exact-size cache and free's _park, mirrored on the
 * allocator's own Python objects. */
/* ------------------------------------------------------------------ the allocator's hot path */

/* Whether the allocator's plain state holds: no thread inside a library lock (the Python
 * paths mark _BUSY before they take the allocator's lock), no queued frees or adoptions. */
static int allocator_plain(void) {
    if (PyDict_GET_SIZE(busy) != 0)
        return 0;
    PyObject *a = PyDict_GetItemWithError(alloc_dict, s_adopt);
    PyObject *p = PyDict_GetItemWithError(alloc_dict, s_pending);
    return a && p && PyList_Check(a) && PyList_Check(p) && PyList_GET_SIZE(a) == 0 &&
           PyList_GET_SIZE(p) == 0;
}

static inline int capture_running(void) {
    PyObject *c = PyDict_GetItemWithError(hook_dict, s_capture);
    return c == NULL || c != Py_None;
}

typedef struct { PyObject *key; long long v; } counter_t;

/* read counters into c[0..n); -1 (no error set) when one is missing or not an int */
static int read_counters(counter_t *c, int n) {
    for (int i = 0; i < n; i++) {
        PyObject *v = PyDict_GetItemWithError(alloc_dict, c[i].key);
        if (!v || !PyLong_CheckExact(v))
            return -1;
        c[i].v = PyLong_AsLongLong(v);
        if (c[i].v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
    }
    return 0;
}

static int write_counters(counter_t *c, int n) {
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLongLong(c[i].v);
        if (!v || PyDict_SetItem(alloc_dict, c[i].key, v) < 0) {
            Py_XDECREF(v);
            return -1;
        }
        Py_DECREF(v);
    }
    return 0;
}

static inline long long long_slot(PyObject *o, Py_ssize_t off) {
    PyObject *v = SLOT(o, off);
    if (!v || !PyLong_CheckExact(v))
        return -1;
    long long r = PyLong_AsLongLong(v);
    if (r == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return r;
}

/* A Storage of nbytes from the exact-size cache (malloc's hot path and _count_malloc, mirrored);
 * NULL with no error set: not served here (the caller takes the Python path). */
static PyObject *quick_storage(long long nbytes) {
    long long size = nbytes ? ((nbytes + 511) & -512LL) : 512;
    if (size > quick_max || !allocator_plain())
        return NULL;
    PyObject *quick = PyDict_GetItemWithError(alloc_dict, s_quick);
    if (!quick || !PyDict_CheckExact(quick))
        return NULL;
    PyObject *ksize = PyLong_FromLongLong(size);
    if (!ksize)
        return NULL;
    PyObject *q = PyDict_GetItemWithError(quick, ksize);
    Py_DECREF(ksize);
    if (!q || !PyList_CheckExact(q) || PyList_GET_SIZE(q) == 0)
        return NULL;
    Py_ssize_t last = PyList_GET_SIZE(q) - 1;
    PyObject *b = PyList_GET_ITEM(q, last);
    if (!Py_IS_TYPE(b, Block_t))
        return NULL;
    long long ptr = long_slot(b, boff[B_PTR]);
    counter_t c[7] = {{s_allocated, 0}, {s_allocated_peak, 0}, {s_requested, 0},
                      {s_requested_peak, 0}, {s_active, 0}, {s_active_peak, 0},
                      {s_num_mallocs, 0}};
    if (ptr < 0 || read_counters(c, 7) < 0)
        return NULL;
    PyObject *st = Storage_t->tp_alloc(Storage_t, 0);
    PyObject *pptr = PyLong_FromLongLong(ptr), *pn = PyLong_FromLongLong(nbytes);
    if (!st || !pptr || !pn) {
        Py_XDECREF(st); Py_XDECREF(pptr); Py_XDECREF(pn);
        PyErr_Clear();
        return NULL;
    }
    Py_INCREF(b);   /* the list's reference goes to the Storage */
    if (PyList_SetSlice(q, last, last + 1, NULL) < 0) {
        Py_DECREF(b); Py_DECREF(st); Py_DECREF(pptr); Py_DECREF(pn);
        PyErr_Clear();
        return NULL;
    }
    c[0].v += size;
    if (c[0].v > c[1].v) c[1].v = c[0].v;
    c[2].v += nbytes;
    if (c[2].v > c[3].v) c[3].v = c[2].v;
    c[4].v += 1;
    if (c[4].v > c[5].v) c[5].v = c[4].v;
    c[6].v += 1;
    set_slot_ref(b, boff[B_QUICK], Py_False);
    set_slot_ref(b, boff[B_ALLOCATED], Py_True);
    set_slot_ref(b, boff[B_REQUESTED], pn);
    if (write_counters(c, 7) < 0) {   /* out of memory for an int: the block stays lent */
        PyErr_Clear();
    }
    SLOT(st, soff[S_PTR]) = pptr;
    SLOT(st, soff[S_NBYTES]) = pn;
    Py_INCREF(cpu_device); SLOT(st, soff[S_DEVICE]) = cpu_device;
    SLOT(st, soff[S_BLOCK]) = b;
    Py_INCREF(cpu_alloc); SLOT(st, soff[S_ALLOC]) = cpu_alloc;
    Py_INCREF(Py_None); SLOT(st, soff[S_OWNER]) = Py_None;
    Py_INCREF(Py_None); SLOT(st, soff[S_RELEASE]) = Py_None;
    SLOT(st, soff[S_VERSION]) = PyLong_FromLong(0);
    Py_INCREF(Py_None); SLOT(st, soff[S_STREAMS]) = Py_None;
    Py_INCREF(Py_False); SLOT(st, soff[S_READONLY]) = Py_False;
    storage_hits++;
    return st;
}

/* A Storage of nbytes on the CPU: the cache, else the backend's Python path. */
static PyObject *storage_of(long long nbytes) {
    PyObject *st = quick_storage(nbytes);
    if (st || PyErr_Occurred())
        return st;
    PyObject *n = PyLong_FromLongLong(nbytes);
    if (!n)
        return NULL;
    st = PyObject_CallFunctionObjArgs(py_new_storage, n, cpu_device, NULL);
    Py_DECREF(n);
    return st;
}

static PyObject *fp_new_storage(PyObject *self, PyObject *arg) {
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0 || capture_running())
        Py_RETURN_NONE;
    PyObject *st = quick_storage(n);
    if (st || PyErr_Occurred())
        return st;
    Py_RETURN_NONE;
}

/* Storage.__del__: a CPU cache block parks in the exact-size cache (free + _park, mirrored;
 * the Storage's handle is the one parked: it never left the Storage). Else the Python one. */
static PyObject *fp_storage_del(PyObject *self, PyObject *unused) {
    PyObject *b = SLOT(self, soff[S_BLOCK]);
    PyObject *seg, *segs, *quick;
    long long size, req, stream;
    counter_t c[4] = {{s_allocated, 0}, {s_requested, 0}, {s_active, 0}, {s_num_frees, 0}};
    if (!b || !Py_IS_TYPE(b, Block_t) || SLOT(self, soff[S_ALLOC]) != cpu_alloc ||
        SLOT(self, soff[S_STREAMS]) != Py_None || capture_running() || !allocator_plain())
        goto python;
    seg = SLOT(b, boff[B_SEGMENT]);
    if (!seg || seg == Py_None || SLOT(b, boff[B_ALLOCATED]) != Py_True)
        goto python;
    size = long_slot(b, boff[B_SIZE]);
    req = long_slot(b, boff[B_REQUESTED]);
    stream = long_slot(b, boff[B_STREAM]);
    if (size < 0 || size > quick_max || req < 0 || stream != 0)
        goto python;
    segs = PyDict_GetItemWithError(alloc_dict, s_segments);
    quick = PyDict_GetItemWithError(alloc_dict, s_quick);
    if (!segs || !PyDict_CheckExact(segs) || !quick || !PyDict_CheckExact(quick))
        goto python;
    PyObject *sp = SLOT(seg, seg_ptr_off);
    if (!sp || PyDict_GetItemWithError(segs, sp) != seg || read_counters(c, 4) < 0)
        goto python;
    PyObject *ksize = SLOT(b, boff[B_SIZE]);
    PyObject *q = PyDict_GetItemWithError(quick, ksize);
    if (q == NULL) {
        if (PyErr_Occurred())
            goto python;
        q = PyList_New(0);
        if (!q || PyDict_SetItem(quick, ksize, q) < 0) {
            Py_XDECREF(q);
            goto python;
        }
        Py_DECREF(q);   /* the dict holds it */
    } else if (!PyList_CheckExact(q)) {
        goto python;
    }
    if (PyList_Append(q, b) < 0)
        goto python;
    SLOT(self, soff[S_BLOCK]) = Py_None;   /* the Storage's reference: given up below */
    Py_INCREF(Py_None);
    set_slot_ref(b, boff[B_QUICK], Py_True);
    set_slot_ref(b, boff[B_ALLOCATED], Py_False);
    set_slot(b, boff[B_REQUESTED], PyLong_FromLong(0));
    Py_DECREF(b);
    c[0].v -= size;
    c[1].v -= req;
    c[2].v -= 1;
    c[3].v += 1;
    if (write_counters(c, 4) < 0)
        PyErr_Clear();
    del_hits++;
    Py_RETURN_NONE;
python:
    PyErr_Clear();
    return PyObject_CallOneArg(py_storage_del, self);
}
