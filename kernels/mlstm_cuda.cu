/* mlstm_cuda.cu: the mLSTM on CUDA, checked against mlstm_cpu.c (tests/kernels/test_mlstm_cuda.c).
 *
 * Same layouts as the CPU reference (row-major, position p = t*B + b). cuBLAS is column-major, so a
 * row-major product C(M,N) = op(A) op(B) is issued as the column-major C^T = op(B)^T op(A)^T
 * (see gemm()). Every GEMM is cublasGemmEx with fp32 accumulation (CUBLAS_COMPUTE_32F): in fp32
 * mode all operands are fp32 (no TF32); in fp16 mode the operands (effective weights and the
 * activations feeding GEMMs) are fp16, the outputs fp32, and cuBLAS uses tensor cores where the
 * device has them; bf16 mode is fp16 mode with bfloat16 operands (tensor cores from sm_80). Elementwise
 * math is fp32 everywhere, in fused kernels.
 *
 * fp16 uses a static loss scale of T*B: activation gradients are those of the summed loss (O(1)
 * rather than O(1/(T*B)), which would fall into fp16's subnormal range), and every GEMM or
 * reduction that produces a parameter gradient multiplies by 1/(T*B). fp32 and bf16 (fp32's exponent
 * range) use scale 1.
 *
 * Only APIs present since CUDA 11.0 are used, so the file builds with CUDA 11, 12 and 13.
 */
#include "mlstm.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mlstm_cuda {
    mlstm_shape s;
    mlstm_precision prec;
    mlstm_param_info p[MLSTM_NPARAMS];
    size_t nparams;
    cudaStream_t stream;
    cublasHandle_t blas;
    cudaEvent_t ev0, ev1;
    cudaDataType_t dt; /* storage type of GEMM operands: CUDA_R_32F or CUDA_R_16F */
    size_t esize;      /* its size in bytes */
    float gscale;      /* loss scale for activation gradients: 1 (fp32) or T*B (fp16) */
    char errmsg[256];

    float *params; /* (nparams) fp32 master parameters */
    float *grads;  /* (nparams) fp32 gradients */
    /* effective weights (after weight norm), storage type */
    void *w_ih;    /* (4H, E) */
    void *w_hh;    /* (4H, H) */
    void *w_mih;   /* (H, E) */
    void *w_mhh;   /* (H, H) */
    void *w_dec;   /* (V, H): a cast copy in fp16, an alias of params in fp32 (not owned) */
    float *norm;   /* (10H) row norms ||v||: ih (4H), hh (4H), mih (H), mhh (H) */
    int *tok;      /* ((T+1)*B) */
    int *tok_host; /* ((T+1)*B) host staging */
    /* activations */
    void *x;       /* (T*B, E) storage */
    float *xih;    /* (T*B, 4H) W_ih x + b_ih + b_hh */
    float *xmih;   /* (T*B, H) W_mih x */
    float *mh;     /* (T*B, H) W_mhh h_{t-1} */
    void *m;       /* (T*B, H) storage */
    float *gates;  /* (T*B, 4H) activated gates */
    float *c;      /* ((T+1)*B, H), rows 0..B-1 zero */
    void *h;       /* ((T+1)*B, H) storage, rows 0..B-1 zero */
    float *probs;  /* (T*B, V) */
    void *dlog;    /* (T*B, V) storage, gscale * dloss/dlogits */
    float *loss_pos; /* (T*B) per-position loss */
    float *loss;   /* (1) mean loss */
    /* activation gradients (all scaled by gscale) */
    float *dh_out; /* (T*B, H) */
    void *dgates;  /* (T*B, 4H) storage */
    void *dxmih;   /* (T*B, H) storage */
    void *dmh;     /* (T*B, H) storage */
    float *dh_next; /* (B, H) */
    float *dc_next; /* (B, H) */
    float *dm;     /* (B, H) */
    float *dx;     /* (T*B, E) */
};

/* ---- error helpers --------------------------------------------------------------------------- */

static int cuda_err(mlstm_cuda *m, cudaError_t e, const char *what, int line)
{
    if (m)
        snprintf(m->errmsg, sizeof m->errmsg, "mlstm_cuda.cu:%d: %s: %s", line, what,
                 cudaGetErrorString(e));
    return MLSTM_ECUDA;
}

static int cublas_err(mlstm_cuda *m, cublasStatus_t st, const char *what, int line)
{
    if (m)
        snprintf(m->errmsg, sizeof m->errmsg, "mlstm_cuda.cu:%d: %s: cuBLAS status %d", line, what,
                 (int)st);
    return MLSTM_ECUBLAS;
}

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            return cuda_err(m, e_, #call, __LINE__);                                          \
    } while (0)
#define CKB(call)                                                                             \
    do {                                                                                      \
        cublasStatus_t s_ = (call);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return cublas_err(m, s_, #call, __LINE__);                                        \
    } while (0)
#define CK_LAUNCH() CK(cudaGetLastError())
#define CK_ST(call)                                                                           \
    do {                                                                                      \
        int st_ = (call);                                                                     \
        if (st_ != MLSTM_OK)                                                                  \
            return st_;                                                                       \
    } while (0)

/* ---- device helpers ------------------------------------------------------------------------- */

__device__ __forceinline__ float tof(float x) { return x; }
__device__ __forceinline__ float tof(__half x) { return __half2float(x); }
__device__ __forceinline__ float tof(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T fromf(float x);
template <> __device__ __forceinline__ float fromf<float>(float x) { return x; }
template <> __device__ __forceinline__ __half fromf<__half>(float x) { return __float2half(x); }
template <> __device__ __forceinline__ __nv_bfloat16 fromf<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

enum { NT = 256 }; /* threads per block everywhere; block reductions assume it */

__device__ float block_sum(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

__device__ float block_max(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

static unsigned nblocks(size_t n) { return (unsigned)((n + NT - 1) / NT); }

/* ---- kernels --------------------------------------------------------------------------------- */

/* One block per row: norm[r] = ||v[r,:]|| (1 for a zero row), w[r,:] = g[r] v[r,:] / norm[r] */
template <typename T>
__global__ void k_weight_norm(int cols, const float *g, const float *v, void *wv, float *norm)
{
    __shared__ float sh[NT];
    T *w = (T *)wv;
    const int r = blockIdx.x;
    const float *vr = v + (size_t)r * cols;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += NT)
        ss += vr[c] * vr[c];
    ss = block_sum(ss, sh);
    float n = ss > 0.0f ? sqrtf(ss) : 1.0f;
    if (threadIdx.x == 0)
        norm[r] = n;
    float scale = g[r] / n;
    for (int c = threadIdx.x; c < cols; c += NT)
        w[(size_t)r * cols + c] = fromf<T>(scale * vr[c]);
}

/* One block per row, dv holds dW on entry: dg = dW.v/n; dv = g/n dW - g dg/n^2 v; scale applied */
__global__ void k_weight_norm_backward(int cols, const float *g, const float *v, const float *norm,
                                       float *dg, float *dv)
{
    __shared__ float sh[NT];
    const int r = blockIdx.x;
    const float *vr = v + (size_t)r * cols;
    float *dr = dv + (size_t)r * cols;
    float dot = 0.0f;
    for (int c = threadIdx.x; c < cols; c += NT)
        dot += dr[c] * vr[c];
    dot = block_sum(dot, sh);
    const float n = norm[r], dgr = dot / n;
    if (threadIdx.x == 0)
        dg[r] = dgr;
    const float a = g[r] / n, b = g[r] * dgr / (n * n);
    for (int c = threadIdx.x; c < cols; c += NT)
        dr[c] = a * dr[c] - b * vr[c];
}

template <typename T> __global__ void k_cast(size_t n, const float *src, void *dstv)
{
    size_t i = (size_t)blockIdx.x * NT + threadIdx.x;
    if (i < n)
        ((T *)dstv)[i] = fromf<T>(src[i]);
}

/* Operands for the benchmark's GEMMs: uniform in [-1, 1) from a hash of the index and a seed (zeros
 * can run faster than real data through the tensor cores), written in the storage type. */
template <typename T> __global__ void k_fill_random(size_t n, unsigned seed, void *dstv)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 16;
        x *= 0x7feb352du;
        x ^= x >> 15;
        x *= 0x846ca68bu;
        x ^= x >> 16;
        ((T *)dstv)[i] = fromf<T>((float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

template <typename T> __global__ void k_uncast(size_t n, const void *srcv, float *dst)
{
    size_t i = (size_t)blockIdx.x * NT + threadIdx.x;
    if (i < n)
        dst[i] = tof(((const T *)srcv)[i]);
}

template <typename T>
__global__ void k_embed(int npos, int E, const int *tok, const float *enc, void *xv)
{
    size_t i = (size_t)blockIdx.x * NT + threadIdx.x;
    if (i < (size_t)npos * E) {
        int p = (int)(i / E), e = (int)(i % E);
        ((T *)xv)[i] = fromf<T>(enc[(size_t)tok[p] * E + e]);
    }
}

/* out[p, j] = a[j] + (b ? b[j] : 0) for every row p */
__global__ void k_rows(int rows, int cols, const float *a, const float *b, float *out)
{
    size_t i = (size_t)blockIdx.x * NT + threadIdx.x;
    if (i < (size_t)rows * cols) {
        int j = (int)(i % cols);
        out[i] = a[j] + (b ? b[j] : 0.0f);
    }
}

/* before the W_hh GEMM of a step: z = xih (copy), m = xmih * mh */
template <typename T>
__global__ void k_step_pre(int B, int H, const float *xih, const float *xmih, const float *mh,
                           float *z, void *mv)
{
    size_t i = (size_t)blockIdx.x * NT + threadIdx.x;
    if (i < (size_t)B * 4 * H)
        z[i] = xih[i];
    if (i < (size_t)B * H)
        ((T *)mv)[i] = fromf<T>(xmih[i] * mh[i]);
}

/* the cell: activate z in place, c_t = f c_{t-1} + i g, h_t = o tanh(c_t) */
template <typename T>
__global__ void k_cell(int B, int H, float *z, const float *cprev, float *ccur, void *hv)
{
    size_t k = (size_t)blockIdx.x * NT + threadIdx.x;
    if (k >= (size_t)B * H)
        return;
    int b = (int)(k / H), j = (int)(k % H);
    float *zb = z + (size_t)b * 4 * H;
    float i = sigm(zb[j]), f = sigm(zb[H + j]), g = tanhf(zb[2 * H + j]), o = sigm(zb[3 * H + j]);
    zb[j] = i; zb[H + j] = f; zb[2 * H + j] = g; zb[3 * H + j] = o;
    float c = f * cprev[k] + i * g;
    ccur[k] = c;
    ((T *)hv)[k] = fromf<T>(o * tanhf(c));
}

/* the cell backward of one step: writes dz (storage) and carries dc to the previous step */
template <typename T>
__global__ void k_cell_backward(int B, int H, const float *z, const float *cprev,
                                const float *ccur, const float *dhout, const float *dh_next,
                                float *dc_next, void *dzv)
{
    size_t k = (size_t)blockIdx.x * NT + threadIdx.x;
    if (k >= (size_t)B * H)
        return;
    int b = (int)(k / H), j = (int)(k % H);
    const float *zb = z + (size_t)b * 4 * H;
    T *dz = (T *)dzv + (size_t)b * 4 * H;
    float i = zb[j], f = zb[H + j], g = zb[2 * H + j], o = zb[3 * H + j];
    float tc = tanhf(ccur[k]);
    float dh = dhout[k] + dh_next[k];
    float dc = dc_next[k] + dh * o * (1.0f - tc * tc);
    dz[j] = fromf<T>(dc * g * i * (1.0f - i));
    dz[H + j] = fromf<T>(dc * cprev[k] * f * (1.0f - f));
    dz[2 * H + j] = fromf<T>(dc * i * (1.0f - g * g));
    dz[3 * H + j] = fromf<T>(dh * tc * o * (1.0f - o));
    dc_next[k] = dc * f;
}

/* through m = xmih * mh: dxmih = dm * mh, dmh = dm * xmih */
template <typename T>
__global__ void k_mul_backward(size_t n, const float *dm, const float *xmih, const float *mh,
                               void *dxmihv, void *dmhv)
{
    size_t k = (size_t)blockIdx.x * NT + threadIdx.x;
    if (k < n) {
        ((T *)dxmihv)[k] = fromf<T>(dm[k] * mh[k]);
        ((T *)dmhv)[k] = fromf<T>(dm[k] * xmih[k]);
    }
}

/* One block per position (V <= NT): softmax in place and the position's loss. The target's
 * logit goes through shared memory because its thread rewrites y[target] with the probability. */
__global__ void k_softmax_loss(int V, int B, const int *tok, float *logits, float *loss_pos)
{
    __shared__ float sh[NT];
    __shared__ float tlogit;
    const int p = blockIdx.x, v = threadIdx.x;
    float *y = logits + (size_t)p * V;
    float val = v < V ? y[v] : -INFINITY;
    if (v < V && v == tok[p + B])
        tlogit = val;
    float mx = block_max(val, sh); /* its barriers also publish tlogit */
    float e = v < V ? expf(val - mx) : 0.0f;
    float sum = block_sum(e, sh);
    if (v < V)
        y[v] = e / sum;
    if (v == 0)
        loss_pos[p] = logf(sum) - (tlogit - mx);
}

/* one block: out[0] = mean of x[0..n) (fixed order, deterministic) */
__global__ void k_mean(int n, const float *x, float *out)
{
    __shared__ float sh[NT];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += NT)
        s += x[i];
    s = block_sum(s, sh);
    if (threadIdx.x == 0)
        out[0] = s / n;
}

/* dlog = scale * (softmax - onehot(target)) */
template <typename T>
__global__ void k_dlogits(int npos, int V, int B, const int *tok, const float *probs, float scale,
                          void *dlogv)
{
    size_t i = (size_t)blockIdx.x * NT + threadIdx.x;
    if (i < (size_t)npos * V) {
        int p = (int)(i / V), v = (int)(i % V);
        float d = probs[i] - (v == tok[p + B] ? 1.0f : 0.0f);
        ((T *)dlogv)[i] = fromf<T>(scale * d);
    }
}

/* out[j] = alpha * sum over rows of x[r, j] (one thread per column, fixed order) */
template <typename T>
__global__ void k_colsum(int rows, int cols, const void *xv, float alpha, float *out)
{
    int j = blockIdx.x * NT + threadIdx.x;
    if (j >= cols)
        return;
    const T *x = (const T *)xv;
    float s = 0.0f;
    for (int r = 0; r < rows; r++)
        s += tof(x[(size_t)r * cols + j]);
    out[j] = alpha * s;
}

/* denc[v, e] = alpha * sum of dx[p, e] over positions with tok[p] == v (deterministic, no atomics) */
__global__ void k_embed_backward(int npos, int V, int E, const int *tok, const float *dx,
                                 float alpha, float *denc)
{
    int i = blockIdx.x * NT + threadIdx.x;
    if (i >= V * E)
        return;
    int v = i / E, e = i % E;
    float s = 0.0f;
    for (int p = 0; p < npos; p++)
        if (tok[p] == v)
            s += dx[(size_t)p * E + e];
    denc[i] = alpha * s;
}

/* ---- launch helpers ------------------------------------------------------------------------- */

/* kern<T> with T the model's storage type, on its stream; the caller checks cudaGetLastError
 * (LAUNCH does, returning; paths that free buffers first check it themselves). */
#define DISPATCH(m, kern, grid, ...)                                                          \
    do {                                                                                      \
        if ((m)->prec == MLSTM_FP16)                                                          \
            kern<__half><<<(grid), NT, 0, (m)->stream>>>(__VA_ARGS__);                        \
        else if ((m)->prec == MLSTM_BF16)                                                     \
            kern<__nv_bfloat16><<<(grid), NT, 0, (m)->stream>>>(__VA_ARGS__);                 \
        else                                                                                  \
            kern<float><<<(grid), NT, 0, (m)->stream>>>(__VA_ARGS__);                         \
    } while (0)
#define LAUNCH(m, kern, grid, ...)                                                            \
    do {                                                                                      \
        DISPATCH(m, kern, grid, __VA_ARGS__);                                                 \
        CK_LAUNCH();                                                                          \
    } while (0)
#define LAUNCH1(m, kern, grid, ...)                                                           \
    do {                                                                                      \
        kern<<<(grid), NT, 0, (m)->stream>>>(__VA_ARGS__);                                    \
        CK_LAUNCH();                                                                          \
    } while (0)

/* Row-major C(M,N) = alpha op(A) op(B) + beta C; A and B of type at, C of type ct. */
static int gemm(mlstm_cuda *m, int ta, int tb, int M, int N, int K, float alpha, const void *A,
                cudaDataType_t at, int lda, const void *B, int ldb, float beta, void *C,
                cudaDataType_t ct, int ldc)
{
    CKB(cublasGemmEx(m->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N,
                     M, K, &alpha, B, at, ldb, A, at, lda, &beta, C, ct, ldc, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT));
    return MLSTM_OK;
}

/* storage-typed pointer arithmetic */
static void *at_(const mlstm_cuda *m, void *base, size_t elems)
{
    return (char *)base + elems * m->esize;
}

#define PP(m, i) ((m)->params + (m)->p[(i)].offset)
#define GG(m, i) ((m)->grads + (m)->p[(i)].offset)

static void fire(mlstm_grad_ready_fn cb, void *user, int idx)
{
    if (cb)
        cb(idx, user);
}

/* ---- create / destroy ---------------------------------------------------------------------- */

int mlstm_cuda_available(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error of a failed probe */
        return 0;
    }
    return n > 0;
}

int mlstm_cuda_supports(mlstm_precision p)
{
    int dev = 0, major = 0;
    if (!mlstm_cuda_available() || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        return 0;
    return p == MLSTM_FP32 || p == MLSTM_FP16 || (p == MLSTM_BF16 && major >= 8);
}

void mlstm_cuda_destroy(mlstm_cuda *m)
{
    if (!m)
        return;
    void *bufs[] = {m->params, m->grads, m->w_ih, m->w_hh, m->w_mih, m->w_mhh, m->norm, m->tok,
                    m->x, m->xih, m->xmih, m->mh, m->m, m->gates, m->c, m->h, m->probs, m->dlog,
                    m->loss_pos, m->loss, m->dh_out, m->dgates, m->dxmih, m->dmh, m->dh_next,
                    m->dc_next, m->dm, m->dx};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cudaFree(bufs[i]);
    if (m->prec != MLSTM_FP32)
        cudaFree(m->w_dec);
    free(m->tok_host);
    if (m->ev0)
        cudaEventDestroy(m->ev0);
    if (m->ev1)
        cudaEventDestroy(m->ev1);
    if (m->blas)
        cublasDestroy(m->blas);
    if (m->stream)
        cudaStreamDestroy(m->stream);
    free(m);
}

static int alloc_all(mlstm_cuda *m)
{
    const size_t H = m->s.H, E = m->s.E, V = m->s.V, B = m->s.B, TB = (size_t)m->s.T * m->s.B;
    const size_t es = m->esize;
#define DALLOC(field, bytes) CK(cudaMalloc((void **)&(field), (bytes)))
    DALLOC(m->params, sizeof(float) * m->nparams);
    DALLOC(m->grads, sizeof(float) * m->nparams);
    DALLOC(m->w_ih, es * 4 * H * E);
    DALLOC(m->w_hh, es * 4 * H * H);
    DALLOC(m->w_mih, es * H * E);
    DALLOC(m->w_mhh, es * H * H);
    if (m->prec != MLSTM_FP32)
        DALLOC(m->w_dec, es * V * H);
    else
        m->w_dec = m->params + m->p[MLSTM_DECODER_W].offset;
    DALLOC(m->norm, sizeof(float) * 10 * H);
    DALLOC(m->tok, sizeof(int) * (TB + B));
    DALLOC(m->x, es * TB * E);
    DALLOC(m->xih, sizeof(float) * TB * 4 * H);
    DALLOC(m->xmih, sizeof(float) * TB * H);
    DALLOC(m->mh, sizeof(float) * TB * H);
    DALLOC(m->m, es * TB * H);
    DALLOC(m->gates, sizeof(float) * TB * 4 * H);
    DALLOC(m->c, sizeof(float) * (TB + B) * H);
    DALLOC(m->h, es * (TB + B) * H);
    DALLOC(m->probs, sizeof(float) * TB * V);
    DALLOC(m->dlog, es * TB * V);
    DALLOC(m->loss_pos, sizeof(float) * TB);
    DALLOC(m->loss, sizeof(float));
    DALLOC(m->dh_out, sizeof(float) * TB * H);
    DALLOC(m->dgates, es * TB * 4 * H);
    DALLOC(m->dxmih, es * TB * H);
    DALLOC(m->dmh, es * TB * H);
    DALLOC(m->dh_next, sizeof(float) * B * H);
    DALLOC(m->dc_next, sizeof(float) * B * H);
    DALLOC(m->dm, sizeof(float) * B * H);
    DALLOC(m->dx, sizeof(float) * TB * E);
#undef DALLOC
    /* parameters start at zero; h_{-1} = c_{-1} = 0 rows are never written again */
    CK(cudaMemset(m->params, 0, sizeof(float) * m->nparams));
    CK(cudaMemset(m->grads, 0, sizeof(float) * m->nparams));
    CK(cudaMemset(m->c, 0, sizeof(float) * (TB + B) * H));
    CK(cudaMemset(m->h, 0, es * (TB + B) * H));
    return MLSTM_OK;
}

int mlstm_cuda_create(const mlstm_shape *s, mlstm_precision prec, mlstm_cuda **out, char *err,
                      size_t errlen)
{
    int st = MLSTM_OK;
    mlstm_cuda *m = NULL;
    if (out)
        *out = NULL;
    if (!out || !s || (prec != MLSTM_FP32 && prec != MLSTM_FP16 && prec != MLSTM_BF16)) {
        if (err && errlen)
            snprintf(err, errlen, "mlstm_cuda_create: NULL argument or bad precision");
        return MLSTM_EINVAL;
    }
    if ((st = mlstm_shape_check(s)) != MLSTM_OK) {
        if (err && errlen)
            snprintf(err, errlen, "mlstm_cuda_create: bad shape H=%d E=%d V=%d T=%d B=%d: %s",
                     s->H, s->E, s->V, s->T, s->B, mlstm_strerror(st));
        return st;
    }
    if (!mlstm_cuda_available()) {
        if (err && errlen)
            snprintf(err, errlen, "mlstm_cuda_create: no CUDA device");
        return MLSTM_ENODEV;
    }
    m = (mlstm_cuda *)calloc(1, sizeof *m);
    if (!m) {
        st = MLSTM_ENOMEM;
        goto fail;
    }
    m->s = *s;
    m->prec = prec;
    mlstm_layout(s, m->p, &m->nparams);
    m->dt = prec == MLSTM_FP16 ? CUDA_R_16F : prec == MLSTM_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    m->esize = prec == MLSTM_FP32 ? sizeof(float) : 2;
    m->gscale = prec == MLSTM_FP16 ? (float)s->T * s->B : 1.0f;
    m->tok_host = (int *)malloc(sizeof(int) * ((size_t)s->T * s->B + s->B));
    if (!m->tok_host) {
        st = MLSTM_ENOMEM;
        goto fail;
    }
    {
        cudaError_t e = cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaEventCreate(&m->ev0);
        if (e == cudaSuccess)
            e = cudaEventCreate(&m->ev1);
        if (e != cudaSuccess) {
            st = cuda_err(m, e, "stream/event create", __LINE__);
            goto fail;
        }
        cublasStatus_t bs = cublasCreate(&m->blas);
        if (bs == CUBLAS_STATUS_SUCCESS)
            bs = cublasSetStream(m->blas, m->stream);
        if (bs != CUBLAS_STATUS_SUCCESS) {
            st = cublas_err(m, bs, "cublasCreate/SetStream", __LINE__);
            goto fail;
        }
    }
    if ((st = alloc_all(m)) != MLSTM_OK) {
        if (st == MLSTM_ECUDA && strstr(m->errmsg, "cudaMalloc"))
            st = MLSTM_ENOMEM;
        goto fail;
    }
    *out = m;
    return MLSTM_OK;
fail:
    if (err && errlen)
        snprintf(err, errlen, "mlstm_cuda_create: %s", m && m->errmsg[0] ? m->errmsg
                                                                          : mlstm_strerror(st));
    mlstm_cuda_destroy(m);
    return st;
}

const char *mlstm_cuda_last_error(const mlstm_cuda *m) { return m ? m->errmsg : ""; }
void *mlstm_cuda_stream(mlstm_cuda *m) { return m ? (void *)m->stream : NULL; }
float *mlstm_cuda_grads_device(mlstm_cuda *m) { return m ? m->grads : NULL; }

int mlstm_cuda_sync(mlstm_cuda *m)
{
    if (!m)
        return MLSTM_EINVAL;
    CK(cudaStreamSynchronize(m->stream));
    return MLSTM_OK;
}

int mlstm_cuda_set_params(mlstm_cuda *m, const float *hp)
{
    if (!m || !hp)
        return MLSTM_EINVAL;
    CK(cudaMemcpyAsync(m->params, hp, sizeof(float) * m->nparams, cudaMemcpyHostToDevice,
                       m->stream));
    CK(cudaStreamSynchronize(m->stream));
    return MLSTM_OK;
}

int mlstm_cuda_get_params(mlstm_cuda *m, float *hp)
{
    if (!m || !hp)
        return MLSTM_EINVAL;
    CK(cudaMemcpyAsync(hp, m->params, sizeof(float) * m->nparams, cudaMemcpyDeviceToHost,
                       m->stream));
    CK(cudaStreamSynchronize(m->stream));
    return MLSTM_OK;
}

int mlstm_cuda_get_grads(mlstm_cuda *m, float *hg)
{
    if (!m || !hg)
        return MLSTM_EINVAL;
    CK(cudaMemcpyAsync(hg, m->grads, sizeof(float) * m->nparams, cudaMemcpyDeviceToHost,
                       m->stream));
    CK(cudaStreamSynchronize(m->stream));
    return MLSTM_OK;
}

int mlstm_cuda_get_hidden(mlstm_cuda *m, float *hh)
{
    if (!m || !hh)
        return MLSTM_EINVAL;
    const size_t n = (size_t)m->s.T * m->s.B * m->s.H;
    float *tmp = NULL;
    CK(cudaMalloc((void **)&tmp, sizeof(float) * n));
    int st = MLSTM_OK;
    const void *src = at_(m, m->h, (size_t)m->s.B * m->s.H);
    DISPATCH(m, k_uncast, nblocks(n), n, src, tmp);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(hh, tmp, sizeof(float) * n, cudaMemcpyDeviceToHost, m->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(m->stream);
    if (e != cudaSuccess)
        st = cuda_err(m, e, "get_hidden", __LINE__);
    cudaFree(tmp);
    return st;
}

/* ---- forward ------------------------------------------------------------------------------- */

int mlstm_cuda_prepare(mlstm_cuda *m, const uint8_t *tokens)
{
    if (!m || !tokens)
        return MLSTM_EINVAL;
    const int H = m->s.H, E = m->s.E, V = m->s.V, B = m->s.B, TB = m->s.T * m->s.B;
    for (int i = 0; i < TB + B; i++) {
        if (tokens[i] >= V)
            return MLSTM_EINVAL;
        m->tok_host[i] = tokens[i];
    }
    /* synchronous copy from pageable memory: the staging buffer may be reused right after */
    CK(cudaMemcpyAsync(m->tok, m->tok_host, sizeof(int) * (TB + B), cudaMemcpyHostToDevice,
                       m->stream));
    CK(cudaStreamSynchronize(m->stream));
    LAUNCH(m, k_weight_norm, 4 * H, E, PP(m, MLSTM_W_IH_G), PP(m, MLSTM_W_IH_V), m->w_ih, m->norm);
    LAUNCH(m, k_weight_norm, 4 * H, H, PP(m, MLSTM_W_HH_G), PP(m, MLSTM_W_HH_V), m->w_hh,
           m->norm + 4 * H);
    LAUNCH(m, k_weight_norm, H, E, PP(m, MLSTM_W_MIH_G), PP(m, MLSTM_W_MIH_V), m->w_mih,
           m->norm + 8 * H);
    LAUNCH(m, k_weight_norm, H, H, PP(m, MLSTM_W_MHH_G), PP(m, MLSTM_W_MHH_V), m->w_mhh,
           m->norm + 9 * H);
    if (m->prec != MLSTM_FP32) {
        size_t n = (size_t)V * H;
        LAUNCH(m, k_cast, nblocks(n), n, PP(m, MLSTM_DECODER_W), m->w_dec);
    }
    LAUNCH(m, k_embed, nblocks((size_t)TB * E), TB, E, m->tok, PP(m, MLSTM_ENCODER_W), m->x);
    LAUNCH1(m, k_rows, nblocks((size_t)TB * 4 * H), TB, 4 * H, PP(m, MLSTM_B_IH),
            PP(m, MLSTM_B_HH), m->xih);
    CK_ST(gemm(m, 0, 1, TB, 4 * H, E, 1.0f, m->x, m->dt, E, m->w_ih, E, 1.0f, m->xih, CUDA_R_32F,
               4 * H));
    CK_ST(gemm(m, 0, 1, TB, H, E, 1.0f, m->x, m->dt, E, m->w_mih, E, 0.0f, m->xmih, CUDA_R_32F, H));
    return MLSTM_OK;
}

int mlstm_cuda_forward_step(mlstm_cuda *m, int t)
{
    if (!m || t < 0 || t >= m->s.T)
        return MLSTM_EINVAL;
    const int H = m->s.H, B = m->s.B;
    const size_t row = (size_t)t * B;
    const void *hprev = at_(m, m->h, row * H);
    void *hcur = at_(m, m->h, (row + B) * H);
    void *mm = at_(m, m->m, row * H);
    float *mh = m->mh + row * H, *z = m->gates + row * 4 * H;
    CK_ST(gemm(m, 0, 1, B, H, H, 1.0f, hprev, m->dt, H, m->w_mhh, H, 0.0f, mh, CUDA_R_32F, H));
    LAUNCH(m, k_step_pre, nblocks((size_t)B * 4 * H), B, H, m->xih + row * 4 * H,
           m->xmih + row * H, mh, z, mm);
    CK_ST(gemm(m, 0, 1, B, 4 * H, H, 1.0f, mm, m->dt, H, m->w_hh, H, 1.0f, z, CUDA_R_32F, 4 * H));
    LAUNCH(m, k_cell, nblocks((size_t)B * H), B, H, z, m->c + row * H, m->c + (row + B) * H, hcur);
    return MLSTM_OK;
}

int mlstm_cuda_decoder_forward(mlstm_cuda *m, float *loss)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, V = m->s.V, B = m->s.B, TB = m->s.T * m->s.B;
    LAUNCH1(m, k_rows, nblocks((size_t)TB * V), TB, V, PP(m, MLSTM_DECODER_B), (const float *)NULL,
            m->probs);
    CK_ST(gemm(m, 0, 1, TB, V, H, 1.0f, at_(m, m->h, (size_t)B * H), m->dt, H, m->w_dec, H, 1.0f,
               m->probs, CUDA_R_32F, V));
    LAUNCH1(m, k_softmax_loss, TB, V, B, m->tok, m->probs, m->loss_pos);
    LAUNCH1(m, k_mean, 1, TB, m->loss_pos, m->loss);
    if (loss) {
        CK(cudaMemcpyAsync(loss, m->loss, sizeof(float), cudaMemcpyDeviceToHost, m->stream));
        CK(cudaStreamSynchronize(m->stream));
    }
    return MLSTM_OK;
}

/* ---- backward ------------------------------------------------------------------------------ */

int mlstm_cuda_decoder_backward(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, V = m->s.V, B = m->s.B, TB = m->s.T * m->s.B;
    const float inv = 1.0f / m->gscale; /* undoes the loss scale in parameter gradients */
    LAUNCH(m, k_dlogits, nblocks((size_t)TB * V), TB, V, B, m->tok, m->probs, m->gscale / TB,
           m->dlog);
    CK_ST(gemm(m, 1, 0, V, H, TB, inv, m->dlog, m->dt, V, at_(m, m->h, (size_t)B * H), H, 0.0f,
               GG(m, MLSTM_DECODER_W), CUDA_R_32F, H));
    fire(cb, user, MLSTM_DECODER_W);
    LAUNCH(m, k_colsum, nblocks((size_t)V), TB, V, m->dlog, inv, GG(m, MLSTM_DECODER_B));
    fire(cb, user, MLSTM_DECODER_B);
    CK_ST(gemm(m, 0, 0, TB, H, V, 1.0f, m->dlog, m->dt, V, m->w_dec, H, 0.0f, m->dh_out,
               CUDA_R_32F, H));
    return MLSTM_OK;
}

int mlstm_cuda_backward_step(mlstm_cuda *m, int t)
{
    if (!m || t < 0 || t >= m->s.T)
        return MLSTM_EINVAL;
    const int H = m->s.H, B = m->s.B;
    const size_t row = (size_t)t * B;
    if (t == m->s.T - 1) {
        CK(cudaMemsetAsync(m->dh_next, 0, sizeof(float) * B * H, m->stream));
        CK(cudaMemsetAsync(m->dc_next, 0, sizeof(float) * B * H, m->stream));
    }
    void *dz = at_(m, m->dgates, row * 4 * H);
    void *dmh = at_(m, m->dmh, row * H);
    LAUNCH(m, k_cell_backward, nblocks((size_t)B * H), B, H, m->gates + row * 4 * H,
           m->c + row * H, m->c + (row + B) * H, m->dh_out + row * H, m->dh_next, m->dc_next, dz);
    CK_ST(gemm(m, 0, 0, B, H, 4 * H, 1.0f, dz, m->dt, 4 * H, m->w_hh, H, 0.0f, m->dm, CUDA_R_32F,
               H));
    LAUNCH(m, k_mul_backward, nblocks((size_t)B * H), (size_t)B * H, m->dm, m->xmih + row * H,
           m->mh + row * H, at_(m, m->dxmih, row * H), dmh);
    CK_ST(gemm(m, 0, 0, B, H, H, 1.0f, dmh, m->dt, H, m->w_mhh, H, 0.0f, m->dh_next, CUDA_R_32F,
               H));
    return MLSTM_OK;
}

int mlstm_cuda_weight_grads(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, E = m->s.E, TB = m->s.T * m->s.B;
    const float inv = 1.0f / m->gscale;
    CK_ST(gemm(m, 1, 0, 4 * H, H, TB, inv, m->dgates, m->dt, 4 * H, m->m, H, 0.0f,
               GG(m, MLSTM_W_HH_V), CUDA_R_32F, H));
    LAUNCH1(m, k_weight_norm_backward, 4 * H, H, PP(m, MLSTM_W_HH_G), PP(m, MLSTM_W_HH_V),
            m->norm + 4 * H, GG(m, MLSTM_W_HH_G), GG(m, MLSTM_W_HH_V));
    fire(cb, user, MLSTM_W_HH_G);
    fire(cb, user, MLSTM_W_HH_V);
    CK_ST(gemm(m, 1, 0, H, H, TB, inv, m->dmh, m->dt, H, m->h, H, 0.0f, GG(m, MLSTM_W_MHH_V),
               CUDA_R_32F, H)); /* h rows 0..TB-1 are h_{t-1} */
    LAUNCH1(m, k_weight_norm_backward, H, H, PP(m, MLSTM_W_MHH_G), PP(m, MLSTM_W_MHH_V),
            m->norm + 9 * H, GG(m, MLSTM_W_MHH_G), GG(m, MLSTM_W_MHH_V));
    fire(cb, user, MLSTM_W_MHH_G);
    fire(cb, user, MLSTM_W_MHH_V);
    CK_ST(gemm(m, 1, 0, 4 * H, E, TB, inv, m->dgates, m->dt, 4 * H, m->x, E, 0.0f,
               GG(m, MLSTM_W_IH_V), CUDA_R_32F, E));
    LAUNCH1(m, k_weight_norm_backward, 4 * H, E, PP(m, MLSTM_W_IH_G), PP(m, MLSTM_W_IH_V), m->norm,
            GG(m, MLSTM_W_IH_G), GG(m, MLSTM_W_IH_V));
    fire(cb, user, MLSTM_W_IH_G);
    fire(cb, user, MLSTM_W_IH_V);
    CK_ST(gemm(m, 1, 0, H, E, TB, inv, m->dxmih, m->dt, H, m->x, E, 0.0f, GG(m, MLSTM_W_MIH_V),
               CUDA_R_32F, E));
    LAUNCH1(m, k_weight_norm_backward, H, E, PP(m, MLSTM_W_MIH_G), PP(m, MLSTM_W_MIH_V),
            m->norm + 8 * H, GG(m, MLSTM_W_MIH_G), GG(m, MLSTM_W_MIH_V));
    fire(cb, user, MLSTM_W_MIH_G);
    fire(cb, user, MLSTM_W_MIH_V);
    LAUNCH(m, k_colsum, nblocks((size_t)4 * H), TB, 4 * H, m->dgates, inv, GG(m, MLSTM_B_IH));
    fire(cb, user, MLSTM_B_IH);
    CK(cudaMemcpyAsync(GG(m, MLSTM_B_HH), GG(m, MLSTM_B_IH), sizeof(float) * 4 * H,
                       cudaMemcpyDeviceToDevice, m->stream));
    fire(cb, user, MLSTM_B_HH);
    return MLSTM_OK;
}

int mlstm_cuda_embedding_grad(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{
    if (!m)
        return MLSTM_EINVAL;
    const int H = m->s.H, E = m->s.E, V = m->s.V, TB = m->s.T * m->s.B;
    CK_ST(gemm(m, 0, 0, TB, E, 4 * H, 1.0f, m->dgates, m->dt, 4 * H, m->w_ih, E, 0.0f, m->dx,
               CUDA_R_32F, E));
    CK_ST(gemm(m, 0, 0, TB, E, H, 1.0f, m->dxmih, m->dt, H, m->w_mih, E, 1.0f, m->dx, CUDA_R_32F,
               E));
    LAUNCH1(m, k_embed_backward, nblocks((size_t)V * E), TB, V, E, m->tok, m->dx,
            1.0f / m->gscale, GG(m, MLSTM_ENCODER_W));
    fire(cb, user, MLSTM_ENCODER_W);
    return MLSTM_OK;
}

/* ---- whole passes -------------------------------------------------------------------------- */

int mlstm_cuda_forward(mlstm_cuda *m, const uint8_t *tokens, float *loss)
{
    CK_ST(mlstm_cuda_prepare(m, tokens));
    for (int t = 0; t < m->s.T; t++)
        CK_ST(mlstm_cuda_forward_step(m, t));
    return mlstm_cuda_decoder_forward(m, loss);
}

int mlstm_cuda_backward(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{
    CK_ST(mlstm_cuda_decoder_backward(m, cb, user));
    for (int t = m->s.T - 1; t >= 0; t--)
        CK_ST(mlstm_cuda_backward_step(m, t));
    CK_ST(mlstm_cuda_weight_grads(m, cb, user));
    return mlstm_cuda_embedding_grad(m, cb, user);
}

int mlstm_cuda_iteration(mlstm_cuda *m, const uint8_t *tokens, float *loss,
                         mlstm_grad_ready_fn cb, void *user)
{
    CK_ST(mlstm_cuda_forward(m, tokens, loss));
    return mlstm_cuda_backward(m, cb, user);
}

/* ---- timing -------------------------------------------------------------------------------- */

int mlstm_cuda_timer_start(mlstm_cuda *m)
{
    if (!m)
        return MLSTM_EINVAL;
    CK(cudaEventRecord(m->ev0, m->stream));
    return MLSTM_OK;
}

int mlstm_cuda_timer_stop(mlstm_cuda *m, double *seconds)
{
    if (!m || !seconds)
        return MLSTM_EINVAL;
    float ms = 0.0f;
    CK(cudaEventRecord(m->ev1, m->stream));
    CK(cudaEventSynchronize(m->ev1));
    CK(cudaEventElapsedTime(&ms, m->ev0, m->ev1));
    *seconds = ms * 1e-3;
    return MLSTM_OK;
}

int mlstm_cuda_set_tf32(mlstm_cuda *m, int on)
{
    if (!m || m->prec != MLSTM_FP32)
        return MLSTM_EINVAL;
    CKB(cublasSetMathMode(m->blas, on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    return MLSTM_OK;
}

int mlstm_cuda_bench_gemm(mlstm_cuda *m, int M, int N, int K, int reps, double *seconds)
{
    if (!m || !seconds || M < 1 || N < 1 || K < 1 || reps < 1)
        return MLSTM_EINVAL;
    void *A = NULL, *Bm = NULL;
    float *C = NULL;
    int st = MLSTM_OK;
    double total = 0.0;
    cudaError_t e = cudaMalloc(&A, m->esize * M * K);
    if (e == cudaSuccess)
        e = cudaMalloc(&Bm, m->esize * K * N);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&C, sizeof(float) * M * N);
    for (int i = 0; i < 2 && e == cudaSuccess; i++) {
        void *p = i ? Bm : A;
        size_t n = i ? (size_t)K * N : (size_t)M * K;
        DISPATCH(m, k_fill_random, nblocks(n), n, 12345u + i, p);
        e = cudaGetLastError();
    }
    if (e != cudaSuccess) {
        st = cuda_err(m, e, "bench_gemm alloc", __LINE__);
        goto done;
    }
    /* one warm-up, then the timed repetitions */
    if ((st = gemm(m, 0, 0, M, N, K, 1.0f, A, m->dt, K, Bm, N, 0.0f, C, CUDA_R_32F, N)) != MLSTM_OK)
        goto done;
    if ((st = mlstm_cuda_timer_start(m)) != MLSTM_OK)
        goto done;
    for (int r = 0; r < reps && st == MLSTM_OK; r++)
        st = gemm(m, 0, 0, M, N, K, 1.0f, A, m->dt, K, Bm, N, 0.0f, C, CUDA_R_32F, N);
    if (st == MLSTM_OK && (st = mlstm_cuda_timer_stop(m, &total)) == MLSTM_OK)
        *seconds = total / reps;
done:
    cudaFree(A);
    cudaFree(Bm);
    cudaFree(C);
    return st;
}
