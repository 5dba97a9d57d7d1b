/* test_mlstm_errors: every error path on purpose. Bad shapes, NULL arguments, steps out of range
 * and tokens out of the vocabulary give an error status and a message, never a crash. */
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
    char err[256];
    char what[320];
    const mlstm_shape bad[] = {
        {0, 4, 11, 5, 3}, {8, 0, 11, 5, 3}, {8, 4, 0, 5, 3}, {8, 4, 11, 0, 3}, {8, 4, 11, 5, 0},
        {-8, 4, 11, 5, 3}, {8, 4, 257, 5, 3}, {1 << 20, 64, 256, 1 << 16, 1 << 10}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mlstm_cpu *m = (mlstm_cpu *)&what; /* must be reset to NULL on failure */
        err[0] = '\0';
        int st = mlstm_cpu_create(&bad[i], &m, err, sizeof err);
        snprintf(what, sizeof what, "create H=%d E=%d V=%d T=%d B=%d: %s, out NULL, \"%s\"",
                 bad[i].H, bad[i].E, bad[i].V, bad[i].T, bad[i].B, mlstm_strerror(st), err);
        expect(st != MLSTM_OK && m == NULL && err[0] != '\0', what);
        mlstm_param_info L[MLSTM_NPARAMS];
        expect(mlstm_layout(&bad[i], L, NULL) == MLSTM_EINVAL, "  layout rejects it too");
        expect(mlstm_flops(&bad[i], MLSTM_PHASE_ITERATION) == 0.0, "  flops of it are 0");
    }
    expect(mlstm_num_params(0, 64, 256) == 0, "num_params of a bad shape is 0");
    const mlstm_shape s = {.H = 8, .E = 4, .V = 11, .T = 5, .B = 3};
    mlstm_cpu *m = NULL;
    expect(mlstm_cpu_create(NULL, &m, err, sizeof err) == MLSTM_EINVAL, "create(NULL shape)");
    expect(mlstm_cpu_create(&s, NULL, err, sizeof err) == MLSTM_EINVAL, "create(NULL out)");
    expect(mlstm_cpu_create(&s, &m, NULL, 0) == MLSTM_OK, "create without an error buffer");
    expect(mlstm_layout(&s, NULL, NULL) == MLSTM_EINVAL, "layout(NULL table)");
    expect(mlstm_init_params(&s, NULL, 1u, 0.1f) == MLSTM_EINVAL, "init_params(NULL)");
    expect(mlstm_init_params(&s, mlstm_cpu_params(m), 1u, -1.0f) == MLSTM_EINVAL,
           "init_params(negative scale)");
    expect(mlstm_init_params(&s, mlstm_cpu_params(m), 1u, 0.2f) == MLSTM_OK, "init_params");

    unsigned char tok[(5 + 1) * 3];
    memset(tok, 2, sizeof tok);
    expect(mlstm_cpu_forward(m, NULL, NULL) == MLSTM_EINVAL, "forward(NULL tokens)");
    expect(mlstm_cpu_forward(NULL, tok, NULL) == MLSTM_EINVAL, "forward(NULL model)");
    expect(mlstm_cpu_backward(NULL, NULL, NULL) == MLSTM_EINVAL, "backward(NULL model)");
    expect(mlstm_cpu_iteration(NULL, tok, NULL, NULL, NULL) == MLSTM_EINVAL, "iteration(NULL)");
    tok[7] = 11;
    expect(mlstm_cpu_prepare(m, tok) == MLSTM_EINVAL, "token 11 with V=11");
    tok[7] = 2;
    expect(mlstm_cpu_prepare(m, tok) == MLSTM_OK, "prepare");
    expect(mlstm_cpu_forward_step(m, -1) == MLSTM_EINVAL, "forward_step(-1)");
    expect(mlstm_cpu_forward_step(m, 5) == MLSTM_EINVAL, "forward_step(T)");
    expect(mlstm_cpu_backward_step(m, 5) == MLSTM_EINVAL, "backward_step(T)");
    expect(mlstm_cpu_backward_step(m, -1) == MLSTM_EINVAL, "backward_step(-1)");
    expect(mlstm_cpu_decoder_forward(NULL, NULL) == MLSTM_EINVAL, "decoder_forward(NULL)");
    expect(mlstm_cpu_decoder_backward(NULL, NULL, NULL) == MLSTM_EINVAL, "decoder_backward(NULL)");
    expect(mlstm_cpu_weight_grads(NULL, NULL, NULL) == MLSTM_EINVAL, "weight_grads(NULL)");
    expect(mlstm_cpu_embedding_grad(NULL, NULL, NULL) == MLSTM_EINVAL, "embedding_grad(NULL)");
    expect(mlstm_cpu_params(NULL) == NULL && mlstm_cpu_grads(NULL) == NULL &&
           mlstm_cpu_hidden(NULL) == NULL, "accessors of NULL give NULL");
    /* all-zero parameters (the state after create) must not produce NaN through the weight norm */
    mlstm_cpu *z = NULL;
    float loss = -1.0f;
    expect(mlstm_cpu_create(&s, &z, err, sizeof err) == MLSTM_OK &&
           mlstm_cpu_iteration(z, tok, &loss, NULL, NULL) == MLSTM_OK, "iteration at zero params");
    snprintf(what, sizeof what, "loss at zero params is log(V) = %.5f: %.5f", 2.397895, loss);
    expect(loss > 2.3978f && loss < 2.3980f, what);
    mlstm_cpu_destroy(z);
    mlstm_cpu_destroy(m);
    mlstm_cpu_destroy(NULL);
    expect(1, "destroy(NULL) is a no-op");
    expect(strcmp(mlstm_strerror(12345), "unknown mlstm status") == 0, "strerror(unknown)");
    expect(strcmp(mlstm_strerror(MLSTM_OK), "ok") == 0, "strerror(OK)");

    /* the CUDA entry points fail cleanly without a GPU (and everywhere on bad input) */
    mlstm_cuda *g = (mlstm_cuda *)&what;
    int st = mlstm_cuda_create(&bad[0], MLSTM_FP32, &g, err, sizeof err);
    expect(st != MLSTM_OK && g == NULL, "cuda_create(bad shape) fails, out NULL");
    st = mlstm_cuda_create(&s, (mlstm_precision)7, &g, err, sizeof err);
    expect(st != MLSTM_OK && g == NULL, "cuda_create(bad precision) fails, out NULL");
    mlstm_cuda_destroy(NULL);
    expect(1, "cuda_destroy(NULL) is a no-op");
    return fails ? 1 : 0;
}
