/* bench_mlstm: times the mLSTM's forward step, backward step and whole iteration on one backend
 * and precision, next to plain GEMMs of the shapes the step contains, measured in the same run on
 * the same device. The ratio step/GEMM says how close the step is to the matrix-product limit.
 *
 *   bench_mlstm [-d cpu|cuda] [-p fp32|fp16|bf16] [-H 1024] [-B 32] [-T 32] [-E 64] [-V 256]
 *               [-n 5] [-w 1]
 *
 * CPU timing uses CLOCK_MONOTONIC; CUDA timing uses events on the model's stream. FLOPs count
 * matrix products only (mlstm_flops, derived in docs/kernels.md). Usage errors exit 2, runtime
 * failures 1. OPENBLAS_NUM_THREADS sets the CPU thread count.
 */
#define _POSIX_C_SOURCE 200809L
#include "mlstm.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int cuda;
    mlstm_precision prec;
    mlstm_shape s;
    int iters, warm;
} opts;

typedef struct {
    const opts *o;
    mlstm_cpu *cpu;
    mlstm_cuda *gpu;
    const uint8_t *tok;
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-d cpu|cuda] [-p fp32|fp16|bf16] [-H hidden] [-B batch] [-T steps] [-E embed]\n"
            "          [-V vocab] [-n iterations] [-w warmups]\n", argv0);
}

static int parse_int(const char *s, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
}

/* The phases, dispatched to the chosen backend. */
static int prepare(bench *b) { return b->o->cuda ? mlstm_cuda_prepare(b->gpu, b->tok) : mlstm_cpu_prepare(b->cpu, b->tok); }
static int fwd_step(bench *b, int t) { return b->o->cuda ? mlstm_cuda_forward_step(b->gpu, t) : mlstm_cpu_forward_step(b->cpu, t); }
static int bwd_step(bench *b, int t) { return b->o->cuda ? mlstm_cuda_backward_step(b->gpu, t) : mlstm_cpu_backward_step(b->cpu, t); }
static int iteration(bench *b) { return b->o->cuda ? mlstm_cuda_iteration(b->gpu, b->tok, NULL, NULL, NULL) : mlstm_cpu_iteration(b->cpu, b->tok, NULL, NULL, NULL); }
static int decoder(bench *b)
{
    if (b->o->cuda) {
        int st = mlstm_cuda_decoder_forward(b->gpu, NULL);
        return st ? st : mlstm_cuda_decoder_backward(b->gpu, NULL, NULL);
    }
    int st = mlstm_cpu_decoder_forward(b->cpu, NULL);
    return st ? st : mlstm_cpu_decoder_backward(b->cpu, NULL, NULL);
}

static int timer_start(bench *b, double *t0)
{
    *t0 = now_s();
    return b->o->cuda ? mlstm_cuda_timer_start(b->gpu) : MLSTM_OK;
}

static int timer_stop(bench *b, double t0, double *sec)
{
    if (b->o->cuda)
        return mlstm_cuda_timer_stop(b->gpu, sec);
    *sec = now_s() - t0;
    return MLSTM_OK;
}

/* Mean seconds of one forward step over all T steps, `iters` passes after `warm` passes. */
static int time_fwd_step(bench *b, double *sec)
{
    int st = MLSTM_OK, T = b->o->s.T;
    double t0 = 0, total = 0;
    for (int r = 0; r < b->o->warm + b->o->iters && st == MLSTM_OK; r++) {
        st = prepare(b);
        if (st == MLSTM_OK)
            st = timer_start(b, &t0);
        for (int t = 0; t < T && st == MLSTM_OK; t++)
            st = fwd_step(b, t);
        double s = 0;
        if (st == MLSTM_OK)
            st = timer_stop(b, t0, &s);
        if (r >= b->o->warm)
            total += s;
    }
    *sec = total / ((double)b->o->iters * T);
    return st;
}

static int time_bwd_step(bench *b, double *sec)
{
    int st = MLSTM_OK, T = b->o->s.T;
    double t0 = 0, total = 0;
    for (int r = 0; r < b->o->warm + b->o->iters && st == MLSTM_OK; r++) {
        st = decoder(b); /* resets dlogits so repeated BPTT passes see the same inputs */
        if (st == MLSTM_OK)
            st = timer_start(b, &t0);
        for (int t = T - 1; t >= 0 && st == MLSTM_OK; t--)
            st = bwd_step(b, t);
        double s = 0;
        if (st == MLSTM_OK)
            st = timer_stop(b, t0, &s);
        if (r >= b->o->warm)
            total += s;
    }
    *sec = total / ((double)b->o->iters * T);
    return st;
}

static int time_iteration(bench *b, double *sec)
{
    int st = MLSTM_OK;
    double t0 = 0, total = 0;
    for (int r = 0; r < b->o->warm + b->o->iters && st == MLSTM_OK; r++) {
        st = timer_start(b, &t0);
        if (st == MLSTM_OK)
            st = iteration(b);
        double s = 0;
        if (st == MLSTM_OK)
            st = timer_stop(b, t0, &s);
        if (r >= b->o->warm)
            total += s;
    }
    *sec = total / b->o->iters;
    return st;
}

/* Seconds of one plain GEMM (M,N,K) like the model's: row-major, A (M,K) times B^T with B (N,K) */
static int time_gemm(bench *b, int M, int N, int K, double *sec)
{
    int reps = 20;
    if (b->o->cuda)
        return mlstm_cuda_bench_gemm(b->gpu, M, N, K, reps, sec);
    float *A = calloc((size_t)M * K, sizeof(float)), *Bm = calloc((size_t)N * K, sizeof(float));
    float *C = calloc((size_t)M * N, sizeof(float));
    if (!A || !Bm || !C) {
        free(A); free(Bm); free(C);
        return MLSTM_ENOMEM;
    }
    for (size_t i = 0; i < (size_t)M * K; i++)
        A[i] = 0.001f * (float)(i % 97);
    for (size_t i = 0; i < (size_t)N * K; i++)
        Bm[i] = 0.002f * (float)(i % 89);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, A, K, Bm, K, 0.0f, C, N);
    double t0 = now_s();
    for (int r = 0; r < reps; r++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, A, K, Bm, K, 0.0f, C, N);
    *sec = (now_s() - t0) / reps;
    free(A); free(Bm); free(C);
    return MLSTM_OK;
}

static void row(const char *name, double sec, double flops, double gemm_sec, double gemm_flops)
{
    printf("%12s %12.4f %10.3f %12.2f %12.4f %12.2f %8.2f\n", name, sec * 1e3, flops * 1e-9,
           flops / sec * 1e-9, gemm_sec * 1e3, gemm_flops / gemm_sec * 1e-9, sec / gemm_sec);
}

int main(int argc, char **argv)
{
    opts o = {.cuda = 0, .prec = MLSTM_FP32, .s = {.H = 1024, .E = 64, .V = 256, .T = 32, .B = 32},
              .iters = 5, .warm = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = !v || strlen(a) != 2 || a[0] != '-';
        if (!bad) {
            switch (a[1]) {
            case 'd': bad = strcmp(v, "cpu") && strcmp(v, "cuda"); o.cuda = !strcmp(v, "cuda"); break;
            case 'p': bad = strcmp(v, "fp32") && strcmp(v, "fp16") && strcmp(v, "bf16");
                      o.prec = !strcmp(v, "fp16") ? MLSTM_FP16 : !strcmp(v, "bf16") ? MLSTM_BF16 : MLSTM_FP32;
                      break;
            case 'H': bad = parse_int(v, &o.s.H); break;
            case 'B': bad = parse_int(v, &o.s.B); break;
            case 'T': bad = parse_int(v, &o.s.T); break;
            case 'E': bad = parse_int(v, &o.s.E); break;
            case 'V': bad = parse_int(v, &o.s.V); break;
            case 'n': bad = parse_int(v, &o.iters) || o.iters < 1; break;
            case 'w': bad = parse_int(v, &o.warm); break;
            default: bad = 1;
            }
        }
        if (bad) {
            fprintf(stderr, "bench_mlstm: bad argument '%s%s%s'\n", a, v ? " " : "", v ? v : "");
            usage(argv[0]);
            return 2;
        }
        i++;
    }
    if (mlstm_shape_check(&o.s) != MLSTM_OK) {
        fprintf(stderr, "bench_mlstm: bad shape: %s\n", mlstm_strerror(mlstm_shape_check(&o.s)));
        return 2;
    }
    if (!o.cuda && o.prec != MLSTM_FP32) {
        fprintf(stderr, "bench_mlstm: the CPU backend is fp32 only\n");
        return 2;
    }

    char err[256];
    int st;
    bench b = {.o = &o};
    size_t n = mlstm_num_params(o.s.H, o.s.E, o.s.V);
    size_t ntok = (size_t)(o.s.T + 1) * o.s.B;
    float *params = malloc(sizeof(float) * n);
    uint8_t *tok = malloc(ntok);
    if (!params || !tok) {
        fprintf(stderr, "bench_mlstm: out of memory\n");
        free(params); free(tok);
        return 1;
    }
    for (size_t i = 0; i < ntok; i++)
        tok[i] = (uint8_t)((i * 2654435761u >> 7) % (unsigned)o.s.V);
    b.tok = tok;
    mlstm_init_params(&o.s, params, 1u, 0.05f);
    if (o.cuda) {
        st = mlstm_cuda_create(&o.s, o.prec, &b.gpu, err, sizeof err);
        if (st == MLSTM_OK)
            st = mlstm_cuda_set_params(b.gpu, params);
    } else {
        st = mlstm_cpu_create(&o.s, &b.cpu, err, sizeof err);
        if (st == MLSTM_OK)
            memcpy(mlstm_cpu_params(b.cpu), params, sizeof(float) * n);
    }
    free(params);
    if (st != MLSTM_OK) {
        fprintf(stderr, "bench_mlstm: %s\n", b.gpu || b.cpu ? mlstm_strerror(st) : err);
        mlstm_cuda_destroy(b.gpu);
        mlstm_cpu_destroy(b.cpu);
        free(tok);
        return 1;
    }

    const int H = o.s.H, B = o.s.B, TB = o.s.T * o.s.B;
    double t_fwd = 0, t_bwd = 0, t_it = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, gw = 0;
    /* forward step = (B,H,H) + (B,4H,H); backward step = (B,H,4H) + (B,H,H); the iteration is
     * compared with the largest weight-gradient GEMM (4H, H, T*B) */
    if ((st = time_iteration(&b, &t_it)) == MLSTM_OK && (st = time_fwd_step(&b, &t_fwd)) == MLSTM_OK &&
        (st = time_bwd_step(&b, &t_bwd)) == MLSTM_OK && (st = time_gemm(&b, B, H, H, &g1)) == MLSTM_OK &&
        (st = time_gemm(&b, B, 4 * H, H, &g2)) == MLSTM_OK &&
        (st = time_gemm(&b, B, H, 4 * H, &g3)) == MLSTM_OK &&
        (st = time_gemm(&b, B, H, H, &g4)) == MLSTM_OK)
        st = time_gemm(&b, 4 * H, H, TB, &gw);
    if (st != MLSTM_OK) {
        fprintf(stderr, "bench_mlstm: %s%s%s\n", mlstm_strerror(st), o.cuda ? ": " : "",
                o.cuda ? mlstm_cuda_last_error(b.gpu) : "");
        mlstm_cuda_destroy(b.gpu);
        mlstm_cpu_destroy(b.cpu);
        free(tok);
        return 1;
    }
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    printf("# bench_mlstm: backend %s, precision %s, H=%d E=%d V=%d T=%d B=%d, %d timed x %d warm-up%s%s\n",
           o.cuda ? "cuda" : "cpu", o.prec == MLSTM_FP16 ? "fp16" : o.prec == MLSTM_BF16 ? "bf16" : "fp32", H, o.s.E, o.s.V, o.s.T,
           B, o.iters, o.warm, o.cuda ? "" : ", OPENBLAS_NUM_THREADS=", o.cuda ? "" : (threads ? threads : "unset"));
    printf("# %10s %12s %10s %12s %12s %12s %8s\n", "phase", "time", "work", "achieved", "plain_gemm",
           "gemm_rate", "ratio");
    printf("# %10s %12s %10s %12s %12s %12s %8s\n", "", "(ms)", "(GFLOP)", "(GFLOP/s)", "(ms)",
           "(GFLOP/s)", "(x)");
    double f_fwd = mlstm_flops(&o.s, MLSTM_PHASE_FWD_STEP), f_bwd = mlstm_flops(&o.s, MLSTM_PHASE_BWD_STEP);
    double f_it = mlstm_flops(&o.s, MLSTM_PHASE_ITERATION);
    row("fwd_step", t_fwd, f_fwd, g1 + g2, f_fwd);
    row("bwd_step", t_bwd, f_bwd, g3 + g4, f_bwd);
    double f_w = 2.0 * 4 * H * (double)H * TB;
    row("iteration", t_it, f_it, gw * f_it / f_w, f_it);
    printf("# ratio = phase time / time of plain GEMMs doing the same matrix products (1.00 = at the\n"
           "# GEMM limit). Steps: the step's own GEMM shapes; iteration: the (4H, H, T*B) weight-\n"
           "# gradient GEMM's rate applied to all the iteration's FLOPs.\n");
    printf("# fwd_step / its plain GEMMs: %.2fx\n", t_fwd / (g1 + g2));
    mlstm_cuda_destroy(b.gpu);
    mlstm_cpu_destroy(b.cpu);
    free(tok);
    return 0;
}
