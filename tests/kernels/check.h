/* check.h: what the kernels tests share (header-only, static functions): the tolerance check and a
 * recorder of the gradient-ready hook's calls.
 * An element passes when |ref - got| <= atol + rtol*|ref|. A check prints one line: the worst
 * element (largest ratio of error to allowance) and its relative error, then the first mismatches,
 * at most ten. */
#ifndef DDPSIM_TESTS_KERNELS_CHECK_H
#define DDPSIM_TESTS_KERNELS_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* Returns the number of mismatches (0 = pass). ref and got are read through the accessors so the
 * same code serves float-vs-double and float-vs-float. */
static int check_close_fn(const char *name, size_t n, double (*ref)(const void *, size_t),
                          const void *refp, double (*got)(const void *, size_t), const void *gotp,
                          double atol, double rtol)
{
    size_t worst = 0, nbad = 0;
    double worst_ratio = -1.0;
    for (size_t i = 0; i < n; i++) {
        double r = ref(refp, i), g = got(gotp, i);
        double d = fabs(r - g), allow = atol + rtol * fabs(r);
        double ratio = isfinite(g) ? d / allow : INFINITY;
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            worst = i;
        }
        if (!(d <= allow))
            nbad++;
    }
    double wr = n ? ref(refp, worst) : 0.0, wg = n ? got(gotp, worst) : 0.0;
    double rel = fabs(wr - wg) / (fabs(wr) > 0.0 ? fabs(wr) : 1.0);
    printf("%s %-16s n=%-6zu worst [%zu] ref %+.6e got %+.6e rel err %.2e (atol %.0e rtol %.0e)\n",
           nbad ? "FAIL" : "ok  ", name, n, worst, wr, wg, rel, atol, rtol);
    if (nbad) {
        size_t shown = 0;
        for (size_t i = 0; i < n && shown < 10; i++) {
            double r = ref(refp, i), g = got(gotp, i);
            if (!(fabs(r - g) <= atol + rtol * fabs(r))) {
                printf("     mismatch [%zu] ref %+.6e got %+.6e\n", i, r, g);
                shown++;
            }
        }
        printf("     %zu of %zu elements out of tolerance\n", nbad, n);
    }
    return (int)nbad;
}

static double check_get_f(const void *p, size_t i) { return ((const float *)p)[i]; }
static double check_get_d(const void *p, size_t i) { return ((const double *)p)[i]; }

static inline int check_close_fd(const char *name, const double *ref, const float *got, size_t n,
                                 double atol, double rtol)
{
    return check_close_fn(name, n, check_get_d, ref, check_get_f, got, atol, rtol);
}

static inline int check_close_ff(const char *name, const float *ref, const float *got, size_t n,
                                 double atol, double rtol)
{
    return check_close_fn(name, n, check_get_f, ref, check_get_f, got, atol, rtol);
}

/* A fixed-seed byte stream: tokens below V, (n) bytes. */
static inline void check_tokens(unsigned char *tok, size_t n, int V, unsigned seed)
{
    unsigned long long s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        tok[i] = (unsigned char)((s >> 33) % (unsigned)V);
    }
}

/* The gradient-ready hook's calls, in order (the first 64), as the kernels' on_grad_ready gives
 * them: what DDP's buckets depend on. */
typedef struct {
    int seen[64];
    int n;
} record;

static inline void on_ready(int idx, void *user)
{
    record *r = user;
    if (r->n < 64)
        r->seen[r->n] = idx;
    r->n++;
}

#endif
