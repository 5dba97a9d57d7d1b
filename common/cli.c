/* cli: option tables parsed from argv, and their help (cli.h). */
#include "cli.h"

#include "err.h"
#include "version.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

void cli_ctx_init(cli_ctx *x, const char *prog, const char *cmd) {
  memset(x, 0, sizeof *x);
  x->prog = prog;
  x->cmd = cmd;
  snprintf(x->where, sizeof x->where, "%s", cmd ? cmd : "");
}

static int vset(cli_ctx *x, int code, const char *fmt, va_list ap) {
  vsnprintf(x->msg, sizeof x->msg, fmt, ap);
  return code;
}

int cli_usage(cli_ctx *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vset(x, CLI_USAGE, fmt, ap);
  va_end(ap);
  return rc;
}

int cli_fail(cli_ctx *x, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vset(x, code, fmt, ap);
  va_end(ap);
  return rc;
}

int cli_exit_code(int status) {
  if (status == CLI_OK || status == CLI_HELP) return 0;
  return err_exit_code(status == CLI_USAGE ? ERR_USAGE : status);
}

int cli_exit(const cli_ctx *x, int status) {
  if (status != CLI_OK && status != CLI_HELP) {
    if (x->where[0]) fprintf(stderr, "%s %s: %s\n", x->prog, x->where, x->msg);
    else fprintf(stderr, "%s: %s\n", x->prog, x->msg);
    if (status == CLI_USAGE) fprintf(stderr, "(see '%s%s%s --help')\n", x->prog, x->cmd ? " " : "", x->cmd ? x->cmd : "");
  }
  return cli_exit_code(status);
}

/* ---- what a value must be ---- */

/* "a positive integer", "a number from 0 to below 1", "ddp or flat": from the kind and bounds. */
static void describe(const cli_opt *o, char *out, size_t len) {
  int lo = o->bounds & (CLI_MIN | CLI_MIN_OPEN), hi = o->bounds & (CLI_MAX | CLI_MAX_OPEN);
  if (o->kind == CLI_ENUM) {
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; o->names[i]; i++)
      k += (size_t)snprintf(out + k, k < len ? len - k : 0, "%s%s", i == 0 ? "" : o->names[i + 1] ? ", " : " or ",
                            o->names[i]);
  } else if (o->kind == CLI_ULONG) {
    snprintf(out, len, "a non-negative integer");
  } else if (o->kind == CLI_INT || o->kind == CLI_LONG) {
    if (lo && hi) snprintf(out, len, "an integer from %.0f to %.0f", o->min, o->max);
    else if (lo && o->min == 1) snprintf(out, len, "a positive integer");
    else if (lo && o->min == 0) snprintf(out, len, "a non-negative integer");
    else if (lo) snprintf(out, len, "an integer >= %.0f", o->min);
    else if (hi) snprintf(out, len, "an integer <= %.0f", o->max);
    else snprintf(out, len, "an integer");
  } else if (o->kind == CLI_DOUBLE) {
    if ((o->bounds & CLI_MIN_OPEN) && o->min == 0 && !hi) snprintf(out, len, "a positive number");
    else if (lo && hi)
      snprintf(out, len, "a number from %s%g to %s%g", o->bounds & CLI_MIN_OPEN ? "above " : "", o->min,
               o->bounds & CLI_MAX_OPEN ? "below " : "", o->max);
    else if (lo) snprintf(out, len, "a number %s %g", o->bounds & CLI_MIN_OPEN ? ">" : ">=", o->min);
    else if (hi) snprintf(out, len, "a number %s %g", o->bounds & CLI_MAX_OPEN ? "<" : "<=", o->max);
    else snprintf(out, len, "a number");
  } else {
    snprintf(out, len, "a valid value");
  }
}

static int in_bounds(const cli_opt *o, double v) {
  if ((o->bounds & CLI_MIN) && v < o->min) return 0;
  if ((o->bounds & CLI_MIN_OPEN) && v <= o->min) return 0;
  if ((o->bounds & CLI_MAX) && v > o->max) return 0;
  if ((o->bounds & CLI_MAX_OPEN) && v >= o->max) return 0;
  return 1;
}

/* Parses one value of o's kind from s into dest (for a list item: long or double slots). */
static int parse_value(const cli_opt *o, const char *s, void *dest) {
  char *end;
  errno = 0;
  switch (o->kind) {
  case CLI_INT:
  case CLI_LONG: {
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || !in_bounds(o, (double)v)) return -1;
    if (o->kind == CLI_INT && !o->list && (v < INT_MIN || v > INT_MAX)) return -1;
    if (o->kind == CLI_INT && !o->list) *(int *)dest = (int)v;
    else *(long *)dest = v;
    return 0;
  }
  case CLI_ULONG: {
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-') return -1;
    *(unsigned long *)dest = v;
    return 0;
  }
  case CLI_DOUBLE: {
    double v = strtod(s, &end);
    if (!*s || *end || !isfinite(v) || !in_bounds(o, v)) return -1;
    *(double *)dest = v;
    return 0;
  }
  case CLI_STRING: *(const char **)dest = s; return 0;
  case CLI_ENUM:
    for (int i = 0; o->names[i]; i++)
      if (strcmp(s, o->names[i]) == 0) {
        if (o->list) *(long *)dest = i;
        else *(int *)dest = i;
        return 0;
      }
    return -1;
  case CLI_CUSTOM: return o->parse(s, dest);
  case CLI_FLAG: break;
  }
  return -1;
}

static int bad_value(cli_ctx *x, const cli_opt *o, const char *s) {
  char what[256];
  if (o->must) return cli_usage(x, "--%s %s, got '%s'", o->name, o->must, s);
  describe(o, what, sizeof what);
  return cli_usage(x, "--%s must be %s, got '%s'", o->name, what, s);
}

/* Splits and checks a list option's text. Every item must be there: "1,,2", ",1" and "1," are
 * misuse, as is a text longer than the list's buffer. */
static int split_list(cli_ctx *x, const cli_opt *o) {
  cli_list *l = o->dest;
  l->n = 0;
  if (!l->text) return CLI_OK; /* no default and not given: empty */
  if (strlen(l->text) >= sizeof l->buf) return cli_usage(x, "--%s: the list is too long (%zu characters)", o->name, strlen(l->text));
  snprintf(l->buf, sizeof l->buf, "%s", l->text);
  int too_many = 0;
  for (char *rest = l->buf, *t; (t = strsep(&rest, ",")) != NULL;) {
    if (!*t) return cli_usage(x, "--%s has an empty item in '%s'", o->name, l->text);
    if (l->n == o->list) {
      too_many = 1;
      break;
    }
    void *slot = o->kind == CLI_DOUBLE ? (void *)&l->d[l->n] : (void *)&l->i[l->n];
    if (o->kind != CLI_STRING && parse_value(o, t, slot)) {
      char what[256];
      describe(o, what, sizeof what);
      return o->must ? cli_usage(x, "--%s %s, got '%s'", o->name, o->must, t)
                     : cli_usage(x, "--%s: '%s' is not %s", o->name, t, what);
    }
    l->s[l->n++] = t;
  }
  if (l->n < 1 || too_many)
    return cli_usage(x, "--%s must list 1 to %d comma-separated items, got '%s'", o->name, o->list, l->text ? l->text : "");
  return CLI_OK;
}

/* ---- finding an option ---- */

#define FOR_EACH_OPT(c, o) \
  for (const cli_opt *const *t_ = (c)->tables; *t_; t_++) \
    for (const cli_opt *o = *t_; o->name; o++)

/* The first option of that name: the one that counts (cli.h). */
static const cli_opt *first_named(const cli_cmd *c, const char *name) {
  FOR_EACH_OPT(c, o) if (strcmp(o->name, name) == 0) return o;
  return NULL;
}

static const cli_opt *find_long(const cli_cmd *c, const char *name, size_t len, int *ambiguous) {
  const cli_opt *prefix = NULL;
  int nprefix = 0;
  *ambiguous = 0;
  FOR_EACH_OPT(c, o) {
    if (strncmp(o->name, name, len) != 0) continue;
    if (o->name[len] == 0) return o;
    if (first_named(c, o->name) == o) prefix = o, nprefix++;
  }
  *ambiguous = nprefix > 1;
  return nprefix == 1 ? prefix : NULL;
}

const cli_opt *cli_lookup(const cli_cmd *c, const char *name, size_t len) {
  int ambiguous;
  return find_long(c, name, len, &ambiguous);
}

static const char *find_elsewhere(const cli_cmd *c, const char *name, size_t len) {
  const char *found = NULL;
  for (const char *const *n = c->elsewhere; n && *n; n++) {
    if (strncmp(*n, name, len) != 0) continue;
    if ((*n)[len] == 0) return *n;
    found = found ? "" : *n;
  }
  return found && *found ? found : NULL;
}

static const cli_opt *find_short(const cli_cmd *c, char s) {
  FOR_EACH_OPT(c, o) if (o->short_name == s) return o;
  return NULL;
}

int cli_parse(cli_ctx *x, const cli_cmd *c, int argc, char **argv, char **args, int *nargs, FILE *help) {
  int n = 0, only_args = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *value = NULL;
    const cli_opt *o = NULL;
    if (only_args || a[0] != '-' || a[1] == 0) {
      if (n == c->max_args || !args) return cli_usage(x, "unexpected argument '%s'", a);
      args[n++] = argv[i];
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_args = 1;
      continue;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      cli_help(c, help);
      return CLI_HELP;
    }
    if (strcmp(a, "--version") == 0) {
      fprintf(help, "%s %s\n", x->prog, version_string());
      return CLI_HELP;
    }
    if (a[1] == '-') {
      const char *name = a + 2, *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      int ambiguous;
      o = find_long(c, name, len, &ambiguous);
      if (!o) {
        const char *other = ambiguous ? NULL : find_elsewhere(c, name, len);
        if (other) return cli_usage(x, "option '--%s' %s", other, c->not_here ? c->not_here : "does not apply here");
        return cli_usage(x, ambiguous ? "option '%s' is ambiguous" : "unknown option '%s'", a);
      }
      if (eq) {
        if (o->kind == CLI_FLAG) return cli_usage(x, "option '--%s' takes no value", o->name);
        value = eq + 1;
      }
    } else {
      o = find_short(c, a[1]);
      if (!o) return cli_usage(x, "unknown option '%s'", a);
      if (a[2]) {
        if (o->kind == CLI_FLAG) return cli_usage(x, "unknown option '%s'", a);
        value = a + 2;
      }
    }
    if (o->kind == CLI_FLAG) {
      *(int *)o->dest = 1;
      continue;
    }
    if (!value) {
      if (i + 1 == argc) return cli_usage(x, "option '%s' needs a value", a);
      value = argv[++i];
    }
    if (!*value) /* an empty argument ('' or --name=) is never a value: a path, a name, a number */
      return cli_usage(x, "option '%s%s' needs a value, got an empty one", a[1] == '-' ? "--" : "-",
                       a[1] == '-' ? o->name : (char[]){a[1], 0});
    if (o->list) ((cli_list *)o->dest)->text = value;
    else if (parse_value(o, value, o->dest)) return bad_value(x, o, value);
  }
  FOR_EACH_OPT(c, o) {
    int rc = o->list ? split_list(x, o) : CLI_OK;
    if (rc) return rc;
  }
  if (nargs) *nargs = n;
  return CLI_OK;
}

void cli_select(const cli_opt *from, const char *const *names, cli_opt *out) {
  for (; *names; names++)
    for (const cli_opt *o = from; o->name; o++)
      if (strcmp(o->name, *names) == 0) *out++ = *o;
  memset(out, 0, sizeof *out);
}

void cli_help(const cli_cmd *c, FILE *f) {
  fputs(c->usage, f);
  FOR_EACH_OPT(c, o) {
    if (!o->help || first_named(c, o->name) != o) continue;
    char left[128], sh[8] = "";
    if (o->short_name) snprintf(sh, sizeof sh, "-%c, ", o->short_name);
    int k = snprintf(left, sizeof left, "  %s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(f, "%s%*s", left, k < 21 ? 23 - k : 2, "");
    for (const char *h = o->help; *h;) {
      const char *nl = strchr(h, '\n');
      int len = nl ? (int)(nl - h) : (int)strlen(h);
      fprintf(f, "%.*s\n", len, h);
      if (!nl) break;
      h = nl + 1;
      if (*h) fprintf(f, "%23s", "");
    }
  }
  if (c->epilog) fputs(c->epilog, f);
}

static void program_help(const cli_program *p, FILE *f) {
  fputs(p->intro, f);
  fputs("\ncommands:\n", f);
  for (int i = 0; i < p->ncommands; i++) fprintf(f, "  %-10s %s\n", p->commands[i].name, p->commands[i].summary);
  if (p->outro) fprintf(f, "\n%s", p->outro);
}

/* Output that did not all reach standard output is a failure, as coreutils hold it: the buffer is
 * flushed and closed here, and an error (now or in an earlier write) prints "PROG: write error:
 * WHY" and makes the exit 1. A stdout closed before the run (EBADF) with nothing to write is not an
 * error. */
static int close_stdout(const cli_program *p, int code) {
  int earlier = ferror(stdout), pending = __fpending(stdout) > 0;
  errno = 0;
  int failed = fclose(stdout) != 0, why = errno;
  if (!earlier && !(failed && (pending || why != EBADF))) return code;
  if (!(p->quiet && p->quiet()) || code == 0)
    fprintf(stderr, "%s: write error%s%s\n", p->prog, failed && why ? ": " : "", failed && why ? strerror(why) : "");
  return code ? code : cli_exit_code(ERR_IO);
}

static int program_exit(const cli_program *p, const cli_ctx *x, int status) {
  int code = status == CLI_USAGE && p->quiet && p->quiet() ? cli_exit_code(status) : cli_exit(x, status);
  return close_stdout(p, code);
}

int cli_main(const cli_program *p, int argc, char **argv) {
  cli_ctx x;
  cli_ctx_init(&x, p->prog, NULL);
  if (argc < 2) {
    if (!(p->quiet && p->quiet())) program_help(p, stderr);
    return cli_exit_code(CLI_USAGE);
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    program_help(p, stdout);
    return close_stdout(p, cli_exit_code(CLI_HELP));
  }
  if (strcmp(name, "--version") == 0) {
    printf("%s %s\n", p->prog, version_string());
    return cli_exit_code(CLI_HELP);
  }
  for (int i = 0; i < p->ncommands; i++)
    if (strcmp(name, p->commands[i].name) == 0) {
      cli_ctx_init(&x, p->prog, name);
      return program_exit(p, &x, p->commands[i].run(&x, argc - 1, argv + 1));
    }
  char known[256] = "";
  for (int i = 0; i < p->ncommands; i++)
    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", p->commands[i].name);
  return program_exit(p, &x, cli_usage(&x, "unknown command '%s' (%s)", name, known));
}
