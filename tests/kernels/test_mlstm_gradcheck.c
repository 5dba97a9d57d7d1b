/* test_mlstm_gradcheck: the CPU reference's loss and all 13 gradients against an independent
 * double-precision forward (plain loops, no BLAS) and central finite differences on it.
 *
 * Why double: fp32 central differences of a loss near 2.4 carry rounding noise of about
 * 2.4 * 6e-8 / eps, which at any usable eps is comparable to the smaller gradients here. In double
 * with eps = 1e-6 the truncation error (eps^2 * f''') and rounding (1e-16 / eps) are both below
 * 1e-9, so the finite differences are exact for our purpose and the test measures only the fp32
 * error of the library's analytic gradients.
 *
 * Tolerance for analytic fp32 vs exact: atol 1e-7, rtol 1e-4. The library sums T*B = 15 positions
 * of products of O(1) activations in fp32 (unit roundoff 6e-8) through 5 recurrent steps: a few
 * ulps of the gradient's scale (1e-3 .. 1e-5 here), i.e. absolute errors of a few 1e-9 and relative
 * errors up to ~1e-4 on the smallest elements, where rounding of the terms that cancel dominates.
 * atol covers elements near 0 (30x above the largest absolute error seen, 3e-9), rtol the rest.
 */
#include "check.h"
#include "mlstm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Effective weight-normed matrix in double: w[r,c] = g[r] v[r,c] / ||v[r,:]|| */
static void wn(const double *g, const double *v, int rows, int cols, double *w)
{
    for (int r = 0; r < rows; r++) {
        double ss = 0.0;
        for (int c = 0; c < cols; c++)
            ss += v[r * cols + c] * v[r * cols + c];
        double n = sqrt(ss);
        for (int c = 0; c < cols; c++)
            w[r * cols + c] = g[r] * v[r * cols + c] / n;
    }
}

/* The mLSTM loss in double, written from DESIGN.md independently of mlstm_cpu.c. */
static double ref_loss(const mlstm_shape *s, const mlstm_param_info *L, const double *P,
                       const unsigned char *tok)
{
    const int H = s->H, E = s->E, V = s->V, T = s->T, B = s->B;
    double *wih = malloc(sizeof(double) * 4 * H * E), *whh = malloc(sizeof(double) * 4 * H * H);
    double *wmih = malloc(sizeof(double) * H * E), *wmhh = malloc(sizeof(double) * H * H);
    double *h = calloc((size_t)B * H, sizeof(double)), *c = calloc((size_t)B * H, sizeof(double));
    double *hn = malloc(sizeof(double) * H), *cn = malloc(sizeof(double) * H);
    double *mv = malloc(sizeof(double) * H), *z = malloc(sizeof(double) * 4 * H);
    if (!wih || !whh || !wmih || !wmhh || !h || !c || !hn || !cn || !mv || !z) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    wn(P + L[MLSTM_W_IH_G].offset, P + L[MLSTM_W_IH_V].offset, 4 * H, E, wih);
    wn(P + L[MLSTM_W_HH_G].offset, P + L[MLSTM_W_HH_V].offset, 4 * H, H, whh);
    wn(P + L[MLSTM_W_MIH_G].offset, P + L[MLSTM_W_MIH_V].offset, H, E, wmih);
    wn(P + L[MLSTM_W_MHH_G].offset, P + L[MLSTM_W_MHH_V].offset, H, H, wmhh);
    const double *enc = P + L[MLSTM_ENCODER_W].offset, *dw = P + L[MLSTM_DECODER_W].offset;
    const double *db = P + L[MLSTM_DECODER_B].offset;
    const double *bih = P + L[MLSTM_B_IH].offset, *bhh = P + L[MLSTM_B_HH].offset;
    double loss = 0.0;
    for (int t = 0; t < T; t++) {
        for (int b = 0; b < B; b++) {
            const double *x = enc + (size_t)tok[t * B + b] * E;
            double *hb = h + (size_t)b * H, *cb = c + (size_t)b * H;
            for (int j = 0; j < H; j++) {
                double a = 0.0, r = 0.0;
                for (int e = 0; e < E; e++)
                    a += wmih[j * E + e] * x[e];
                for (int k = 0; k < H; k++)
                    r += wmhh[j * H + k] * hb[k];
                mv[j] = a * r;
            }
            for (int q = 0; q < 4 * H; q++) {
                double a = bih[q] + bhh[q];
                for (int e = 0; e < E; e++)
                    a += wih[q * E + e] * x[e];
                for (int k = 0; k < H; k++)
                    a += whh[q * H + k] * mv[k];
                z[q] = a;
            }
            for (int j = 0; j < H; j++) {
                double i = sigmoid(z[j]), f = sigmoid(z[H + j]), g = tanh(z[2 * H + j]);
                double o = sigmoid(z[3 * H + j]);
                cn[j] = f * cb[j] + i * g;
                hn[j] = o * tanh(cn[j]);
            }
            memcpy(hb, hn, sizeof(double) * H);
            memcpy(cb, cn, sizeof(double) * H);
            /* decoder and cross-entropy against the next byte */
            double mx = -INFINITY;
            double *logits = malloc(sizeof(double) * V);
            if (!logits)
                exit(1);
            for (int v = 0; v < V; v++) {
                double a = db[v];
                for (int k = 0; k < H; k++)
                    a += dw[v * H + k] * hb[k];
                logits[v] = a;
                mx = a > mx ? a : mx;
            }
            double sum = 0.0;
            for (int v = 0; v < V; v++)
                sum += exp(logits[v] - mx);
            loss += log(sum) + mx - logits[tok[(t + 1) * B + b]];
            free(logits);
        }
    }
    free(wih); free(whh); free(wmih); free(wmhh); free(h); free(c);
    free(hn); free(cn); free(mv); free(z);
    return loss / (T * B);
}

int main(void)
{
    const mlstm_shape s = {.H = 8, .E = 4, .V = 11, .T = 5, .B = 3};
    mlstm_param_info L[MLSTM_NPARAMS];
    size_t n = 0;
    char err[256];
    int fails = 0;
    if (mlstm_layout(&s, L, &n) != MLSTM_OK) {
        printf("FAIL layout\n");
        return 1;
    }
    mlstm_cpu *m = NULL;
    if (mlstm_cpu_create(&s, &m, err, sizeof err) != MLSTM_OK) {
        printf("FAIL create: %s\n", err);
        return 1;
    }
    float *p = mlstm_cpu_params(m);
    mlstm_init_params(&s, p, 20240611u, 0.45f);
    /* uneven g so that W != v, and non-zero biases */
    for (int k = MLSTM_W_IH_G; k <= MLSTM_W_MHH_G; k += 2)
        for (size_t r = 0; r < L[k].numel; r++)
            p[L[k].offset + r] *= 0.73f + 0.061f * (float)(r % 7);

    unsigned char tok[(5 + 1) * 3];
    check_tokens(tok, sizeof tok, s.V, 7u);

    float loss = 0.0f;
    int st = mlstm_cpu_iteration(m, tok, &loss, NULL, NULL);
    if (st != MLSTM_OK) {
        printf("FAIL iteration: %s\n", mlstm_strerror(st));
        mlstm_cpu_destroy(m);
        return 1;
    }
    const float *grad = mlstm_cpu_grads(m);

    double *P = malloc(sizeof(double) * n), *fd = malloc(sizeof(double) * n);
    if (!P || !fd) {
        printf("FAIL out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        P[i] = p[i];
    double lref = ref_loss(&s, L, P, tok);
    /* loss: a mean of 15 log-softmax terms of size ~2.4, each computed in fp32 */
    fails += check_close_fd("loss", &lref, &loss, 1, 1e-6, 1e-5) != 0;

    const double eps = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double keep = P[i];
        P[i] = keep + eps;
        double lp = ref_loss(&s, L, P, tok);
        P[i] = keep - eps;
        double lm = ref_loss(&s, L, P, tok);
        P[i] = keep;
        fd[i] = (lp - lm) / (2 * eps);
    }
    for (int k = 0; k < MLSTM_NPARAMS; k++)
        fails += check_close_fd(L[k].name, fd + L[k].offset, grad + L[k].offset, L[k].numel,
                                1e-7, 1e-4) != 0;
    free(P);
    free(fd);
    mlstm_cpu_destroy(m);
    printf("%s gradcheck: %d of %d checks failed\n", fails ? "FAIL" : "ok  ", fails,
           MLSTM_NPARAMS + 1);
    return fails ? 1 : 0;
}
