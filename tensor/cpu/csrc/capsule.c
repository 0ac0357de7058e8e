/* Guards around the Python bodies of the DLPack capsule destructor and managed-tensor deleter
 * we export (tensor/_dlpack.py).
 *
 * A consumer may drop our capsule, or free the array it made from it, with its own exception
 * pending: NumPy's from_dlpack drops the capsule after refusing a dtype or a device, and NumPy
 * or PyTorch free a temporary array made from our capsule when an operation on it raised
 * (`np.from_dlpack(t)[0] = 1` on a read-only export). A ctypes callback cannot run with an
 * error set: ctypes reports the pending error as its own ("Exception ignored...") and clears
 * it, and the consumer then returns NULL with no exception set (SystemError). These C functions
 * set the pending error aside (PyErr_Fetch), run the Python body on a clean state and put the
 * error back (PyErr_Restore). A capsule destructor runs in the capsule's deallocation, with the
 * GIL held; a deleter may be called without it (DLPack allows it), so the deleter's guard takes
 * the GIL first (PyGILState_Ensure; nested calls are fine).
 * No Python headers: Python hands over the addresses of the API functions and of the bodies.
 */
#include <stdint.h>

typedef void (*sx_body_fn)(void *);
typedef void (*sx_fetch_fn)(void **, void **, void **);
typedef void (*sx_restore_fn)(void *, void *, void *);
typedef int (*sx_ensure_fn)(void);      /* PyGILState_STATE is a C enum */
typedef void (*sx_release_fn)(int);

static sx_body_fn sx_body, sx_deleter_body;
static sx_fetch_fn sx_fetch;
static sx_restore_fn sx_restore;
static sx_ensure_fn sx_ensure;
static sx_release_fn sx_release;

static void sx_capsule_destructor(void *capsule) {
    void *type = 0, *value = 0, *tb = 0;
    sx_fetch(&type, &value, &tb);
    sx_body(capsule);
    sx_restore(type, value, tb);
}

static void sx_managed_deleter(void *managed) {
    int gil = sx_ensure();
    void *type = 0, *value = 0, *tb = 0;
    sx_fetch(&type, &value, &tb);
    sx_deleter_body(managed);
    sx_restore(type, value, tb);
    sx_release(gil);
}

/* Install the body and the error functions; returns the destructor's address. */
intptr_t sx_capsule_guard(intptr_t body, intptr_t fetch, intptr_t restore) {
    sx_body = (sx_body_fn)body;
    sx_fetch = (sx_fetch_fn)fetch;
    sx_restore = (sx_restore_fn)restore;
    return (intptr_t)&sx_capsule_destructor;
}

/* Install the deleter's body and the GIL functions (after sx_capsule_guard); returns the
 * deleter's address. */
intptr_t sx_deleter_guard(intptr_t body, intptr_t ensure, intptr_t release) {
    sx_deleter_body = (sx_body_fn)body;
    sx_ensure = (sx_ensure_fn)ensure;
    sx_release = (sx_release_fn)release;
    return (intptr_t)&sx_managed_deleter;
}
