/* test_mlstm_layout: the parameter count of DESIGN.md, contiguous layout offsets, the FLOP counts
 * and the gradient-ready callback (once per parameter, in the documented order). */
#include "check.h"
#include "mlstm.h"

#include <stdio.h>
#include <string.h>

static int fails;

static void expect(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    fails += !ok;
}

int main(void)
{
    char what[256];
    /* DESIGN.md: 86,335,744 parameters at H=4096, E=64, V=256 */
    size_t n4096 = mlstm_num_params(4096, 64, 256);
    snprintf(what, sizeof what, "parameters at H=4096 E=64 V=256: %zu (want 86335744)", n4096);
    expect(n4096 == 86335744u, what);

    const mlstm_shape big = {.H = 4096, .E = 64, .V = 256, .T = 256, .B = 32};
    mlstm_param_info L[MLSTM_NPARAMS];
    size_t total = 0;
    expect(mlstm_layout(&big, L, &total) == MLSTM_OK && total == n4096, "layout total = count");
    static const char *const names[MLSTM_NPARAMS] = {
        "encoder.weight", "decoder.weight", "decoder.bias", "b_ih", "b_hh", "w_ih_g", "w_ih_v",
        "w_hh_g", "w_hh_v", "w_mih_g", "w_mih_v", "w_mhh_g", "w_mhh_v"};
    const size_t H = 4096, E = 64, V = 256;
    const size_t shape[MLSTM_NPARAMS][2] = {{V, E}, {V, H}, {V, 1}, {4 * H, 1}, {4 * H, 1},
                                            {4 * H, 1}, {4 * H, E}, {4 * H, 1}, {4 * H, H},
                                            {H, 1}, {H, E}, {H, 1}, {H, H}};
    int contiguous = L[0].offset == 0, named = 1, shaped = 1;
    for (int i = 0; i < MLSTM_NPARAMS; i++) {
        if (i > 0 && L[i].offset != L[i - 1].offset + L[i - 1].numel)
            contiguous = 0;
        named &= strcmp(L[i].name, names[i]) == 0;
        shaped &= L[i].rows == shape[i][0] && L[i].cols == shape[i][1] &&
                  L[i].numel == L[i].rows * L[i].cols;
    }
    contiguous &= L[MLSTM_NPARAMS - 1].offset + L[MLSTM_NPARAMS - 1].numel == total;
    expect(contiguous, "offsets contiguous in registration order, ending at the total");
    expect(named, "names in DESIGN.md's registration order");
    expect(shaped, "shapes (rows, cols) as DESIGN.md");
    snprintf(what, sizeof what, "w_mhh_v offset %zu (want %zu)", L[MLSTM_W_MHH_V].offset,
             n4096 - H * H);
    expect(L[MLSTM_W_MHH_V].offset == n4096 - H * H, what);

    /* FLOPs: the iteration is three times the recurrent forward (30 T B H^2) plus the rest */
    double T = 256, B = 32;
    double it = mlstm_flops(&big, MLSTM_PHASE_ITERATION);
    double want = 30 * T * B * H * H + 30 * T * B * H * E + 6 * T * B * H * V;
    snprintf(what, sizeof what, "iteration FLOPs %.6e (want %.6e)", it, want);
    expect(it == want, what);
    expect(mlstm_flops(&big, MLSTM_PHASE_FWD_STEP) == 10 * B * H * H, "fwd_step FLOPs 10 B H^2");
    expect(mlstm_flops(&big, MLSTM_PHASE_BWD_STEP) == 10 * B * H * H, "bwd_step FLOPs 10 B H^2");
    expect(mlstm_flops(&big, MLSTM_NPHASES) == 0.0, "unknown phase: 0 FLOPs");
    expect(strcmp(mlstm_phase_name(MLSTM_PHASE_WGRAD), "wgrad") == 0, "phase name wgrad");

    /* callback order on a real backward */
    const mlstm_shape s = {.H = 6, .E = 3, .V = 9, .T = 4, .B = 2};
    char err[256];
    mlstm_cpu *m = NULL;
    if (mlstm_cpu_create(&s, &m, err, sizeof err) != MLSTM_OK) {
        printf("FAIL create: %s\n", err);
        return 1;
    }
    mlstm_init_params(&s, mlstm_cpu_params(m), 99u, 0.3f);
    unsigned char tok[(4 + 1) * 2];
    check_tokens(tok, sizeof tok, s.V, 3u);
    record r = {{0}, 0};
    int st = mlstm_cpu_iteration(m, tok, NULL, on_ready, &r);
    expect(st == MLSTM_OK, "iteration with callback returns MLSTM_OK");
    int order[MLSTM_NPARAMS];
    mlstm_grad_ready_order(order);
    snprintf(what, sizeof what, "callback fired %d times (want %d)", r.n, MLSTM_NPARAMS);
    expect(r.n == MLSTM_NPARAMS, what);
    int inorder = r.n == MLSTM_NPARAMS, once = 1;
    for (int i = 0; i < MLSTM_NPARAMS && i < r.n; i++) {
        inorder &= r.seen[i] == order[i];
        for (int j = 0; j < i; j++)
            once &= r.seen[j] != r.seen[i];
    }
    expect(once, "each parameter exactly once");
    printf("#    order:");
    for (int i = 0; i < r.n && i < 64; i++)
        printf(" %s", L[r.seen[i]].name);
    printf("\n");
    expect(inorder, "in the documented order (decoder, recurrent, input, biases, encoder)");
    expect(order[0] == MLSTM_DECODER_W && order[MLSTM_NPARAMS - 1] == MLSTM_ENCODER_W,
           "decoder.weight first, encoder.weight last");
    /* a second iteration without a callback runs too */
    expect(mlstm_cpu_iteration(m, tok, NULL, NULL, NULL) == MLSTM_OK, "iteration without callback");
    mlstm_cpu_destroy(m);
    return fails ? 1 : 0;
}
