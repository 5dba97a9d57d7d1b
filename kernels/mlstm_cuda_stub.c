/* mlstm_cuda_stub.c: the mlstm_cuda_* API when the library is built without CUDA. Every call
 * reports MLSTM_ENODEV, so programs link and take the "no GPU" branch at run time. */
#include "mlstm.h"

#include <stdio.h>

int mlstm_cuda_available(void) { return 0; }

int mlstm_cuda_create(const mlstm_shape *s, mlstm_precision prec, mlstm_cuda **out,
                      char *err, size_t errlen)
{
    (void)s;
    (void)prec;
    if (out)
        *out = NULL;
    if (err && errlen > 0)
        snprintf(err, errlen, "mlstm_cuda_create: built without CUDA");
    return MLSTM_ENODEV;
}

void mlstm_cuda_destroy(mlstm_cuda *m) { (void)m; }
const char *mlstm_cuda_last_error(const mlstm_cuda *m) { (void)m; return "built without CUDA"; }
void *mlstm_cuda_stream(mlstm_cuda *m) { (void)m; return NULL; }
float *mlstm_cuda_grads_device(mlstm_cuda *m) { (void)m; return NULL; }


int mlstm_cuda_sync(mlstm_cuda *m) { (void)m; return MLSTM_ENODEV; }
int mlstm_cuda_set_params(mlstm_cuda *m, const float *p) { (void)m; (void)p; return MLSTM_ENODEV; }
int mlstm_cuda_get_params(mlstm_cuda *m, float *p) { (void)m; (void)p; return MLSTM_ENODEV; }
int mlstm_cuda_get_grads(mlstm_cuda *m, float *g) { (void)m; (void)g; return MLSTM_ENODEV; }
int mlstm_cuda_get_hidden(mlstm_cuda *m, float *h) { (void)m; (void)h; return MLSTM_ENODEV; }
int mlstm_cuda_forward(mlstm_cuda *m, const uint8_t *tok, float *loss)
{ (void)m; (void)tok; (void)loss; return MLSTM_ENODEV; }
int mlstm_cuda_backward(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{ (void)m; (void)cb; (void)user; return MLSTM_ENODEV; }
int mlstm_cuda_iteration(mlstm_cuda *m, const uint8_t *tok, float *loss, mlstm_grad_ready_fn cb,
                         void *user)
{ (void)m; (void)tok; (void)loss; (void)cb; (void)user; return MLSTM_ENODEV; }
int mlstm_cuda_prepare(mlstm_cuda *m, const uint8_t *tok) { (void)m; (void)tok; return MLSTM_ENODEV; }
int mlstm_cuda_forward_step(mlstm_cuda *m, int t) { (void)m; (void)t; return MLSTM_ENODEV; }
int mlstm_cuda_decoder_forward(mlstm_cuda *m, float *loss) { (void)m; (void)loss; return MLSTM_ENODEV; }
int mlstm_cuda_decoder_backward(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{ (void)m; (void)cb; (void)user; return MLSTM_ENODEV; }
int mlstm_cuda_backward_step(mlstm_cuda *m, int t) { (void)m; (void)t; return MLSTM_ENODEV; }
int mlstm_cuda_weight_grads(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{ (void)m; (void)cb; (void)user; return MLSTM_ENODEV; }
int mlstm_cuda_embedding_grad(mlstm_cuda *m, mlstm_grad_ready_fn cb, void *user)
{ (void)m; (void)cb; (void)user; return MLSTM_ENODEV; }
int mlstm_cuda_supports(mlstm_precision p) { (void)p; return 0; }
int mlstm_cuda_set_tf32(mlstm_cuda *m, int on) { (void)m; (void)on; return MLSTM_ENODEV; }
int mlstm_cuda_bench_gemm(mlstm_cuda *m, int M, int N, int K, int reps, double *seconds)
{ (void)m; (void)M; (void)N; (void)K; (void)reps; (void)seconds; return MLSTM_ENODEV; }
int mlstm_cuda_timer_start(mlstm_cuda *m) { (void)m; return MLSTM_ENODEV; }
int mlstm_cuda_timer_stop(mlstm_cuda *m, double *seconds) { (void)m; (void)seconds; return MLSTM_ENODEV; }
