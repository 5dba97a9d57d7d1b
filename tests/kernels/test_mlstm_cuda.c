/* test_mlstm_cuda: the CUDA backend against the CPU reference, in fp32 and fp16: hidden states,
 * loss and all 13 gradients, each with its own tolerance, plus the callback order on the GPU.
 * Exits 77 (skipped) when no GPU answers or the library was built without CUDA.
 *
 * Tolerances. Every tensor uses |ref - got| <= atol + rtol*|ref| with atol a fraction of the
 * tensor's largest |ref| (gradients of different parameters differ by orders of magnitude, and an
 * element near 0 carries the absolute error of its larger neighbours' sums).
 *  fp32: the GPU sums in a different order (cuBLAS tiling, block reductions) but in the same
 *        precision: errors are a few ulps of the sums, amplified through T recurrent steps:
 *        rtol 1e-3 and atol 1e-4 of the max for everything; the loss (a mean of O(1) terms) 1e-5.
 *  fp16: weights and GEMM inputs are rounded to fp16 (unit roundoff 4.9e-4) and each rounding
 *        enters every product; accumulation stays fp32. Forward values (h, loss) carry ~1e-3
 *        relative error; gradients go through two more fp16 roundings (dz, dm) per step and the
 *        recurrence, so 2e-2 of the max absolute and 5e-2 relative. The weight-norm g gradients are
 *        dot products dW.v with cancellation and get the same loose bound as the rest, not tighter.
 */
#include "check.h"
#include "mlstm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double maxabs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static int compare(const char *prec, const mlstm_shape *s, const mlstm_param_info *L,
                   const float *params, const unsigned char *tok, mlstm_precision p,
                   double atol_frac, double rtol, double loss_rtol)
{
    char err[256], name[64];
    int fails = 0;
    size_t n = mlstm_num_params(s->H, s->E, s->V), nh = (size_t)s->T * s->B * s->H;
    mlstm_cpu *cpu = NULL;
    mlstm_cuda *gpu = NULL;
    float *grads = malloc(sizeof(float) * n), *hid = malloc(sizeof(float) * nh);
    float lc = 0.0f, lg = 0.0f;
    record r = {{0}, 0};
    if (!grads || !hid || mlstm_cpu_create(s, &cpu, err, sizeof err) != MLSTM_OK) {
        printf("FAIL %s: cpu create\n", prec);
        fails++;
        goto done;
    }
    int st = mlstm_cuda_create(s, p, &gpu, err, sizeof err);
    if (st != MLSTM_OK) {
        printf("FAIL %s: %s\n", prec, err);
        fails++;
        goto done;
    }
    memcpy(mlstm_cpu_params(cpu), params, sizeof(float) * n);
    if (mlstm_cpu_iteration(cpu, tok, &lc, NULL, NULL) != MLSTM_OK) {
        printf("FAIL %s: cpu iteration\n", prec);
        fails++;
        goto done;
    }
    if ((st = mlstm_cuda_set_params(gpu, params)) != MLSTM_OK ||
        (st = mlstm_cuda_forward(gpu, tok, &lg)) != MLSTM_OK ||
        (st = mlstm_cuda_get_hidden(gpu, hid)) != MLSTM_OK ||
        (st = mlstm_cuda_backward(gpu, on_ready, &r)) != MLSTM_OK ||
        (st = mlstm_cuda_get_grads(gpu, grads)) != MLSTM_OK) {
        printf("FAIL %s: %s: %s\n", prec, mlstm_strerror(st), mlstm_cuda_last_error(gpu));
        fails++;
        goto done;
    }
    snprintf(name, sizeof name, "%s loss", prec);
    fails += check_close_ff(name, &lc, &lg, 1, 0.0, loss_rtol) != 0;
    const float *hc = mlstm_cpu_hidden(cpu);
    snprintf(name, sizeof name, "%s hidden", prec);
    fails += check_close_ff(name, hc, hid, nh, atol_frac * maxabs(hc, nh), rtol) != 0;
    const float *gc = mlstm_cpu_grads(cpu);
    for (int k = 0; k < MLSTM_NPARAMS; k++) {
        snprintf(name, sizeof name, "%s %s", prec, L[k].name);
        const float *ref = gc + L[k].offset;
        fails += check_close_ff(name, ref, grads + L[k].offset, L[k].numel,
                                atol_frac * maxabs(ref, L[k].numel), rtol) != 0;
    }
    int order[MLSTM_NPARAMS], inorder = r.n == MLSTM_NPARAMS;
    mlstm_grad_ready_order(order);
    for (int i = 0; i < MLSTM_NPARAMS && i < r.n; i++)
        inorder &= r.seen[i] == order[i];
    printf("%s %s callback: %d calls in the documented order\n", inorder ? "ok  " : "FAIL", prec,
           r.n);
    fails += !inorder;
done:
    mlstm_cuda_destroy(gpu);
    mlstm_cpu_destroy(cpu);
    free(grads);
    free(hid);
    return fails;
}

int main(void)
{
    if (!mlstm_cuda_available()) {
        printf("skip: no CUDA device (or built without CUDA)\n");
        return 77;
    }
    /* sizes that exercise cuBLAS tiling (not multiples of 8 or 32) yet run in a blink */
    const mlstm_shape s = {.H = 72, .E = 12, .V = 61, .T = 9, .B = 5};
    mlstm_param_info L[MLSTM_NPARAMS];
    size_t n = 0;
    mlstm_layout(&s, L, &n);
    float *params = malloc(sizeof(float) * n);
    unsigned char tok[(9 + 1) * 5];
    if (!params)
        return 1;
    mlstm_init_params(&s, params, 424242u, 0.2f);
    check_tokens(tok, sizeof tok, s.V, 11u);
    int fails = 0;
    fails += compare("fp32", &s, L, params, tok, MLSTM_FP32, 1e-4, 1e-3, 1e-5);
    fails += compare("fp16", &s, L, params, tok, MLSTM_FP16, 2e-2, 5e-2, 2e-3);
    /* bf16 rounds to 8 significant bits where fp16 keeps 11: fp16's tolerances times 8 */
    if (mlstm_cuda_supports(MLSTM_BF16))
        fails += compare("bf16", &s, L, params, tok, MLSTM_BF16, 1.6e-1, 4e-1, 1.6e-2);
    else
        printf("skip bf16: the device is older than compute capability 8.0 (cuBLAS has no bf16 GEMM)\n");

    /* error paths on a real device */
    mlstm_cuda *g = NULL;
    char err[256];
    if (mlstm_cuda_create(&s, MLSTM_FP32, &g, err, sizeof err) == MLSTM_OK) {
        unsigned char bad[(9 + 1) * 5];
        memset(bad, 0, sizeof bad);
        bad[3] = 61;
        int ok = mlstm_cuda_prepare(g, bad) == MLSTM_EINVAL &&
                 mlstm_cuda_forward_step(g, 9) == MLSTM_EINVAL &&
                 mlstm_cuda_backward_step(g, -1) == MLSTM_EINVAL &&
                 mlstm_cuda_set_params(g, NULL) == MLSTM_EINVAL;
        printf("%s bad token, step out of range, NULL params give MLSTM_EINVAL\n",
               ok ? "ok  " : "FAIL");
        fails += !ok;
        mlstm_cuda_destroy(g);
    } else {
        printf("FAIL create: %s\n", err);
        fails++;
    }
    free(params);
    printf("%s cuda vs cpu: %d failed checks\n", fails ? "FAIL" : "ok  ", fails);
    return fails ? 1 : 0;
}
