#include "pipe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pipe_init(pipe_t *p, int queue, err_t *e) {
  memset(p, 0, sizeof *p);
  if (queue < 1 || queue > PIPE_QUEUE_MAX)
    return err_set(e, ERR_INPUT, "the launch queue must hold 1 to %d kernels, got %d", PIPE_QUEUE_MAX, queue);
  p->ring = malloc(2 * (size_t)queue * sizeof *p->ring); /* the second half: pipe_op's scratch */
  if (!p->ring) return err_set(e, ERR_NOMEM, "out of memory");
  p->queue = queue;
  pipe_reset(p, 0, 0);
  return ERR_OK;
}

void pipe_free(pipe_t *p) {
  if (!p) return;
  free(p->ring);
  memset(p, 0, sizeof *p);
}

void pipe_reset(pipe_t *p, double H0, double D0) {
  for (int i = 0; i < p->queue; i++) p->ring[i] = -INFINITY;
  p->pos = 0;
  p->H = H0;
  p->D = D0;
  p->host_busy_s = p->dev_busy_s = p->starved_s = p->queue_wait_s = 0;
}

/* One run; returns the stream's idle time before it and the host's wait on the queue. */
static void one_run(pipe_t *p, double h, double d, long L, double *starved, double *qwait) {
  int q = p->queue;
  /* The run's last kernel takes the slot of the kernel `queue` launches before it. */
  double free_at = p->pos + L - 1 >= q ? p->ring[(p->pos + L - 1) % q] : -INFINITY;
  double H = p->H + h;
  *qwait = free_at > H ? free_at - H : 0;
  if (free_at > H) H = free_at;
  double start = H > p->D ? H : p->D;
  *starved = isfinite(p->D) && H > p->D ? H - p->D : 0;
  p->H = H;
  p->D = start + d;
  for (long k = 0; k < L; k++) p->ring[(p->pos + k) % q] = p->D;
  p->pos += L;
}

void pipe_op(pipe_t *p, double h, double d, long count, long kernels) {
  long L = kernels < 1 ? 1 : kernels > p->queue ? p->queue : kernels;
  /* Steady state: after `need` consecutive runs that each moved H and D by the same delta, every
   * entry of the ring is from those runs, so the state is the previous one shifted by delta, and
   * so will every further run be. */
  long need = (p->queue + L - 1) / L + 1, streak = 0;
  double delta = 0, tol = 1e-12 * (h + d) + 1e-18;
  for (long j = 0; j < count; j++) {
    double H0 = p->H, D0 = p->D, starved, qwait;
    one_run(p, h, d, L, &starved, &qwait);
    p->host_busy_s += h;
    p->dev_busy_s += d;
    p->starved_s += starved;
    p->queue_wait_s += qwait;
    double dH = p->H - H0, dD = p->D - D0;
    /* A host at -infinity (a max-plus coefficient's evaluation) stays there: only D moves. */
    int hsame = isinf(H0) && isinf(p->H) ? 1 : isfinite(dH) && fabs(dH - dD) <= tol;
    if (hsame && isfinite(dD) && fabs(dD - delta) <= tol) streak++;
    else streak = 1, delta = dD;
    long rem = count - 1 - j;
    if (streak >= need && rem > 0) {
      double shift = (double)rem * delta;
      p->H += shift;
      p->D += shift;
      /* Slot pos - m after the jump holds what slot pos - m held before it, shifted. */
      int q = p->queue;
      double *tmp = p->ring + q;
      for (int m = 1; m <= q; m++) tmp[m - 1] = p->ring[(p->pos - m) % q];
      p->pos += rem * L;
      for (int m = 1; m <= q; m++) p->ring[(p->pos - m) % q] = tmp[m - 1] + shift;
      p->host_busy_s += (double)rem * h;
      p->dev_busy_s += (double)rem * d;
      p->starved_s += (double)rem * starved;
      p->queue_wait_s += (double)rem * qwait;
      return;
    }
  }
}

void pipe_host(pipe_t *p, double host_s) {
  p->H += host_s;
  p->host_busy_s += host_s;
}

void pipe_stream_wait(pipe_t *p, double t) {
  if (t > p->D) p->D = t;
}
