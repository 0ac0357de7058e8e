/* Elementwise kernel templates. The generated module instantiates, per op:
 *   SX_UNARY(name, SA, SO, expr)        expr of `a`           (C_SA -> C_SO)
 *   SX_BINARY(name, SA, SB, SO, expr)   expr of `a`, `b`
 *   SX_WHERE(name, S)                   out = c ? a : b, c bool
 * Each defines `void name(int nd, const int64_t *meta, intptr_t out, intptr_t a, [b, [c]] int nthreads)`
 * over the N-d strided loop of common.h; the run body has a unit-stride path
 * (and a scalar-operand path for binaries) that the compiler vectorises. */
#include "common.h"

#define SX_UNARY(NAME, SA, SO, EXPR)                                                   \
static void NAME##_run(char **p, const int64_t *s, int64_t n) {                       \
    T_##SO *o = (T_##SO *)p[0]; const T_##SA *x = (const T_##SA *)p[1];              \
    if (s[0] == sizeof(T_##SO) && s[1] == sizeof(T_##SA)) {                          \
        for (int64_t i = 0; i < n; i++) { C_##SA a = LD_##SA(x[i]); o[i] = ST_##SO(EXPR); } \
    } else if (s[0] == sizeof(T_##SO) && s[1] == 0) {   /* one value (a fill): once */      \
        C_##SA a = LD_##SA(x[0]); T_##SO v = ST_##SO(EXPR);                           \
        for (int64_t i = 0; i < n; i++) o[i] = v;                                     \
    } else {                                                                          \
        char *po = p[0], *pa = p[1];                                                  \
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1]) {                     \
            C_##SA a = LD_##SA(*(const T_##SA *)pa); *(T_##SO *)po = ST_##SO(EXPR); } \
    }                                                                                 \
}                                                                                     \
void NAME(int nd, const int64_t *meta, intptr_t out, intptr_t a, int nthreads) {      \
    char *P[2] = {(char *)out, (char *)a};                                            \
    sx_ew_loop(2, nd, meta, P, nthreads, NAME##_run);                                 \
}

#define SX_BINARY(NAME, SA, SB, SO, EXPR)                                              \
static void NAME##_run(char **p, const int64_t *s, int64_t n) {                       \
    T_##SO *o = (T_##SO *)p[0];                                                       \
    const T_##SA *x = (const T_##SA *)p[1]; const T_##SB *y = (const T_##SB *)p[2];  \
    if (s[0] == sizeof(T_##SO) && s[1] == sizeof(T_##SA) && s[2] == sizeof(T_##SB)) { \
        for (int64_t i = 0; i < n; i++) {                                             \
            C_##SA a = LD_##SA(x[i]); C_##SB b = LD_##SB(y[i]); o[i] = ST_##SO(EXPR); } \
    } else if (s[0] == sizeof(T_##SO) && s[1] == sizeof(T_##SA) && s[2] == 0) {      \
        C_##SB b = LD_##SB(y[0]);                                                     \
        for (int64_t i = 0; i < n; i++) { C_##SA a = LD_##SA(x[i]); o[i] = ST_##SO(EXPR); } \
    } else if (s[0] == sizeof(T_##SO) && s[1] == 0 && s[2] == sizeof(T_##SB)) {      \
        C_##SA a = LD_##SA(x[0]);                                                     \
        for (int64_t i = 0; i < n; i++) { C_##SB b = LD_##SB(y[i]); o[i] = ST_##SO(EXPR); } \
    } else {                                                                          \
        char *po = p[0], *pa = p[1], *pb = p[2];                                      \
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1], pb += s[2]) {         \
            C_##SA a = LD_##SA(*(const T_##SA *)pa); C_##SB b = LD_##SB(*(const T_##SB *)pb); \
            *(T_##SO *)po = ST_##SO(EXPR); }                                          \
    }                                                                                 \
}                                                                                     \
void NAME(int nd, const int64_t *meta, intptr_t out, intptr_t a, intptr_t b, int nthreads) { \
    char *P[3] = {(char *)out, (char *)a, (char *)b};                                 \
    sx_ew_loop(3, nd, meta, P, nthreads, NAME##_run);                                 \
}

/* where's unit-stride loop, XI / YI indexing a and b (i, or 0: a scalar operand): both values
 * loaded before the select, so that it compiles to a vector blend (`c[i] ? x[i] : y[i]` reads
 * only one, and gcc kept the loop scalar: 0.9 ns an element, 2.7 with a scalar operand) */
#define SX_WHERE_LOOP(T, XI, YI)                                                        \
    for (int64_t i = 0; i < n; i++) { T v_ = x[XI], w_ = y[YI]; o[i] = c[i] ? v_ : w_; }
#define SX_WHERE(NAME, S)                                                              \
static void NAME##_run(char **p, const int64_t *s, int64_t n) {                       \
    char *po = p[0], *pc = p[1], *pa = p[2], *pb = p[3];                              \
    const int64_t z = sizeof(T_##S);                                                  \
    if (s[0] == z && s[1] == 1 && (s[2] == z || s[2] == 0) && (s[3] == z || s[3] == 0)) { \
        T_##S *o = (T_##S *)po; const uint8_t *c = (const uint8_t *)pc;              \
        const T_##S *x = (const T_##S *)pa, *y = (const T_##S *)pb;                   \
        if (s[2] && s[3]) SX_WHERE_LOOP(T_##S, i, i)                                  \
        else if (s[2]) SX_WHERE_LOOP(T_##S, i, 0)                                     \
        else if (s[3]) SX_WHERE_LOOP(T_##S, 0, i)                                     \
        else SX_WHERE_LOOP(T_##S, 0, 0)                                               \
        return;                                                                       \
    }                                                                                 \
    for (int64_t i = 0; i < n; i++, po += s[0], pc += s[1], pa += s[2], pb += s[3])   \
        *(T_##S *)po = *(const uint8_t *)pc ? *(const T_##S *)pa : *(const T_##S *)pb; \
}                                                                                     \
void NAME(int nd, const int64_t *meta, intptr_t out, intptr_t c, intptr_t a, intptr_t b, int nthreads) { \
    char *P[4] = {(char *)out, (char *)c, (char *)a, (char *)b};                      \
    sx_ew_loop(4, nd, meta, P, nthreads, NAME##_run);                                 \
}
