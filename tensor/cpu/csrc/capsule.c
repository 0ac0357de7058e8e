/* The destructor of the DLPack capsules we export (tensor/_dlpack.py), around its Python body.
 *
 * A consumer may drop our capsule with its own exception pending: NumPy's from_dlpack does so
 * after refusing a dtype or a device. A ctypes callback cannot run with an error set: ctypes
 * reports the pending error as its own ("Exception ignored...") and clears it, and the consumer
 * then returns NULL with no exception set (SystemError). This C destructor sets the pending
 * error aside (PyErr_Fetch), runs the Python body on a clean state and puts the error back
 * (PyErr_Restore). Capsule destructors run in the capsule's deallocation, with the GIL held.
 * No Python headers: Python hands over the addresses of the two API functions and the body.
 */
#include <stdint.h>

typedef void (*sx_body_fn)(void *);
typedef void (*sx_fetch_fn)(void **, void **, void **);
typedef void (*sx_restore_fn)(void *, void *, void *);

static sx_body_fn sx_body;
static sx_fetch_fn sx_fetch;
static sx_restore_fn sx_restore;

static void sx_capsule_destructor(void *capsule) {
    void *type = 0, *value = 0, *tb = 0;
    sx_fetch(&type, &value, &tb);
    sx_body(capsule);
    sx_restore(type, value, tb);
}

/* Install the body and the error functions; returns the destructor's address. */
intptr_t sx_capsule_guard(intptr_t body, intptr_t fetch, intptr_t restore) {
    sx_body = (sx_body_fn)body;
    sx_fetch = (sx_fetch_fn)fetch;
    sx_restore = (sx_restore_fn)restore;
    return (intptr_t)&sx_capsule_destructor;
}
