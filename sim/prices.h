/* prices: a table of stated, dated example prices per GPU-hour (profiles/prices.tsv), for
 * `--price auto` and `--price CLASS` (predict, sweep, compare; docs/cli.md).
 *
 * The file is text: a first line `ddpsim-prices 1`, then one price a line, seven fields separated
 * by tabs (`#` starts a comment line; blank lines are skipped):
 *   profile  class  price  currency  date  what  source
 * profile: the profile's name (its JSON "name") the row prices; class: a word ([a-z0-9-]) naming
 * the kind of purchase (on-demand, capacity-block, serverless, ...); price: per GPU-hour, > 0 and
 * at most 1e6; currency: an ISO 4217 code, three capital letters (USD); date: YYYY-MM-DD or YYYY-MM, when the price was stated;
 * what: the offer as found (provider, instance, region); source: the http(s) address it was read at.
 * These are examples that go stale: a user edits the file or gives --price X.
 *
 * Loading never half-loads: ERR_IO for an unreadable file, ERR_INPUT `FILE:LINE: what is wrong`
 * for a bad line (a field count other than seven, a bad number, date, class or address, a profile
 * and class given twice). Library code: never prints. */
#ifndef DDPSIM_PRICES_H
#define DDPSIM_PRICES_H

#include <stddef.h>

#include "err.h"

typedef struct {
  char *profile, *class_, *currency, *date, *what, *source; /* point into the table's text */
  double price_per_gpu_hour;
  int line;
} price_row;

typedef struct prices prices_t;

/* Whether s is a class word: one or more of a-z, 0-9 and '-' (what a row's class and --price CLASS
 * must be). */
int prices_class_ok(const char *s);

/* Loads the table at path; on success the caller destroys *out. */
int prices_load(const char *path, prices_t **out, err_t *e);
void prices_destroy(prices_t *t); /* NULL is a no-op */

/* The row pricing profile in class cls; cls NULL or "auto": the first row of the profile in the
 * file. NULL when there is none. */
const price_row *prices_find(const prices_t *t, const char *profile, const char *cls);

/* The classes listed for profile, ", "-separated, into buf ("" when none). */
void prices_classes(const prices_t *t, const char *profile, char *buf, size_t len);

/* "3.78 USD per GPU-hour: on-demand, 2026-05-07, Lambda 1x H100 SXM, https://..." into buf. */
void prices_note(const price_row *r, char *buf, size_t len);

#endif
