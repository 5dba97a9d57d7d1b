/* mlstm.c: what both backends share: statuses, shape checks, the parameter layout, the
 * deterministic initialisation and the FLOP counts (derived in docs/kernels.md). */
#include "mlstm.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>

const char *mlstm_strerror(int status)
{
    switch (status) {
    case MLSTM_OK: return "ok";
    case MLSTM_EINVAL: return "invalid argument";
    case MLSTM_ENOMEM: return "out of memory";
    case MLSTM_ENODEV: return "no usable GPU (or built without CUDA)";
    case MLSTM_ECUDA: return "CUDA runtime error";
    case MLSTM_ECUBLAS: return "cuBLAS error";
    case MLSTM_EOVERFLOW: return "sizes overflow the index types";
    default: return "unknown mlstm status";
    }
}

int mlstm_shape_check(const mlstm_shape *s)
{
    if (!s || s->H < 1 || s->E < 1 || s->V < 1 || s->T < 1 || s->B < 1 || s->V > 256)
        return MLSTM_EINVAL;
    /* The largest buffers are (T*B, 4H) activations and (4H, H) weights; BLAS takes int sizes
     * and leading dimensions, and the CUDA kernels index with int. */
    double pos = (double)s->T * s->B;
    double big = pos * 4.0 * s->H;
    double w = 4.0 * s->H * ((double)s->H + s->E + 1.0);
    if (pos > INT_MAX || big > INT_MAX || w > INT_MAX || (double)s->V * s->H > INT_MAX)
        return MLSTM_EOVERFLOW;
    return MLSTM_OK;
}

size_t mlstm_num_params(int H, int E, int V)
{
    mlstm_shape s = {H, E, V, 1, 1};
    size_t total = 0;
    mlstm_param_info t[MLSTM_NPARAMS];
    if (mlstm_layout(&s, t, &total) != MLSTM_OK)
        return 0;
    return total;
}

int mlstm_layout(const mlstm_shape *s, mlstm_param_info table[MLSTM_NPARAMS], size_t *total)
{
    if (!table || mlstm_shape_check(s) != MLSTM_OK)
        return MLSTM_EINVAL;
    size_t H = (size_t)s->H, E = (size_t)s->E, V = (size_t)s->V;
    static const char *const names[MLSTM_NPARAMS] = {
        "encoder.weight", "decoder.weight", "decoder.bias", "b_ih", "b_hh",
        "w_ih_g", "w_ih_v", "w_hh_g", "w_hh_v", "w_mih_g", "w_mih_v", "w_mhh_g", "w_mhh_v"};
    const size_t shape[MLSTM_NPARAMS][2] = {
        {V, E}, {V, H}, {V, 1}, {4 * H, 1}, {4 * H, 1},
        {4 * H, 1}, {4 * H, E}, {4 * H, 1}, {4 * H, H},
        {H, 1}, {H, E}, {H, 1}, {H, H}};
    size_t off = 0;
    for (int i = 0; i < MLSTM_NPARAMS; i++) {
        table[i].name = names[i];
        table[i].offset = off;
        table[i].rows = shape[i][0];
        table[i].cols = shape[i][1];
        table[i].numel = shape[i][0] * shape[i][1];
        off += table[i].numel;
    }
    if (total)
        *total = off;
    return MLSTM_OK;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int mlstm_init_params(const mlstm_shape *s, float *params, uint64_t seed, float scale)
{
    mlstm_param_info t[MLSTM_NPARAMS];
    size_t total = 0;
    if (!params || !(scale >= 0.0f) || mlstm_layout(s, t, &total) != MLSTM_OK)
        return MLSTM_EINVAL;
    uint64_t st = seed;
    for (size_t i = 0; i < total; i++) {
        /* 24 random bits -> [0, 1) exactly representable in float */
        float u = (float)(splitmix64(&st) >> 40) * (1.0f / 16777216.0f);
        params[i] = (2.0f * u - 1.0f) * scale;
    }
    static const int gv[4][2] = {{MLSTM_W_IH_G, MLSTM_W_IH_V}, {MLSTM_W_HH_G, MLSTM_W_HH_V},
                                 {MLSTM_W_MIH_G, MLSTM_W_MIH_V}, {MLSTM_W_MHH_G, MLSTM_W_MHH_V}};
    for (int k = 0; k < 4; k++) {
        float *g = params + t[gv[k][0]].offset;
        const float *v = params + t[gv[k][1]].offset;
        size_t rows = t[gv[k][1]].rows, cols = t[gv[k][1]].cols;
        for (size_t r = 0; r < rows; r++) {
            double ss = 0.0;
            for (size_t c = 0; c < cols; c++)
                ss += (double)v[r * cols + c] * v[r * cols + c];
            g[r] = (float)sqrt(ss);
        }
    }
    return MLSTM_OK;
}

double mlstm_flops(const mlstm_shape *s, mlstm_phase phase)
{
    if (mlstm_shape_check(s) != MLSTM_OK)
        return 0.0;
    double H = s->H, E = s->E, V = s->V, T = s->T, B = s->B;
    switch (phase) {
    case MLSTM_PHASE_PREPARE: return 2.0 * T * B * E * (4.0 * H + H);
    case MLSTM_PHASE_FWD_STEP: return 2.0 * B * H * (H + 4.0 * H);
    case MLSTM_PHASE_DECODER_FWD: return 2.0 * T * B * H * V;
    case MLSTM_PHASE_DECODER_BWD: return 4.0 * T * B * H * V;
    case MLSTM_PHASE_BWD_STEP: return 2.0 * B * H * (4.0 * H + H);
    case MLSTM_PHASE_WGRAD: return 2.0 * T * B * (4.0 * H * H + H * H + 4.0 * H * E + H * E);
    case MLSTM_PHASE_EMBED_GRAD: return 2.0 * T * B * E * (4.0 * H + H);
    case MLSTM_PHASE_FORWARD:
        return mlstm_flops(s, MLSTM_PHASE_PREPARE) + T * mlstm_flops(s, MLSTM_PHASE_FWD_STEP) +
               mlstm_flops(s, MLSTM_PHASE_DECODER_FWD);
    case MLSTM_PHASE_BACKWARD:
        return mlstm_flops(s, MLSTM_PHASE_DECODER_BWD) + T * mlstm_flops(s, MLSTM_PHASE_BWD_STEP) +
               mlstm_flops(s, MLSTM_PHASE_WGRAD) + mlstm_flops(s, MLSTM_PHASE_EMBED_GRAD);
    case MLSTM_PHASE_ITERATION:
        return mlstm_flops(s, MLSTM_PHASE_FORWARD) + mlstm_flops(s, MLSTM_PHASE_BACKWARD);
    default: return 0.0;
    }
}

const char *mlstm_phase_name(mlstm_phase phase)
{
    static const char *const names[MLSTM_NPHASES] = {
        "prepare", "fwd_step", "decoder_fwd", "decoder_bwd", "bwd_step",
        "wgrad", "embed_grad", "forward", "backward", "iteration"};
    if ((int)phase < 0 || phase >= MLSTM_NPHASES)
        return "?";
    return names[phase];
}

void mlstm_grad_ready_order(int order[MLSTM_NPARAMS])
{
    static const int o[MLSTM_NPARAMS] = {
        MLSTM_DECODER_W, MLSTM_DECODER_B,
        MLSTM_W_HH_G, MLSTM_W_HH_V, MLSTM_W_MHH_G, MLSTM_W_MHH_V,
        MLSTM_W_IH_G, MLSTM_W_IH_V, MLSTM_W_MIH_G, MLSTM_W_MIH_V,
        MLSTM_B_IH, MLSTM_B_HH, MLSTM_ENCODER_W};
    for (int i = 0; i < MLSTM_NPARAMS; i++)
        order[i] = o[i];
}
