#include "fsdp.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"

/* ---- units ---- */

/* Module path `s` (dots) as a path fnmatch reads (slashes), so that `*` stays within one name. */
static void slashes(const char *s, char *out, size_t cap) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++) out[i] = s[i] == '.' ? '/' : s[i];
  out[i] = '\0';
}

static int is_number(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)s[i])) return 0;
  return 1;
}

/* Whether `mod` is `name` or a module above it (a prefix ending at a dot). */
static int holds(const char *mod, const char *name) {
  size_t n = strlen(mod);
  return n > 0 && strncmp(mod, name, n) == 0 && (name[n] == '.' || name[n] == '\0');
}

/* How many names of unit path `u` begin op name `op`: the longest tail of u (at least one name not
 * a number) that op starts with, followed by a dot or its end; 0: none. */
static int op_match(const char *u, const char *op) {
  int depth = 1;
  for (const char *q = u; *q; q++) depth += *q == '.';
  for (const char *t = u; t; t = strchr(t, '.') ? strchr(t, '.') + 1 : NULL, depth--) {
    int named = 0;
    for (const char *a = t; *a;) {
      const char *b = strchr(a, '.');
      size_t n = b ? (size_t)(b - a) : strlen(a);
      if (!is_number(a, n)) named = 1;
      a = b ? b + 1 : a + n;
    }
    if (named && holds(t, op)) return depth;
  }
  return 0;
}

typedef struct {
  char (*path)[MODEL_NAME_MAX];
  int n, cap;
} paths_t;

static int paths_add(paths_t *ps, const char *s, size_t len) {
  for (int i = 0; i < ps->n; i++)
    if (strlen(ps->path[i]) == len && strncmp(ps->path[i], s, len) == 0) return 0;
  if (ps->n == ps->cap) {
    int cap = ps->cap ? 2 * ps->cap : 64;
    void *np = realloc(ps->path, (size_t)cap * sizeof *ps->path);
    if (!np) return -1;
    ps->path = np;
    ps->cap = cap;
  }
  memcpy(ps->path[ps->n], s, len);
  ps->path[ps->n++][len] = '\0';
  return 0;
}

/* Every module holding a parameter (trainable or frozen): the names' prefixes up to each dot. */
static int module_paths(const model_t *m, paths_t *ps) {
  for (int i = 0; i < m->nparams + m->nfrozen; i++) {
    const char *name = i < m->nparams ? m->params[i].name : m->frozen[i - m->nparams].name;
    for (const char *d = strchr(name, '.'); d; d = strchr(d + 1, '.'))
      if (paths_add(ps, name, (size_t)(d - name))) return -1;
  }
  return 0;
}

static int depth_of(const char *s) {
  int d = 1;
  for (; *s; s++) d += *s == '.';
  return d;
}

/* Whether module path `s` matches one of the comma-separated globs. */
static int pattern_match(const char *pats, const char *s) {
  char path[MODEL_NAME_MAX], pat[256];
  slashes(s, path, sizeof path);
  for (const char *a = pats; *a;) {
    const char *b = strchr(a, ',');
    size_t n = b ? (size_t)(b - a) : strlen(a);
    if (n < sizeof pat) {
      char raw[256];
      memcpy(raw, a, n);
      raw[n] = '\0';
      slashes(raw, pat, sizeof pat);
      if (n > 0 && fnmatch(pat, path, FNM_PATHNAME) == 0) return 1;
    }
    a = b ? b + 1 : a + n;
  }
  return 0;
}

int fsdp_shard_world(const sim_config *c) {
  int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : c->topo ? c->topo->gpus_per_node : 1;
  return c->fsdp_replicate > 1 ? c->nodes * gpn / c->fsdp_replicate : c->nodes * gpn;
}

long fsdp_shard_numel(const model_param *pm, int world) {
  long dim0 = pm->ndim > 0 && pm->shape[0] > 0 ? pm->shape[0] : 1;
  return (dim0 + world - 1) / world * (pm->numel / dim0);
}

static size_t dtype_bytes(int forced, const model_param *pm, model_dtype run) {
  return model_dtype_size(forced >= 0 ? (model_dtype)forced : model_param_dtype(pm, run));
}

/* The unit holding parameter `name` (units do not nest): its index, or 0, the root. */
static int unit_of(const fsdp_unit *u, int nu, const char *name) {
  for (int k = 1; k < nu; k++)
    if (holds(u[k].path, name)) return k;
  return 0;
}

/* Sorts the unit indices order[0..n-1] by the int `field` (an offsetof into fsdp_unit) of their
 * units, ties kept in order (an insertion sort: a few hundred units at most). */
static void sort_units(int *order, int n, const fsdp_unit *u, size_t field) {
#define KEY(k) (*(const int *)((const char *)&u[k] + field))
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && KEY(order[j]) < KEY(order[j - 1]); j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
#undef KEY
}

/* Records the ops that make each unit's gradients final (ready_first, ready_last), checks its named
 * backward ops against them, and where they disagree lays every unit's backward out by its gradients
 * (fsdp_units). ERR_NOMEM. */
static int backward_by_gradients(const model_t *m, fsdp_unit *u, int nu, err_t *e) {
  int *order = malloc((size_t)nu * sizeof *order);
  if (!order) return err_set(e, ERR_NOMEM, "out of memory");
  for (int k = 0; k < nu; k++) u[k].ready_first = u[k].ready_last = -1;
  for (int o = 0; o < m->nops; o++)
    for (int r = 0; r < m->ops[o].ready_count; r++) {
      const model_param *pm = &m->params[m->ready[m->ops[o].ready_first + r]];
      if (pm->unused) continue; /* written ready at the end of backward: not where its module ran */
      fsdp_unit *x = &u[unit_of(u, nu, pm->name)];
      if (x->ready_first < 0) x->ready_first = o;
      x->ready_last = o;
    }
  int agree = 1, n = 0;
  for (int k = 1; k < nu; k++) {
    if (u[k].ready_last < 0) continue; /* no gradient at all: its names alone say where it runs */
    agree &= u[k].bwd_first >= 0 && u[k].bwd_first <= u[k].ready_first && u[k].ready_last <= u[k].bwd_last;
    order[n++] = k;
  }
  if (!agree) {
    sort_units(order, n, u, offsetof(fsdp_unit, ready_last)); /* by the last gradient made final */
    for (int i = 0; i < n; i++) {
      fsdp_unit *x = &u[order[i]];
      int first = i > 0 ? u[order[i - 1]].ready_last + 1 : x->ready_first;
      if (i == 0 && x->bwd_first >= 0 && x->bwd_first < first) first = x->bwd_first; /* the first one's named start */
      x->bwd_first = first;
      x->bwd_last = x->ready_last;
    }
  }
  free(order);
  return ERR_OK;
}

int fsdp_units(const sim_config *c, int world, fsdp_unit **units_out, int *n_out, err_t *e) {
  const model_t *m = c->model;
  paths_t ps = {0};
  fsdp_unit *u = NULL;
  int rc = ERR_OK, nu = 1;
  if (module_paths(m, &ps)) goto nomem;
  /* Which modules are units. */
  int min_depth = 1 << 30;
  if (!c->fsdp_units)
    for (int i = 0; i < ps.n; i++) {
      const char *last = strrchr(ps.path[i], '.');
      last = last ? last + 1 : ps.path[i];
      if (is_number(last, strlen(last)) && depth_of(ps.path[i]) < min_depth) min_depth = depth_of(ps.path[i]);
    }
  u = calloc((size_t)ps.n + 1, sizeof *u);
  if (!u) goto nomem;
  for (int i = 0; i < ps.n; i++) {
    const char *s = ps.path[i], *last = strrchr(s, '.');
    last = last ? last + 1 : s;
    int is_unit = c->fsdp_units ? pattern_match(c->fsdp_units, s) : is_number(last, strlen(last)) && depth_of(s) == min_depth;
    if (!is_unit) continue;
    for (int k = 1; k < nu; k++)
      if (holds(u[k].path, s) || holds(s, u[k].path)) {
        rc = err_set(e, ERR_USAGE, "--fsdp-units: %s is inside %s: nested units are not modelled",
                     holds(u[k].path, s) ? s : u[k].path, holds(u[k].path, s) ? u[k].path : s);
        goto done;
      }
    snprintf(u[nu++].path, MODEL_NAME_MAX, "%s", s);
  }
  if (c->fsdp_units) /* every pattern must name a unit: a typo is not silently the root */
    for (const char *a = c->fsdp_units; *a;) {
      const char *b = strchr(a, ',');
      size_t n = b ? (size_t)(b - a) : strlen(a);
      char one[256];
      if (n == 0 || n >= sizeof one) {
        rc = err_set(e, ERR_USAGE, "--fsdp-units: an empty or overlong pattern in '%s'", c->fsdp_units);
        goto done;
      }
      memcpy(one, a, n);
      one[n] = '\0';
      int hit = 0;
      for (int k = 1; k < nu && !hit; k++) hit = pattern_match(one, u[k].path);
      if (!hit) {
        rc = err_set(e, ERR_USAGE, "--fsdp-units: '%s' matches no module of %s that holds parameters", one, m->name);
        goto done;
      }
      a = b ? b + 1 : a + n;
    }
  /* Each parameter's unit, its shard and bytes (FSDPParam: torch.chunk along dim 0 into `world`
   * chunks of ceil(dim0 / world) rows; the all-gather moves every rank's padded chunk). */
  model_dtype run = sim_precision(c);
  /* reduce_dtype None reduces in the parameters' own type, whatever param_dtype (_get_reduce_dtype). */
  int rd = c->fsdp_reduce_dtype;
  for (int i = 0; i < m->nparams + m->nfrozen; i++) { /* frozen parameters too: gathered, never reduced */
    int frozen = i >= m->nparams;
    const model_param *pm = frozen ? &m->frozen[i - m->nparams] : &m->params[i];
    fsdp_unit *x = &u[unit_of(u, nu, pm->name)];
    long shard = fsdp_shard_numel(pm, world);
    if (!x->nparams) x->dtype = model_param_dtype(pm, run), x->first_param = i;
    x->nparams++;
    x->numel += pm->numel;
    x->shard_numel += shard;
    x->param_bytes += (double)pm->numel * (double)model_dtype_size(model_param_dtype(pm, run));
    x->ag_bytes += (double)world * (double)shard * (double)dtype_bytes(c->fsdp_param_dtype, pm, run);
    if (pm->unused || frozen) continue; /* no gradient: left out of the reduce-scatter */
    x->nreduced++;
    x->reduced_shard_numel += shard;
    x->rs_bytes += (double)world * (double)shard * (double)dtype_bytes(rd, pm, run);
  }
  for (int k = 0; k < nu; k++) u[k].fwd_first = u[k].fwd_last = u[k].bwd_first = u[k].bwd_last = -1;
  /* Units whose forward inputs took no gradient (the model file's no_input_grad, the exporter's). */
  for (const char *a = m->no_input_grad; a && *a;) {
    const char *b = strchr(a, ',');
    size_t n = b ? (size_t)(b - a) : strlen(a);
    for (int k = 1; k < nu; k++)
      if (strlen(u[k].path) == n && strncmp(u[k].path, a, n) == 0) u[k].late = 1;
    a = b ? b + 1 : a + n;
  }
  /* Each op's unit by its name; a unit's ops run from its first to its last. */
  for (int o = 0; o < m->nops; o++) {
    const model_op *op = &m->ops[o];
    if (op->phase == MODEL_PHASE_OPTIMIZER) continue;
    int best = 0, bd = 0;
    for (int k = 1; k < nu; k++) {
      int d = op_match(u[k].path, op->name);
      if (d > bd) bd = d, best = k;
    }
    if (!best) continue;
    int *first = op->phase == MODEL_PHASE_FORWARD ? &u[best].fwd_first : &u[best].bwd_first;
    int *last = op->phase == MODEL_PHASE_FORWARD ? &u[best].fwd_last : &u[best].bwd_last;
    if (*first < 0) *first = o;
    *last = o;
  }
  /* Backward by the gradients: a unit's post-backward follows the op that makes the last of its
   * gradients final, which the model records exactly (ready=), where the ops' names may not (the
   * exporter names backward ops by the module its tracker saw, which can be another's). Where the
   * names disagree with the gradients (a unit's gradients made final outside its named ops, or no
   * op named), each unit's backward runs from the end of the one before it to its last gradient. */
  if ((rc = backward_by_gradients(m, u, nu, e))) goto done;
  for (int k = 1; k < nu; k++) {
    if (u[k].fwd_first < 0 || u[k].bwd_first < 0) {
      rc = err_set(e, ERR_INPUT, "%s: unit %s: no %s op of the model names it (an op belongs to a unit whose path, or its tail, begins the op's name: docs/fsdp.md)",
                   m->name, u[k].path, u[k].fwd_first < 0 ? "forward" : "backward");
      goto done;
    }
    for (int j = 1; j < k; j++)
      if ((u[k].fwd_first <= u[j].fwd_last && u[j].fwd_first <= u[k].fwd_last) ||
          (u[k].bwd_first <= u[j].bwd_last && u[j].bwd_first <= u[k].bwd_last)) {
        rc = err_set(e, ERR_INPUT, "%s: units %s and %s: their ops interleave (a unit's ops run between its first and its last)",
                     m->name, u[j].path, u[k].path);
        goto done;
      }
  }
  /* Forward order: the root first (its pre-forward runs before anything), then by first op. */
  for (int i = 2; i < nu; i++)
    for (int j = i; j > 1 && u[j].fwd_first < u[j - 1].fwd_first; j--) {
      fsdp_unit t = u[j];
      u[j] = u[j - 1];
      u[j - 1] = t;
    }
  *units_out = u;
  *n_out = nu;
  u = NULL;
  goto done;
nomem:
  rc = err_set(e, ERR_NOMEM, "out of memory");
done:
  free(ps.path);
  free(u);
  return rc;
}

/* ---- the script: what each rank's host issues and its compute stream runs, in order ---- */

typedef enum {
  IT_OPS,    /* ops [o0, o1) on the compute stream */
  IT_COPY,   /* a copy kernel of dev_s on the compute stream (FSDP's copy-out or copy-in) */
  IT_ISSUE,  /* the host issues collective `coll` (its launch) */
  IT_WAIT,   /* the compute stream waits for event ev */
  IT_RECORD, /* the compute stream records event ev (-1: nobody waits for it; dropped) */
  IT_FORWARD, /* markers of the issue listing: unit's forward begins; backward begins */
  IT_BACKWARD,
} item_kind;

typedef struct {
  item_kind kind;
  int o0, o1, bwd;  /* IT_OPS */
  double dev_s;     /* IT_COPY */
  int slot;         /* IT_OPS, IT_COPY: the duration's; IT_ISSUE: the host's clock at the issue */
  int ev, coll, unit;
} item_t;

typedef struct {
  fsdp_unit *u;
  int nu;
  item_t *it;
  int nit, cap;
  int ncoll;
  int *coll_unit;      /* (ncoll) */
  int *coll_bwd;       /* (ncoll) an all-gather before backward */
  int *coll_type;      /* (ncoll) the model_dtype it moves */
  double *copy_in_s;   /* (ncoll) all-gathers: the copy into the all-gather's input; reduce-scatters:
                          the cast of the output into the sharded gradient (0: a view) */
  int *ev_mark, *ev_done, *ev_ready, *ev_reuse; /* (ncoll) -1: none */
  int *ev_chain;       /* (ncoll) a reduce-scatter: recorded when done, for its all-reduce (HSDP); an
                          all-reduce: the event it waits for; -1: none */
  int hsdp;            /* the shard groups are nodes, the replicas all-reduce (sim_config.fsdp_replicate) */
  int nevents, nslots;
  int slot_tail;       /* tail a, b, and the copy back (0) */
  double *base;        /* (nslots) every rank's values without jitter */
} fsdp_data;

static void fsdp_data_free(void *v) {
  fsdp_data *d = v;
  if (!d) return;
  free(d->u);
  free(d->it);
  free(d->coll_unit);
  free(d->coll_bwd);
  free(d->coll_type);
  free(d->copy_in_s);
  free(d->ev_mark);
  free(d->ev_done);
  free(d->ev_ready);
  free(d->ev_reuse);
  free(d->ev_chain);
  free(d->base);
  free(d);
}

static item_t *item(fsdp_data *d, item_kind k, int *bad) {
  static item_t scratch;
  if (d->nit == d->cap) {
    int cap = d->cap ? 2 * d->cap : 64;
    void *np = realloc(d->it, (size_t)cap * sizeof *d->it);
    if (!np) {
      *bad = 1;
      return &scratch;
    }
    d->it = np;
    d->cap = cap;
  }
  item_t *x = &d->it[d->nit++];
  memset(x, 0, sizeof *x);
  x->kind = k;
  x->slot = x->ev = x->coll = x->unit = -1;
  return x;
}

typedef struct {
  const sim_config *c;
  plan_t *p;
  fsdp_data *d;
  int bad;
  int reuse;       /* the copy-out RECORD item the next all-gather waits for (comm reuse), or -1 */
  int held;        /* the last forward copy-out's RECORD item, or -1 */
  int *ag_fwd, *ag_bwd; /* (nu) the unit's all-gather before forward / backward, or -1 */
  int rs_prev;     /* the previous reduce-scatter, or -1 */
  int last_post;   /* the last collective of the gradients' reduction (reduce-scatter, or HSDP's all-reduce) */
  int world;      /* the shard group's ranks */
  int err;        /* the first error's code (its message in *e), or 0 */
  err_t *e;
} script_t;

/* The type unit k's all-gather (reduce-scatter) moves: param_dtype (reduce_dtype), else the
 * parameters' own. For the copies' cost: the bytes are the unit's own sums. */
static model_dtype coll_dtype(const script_t *s, int k, int reduce) {
  int dt = reduce ? s->c->fsdp_reduce_dtype : s->c->fsdp_param_dtype;
  return dt >= 0 ? (model_dtype)dt : s->d->u[k].dtype;
}

/* A new collective of unit k: its kind, bytes (NCCL's choice through plan_bucket_coll). */
static int new_coll(script_t *s, int k, coll_kind kind, int bwd) {
  fsdp_data *d = s->d;
  int c = d->ncoll++;
  d->coll_unit[c] = k;
  d->coll_bwd[c] = bwd;
  d->coll_type[c] = (int)coll_dtype(s, k, kind != COLL_ALLGATHER);
  d->ev_mark[c] = d->nevents++;
  d->ev_done[c] = d->ev_ready[c] = d->ev_reuse[c] = d->ev_chain[c] = -1;
  /* HSDP's all-reduce: one rank's reduced shard, in reduce_dtype (the reduce-scatter's type). */
  double bytes = kind == COLL_ALLGATHER ? d->u[k].ag_bytes : kind == COLL_REDUCESCATTER ? d->u[k].rs_bytes : d->u[k].rs_bytes / s->world;
  nccl_group g = !d->hsdp ? NCCL_GROUP_ALL : kind == COLL_ALLREDUCE ? NCCL_GROUP_RAIL : NCCL_GROUP_NODE;
  if (!s->err) s->err = plan_group_coll(s->p, c, kind, bytes, g, s->e);
  item_t *x = item(d, IT_ISSUE, &s->bad);
  x->coll = c;
  x->unit = k;
  return c;
}

/* FSDP's copy in or out of a collective's buffer, in the collective's type. A type the profile
 * cannot price that the user chose (MixedPrecisionPolicy's) is the flag's misuse: ERR_USAGE naming it. */
static double copy_time(script_t *s, long numel, model_dtype dt) {
  double t = 0;
  if (s->err || numel <= 0) return t;
  if (!(s->err = cost_copy(s->c, "fsdp_copy", numel, 2, 1, s->p->batch, dt, &t, &s->p->extrapolated_ops, s->e))) return t;
  const char *flag = (int)dt == s->c->fsdp_param_dtype    ? "--fsdp-param-dtype"
                     : (int)dt == s->c->fsdp_reduce_dtype ? "--fsdp-reduce-dtype"
                                                          : NULL;
  if (flag && s->err == ERR_INPUT) {
    char why[sizeof s->e->msg];
    snprintf(why, sizeof why, "%s", s->e->msg);
    s->err = err_set(s->e, ERR_USAGE,
                     "%s %s: the profile cannot price FSDP's copies in that type (give a type or a profile that has it): %s", flag,
                     model_dtype_name(dt), why);
  }
  return t;
}

/* The unit's all-gather is issued (FSDPParamGroup.unshard): after the last release of the forward's
 * retained buffer, it waits for that copy-out (release_all_gather_state_for_comm_reuse). */
static void issue_ag(script_t *s, int k, int bwd) {
  fsdp_data *d = s->d;
  int c = new_coll(s, k, COLL_ALLGATHER, bwd);
  (bwd ? s->ag_bwd : s->ag_fwd)[k] = c;
  d->copy_in_s[c] = copy_time(s, d->u[k].shard_numel, coll_dtype(s, k, 0));
  if (s->reuse >= 0) {
    d->ev_reuse[c] = d->nevents++;
    d->it[s->reuse].ev = d->ev_reuse[c];
    s->reuse = -1;
  }
}

/* The compute stream waits for collective c to be done (its event, recorded by c's stream). */
static void wait_done(script_t *s, int c) {
  fsdp_data *d = s->d;
  d->ev_done[c] = d->nevents++;
  item_t *w = item(d, IT_WAIT, &s->bad);
  w->ev = d->ev_done[c];
  w->coll = c;
}

/* wait_for_unshard: the compute stream waits for the all-gather, then copies the parameters out. */
static void wait_unshard(script_t *s, int k, int c, int fwd) {
  fsdp_data *d = s->d;
  if (fwd) s->reuse = s->held; /* release_all_gather_state_for_comm_reuse */
  wait_done(s, c);
  item_t *x = item(d, IT_COPY, &s->bad);
  x->dev_s = copy_time(s, d->u[k].numel, coll_dtype(s, k, 0));
  x->unit = k;
  if (fwd) {
    item(d, IT_RECORD, &s->bad); /* its event is set when an all-gather waits for it */
    s->held = d->nit - 1;
  }
}

/* post_backward: wait for the previous reduce-scatter (one input buffer), copy the gradients in,
 * and issue the reduce-scatter once the compute stream is there. */
static void post_backward(script_t *s, int k) {
  fsdp_data *d = s->d;
  if (!d->u[k].nparams) return;
  if (s->rs_prev >= 0) { /* the buffer is recycled whether or not this unit reduces anything */
    wait_done(s, s->rs_prev);
    s->rs_prev = -1;
  }
  if (!d->u[k].nreduced) return; /* no gradient: nothing reduce-scattered (reduce_scatter_unused_params False) */
  model_dtype rd = coll_dtype(s, k, 1);
  item_t *x = item(d, IT_COPY, &s->bad);
  x->dev_s = copy_time(s, d->u[k].reduced_shard_numel * s->world, rd);
  x->unit = k;
  int ready = d->nevents++;
  item(d, IT_RECORD, &s->bad)->ev = ready;
  int c = new_coll(s, k, COLL_REDUCESCATTER, 1);
  d->ev_ready[c] = ready;
  /* The reduced shard is cast into the sharded gradient where reduce_dtype is not the parameters'. */
  d->copy_in_s[c] = rd != coll_dtype(s, k, 0) ? copy_time(s, d->u[k].reduced_shard_numel, rd) : 0;
  s->rs_prev = s->last_post = c;
  if (d->hsdp) { /* the replicas all-reduce the shard once it is reduced (its stream waits the reduce-scatter's) */
    int a = new_coll(s, k, COLL_ALLREDUCE, 1);
    d->ev_chain[c] = d->ev_chain[a] = d->nevents++;
    s->last_post = a;
  }
}

static void ops(script_t *s, int o0, int o1, int bwd) {
  if (o1 <= o0) return;
  item_t *x = item(s->d, IT_OPS, &s->bad);
  x->o0 = o0;
  x->o1 = o1;
  x->bwd = bwd;
}

/* FSDP2's hooks in the order they run (docs/fsdp.md, "The program"). */
static int script(script_t *s) {
  fsdp_data *d = s->d;
  const plan_t *p = s->p;
  int nu = d->nu, world = s->world, ofwd = -1, obwd = -1, oend = p->first_tail, K = s->c->fsdp_forward_prefetch;
  int reshard = s->c->fsdp_reshard;
  for (int o = 0; o < oend; o++) {
    if (p->steps[o].phase == MODEL_PHASE_FORWARD && ofwd < 0) ofwd = o;
    if (p->steps[o].phase == MODEL_PHASE_BACKWARD && obwd < 0) obwd = o;
  }
  if (obwd < 0) obwd = oend;
  if (ofwd < 0) ofwd = obwd;
  /* Forward: the root's pre-forward, then each unit's at its first op. */
  if (world > 1 && d->u[0].nparams) {
    issue_ag(s, 0, 0);
    wait_unshard(s, 0, s->ag_fwd[0], 1);
  }
  item(d, IT_FORWARD, &s->bad)->unit = 0;
  int o = ofwd;
  for (int k = 1; k < nu; k++) {
    ops(s, o, d->u[k].fwd_first, 0);
    if (world > 1) {
      if (s->ag_fwd[k] < 0) issue_ag(s, k, 0);
      wait_unshard(s, k, s->ag_fwd[k], 1);
      for (int j = k + 1; j <= k + K && j < nu; j++) /* set_modules_to_forward_prefetch */
        if (s->ag_fwd[j] < 0) issue_ag(s, j, 0);
    }
    item(d, IT_FORWARD, &s->bad)->unit = k;
    ops(s, d->u[k].fwd_first, d->u[k].fwd_last + 1, 0);
    o = d->u[k].fwd_last + 1;
  }
  ops(s, o, obwd, 0);
  if (world > 1) s->reuse = s->held; /* the root's post-forward releases the retained buffer */
  /* Backward, in reverse: the root's pre-backward prefetches the last unit to run forward. */
  item(d, IT_BACKWARD, &s->bad);
  if (world > 1 && reshard && nu > 1 && d->u[0].nparams) issue_ag(s, nu - 1, 1);
  int *order = malloc((size_t)nu * sizeof *order), n = 0;
  if (!order) return s->bad = 1;
  for (int k = 1; k < nu; k++) order[n++] = k;
  sort_units(order, n, d->u, offsetof(fsdp_unit, bwd_first)); /* by first backward op */
  o = obwd;
  for (int i = 0; i < n; i++) {
    int k = order[i];
    ops(s, o, d->u[k].bwd_first, 1);
    if (world > 1 && reshard) { /* pre_backward: unshard (no-op if prefetched), wait, prefetch */
      if (s->ag_bwd[k] < 0) issue_ag(s, k, 1);
      wait_unshard(s, k, s->ag_bwd[k], 0);
      if (k > 1 && s->ag_bwd[k - 1] < 0) issue_ag(s, k - 1, 1);
    }
    ops(s, d->u[k].bwd_first, d->u[k].bwd_last + 1, 1);
    o = d->u[k].bwd_last + 1;
    if (world > 1 && !d->u[k].late) post_backward(s, k);
  }
  ops(s, o, oend, 1);
  /* The final callback (_root_post_backward_final_callback): every state not yet post-backward in
   * all_states' order, the root first, then named_modules() order: the root, whose inputs are data,
   * and the units whose inputs took no gradient. */
  if (world > 1) post_backward(s, 0);
  sort_units(order, n, d->u, offsetof(fsdp_unit, first_param)); /* registration order */
  for (int i = 0; world > 1 && i < n; i++)
    if (d->u[order[i]].late) post_backward(s, order[i]);
  free(order);
  /* wait_for_gradient_reduction: the last post-reduce event (unless a post-backward waited for it) */
  if (world > 1 && s->last_post >= 0 && d->ev_done[s->last_post] < 0) wait_done(s, s->last_post);
  return s->bad;
}

/* ---- values ---- */

static void run_ops(const plan_t *p, pipe_t *w, int o0, int o1, double scale) {
  for (int o = o0; o < o1; o++) {
    const plan_step *st = &p->steps[o];
    pipe_op(w, st->host_s, st->dev_s * scale, st->count, st->kernels);
  }
}

/* A rank's values for iteration `it` through the pipe w (sim/pipe.h). */
static void eval_values(const plan_t *p, int it, int r, pipe_t *w, double *val) {
  const fsdp_data *d = p->fw;
  size_t kk = (size_t)it * (size_t)p->ranks + (size_t)r;
  double scale = p->jitter ? p->jitter[kk] : 1.0, delay = p->host_jitter ? p->host_jitter[kk] : 0;
  double fwd = 0, bwd = 0, copies = 0, host_fwd = -1;
  pipe_reset(w, delay, 0);
  w->host_busy_s = delay;
  for (int i = 0; i < d->nit; i++) {
    const item_t *x = &d->it[i];
    double D0 = w->D;
    switch (x->kind) {
    case IT_OPS:
      run_ops(p, w, x->o0, x->o1, scale);
      val[x->slot] = w->D - D0;
      if (x->bwd) bwd += val[x->slot];
      else fwd += val[x->slot];
      break;
    case IT_COPY:
      pipe_op(w, p->launch_host_s, x->dev_s * scale, 1, 1);
      val[x->slot] = w->D - D0;
      copies += val[x->slot];
      break;
    case IT_ISSUE:
      pipe_host(w, p->launch_host_s);
      val[x->slot] = w->H;
      break;
    case IT_BACKWARD:
      host_fwd = w->H;
      break;
    default:
      break;
    }
  }
  val[PROG_STAT_FWD] = fwd;
  val[PROG_STAT_BWD] = bwd;
  val[PROG_STAT_COPY_IN] = copies;
  val[PROG_STAT_COPY_EARLY] = 0;
  val[PROG_STAT_REACH] = w->D;
  val[PROG_STAT_STARVED] = w->starved_s;
  val[PROG_STAT_HOST_FWD] = host_fwd;
  val[PROG_STAT_HOST_BWD] = w->H;
  /* The tail (the optimizer on the local shard) is max-plus linear in the stream's time D0 after the
   * last wait, as DDP's (plan.c, timeline_eval). */
  double tail_dev = 0;
  w->D = -INFINITY;
  for (int o = p->first_tail; o < p->nsteps; o++) {
    const plan_step *st = &p->steps[o];
    pipe_op(w, st->host_s, st->dev_s * scale, st->count, st->kernels);
    tail_dev += st->dev_s * scale * (double)st->count;
  }
  val[d->slot_tail + 1] = w->D > w->H ? w->D : w->H;
  val[PROG_STAT_HOST_TAIL] = w->H;
  val[PROG_STAT_HOST_BUSY] = w->host_busy_s;
  val[PROG_STAT_DEV_BUSY] = w->dev_busy_s;
  val[PROG_STAT_TAIL_DEV] = tail_dev;
  pipe_reset(w, -INFINITY, 0);
  run_ops(p, w, p->first_tail, p->nsteps, scale);
  val[d->slot_tail] = w->D > w->H ? w->D : w->H;
  val[d->slot_tail + 2] = 0;
}

/* plan_values: without jitter every rank's values are the plan's (the engine keeps no pipe then). */
static void fsdp_values(const plan_t *p, int it, int r, pipe_t *w, plan_row *row, double *val) {
  (void)row;
  const fsdp_data *d = p->fw;
  if (plan_varies(p)) eval_values(p, it, r, w, val);
  else memcpy(val, d->base, (size_t)d->nslots * sizeof *val);
}

/* ---- the program ---- */

static prog_instr *add(prog_t *g, int st, prog_op op, int span, int index, int *bad) {
  static prog_instr scratch;
  prog_instr x = {.op = op, .span = span, .index = index, .ev = -1, .coll = -1, .dur = -1, .lag = -1, .a = -1, .b = -1};
  if (prog_emit(g, st, &x)) {
    *bad = 1;
    return &scratch;
  }
  return &g->streams[st].ins[g->streams[st].n - 1];
}

static int program(plan_t *p, fsdp_data *d, err_t *e) {
  int rc, bad = 0;
  /* Slots: the stats, one per item that has a duration or a host clock, the tail's three. */
  int slot = PROG_NSTATS;
  for (int i = 0; i < d->nit; i++)
    if (d->it[i].kind == IT_OPS || d->it[i].kind == IT_COPY || d->it[i].kind == IT_ISSUE) d->it[i].slot = slot++;
  d->slot_tail = slot;
  d->nslots = slot + 3;
  if ((rc = prog_init(&p->prog, d->nslots, e))) return rc;
  prog_t *g = &p->prog;
  int ag = -1, rs = -1, ar = -1, cp = -1;
  if (d->ncoll > 0) {
    cp = prog_stream_add(g, PROG_STREAM_COMPUTE); /* FSDP's all_gather_copy_in_stream: copies, no collective */
    ag = prog_stream_add(g, PROG_STREAM_NCCL);
    rs = prog_stream_add(g, PROG_STREAM_NCCL);
    if (d->hsdp) ar = prog_stream_add(g, PROG_STREAM_NCCL);
    if (cp < 0 || ag < 0 || rs < 0 || (d->hsdp && ar < 0)) return err_set(e, ERR_NOMEM, "out of memory");
    g->streams[cp].track = TIMELINE_TRACK_COPY; /* its spans: none recorded (the copies are short) */
    g->streams[rs].track = TIMELINE_TRACK_COMM2;
    if (ar >= 0) g->streams[ar].track = TIMELINE_TRACK_COMM3;
  }
  add(g, 0, PROG_BEGIN, -1, -1, &bad);
  add(g, 0, PROG_INPUT, -1, -1, &bad);
  add(g, 0, PROG_MARK, -1, -1, &bad);
  for (int c = 0; c < d->ncoll; c++) add(g, 0, PROG_RECORD, -1, -1, &bad)->ev = d->ev_mark[c];
  int piece = 0;
  for (int i = 0; i < d->nit; i++) {
    const item_t *x = &d->it[i];
    prog_instr *y;
    switch (x->kind) {
    case IT_OPS: /* a piece: its ops' op_seg is its index (the traces divide it) */
      for (int o = x->o0; o < x->o1; o++) p->op_seg[o] = piece;
      y = add(g, 0, PROG_COMPUTE, TIMELINE_FSDP_OPS, piece++, &bad);
      y->dur = x->slot;
      y->shares = p->gpu_sharing;
      y->mem = 0; /* FSDP's ops' memory-bound share is not split per unit: their SMs only */
      break;
    case IT_COPY:
      y = add(g, 0, PROG_COMPUTE, TIMELINE_FSDP_COPY, x->unit, &bad);
      y->dur = x->slot;
      y->shares = p->gpu_sharing;
      y->mem = 1;
      break;
    case IT_WAIT:
      add(g, 0, PROG_WAIT, TIMELINE_FSDP_WAIT, x->coll, &bad)->ev = x->ev;
      break;
    case IT_RECORD:
      if (x->ev >= 0) add(g, 0, PROG_RECORD, -1, -1, &bad)->ev = x->ev;
      break;
    default:
      break;
    }
  }
  prog_instr *t = add(g, 0, PROG_TAIL, -1, -1, &bad);
  t->dur = d->slot_tail + 2;
  t->a = d->slot_tail;
  t->b = d->slot_tail + 1;
  /* The collectives' streams, each in the order the host issued its collectives; where each starts
   * and ends in the record (the readout's communication busy). */
  p->at_start = calloc((size_t)d->ncoll + 1, sizeof *p->at_start);
  p->at_end = calloc((size_t)d->ncoll + 1, sizeof *p->at_end);
  if (!p->at_start || !p->at_end) return err_set(e, ERR_NOMEM, "out of memory");
  for (int i = 0; i < d->nit; i++) {
    const item_t *x = &d->it[i];
    if (x->kind != IT_ISSUE) continue;
    int c = x->coll, st = p->coll[c].kind == COLL_ALLGATHER ? ag : p->coll[c].kind == COLL_REDUCESCATTER ? rs : ar;
    /* An all-gather's issue, buffer reuse and copy-in are the copy-in stream's; the all-gather
     * stream waits for its copy (all_gather_stream.wait_stream(all_gather_copy_in_stream)). */
    int first = st == ag ? cp : st;
    if (d->ev_reuse[c] >= 0) add(g, first, PROG_WAIT, -1, -1, &bad)->ev = d->ev_reuse[c];
    if (st == ar) add(g, st, PROG_WAIT, -1, -1, &bad)->ev = d->ev_chain[c];
    if (d->ev_ready[c] >= 0) add(g, st, PROG_WAIT, -1, -1, &bad)->ev = d->ev_ready[c];
    prog_instr *w = add(g, first, PROG_WAIT, -1, -1, &bad);
    w->ev = d->ev_mark[c];
    w->lag = x->slot;
    if (st == ag) {
      int copied = d->nevents++;
      add(g, cp, PROG_SLEEP, -1, -1, &bad)->dur_s = d->copy_in_s[c];
      add(g, cp, PROG_RECORD, -1, -1, &bad)->ev = copied;
      add(g, ag, PROG_WAIT, -1, -1, &bad)->ev = copied;
    }
    p->at_start[c] = (long)st << 32 | (g->streams[st].n - 1); /* the end of what precedes it (made an index below) */
    add(g, st, PROG_COLL, TIMELINE_FSDP_COLL, c, &bad)->coll = c;
    p->at_end[c] = (long)st << 32 | (g->streams[st].n - 1);
    if (st == rs) add(g, st, PROG_SLEEP, -1, -1, &bad)->dur_s = d->copy_in_s[c];
    if (d->ev_done[c] >= 0) add(g, st, PROG_RECORD, -1, -1, &bad)->ev = d->ev_done[c];
    if (st == rs && d->ev_chain[c] >= 0) add(g, st, PROG_RECORD, -1, -1, &bad)->ev = d->ev_chain[c];
  }
  if (bad) return err_set(e, ERR_NOMEM, "out of memory");
  for (int c = 0; c < d->ncoll; c++) { /* every stream complete: (stream, instruction) as the record's index */
    p->at_start[c] = prog_at_index(g, (int)(p->at_start[c] >> 32), (int)(p->at_start[c] & 0xffffffff));
    p->at_end[c] = prog_at_index(g, (int)(p->at_end[c] >> 32), (int)(p->at_end[c] & 0xffffffff));
  }
  return prog_finish(g, e);
}

/* ---- the build ---- */

int fsdp_build(const sim_config *c, plan_t *p, err_t *e) {
  int rc;
  if (c->framework != SIM_FRAMEWORK_FSDP) return err_set(e, ERR_INPUT, "not an FSDP config");
  if ((rc = plan_begin(c, p, e))) return rc;
  const model_t *m = c->model;
  fsdp_data *d = calloc(1, sizeof *d);
  if (!d) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  p->fw = d;
  p->fw_free = fsdp_data_free;
  p->values = fsdp_values;
  if (c->backend != SIM_BACKEND_NCCL) {
    rc = err_set(e, ERR_USAGE, "FSDP is modelled on NCCL only, not the %s backend", sim_backend_name(c->backend));
    goto fail;
  }
  if (c->no_sync != 1) {
    rc = err_set(e, ERR_USAGE, "--no-sync: FSDP's gradient accumulation without reduction (set_requires_gradient_sync) is not modelled");
    goto fail;
  }
  if (c->fsdp_forward_prefetch < 0 || c->fsdp_forward_prefetch > 64) {
    rc = err_set(e, ERR_USAGE, "--fsdp-forward-prefetch must be 0 to 64, got %d", c->fsdp_forward_prefetch);
    goto fail;
  }
  for (int i = 0; i < m->nparams; i++)
    if (m->params[i].sparse) {
      rc = err_set(e, ERR_INPUT, "%s: parameter %s has a sparse gradient: FSDP shards dense parameters only", m->name, m->params[i].name);
      goto fail;
    }
  if (c->fsdp_replicate > 1 && (c->fsdp_replicate != c->nodes || p->gpus_per_node < 2)) {
    rc = err_set(e, ERR_USAGE, "--fsdp-replicate: HSDP is modelled with one node per shard group: the replicas must be the nodes (%d), "
                 "each of 2 or more GPUs, got %d", c->nodes, c->fsdp_replicate);
    goto fail;
  }
  d->hsdp = c->fsdp_replicate > 1;
  int world = fsdp_shard_world(c);
  if ((rc = fsdp_units(c, world, &d->u, &d->nu, e))) goto fail;
  /* The ops as the host issues them (p->steps), the optimizer's on the local shard. */
  int n = m->nops;
  p->steps = calloc((size_t)n + 1, sizeof *p->steps);
  p->op_s = calloc((size_t)n + 1, sizeof *p->op_s);
  p->op_seg = calloc((size_t)n + 1, sizeof *p->op_seg);
  size_t nc = 4 * (size_t)d->nu + 1;
  d->coll_unit = malloc(nc * sizeof *d->coll_unit);
  d->coll_bwd = malloc(nc * sizeof *d->coll_bwd);
  d->coll_type = malloc(nc * sizeof *d->coll_type);
  d->copy_in_s = calloc(nc, sizeof *d->copy_in_s);
  d->ev_mark = malloc(nc * sizeof *d->ev_mark);
  d->ev_done = malloc(nc * sizeof *d->ev_done);
  d->ev_ready = malloc(nc * sizeof *d->ev_ready);
  d->ev_reuse = malloc(nc * sizeof *d->ev_reuse);
  d->ev_chain = malloc(nc * sizeof *d->ev_chain);
  p->coll = calloc(nc, sizeof *p->coll);
  int *ag_fwd = malloc((size_t)d->nu * sizeof *ag_fwd), *ag_bwd = malloc((size_t)d->nu * sizeof *ag_bwd);
  if (!p->steps || !p->op_s || !p->op_seg || !d->coll_unit || !d->coll_bwd || !d->coll_type || !d->copy_in_s || !d->ev_mark ||
      !d->ev_done || !d->ev_ready || !d->ev_reuse || !d->ev_chain || !p->coll || !ag_fwd || !ag_bwd) {
    free(ag_fwd);
    free(ag_bwd);
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* The optimizer steps one rank's shard: of this job's ranks, or for the 1-GPU twin of a job
   * (sim/predict.h) of that job's (fsdp_shard_world), so that the twin is the rank's work alone. */
  int sw = c->fsdp_shard_world > 0 ? c->fsdp_shard_world : world;
  long total = model_total_params(m), shard = 0;
  for (int i = 0; i < m->nparams; i++) shard += fsdp_shard_numel(&m->params[i], sw);
  p->nops = n;
  p->first_tail = -1;
  for (int o = 0; o < n; o++) {
    model_op op = m->ops[o];
    if (op.phase == MODEL_PHASE_OPTIMIZER && total > 0 && sw > 1) {
      /* fully_shard's parameters are DTensors: the optimizer steps one rank's shard. */
      double f = (double)shard / (double)total;
      op.elems.v = (long)ceil((double)op.elems.v * f);
      op.elems.c = (long)ceil((double)op.elems.c * f);
    }
    plan_step *st = &p->steps[p->nsteps++];
    if ((rc = cost_op_sides(c, &op, p->batch, p->precision, &st->dev_s, &st->host_s, &p->extrapolated_ops, e))) {
      free(ag_fwd);
      free(ag_bwd);
      goto fail;
    }
    st->count = op.count;
    st->kernels = op.launches;
    st->phase = (int)op.phase;
    st->seg = -1;
    double t = st->dev_s * (double)op.count;
    p->op_s[o] = t;
    p->op_seg[o] = op.phase == MODEL_PHASE_FORWARD ? -1 : op.phase == MODEL_PHASE_OPTIMIZER ? -2 : 0;
    if (op.phase == MODEL_PHASE_FORWARD) p->forward_s += t;
    else if (op.phase == MODEL_PHASE_BACKWARD) p->backward_s += t;
    else {
      if (p->first_tail < 0) p->first_tail = o;
      p->optimizer_s += t;
    }
  }
  if (p->first_tail < 0) p->first_tail = n;
  for (int k = 0; k < d->nu; k++) ag_fwd[k] = ag_bwd[k] = -1;
  script_t s = {.c = c, .p = p, .d = d, .reuse = -1, .held = -1, .ag_fwd = ag_fwd, .ag_bwd = ag_bwd, .rs_prev = -1, .last_post = -1,
                .world = world, .e = e};
  int bad = script(&s);
  free(ag_fwd);
  free(ag_bwd);
  if (s.err) {
    rc = s.err;
    goto fail;
  }
  if (bad) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  for (int i = 0; i < d->nit; i++)
    if (d->it[i].kind == IT_COPY) p->bucket_copy_s += d->it[i].dev_s;
  if ((rc = plan_end(c, p, p->forward_s + p->backward_s + p->optimizer_s + p->bucket_copy_s, e))) goto fail;
  if ((rc = program(p, d, e))) goto fail;
  {
    pipe_t w;
    if ((rc = pipe_init(&w, p->queue, e))) goto fail;
    d->base = malloc((size_t)d->nslots * sizeof *d->base);
    if (d->base) eval_values(p, 0, 0, &w, d->base);
    pipe_free(&w);
    if (!d->base) {
      rc = err_set(e, ERR_NOMEM, "out of memory");
      goto fail;
    }
    /* Where jitter varies the values, they are the same function with each rank's draws. */
  }
  if (p->prog.ncoll != d->ncoll) {
    rc = err_set(e, ERR_INPUT, "internal: FSDP's program plays %d collectives of %d", p->prog.ncoll, d->ncoll);
    goto fail;
  }
  return ERR_OK;
fail:
  plan_free(p);
  return rc;
}

/* ---- the readout ---- */

/* What a trace needs to name FSDP's spans (sim/timeline.h): each piece's phase and unit, each
 * collective's name, kernel and bytes. */
static int timeline_meta(const plan_t *p, sim_timeline *t, err_t *e) {
  const fsdp_data *d = p->fw;
  int np = 0;
  for (int i = 0; i < d->nit; i++) np += d->it[i].kind == IT_OPS;
  t->pieces = calloc((size_t)np + 1, sizeof *t->pieces);
  t->colls = calloc((size_t)d->ncoll + 1, sizeof *t->colls);
  if (!t->pieces || !t->colls) return err_set(e, ERR_NOMEM, "out of memory");
  for (int i = 0; i < d->nit; i++) {
    const item_t *x = &d->it[i];
    if (x->kind != IT_OPS) continue;
    /* the unit whose ops these are: the one whose range holds the first, else the root's */
    const char *unit = "<root>";
    for (int k = 1; k < d->nu; k++) {
      const fsdp_unit *u = &d->u[k];
      int lo = x->bwd ? u->bwd_first : u->fwd_first, hi = x->bwd ? u->bwd_last : u->fwd_last;
      if (x->o0 >= lo && x->o0 <= hi) unit = u->path;
    }
    snprintf(t->pieces[t->npieces++], sizeof *t->pieces, "%s: %s", x->bwd ? "backward" : "forward", unit);
  }
  for (int c = 0; c < d->ncoll; c++) {
    const plan_coll *pc = &p->coll[c];
    timeline_coll *tc = &t->colls[t->ncolls++];
    const char *u = d->u[d->coll_unit[c]].path[0] ? d->u[d->coll_unit[c]].path : "<root>";
    snprintf(tc->name, sizeof tc->name, "%s %s%s", pc->kind == COLL_ALLGATHER ? "all-gather" : pc->kind == COLL_REDUCESCATTER ? "reduce-scatter" : "all-reduce",
             u, pc->kind != COLL_ALLGATHER ? "" : d->coll_bwd[c] ? " (backward)" : " (forward)");
    tc->kind = (int)pc->kind;
    tc->dtype = d->coll_type[c];
    tc->bytes = pc->bytes;
    tc->algo = (int)pc->algo;
    tc->proto = (int)pc->proto;
  }
  return ERR_OK;
}

int fsdp_readout(const plan_t *p, const record_t *rec, sim_result *r, err_t *e) {
  const fsdp_data *d = p->fw;
  if (!d || d->ncoll == 0) return ERR_OK;
  r->fsdp = calloc((size_t)d->ncoll, sizeof *r->fsdp);
  if (!r->fsdp) return err_set(e, ERR_NOMEM, "out of memory");
  double base = rec->iter_start[rec->iterations - 1];
  for (int i = 0; i < d->nit; i++) {
    const item_t *x = &d->it[i];
    if (x->kind != IT_ISSUE) continue;
    int c = x->coll;
    const plan_coll *pc = &p->coll[c];
    sim_fsdp_coll *t = &r->fsdp[r->nfsdp++];
    snprintf(t->unit, sizeof t->unit, "%s", d->u[d->coll_unit[c]].path);
    t->kind = (int)pc->kind;
    t->before = pc->kind != COLL_ALLGATHER ? "-" : d->coll_bwd[c] ? "backward" : "forward";
    t->bytes = pc->bytes;
    t->algo = (int)pc->algo;
    t->proto = (int)pc->proto;
    t->nccl_estimate_s = pc->estimate_s;
    t->start_s = rec->at[p->at_start[c]] - base;
    t->end_s = rec->at[p->at_end[c]] - base;
  }
  return r->timeline ? timeline_meta(p, r->timeline, e) : ERR_OK;
}

/* ---- the printout ---- */

static const char *unit_name(const fsdp_unit *u) { return u->path[0] ? u->path : "<root>"; }

int fsdp_write(FILE *f, const plan_t *p, err_t *e) {
  const fsdp_data *d = p->fw;
  fprintf(f, "# ddpsim plan (FSDP2, fully_shard)\n");
  fprintf(f, "job %d nodes x %d GPUs = %d ranks, batch %ld/GPU, %s\n", p->nodes, p->gpus_per_node, p->ranks, p->batch,
          model_dtype_name(p->precision));
  fprintf(f, "simulated %d nodes (%d ranks)%s, %s fidelity, %d iterations\n", p->sim_nodes, p->sim_ranks,
          p->sim_nodes < p->nodes ? ", standing for all by symmetry" : "", sim_fidelity_name(p->fidelity), p->iterations);
  fprintf(f, "channels %d x %.6g GB/s, %d NICs per node used\n", p->ch.count, p->ch.speed_Bps / 1e9, p->ch.nics_used);
  fprintf(f, "compute forward %.9g s, backward %.9g s, optimizer (local shard) %.9g s, FSDP's copies %.9g s\n", p->forward_s,
          p->backward_s, p->optimizer_s, p->bucket_copy_s);
  fprintf(f, "# unit index path params numel shard_numel all_gather_bytes reduce_scatter_bytes forward_ops backward_ops\n");
  for (int k = 0; k < d->nu; k++) {
    const fsdp_unit *u = &d->u[k];
    fprintf(f, "fsdp_unit %d %s %d %ld %ld %.0f %.0f %d-%d %d-%d\n", k, unit_name(u), u->nparams, u->numel, u->shard_numel,
            u->ag_bytes, u->rs_bytes, u->fwd_first, u->fwd_last, u->bwd_first, u->bwd_last);
  }
  fprintf(f, "# collective index kind unit before bytes algo proto nccl_estimate_s\n");
  for (int c = 0; c < d->ncoll; c++) {
    const plan_coll *pc = &p->coll[c];
    fprintf(f, "fsdp_coll %d %s %s %s %.0f %s %s %.9g\n", c, coll_get(pc->kind)->name, unit_name(&d->u[d->coll_unit[c]]),
            pc->kind == COLL_REDUCESCATTER ? "-" : d->coll_bwd[c] ? "backward" : "forward", pc->bytes, nccl_algo_name(pc->algo),
            nccl_proto_name(pc->proto), pc->estimate_s);
  }
  fprintf(f, "# what each rank's host issues, in order (tests/torch/fsdp_oracle.py compares these with real FSDP's)\n");
  for (int i = 0; i < d->nit; i++) {
    const item_t *x = &d->it[i];
    if (x->kind == IT_ISSUE)
      fprintf(f, "fsdp_issue %s %s %.0f\n",
              p->coll[x->coll].kind == COLL_ALLGATHER ? "all_gather" : p->coll[x->coll].kind == COLL_REDUCESCATTER ? "reduce_scatter" : "all_reduce",
              unit_name(&d->u[x->unit]), p->coll[x->coll].bytes);
    else if (x->kind == IT_FORWARD) fprintf(f, "fsdp_issue forward %s\n", unit_name(&d->u[x->unit]));
    else if (x->kind == IT_BACKWARD) fprintf(f, "fsdp_issue backward\n");
  }
  if (ferror(f)) return err_set(e, ERR_IO, "cannot write the plan");
  return prog_write(f, &p->prog, e);
}
