/* mlstm_cpu.c: the CPU reference of the mLSTM, forward and backward (the truth the CUDA path is
 * checked against). fp32 storage, CBLAS for every matrix product, plain loops for the rest.
 *
 * Conventions (see mlstm.h): weights row-major (rows, cols); activations row-major
 * (positions, features) with position p = t*B + b, so the rows of step t are contiguous and a
 * per-step product is one GEMM with the batch as one dimension, e.g. z_t(B,4H) = m_t(B,H) W_hh^T.
 * The 4H gate vector of a position is [i | f | g | o], H each, as PyTorch's chunk(4).
 */
#include "mlstm.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mlstm_cpu {
    mlstm_shape s;
    mlstm_param_info p[MLSTM_NPARAMS];
    size_t nparams;
    float *params; /* (nparams) flat, registration order */
    float *grads;  /* (nparams) same layout */

    /* effective weights after weight norm, W = g * v / ||v|| row-wise */
    float *w_ih;  /* (4H, E) */
    float *w_hh;  /* (4H, H) */
    float *w_mih; /* (H, E) */
    float *w_mhh; /* (H, H) */
    float *norm;  /* (4H + 4H + H + H) row norms ||v||, in the order ih, hh, mih, mhh */

    /* activations kept from forward for backward */
    int *tok;     /* ((T+1)*B) tokens of the last prepare */
    float *x;     /* (T*B, E) embedded inputs */
    float *xih;   /* (T*B, 4H) W_ih x + b_ih + b_hh */
    float *xmih;  /* (T*B, H) W_mih x */
    float *mh;    /* (T*B, H) W_mhh h_{t-1} */
    float *m;     /* (T*B, H) m = xmih * mh */
    float *gates; /* (T*B, 4H) activated [sigmoid(i) sigmoid(f) tanh(g) sigmoid(o)] */
    float *c;     /* ((T+1)*B, H) rows 0..B-1 hold c_{-1} = 0, step t at rows (t+1)*B.. */
    float *h;     /* ((T+1)*B, H) same, h_{-1} = 0 */
    float *probs; /* (T*B, V) softmax, turned into dloss/dlogits by decoder_backward */
    float loss;

    /* gradients of activations */
    float *dh_out;  /* (T*B, H) dloss/dh_t through the decoder */
    float *dgates;  /* (T*B, 4H) dloss/dz_t (pre-activation gates) */
    float *dxmih;   /* (T*B, H) dloss/d(W_mih x) */
    float *dmh;     /* (T*B, H) dloss/d(W_mhh h_{t-1}) */
    float *dh_next; /* (B, H) gradient reaching h_t from step t+1 */
    float *dc_next; /* (B, H) gradient reaching c_t from step t+1 */
    float *dm;      /* (B, H) scratch */
    float *dx;      /* (T*B, E) dloss/dx */
};

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen > 0)
        snprintf(err, errlen, "%s", msg);
}

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

void mlstm_cpu_destroy(mlstm_cpu *m)
{
    if (!m)
        return;
    float *bufs[] = {m->params, m->grads, m->w_ih, m->w_hh, m->w_mih, m->w_mhh, m->norm,
                     m->x, m->xih, m->xmih, m->mh, m->m, m->gates, m->c, m->h, m->probs,
                     m->dh_out, m->dgates, m->dxmih, m->dmh, m->dh_next, m->dc_next, m->dm, m->dx};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(m->tok);
    free(m);
}

int mlstm_cpu_create(const mlstm_shape *s, mlstm_cpu **out, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    if (!out || !s) {
        set_err(err, errlen, "mlstm_cpu_create: NULL argument");
        return MLSTM_EINVAL;
    }
    int st = mlstm_shape_check(s);
    if (st != MLSTM_OK) {
        if (err && errlen > 0)
            snprintf(err, errlen, "mlstm_cpu_create: bad shape H=%d E=%d V=%d T=%d B=%d: %s",
                     s->H, s->E, s->V, s->T, s->B, mlstm_strerror(st));
        return st;
    }
    mlstm_cpu *m = calloc(1, sizeof *m);
    if (!m)
        goto fail;
    m->s = *s;
    mlstm_layout(s, m->p, &m->nparams);
    size_t H = s->H, E = s->E, V = s->V, TB = (size_t)s->T * s->B, B = s->B;
    /* calloc everywhere: parameters start at zero, and h_{-1} = c_{-1} = 0 rows stay zero */
#define ALLOC(field, n) \
    do { if (!((field) = calloc((n), sizeof *(field)))) goto fail; } while (0)
    ALLOC(m->params, m->nparams);
    ALLOC(m->grads, m->nparams);
    ALLOC(m->w_ih, 4 * H * E);
    ALLOC(m->w_hh, 4 * H * H);
    ALLOC(m->w_mih, H * E);
    ALLOC(m->w_mhh, H * H);
    ALLOC(m->norm, 10 * H);
    ALLOC(m->tok, TB + B);
    ALLOC(m->x, TB * E);
    ALLOC(m->xih, TB * 4 * H);
    ALLOC(m->xmih, TB * H);
    ALLOC(m->mh, TB * H);
    ALLOC(m->m, TB * H);
    ALLOC(m->gates, TB * 4 * H);
    ALLOC(m->c, (TB + B) * H);
    ALLOC(m->h, (TB + B) * H);
    ALLOC(m->probs, TB * V);
    ALLOC(m->dh_out, TB * H);
    ALLOC(m->dgates, TB * 4 * H);
    ALLOC(m->dxmih, TB * H);
    ALLOC(m->dmh, TB * H);
    ALLOC(m->dh_next, B * H);
    ALLOC(m->dc_next, B * H);
    ALLOC(m->dm, B * H);
    ALLOC(m->dx, TB * E);
#undef ALLOC
    *out = m;
    return MLSTM_OK;
fail:
    mlstm_cpu_destroy(m);
    set_err(err, errlen, "mlstm_cpu_create: out of memory");
    return MLSTM_ENOMEM;
}

float *mlstm_cpu_params(mlstm_cpu *m) { return m ? m->params : NULL; }
float *mlstm_cpu_grads(mlstm_cpu *m) { return m ? m->grads : NULL; }
const float *mlstm_cpu_hidden(const mlstm_cpu *m) { return m ? m->h + (size_t)m->s.B * m->s.H : NULL; }

#define P(m, i) ((m)->params + (m)->p[(i)].offset)
#define G(m, i) ((m)->grads + (m)->p[(i)].offset)

/* W[r,:] = g[r] * v[r,:] / ||v[r,:]||, keeping the norms for the backward. A zero row stays zero
 * (its norm is taken as 1) rather than producing NaN. */
static void weight_norm(int rows, int cols, const float *g, const float *v, float *w, float *norm)
{
    for (int r = 0; r < rows; r++) {
        const float *vr = v + (size_t)r * cols;
        double ss = 0.0;
        for (int c = 0; c < cols; c++)
            ss += (double)vr[c] * vr[c];
        float n = ss > 0.0 ? (float)sqrt(ss) : 1.0f;
        norm[r] = n;
        float scale = g[r] / n;
        for (int c = 0; c < cols; c++)
            w[(size_t)r * cols + c] = scale * vr[c];
    }
}

/* Given dW in dv (overwritten in place), writes dg and dv:
 *   dg[r] = dW[r,:] . v[r,:] / n[r]
 *   dv[r,:] = g[r]/n[r] * dW[r,:] - g[r] dg[r] / n[r]^2 * v[r,:] */
static void weight_norm_backward(int rows, int cols, const float *g, const float *v,
                                 const float *norm, float *dg, float *dv)
{
    for (int r = 0; r < rows; r++) {
        const float *vr = v + (size_t)r * cols;
        float *dr = dv + (size_t)r * cols;
        double dot = 0.0;
        for (int c = 0; c < cols; c++)
            dot += (double)dr[c] * vr[c];
        float n = norm[r];
        float dgr = (float)(dot / n);
        dg[r] = dgr;
        float a = g[r] / n, b = g[r] * dgr / (n * n);
        for (int c = 0; c < cols; c++)
            dr[c] = a * dr[c] - b * vr[c];
    }
}

/* C(M,N) = alpha * op(A) op(B) + beta * C, all row-major */
static void gemm(int transA, int transB, int M, int N, int K, float alpha, const float *A,
                 int lda, const float *Bm, int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, Bm, ldb, beta, C, ldc);
}

int mlstm_cpu_prepare(mlstm_cpu *m, const uint8_t *tokens)
{
    if (!m || !tokens)
        return MLSTM_EINVAL;
    const int H = m->s.H, E = m->s.E, V = m->s.V, B = m->s.B, TB = m->s.T * m->s.B;
    for (int i = 0; i < TB + B; i++) {
        if (tokens[i] >= V)
            return MLSTM_EINVAL;
        m->tok[i] = tokens[i];
    }
    weight_norm(4 * H, E, P(m, MLSTM_W_IH_G), P(m, MLSTM_W_IH_V), m->w_ih, m->norm);
    weight_norm(4 * H, H, P(m, MLSTM_W_HH_G), P(m, MLSTM_W_HH_V), m->w_hh, m->norm + 4 * H);
    weight_norm(H, E, P(m, MLSTM_W_MIH_G), P(m, MLSTM_W_MIH_V), m->w_mih, m->norm + 8 * H);
    weight_norm(H, H, P(m, MLSTM_W_MHH_G), P(m, MLSTM_W_MHH_V), m->w_mhh, m->norm + 9 * H);

    const float *enc = P(m, MLSTM_ENCODER_W);
    for (int p = 0; p < TB; p++)
        memcpy(m->x + (size_t)p * E, enc + (size_t)m->tok[p] * E, sizeof(float) * E);

    /* input projections for all T steps at once, biases folded into xih */
    const float *b_ih = P(m, MLSTM_B_IH), *b_hh = P(m, MLSTM_B_HH);
    for (int p = 0; p < TB; p++)
        for (int j = 0; j < 4 * H; j++)
            m->xih[(size_t)p * 4 * H + j] = b_ih[j] + b_hh[j];
    gemm(0, 1, TB, 4 * H, E, 1.0f, m->x, E, m->w_ih, E, 1.0f, m->xih, 4 * H);
    gemm(0, 1, TB, H, E, 1.0f, m->x, E, m->w_mih, E, 0.0f, m->xmih, H);
    return MLSTM_OK;
}

int mlstm_cpu_forward_step(mlstm_cpu *m, int t)
{
    if (!m || t < 0 || t >= m->s.T)
        return MLSTM_EINVAL;
    const int H = m->s.H, B = m->s.B;
    const size_t row = (size_t)t * B;           /* first position of step t */
    const float *hprev = m->h + row * H;        /* h_{t-1}: rows t*B.. of the shifted buffer */
    const float *cprev = m->c + row * H;
    float *hcur = m->h + (row + B) * H, *ccur = m->c + (row + B) * H;
    float *mh = m->mh + row * H, *mm = m->m + row * H, *z = m->gates + row * 4 * H;
    const float *xmih = m->xmih + row * H;

    gemm(0, 1, B, H, H, 1.0f, hprev, H, m->w_mhh, H, 0.0f, mh, H);
    for (size_t k = 0; k < (size_t)B * H; k++)
        mm[k] = xmih[k] * mh[k];
    memcpy(z, m->xih + row * 4 * H, sizeof(float) * B * 4 * H);
    gemm(0, 1, B, 4 * H, H, 1.0f, mm, H, m->w_hh, H, 1.0f, z, 4 * H);

    for (int b = 0; b < B; b++) {
        float *zi = z + (size_t)b * 4 * H, *zf = zi + H, *zg = zi + 2 * H, *zo = zi + 3 * H;
        const float *cp = cprev + (size_t)b * H;
        float *cc = ccur + (size_t)b * H, *hc = hcur + (size_t)b * H;
        for (int j = 0; j < H; j++) {
            float i = sigmoidf_(zi[j]), f = sigmoidf_(zf[j]), g = tanhf(zg[j]), o = sigmoidf_(zo[j]);
            zi[j] = i; zf[j] = f; zg[j] = g; zo[j] = o;
            cc[j] = f * cp[j] + i * g;
            hc[j] = o * tanhf(cc[j]);
        }
    }
    return MLSTM_OK;
}

int mlstm_cpu_decoder_forward(mlstm_cpu *m, float *loss)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, V = m->s.V, B = m->s.B, TB = m->s.T * m->s.B;
    const float *bias = P(m, MLSTM_DECODER_B);
    for (int p = 0; p < TB; p++)
        memcpy(m->probs + (size_t)p * V, bias, sizeof(float) * V);
    gemm(0, 1, TB, V, H, 1.0f, m->h + (size_t)B * H, H, P(m, MLSTM_DECODER_W), H, 1.0f, m->probs, V);
    double total = 0.0;
    for (int p = 0; p < TB; p++) {
        float *y = m->probs + (size_t)p * V;
        float mx = y[0];
        for (int v = 1; v < V; v++)
            mx = y[v] > mx ? y[v] : mx;
        int target = m->tok[p + B];
        float y_target = y[target];
        double sum = 0.0;
        for (int v = 0; v < V; v++) {
            y[v] = expf(y[v] - mx);
            sum += y[v];
        }
        float inv = (float)(1.0 / sum);
        for (int v = 0; v < V; v++)
            y[v] *= inv;
        /* -log softmax(y)[target] = log(sum) - (y_target - mx): no log of an underflowed p */
        total += log(sum) - ((double)y_target - mx);
    }
    m->loss = (float)(total / TB);
    if (loss)
        *loss = m->loss;
    return MLSTM_OK;
}

static void fire(mlstm_grad_ready_fn cb, void *user, int idx)
{
    if (cb)
        cb(idx, user);
}

int mlstm_cpu_decoder_backward(mlstm_cpu *m, mlstm_grad_ready_fn cb, void *user)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, V = m->s.V, B = m->s.B, TB = m->s.T * m->s.B;
    /* dloss/dlogits = (softmax - onehot) / (T*B), in place over probs */
    const float inv = 1.0f / (float)TB;
    for (int p = 0; p < TB; p++) {
        float *y = m->probs + (size_t)p * V;
        y[m->tok[p + B]] -= 1.0f;
        for (int v = 0; v < V; v++)
            y[v] *= inv;
    }
    const float *hs = m->h + (size_t)B * H;
    gemm(1, 0, V, H, TB, 1.0f, m->probs, V, hs, H, 0.0f, G(m, MLSTM_DECODER_W), H);
    fire(cb, user, MLSTM_DECODER_W);
    float *db = G(m, MLSTM_DECODER_B);
    memset(db, 0, sizeof(float) * V);
    for (int p = 0; p < TB; p++)
        for (int v = 0; v < V; v++)
            db[v] += m->probs[(size_t)p * V + v];
    fire(cb, user, MLSTM_DECODER_B);
    gemm(0, 0, TB, H, V, 1.0f, m->probs, V, P(m, MLSTM_DECODER_W), H, 0.0f, m->dh_out, H);
    return MLSTM_OK;
}

int mlstm_cpu_backward_step(mlstm_cpu *m, int t)
{
    if (!m || t < 0 || t >= m->s.T)
        return MLSTM_EINVAL;
    const int H = m->s.H, B = m->s.B;
    const size_t row = (size_t)t * B;
    if (t == m->s.T - 1) {
        memset(m->dh_next, 0, sizeof(float) * B * H);
        memset(m->dc_next, 0, sizeof(float) * B * H);
    }
    const float *z = m->gates + row * 4 * H;
    const float *cprev = m->c + row * H, *ccur = m->c + (row + B) * H;
    const float *dhout = m->dh_out + row * H;
    float *dz = m->dgates + row * 4 * H;

    for (int b = 0; b < B; b++) {
        const float *gi = z + (size_t)b * 4 * H, *gf = gi + H, *gg = gi + 2 * H, *go = gi + 3 * H;
        float *di = dz + (size_t)b * 4 * H, *df = di + H, *dg = di + 2 * H, *dout = di + 3 * H;
        const size_t o = (size_t)b * H;
        for (int j = 0; j < H; j++) {
            float i = gi[j], f = gf[j], g = gg[j], og = go[j];
            float tc = tanhf(ccur[o + j]);
            float dh = dhout[o + j] + m->dh_next[o + j];
            float dc = m->dc_next[o + j] + dh * og * (1.0f - tc * tc);
            dout[j] = dh * tc * og * (1.0f - og);
            di[j] = dc * g * i * (1.0f - i);
            df[j] = dc * cprev[o + j] * f * (1.0f - f);
            dg[j] = dc * i * (1.0f - g * g);
            m->dc_next[o + j] = dc * f;
        }
    }
    /* dm = dz W_hh; then through m = xmih * mh */
    gemm(0, 0, B, H, 4 * H, 1.0f, dz, 4 * H, m->w_hh, H, 0.0f, m->dm, H);
    const float *xmih = m->xmih + row * H, *mh = m->mh + row * H;
    float *dxmih = m->dxmih + row * H, *dmh = m->dmh + row * H;
    for (size_t k = 0; k < (size_t)B * H; k++) {
        dxmih[k] = m->dm[k] * mh[k];
        dmh[k] = m->dm[k] * xmih[k];
    }
    /* gradient reaching h_{t-1} (at t = 0 it reaches the constant h_{-1} and is dropped; computed
     * anyway so that every step costs the same) */
    gemm(0, 0, B, H, H, 1.0f, dmh, H, m->w_mhh, H, 0.0f, m->dh_next, H);
    return MLSTM_OK;
}

int mlstm_cpu_weight_grads(mlstm_cpu *m, mlstm_grad_ready_fn cb, void *user)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, E = m->s.E, TB = m->s.T * m->s.B;
    /* dW = (gradient at the output)^T (input), summed over all T*B positions in one GEMM each;
     * written into the v slot, then turned into (dg, dv) in place by the weight-norm backward. */
    gemm(1, 0, 4 * H, H, TB, 1.0f, m->dgates, 4 * H, m->m, H, 0.0f, G(m, MLSTM_W_HH_V), H);
    weight_norm_backward(4 * H, H, P(m, MLSTM_W_HH_G), P(m, MLSTM_W_HH_V), m->norm + 4 * H,
                         G(m, MLSTM_W_HH_G), G(m, MLSTM_W_HH_V));
    fire(cb, user, MLSTM_W_HH_G);
    fire(cb, user, MLSTM_W_HH_V);

    gemm(1, 0, H, H, TB, 1.0f, m->dmh, H, m->h, H, 0.0f, G(m, MLSTM_W_MHH_V), H); /* h_{t-1} */
    weight_norm_backward(H, H, P(m, MLSTM_W_MHH_G), P(m, MLSTM_W_MHH_V), m->norm + 9 * H,
                         G(m, MLSTM_W_MHH_G), G(m, MLSTM_W_MHH_V));
    fire(cb, user, MLSTM_W_MHH_G);
    fire(cb, user, MLSTM_W_MHH_V);

    gemm(1, 0, 4 * H, E, TB, 1.0f, m->dgates, 4 * H, m->x, E, 0.0f, G(m, MLSTM_W_IH_V), E);
    weight_norm_backward(4 * H, E, P(m, MLSTM_W_IH_G), P(m, MLSTM_W_IH_V), m->norm,
                         G(m, MLSTM_W_IH_G), G(m, MLSTM_W_IH_V));
    fire(cb, user, MLSTM_W_IH_G);
    fire(cb, user, MLSTM_W_IH_V);

    gemm(1, 0, H, E, TB, 1.0f, m->dxmih, H, m->x, E, 0.0f, G(m, MLSTM_W_MIH_V), E);
    weight_norm_backward(H, E, P(m, MLSTM_W_MIH_G), P(m, MLSTM_W_MIH_V), m->norm + 8 * H,
                         G(m, MLSTM_W_MIH_G), G(m, MLSTM_W_MIH_V));
    fire(cb, user, MLSTM_W_MIH_G);
    fire(cb, user, MLSTM_W_MIH_V);

    /* both biases enter z the same way, so they get the same gradient: the column sums of dz */
    float *dbi = G(m, MLSTM_B_IH), *dbh = G(m, MLSTM_B_HH);
    memset(dbi, 0, sizeof(float) * 4 * H);
    for (int p = 0; p < TB; p++)
        for (int j = 0; j < 4 * H; j++)
            dbi[j] += m->dgates[(size_t)p * 4 * H + j];
    fire(cb, user, MLSTM_B_IH);
    memcpy(dbh, dbi, sizeof(float) * 4 * H);
    fire(cb, user, MLSTM_B_HH);
    return MLSTM_OK;
}

int mlstm_cpu_embedding_grad(mlstm_cpu *m, mlstm_grad_ready_fn cb, void *user)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, E = m->s.E, V = m->s.V, TB = m->s.T * m->s.B;
    gemm(0, 0, TB, E, 4 * H, 1.0f, m->dgates, 4 * H, m->w_ih, E, 0.0f, m->dx, E);
    gemm(0, 0, TB, E, H, 1.0f, m->dxmih, H, m->w_mih, E, 1.0f, m->dx, E);
    float *denc = G(m, MLSTM_ENCODER_W);
    memset(denc, 0, sizeof(float) * V * E);
    for (int p = 0; p < TB; p++) {
        float *row = denc + (size_t)m->tok[p] * E;
        for (int e = 0; e < E; e++)
            row[e] += m->dx[(size_t)p * E + e];
    }
    fire(cb, user, MLSTM_ENCODER_W);
    return MLSTM_OK;
}

int mlstm_cpu_forward(mlstm_cpu *m, const uint8_t *tokens, float *loss)
{
    int st = mlstm_cpu_prepare(m, tokens);
    for (int t = 0; st == MLSTM_OK && t < m->s.T; t++)
        st = mlstm_cpu_forward_step(m, t);
    if (st == MLSTM_OK)
        st = mlstm_cpu_decoder_forward(m, loss);
    return st;
}

int mlstm_cpu_backward(mlstm_cpu *m, mlstm_grad_ready_fn cb, void *user)
{
    int st = mlstm_cpu_decoder_backward(m, cb, user);
    for (int t = m ? m->s.T - 1 : -1; st == MLSTM_OK && t >= 0; t--)
        st = mlstm_cpu_backward_step(m, t);
    if (st == MLSTM_OK)
        st = mlstm_cpu_weight_grads(m, cb, user);
    if (st == MLSTM_OK)
        st = mlstm_cpu_embedding_grad(m, cb, user);
    return st;
}

int mlstm_cpu_iteration(mlstm_cpu *m, const uint8_t *tokens, float *loss,
                        mlstm_grad_ready_fn cb, void *user)
{
    int st = mlstm_cpu_forward(m, tokens, loss);
    return st == MLSTM_OK ? mlstm_cpu_backward(m, cb, user) : st;
}
