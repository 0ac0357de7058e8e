/* CPU emulation of the CUDA device side, part 2: the scheduler (included by dialect.h, after
 * the builtin variables it sets).
 *
 * Every kernel thread runs as a fiber on the calling OS thread: blocks run one after another;
 * inside a block the threads run in index order until they finish or reach a sync point
 * (__syncthreads, __syncwarp, shuffles, ballot/vote). A block barrier waits for every
 * unfinished thread of the block, a warp barrier for the unfinished lanes of the mask. No sync
 * point: a thread runs start to end in one go. A barrier that can never complete (a deadlock)
 * fails the launch with a message naming what each thread waits on.
 *
 * Dynamic shared memory: kernels declare it with SX_EXTERN_SHARED(T, name) (common.cuh; on a
 * GPU `extern __shared__ T name[]`); here it is one 128-byte aligned buffer per module, sized
 * by the driver before a launch that asks for it (emu_set_dynamic_shared).
 *
 * tensor/cuda/emulator/__init__.py appends, for every `extern "C" __global__` entry point,
 * EMU_ENTRY(NAME): exported emu_entry_NAME(void **params) and
 * emu_launch_NAME(gx, gy, gz, bx, by, bz, params) -> 0 or an error code (message: emu_last_error()).
 */
#ifndef STRIDEX_EMU_SCHEDULER_H
#define STRIDEX_EMU_SCHEDULER_H

#if defined(__x86_64__) && !defined(EMU_USE_UCONTEXT)
#define EMU_ASM_SWITCH 1      /* hand-written switch: ~20x cheaper than swapcontext's syscall */
#else
#include <ucontext.h>         /* other architectures (or -DEMU_USE_UCONTEXT) */
#endif

/* ---------------- the fiber scheduler: state ---------------- */
#define EMU_MAX_THREADS 1024
#define EMU_MAX_WARPS (EMU_MAX_THREADS / 32)
enum { EMU_RUN = 0, EMU_WAIT_BLOCK = 1, EMU_WAIT_WARP = 2, EMU_DONE = 3 };
enum { EMU_K_SYNC = 0, EMU_K_SHFL = 1, EMU_K_VOTE = 2 };

struct emu_fiber {
    void *sp;                       /* saved stack pointer (x86-64 switch) */
#if !defined(EMU_ASM_SWITCH)
    ucontext_t uc;
#endif
    int stk;                        /* index of its stack in emu.pool->stacks, -1: not started */
    int state;
    uint3 tid;
};
struct emu_warp {
    unsigned alive;                 /* lanes that exist and have not finished */
    unsigned arrived;               /* lanes waiting at a warp barrier */
    unsigned mask[32];              /* each waiting lane's mask */
    int kind[32];
    int src[32];                    /* shuffle: the source lane computed from the mode */
    uint64_t val[32];
    uint64_t res[32];
};
/* The fibers' stacks: one pool for the process. Every module has its own scheduler state, but
 * launches run one at a time (the driver's lock), so the driver hands each module loaded
 * after the first that module's pool (emu_share_stack_pool): a process that loads many
 * modules (each fused kernel of a captured step is one) maps stacks once, not per module. */
struct emu_stack_pool {
    char *stacks[EMU_MAX_THREADS];  /* lowest usable address of each (a guard page lies below) */
    int nstacks;
    size_t stack_size;
};
static emu_stack_pool emu_own_pool;

static struct {
    emu_fiber fib[EMU_MAX_THREADS];
    emu_warp warp[EMU_MAX_WARPS];
    void *sched_sp;
#if !defined(EMU_ASM_SWITCH)
    ucontext_t sched_uc;
#endif
    emu_stack_pool *pool;           /* emu_own_pool, or the first module's */
    int free_stk[EMU_MAX_THREADS];  /* LIFO of unused stacks: a kernel without sync points runs
                                       every thread on the same (cache-hot) stack */
    int nfree;
    int nthreads, cur, done, bar_arrived, bar_count, bar_result, bar_alive, failed;
    const char *kernel;
    void (*entry)(void **);
    void **params;
    char msg[4096];
} emu;

static void emu_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emu_fail(const char *fmt, ...) {
    if (emu.failed) return;
    emu.failed = 1;
    __builtin_va_list ap;
    __builtin_va_start(ap, fmt);
    vsnprintf(emu.msg, sizeof emu.msg, fmt, ap);
    __builtin_va_end(ap);
}

/* ---------------- context switch ---------------- */
#if defined(EMU_ASM_SWITCH)
/* emu_ctx_switch(void **save_sp, void *new_sp): push the callee-saved registers, swap
 * stacks, pop them from the other stack. MXCSR and the x87 control word are not switched:
 * kernels never change them, so every fiber runs with the launching thread's settings. */
extern "C" void emu_ctx_switch(void **save, void *to) __attribute__((visibility("hidden")));
__asm__(
    ".text\n.p2align 4\n.globl emu_ctx_switch\n.hidden emu_ctx_switch\n"
    ".type emu_ctx_switch, @function\n"
    "emu_ctx_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n.size emu_ctx_switch, .-emu_ctx_switch\n");
#endif

static void emu_fiber_main();

static inline void emu_to_sched() {   /* called on a fiber: give control back */
    emu_fiber *f = &emu.fib[emu.cur];
#if defined(EMU_ASM_SWITCH)
    emu_ctx_switch(&f->sp, emu.sched_sp);
#else
    swapcontext(&f->uc, &emu.sched_uc);
#endif
    __asm__ __volatile__("" ::: "memory");
}

static inline void emu_to_fiber(int t) {   /* called by the scheduler */
    emu.cur = t;
    emu_fiber *f = &emu.fib[t];
    threadIdx = f->tid;
#if defined(EMU_ASM_SWITCH)
    emu_ctx_switch(&emu.sched_sp, f->sp);
#else
    swapcontext(&emu.sched_uc, &f->uc);
#endif
    __asm__ __volatile__("" ::: "memory");
}

static void emu_fiber_init(int t) {
    emu_fiber *f = &emu.fib[t];
    f->stk = emu.free_stk[--emu.nfree];
    char *stack = emu.pool->stacks[f->stk];
#if defined(EMU_ASM_SWITCH)
    uintptr_t top = ((uintptr_t)stack + emu.pool->stack_size) & ~(uintptr_t)15;
    uint64_t *s = (uint64_t *)top;
    s[-1] = 0;                                  /* fake return address of emu_fiber_main */
    s[-2] = (uint64_t)(uintptr_t)&emu_fiber_main;
    for (int k = 3; k <= 8; k++) s[-k] = 0;     /* rbp rbx r12 r13 r14 r15 */
    f->sp = &s[-8];
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = stack;
    f->uc.uc_stack.ss_size = emu.pool->stack_size;
    f->uc.uc_link = &emu.sched_uc;
    makecontext(&f->uc, (void (*)())emu_fiber_main, 0);
#endif
}

/* ---------------- barriers ---------------- */
static inline int emu_lane() { return emu.cur & 31; }
static inline emu_warp *emu_my_warp() { return &emu.warp[emu.cur >> 5]; }

static void emu_block_try_release() {
    int alive = emu.nthreads - emu.done;
    if (emu.bar_arrived == 0 || emu.bar_arrived < alive) return;
    for (int t = 0; t < emu.nthreads; t++)
        if (emu.fib[t].state == EMU_WAIT_BLOCK) emu.fib[t].state = EMU_RUN;
    emu.bar_result = emu.bar_count;
    emu.bar_alive = alive;
    emu.bar_arrived = 0;
    emu.bar_count = 0;
}

/* Release every group of waiting lanes whose mask's live lanes have all arrived. */
static void emu_warp_try_release(int w) {
    emu_warp *W = &emu.warp[w];
    unsigned pending = W->arrived;
    while (pending) {
        int l = __builtin_ctz(pending);
        unsigned S = (W->mask[l] | (1u << l)) & W->alive;
        pending &= ~(1u << l);
        if ((S & W->arrived) != S) continue;
        unsigned ballot = 0;
        for (unsigned m = S; m; m &= m - 1) {
            int j = __builtin_ctz(m);
            if (W->kind[j] == EMU_K_VOTE && W->val[j]) ballot |= 1u << j;
        }
        for (unsigned m = S; m; m &= m - 1) {
            int j = __builtin_ctz(m);
            if (W->kind[j] == EMU_K_SHFL) {
                int s = W->src[j];
                W->res[j] = (S >> s) & 1u ? W->val[s] : W->val[j];
            } else {
                W->res[j] = ballot | ((uint64_t)S << 32);
            }
            emu.fib[w * 32 + j].state = EMU_RUN;
        }
        W->arrived &= ~S;
        pending &= ~S;
    }
}

static inline void emu_check_fiber() {
    if (__builtin_expect(emu.cur < 0, 0)) {
        fprintf(stderr, "stridex CUDA emulator: a device intrinsic was called outside a kernel launch\n");
        abort();
    }
}

/* A warp-level collective: deposit (kind, value, source lane), wait for the group, return
 * the lane's result (shuffle: the source's value; vote: ballot in the low 32 bits, the group
 * in the high 32 bits). */
static uint64_t emu_warp_op(unsigned mask, int kind, uint64_t val, int src) {
    emu_check_fiber();
    emu_warp *W = emu_my_warp();
    int l = emu_lane();
    W->mask[l] = mask;
    W->kind[l] = kind;
    W->val[l] = val;
    W->src[l] = src;
    W->arrived |= 1u << l;
    emu.fib[emu.cur].state = EMU_WAIT_WARP;
    emu_warp_try_release(emu.cur >> 5);
    if (emu.fib[emu.cur].state != EMU_RUN) emu_to_sched();
    return W->res[l];
}

static int emu_block_sync(int pred) {
    emu_check_fiber();
    emu.bar_arrived++;
    emu.bar_count += pred != 0;
    emu.fib[emu.cur].state = EMU_WAIT_BLOCK;
    emu_block_try_release();
    if (emu.fib[emu.cur].state != EMU_RUN) emu_to_sched();
    return emu.bar_result;
}

/* ---------------- the scheduler ---------------- */
static void emu_fiber_main() {
    emu.entry(emu.params);
    emu_fiber *f = &emu.fib[emu.cur];
    f->state = EMU_DONE;
    emu.done++;
    int w = emu.cur >> 5;
    emu.warp[w].alive &= ~(1u << (emu.cur & 31));
    emu_warp_try_release(w);
    emu_block_try_release();
    emu_to_sched();
    abort();   /* a finished fiber is never resumed */
}

static size_t emu_page() { return 4096; }

static int emu_alloc_stacks(int n) {
    emu_stack_pool *p = emu.pool;
    if (!p->stack_size) {
        size_t kib = 128;
        const char *e = getenv("STRIDEX_EMU_STACK_KIB");
        if (e && atoi(e) >= 16) kib = (size_t)atoi(e);
        p->stack_size = kib * 1024;
    }
    while (p->nstacks < n) {
        size_t total = p->stack_size + emu_page();
        char *m = (char *)mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return -1;
        mprotect(m, emu_page(), PROT_NONE);     /* guard page: overflow faults, never corrupts */
        p->stacks[p->nstacks] = m + emu_page();
        p->nstacks++;
    }
    return 0;
}

static void emu_describe_deadlock(char *out, size_t cap) {
    size_t k = 0;
#define EMU_PUT(...) do { if (k < cap) k += snprintf(out + k, cap - k, __VA_ARGS__); } while (0)
    EMU_PUT("deadlock in kernel %s, block (%u,%u,%u) of grid (%u,%u,%u), block (%u,%u,%u): "
            "no thread can proceed.", emu.kernel, blockIdx.x, blockIdx.y, blockIdx.z,
            gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y, blockDim.z);
    int nb = 0;
    for (int t = 0; t < emu.nthreads; t++) nb += emu.fib[t].state == EMU_WAIT_BLOCK;
    if (nb) EMU_PUT(" %d of %d unfinished threads wait at __syncthreads;", nb, emu.nthreads - emu.done);
    for (int w = 0; w * 32 < emu.nthreads; w++) {
        emu_warp *W = &emu.warp[w];
        if (!W->arrived) continue;
        static const char *kinds[] = {"__syncwarp", "a shuffle", "a vote/ballot"};
        int l = __builtin_ctz(W->arrived);
        EMU_PUT(" warp %d: lanes 0x%08x wait at %s (mask 0x%08x; live lanes 0x%08x, of which "
                "0x%08x are elsewhere);", w, W->arrived, kinds[W->kind[l]], W->mask[l], W->alive,
                W->alive & ~W->arrived);
    }
#undef EMU_PUT
}

static int emu_launch(const char *name, void (*entry)(void **), unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, void **params) {
    emu.failed = 0;
    emu.msg[0] = 0;
    emu.kernel = name;
    unsigned long long nt = (unsigned long long)bx * by * bz;
    if (!gx || !gy || !gz || !nt || nt > EMU_MAX_THREADS) {
        emu_fail("kernel %s: invalid launch grid (%u,%u,%u) block (%u,%u,%u)", name, gx, gy, gz, bx, by, bz);
        return 1;
    }
    if (emu_alloc_stacks((int)nt) != 0) { emu_fail("kernel %s: cannot allocate fiber stacks", name); return 2; }
    emu.entry = entry;
    emu.params = params;
    emu.nthreads = (int)nt;
    gridDim = dim3(gx, gy, gz);
    blockDim = dim3(bx, by, bz);
    for (int t = 0; t < (int)nt; t++) {
        unsigned u = (unsigned)t;
        emu.fib[t].tid = uint3{u % bx, (u / bx) % by, u / (bx * by)};
    }
    int rc = 0;
    for (unsigned z = 0; z < gz && !rc; z++)
    for (unsigned y = 0; y < gy && !rc; y++)
    for (unsigned x = 0; x < gx && !rc; x++) {
        blockIdx = uint3{x, y, z};
        emu.done = 0; emu.bar_arrived = 0; emu.bar_count = 0; emu.bar_result = 0;
        for (int w = 0; w * 32 < (int)nt; w++) {
            int lanes = (int)nt - w * 32;
            emu.warp[w].alive = lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1u);
            emu.warp[w].arrived = 0;
        }
        emu.nfree = 0;
        for (int k = (int)nt - 1; k >= 0; k--) emu.free_stk[emu.nfree++] = k;
        for (int t = 0; t < (int)nt; t++) { emu.fib[t].stk = -1; emu.fib[t].state = EMU_RUN; }
        while (emu.done < (int)nt) {
            int progressed = 0;
            for (int t = 0; t < (int)nt; t++) {
                emu_fiber *f = &emu.fib[t];
                if (f->state != EMU_RUN) continue;
                if (f->stk < 0) emu_fiber_init(t);
                emu_to_fiber(t);
                if (f->state == EMU_DONE) emu.free_stk[emu.nfree++] = f->stk;   /* reusable */
                progressed = 1;
                if (emu.failed) break;
            }
            if (emu.failed) { rc = 3; break; }
            if (!progressed) {
                emu_describe_deadlock(emu.msg, sizeof emu.msg);
                emu.failed = 1;
                rc = 4;
                break;
            }
        }
    }
    emu.cur = -1;
    threadIdx = uint3{0, 0, 0};
    return rc;
}

__attribute__((constructor)) static void emu_init() { emu.cur = -1; emu.pool = &emu_own_pool; }
EMU_API const char *emu_last_error() { return emu.msg; }
EMU_API int emu_abi_version() { return 3; }
EMU_API void *emu_get_stack_pool() { return emu.pool; }
EMU_API void emu_share_stack_pool(void *pool) { emu.pool = (emu_stack_pool *)pool; }

/* ---------------- dynamic shared memory ---------------- */
static void *emu_dyn_smem = nullptr;
static size_t emu_dyn_cap = 0;
EMU_API int emu_set_dynamic_shared(size_t n) {   /* 0, or 1 when out of host memory */
    if (n <= emu_dyn_cap) return 0;
    size_t cap = (n + 127) & ~(size_t)127;
    void *p = aligned_alloc(128, cap);
    if (!p) return 1;
    free(emu_dyn_smem);
    emu_dyn_smem = p;
    emu_dyn_cap = cap;
    return 0;
}
#define SX_EXTERN_SHARED(T, name) T *name = (T *)emu_dyn_smem

template <class... A, size_t... I>
static inline void emu_call(void (*f)(A...), void **p, std::index_sequence<I...>) {
    f(*(std::remove_cv_t<std::remove_reference_t<A>> *)p[I]...);
}
template <class... A>
static inline void emu_call(void (*f)(A...), void **p) { emu_call(f, p, std::index_sequence_for<A...>{}); }

/* The byte sizes of a kernel's parameters (a stream capture copies the arguments). */
template <class... A>
static inline int emu_param_sizes(void (*)(A...), size_t *out, int cap) {
    const size_t s[] = {sizeof(std::remove_cv_t<std::remove_reference_t<A>>)..., 0};
    const int n = (int)sizeof...(A);
    for (int i = 0; i < n && i < cap; i++) out[i] = s[i];
    return n;
}

#define EMU_ENTRY(NAME)                                                                        \
EMU_API int emu_params_##NAME(size_t *out, int cap) { return emu_param_sizes(&NAME, out, cap); } \
EMU_API void emu_entry_##NAME(void **params) { emu_call(&NAME, params); }                     \
EMU_API int emu_launch_##NAME(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,\
                              unsigned bz, void **params) {                                    \
    return emu_launch(#NAME, &emu_entry_##NAME, gx, gy, gz, bx, by, bz, params);               \
}

#endif
