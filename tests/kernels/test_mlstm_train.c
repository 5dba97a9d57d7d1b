/* test_mlstm_train: plain SGD on a small synthetic byte stream lowers the loss, and two runs from
 * the same seed give bitwise identical losses (the CPU reference is deterministic). */
#include "check.h"
#include "mlstm.h"

#include <stdio.h>
#include <string.h>

enum { STEPS = 12 };

/* A learnable stream: a repeating phrase, so the next byte is predictable from the previous ones. */
static void make_stream(unsigned char *tok, size_t n, int V)
{
    static const char phrase[] = "the quick brown fox jumps over the lazy dog; ";
    for (size_t i = 0; i < n; i++)
        tok[i] = (unsigned char)((unsigned char)phrase[i % (sizeof phrase - 1)] % V);
}

static int train(float losses[STEPS])
{
    const mlstm_shape s = {.H = 24, .E = 8, .V = 64, .T = 12, .B = 4};
    char err[256];
    mlstm_cpu *m = NULL;
    if (mlstm_cpu_create(&s, &m, err, sizeof err) != MLSTM_OK) {
        printf("FAIL create: %s\n", err);
        return 1;
    }
    size_t n = mlstm_num_params(s.H, s.E, s.V);
    float *p = mlstm_cpu_params(m);
    const float *g = mlstm_cpu_grads(m);
    mlstm_init_params(&s, p, 1234567u, 0.15f);
    unsigned char stream[(12 + 1) * 4 * STEPS];
    make_stream(stream, sizeof stream, s.V);
    const float lr = 4.0f;
    int st = MLSTM_OK;
    for (int k = 0; k < STEPS && st == MLSTM_OK; k++) {
        /* the same batch every step: a loss that falls proves the gradients point downhill */
        st = mlstm_cpu_iteration(m, stream, &losses[k], NULL, NULL);
        for (size_t i = 0; i < n && st == MLSTM_OK; i++)
            p[i] -= lr * g[i];
    }
    mlstm_cpu_destroy(m);
    if (st != MLSTM_OK) {
        printf("FAIL iteration: %s\n", mlstm_strerror(st));
        return 1;
    }
    return 0;
}

int main(void)
{
    float a[STEPS], b[STEPS];
    if (train(a) || train(b))
        return 1;
    int fails = 0;
    printf("#    loss per SGD step:");
    for (int k = 0; k < STEPS; k++)
        printf(" %.4f", a[k]);
    printf("\n");
    int fell = a[STEPS - 1] < 0.8f * a[0];
    printf("%s loss falls by 20%% or more over %d steps: %.4f -> %.4f\n", fell ? "ok  " : "FAIL",
           STEPS, a[0], a[STEPS - 1]);
    fails += !fell;
    int mono = 1;
    for (int k = 1; k < STEPS; k++)
        mono &= a[k] < a[k - 1];
    printf("%s loss falls at every step\n", mono ? "ok  " : "FAIL");
    fails += !mono;
    int same = memcmp(a, b, sizeof a) == 0;
    printf("%s two runs from the same seed give bitwise identical losses\n", same ? "ok  " : "FAIL");
    fails += !same;
    return fails ? 1 : 0;
}
