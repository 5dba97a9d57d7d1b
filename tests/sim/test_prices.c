/* test_prices: the price table's loader (sim/prices.h): the bundled table loads and says where each
 * price is from; every bad line is refused as FILE:LINE naming what is wrong; lookups by class. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "data.h"
#include "prices.h"

static char path[64];

static int load_text(const char *text, prices_t **t, err_t *e) {
  snprintf(path, sizeof path, "/tmp/test_prices_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  int rc = prices_load(path, t, e);
  unlink(path);
  return rc;
}

/* A table whose line `line` is bad: refused with PATH:LINE and the words `want`. */
static void bad(const char *what, const char *text, int line, const char *want) {
  prices_t *t = NULL;
  err_t e = {0};
  int rc = load_text(text, &t, &e);
  char at[96];
  snprintf(at, sizeof at, "%s:%d: ", path, line);
  CHECK(rc == ERR_INPUT && !t && strstr(e.msg, at) && strstr(e.msg, want), "%s: %s", what, e.msg);
}

#define HEAD "ddpsim-prices 1\n"
#define ROW(price, date, src) "h100-dgxh100\ton-demand\t" price "\tUSD\t" date "\tan offer\t" src "\n"

int main(void) {
  char bundled[1024];
  snprintf(bundled, sizeof bundled, "%s/profiles/prices.tsv", data_dir());
  prices_t *t = NULL;
  err_t e;
  CHECK(prices_load(bundled, &t, &e) == ERR_OK, "the bundled table loads: %s", t ? bundled : e.msg);
  if (t) {
    const price_row *r = prices_find(t, "h100-dgxh100", "auto"), *b = prices_find(t, "h100-dgxh100", "capacity-block");
    CHECK(r && !strcmp(r->class_, "on-demand") && r->price_per_gpu_hour > 0 && !strncmp(r->source, "http", 4),
          "auto: the profile's first row (%s)", r ? r->class_ : "none");
    CHECK(b && b->price_per_gpu_hour != r->price_per_gpu_hour, "a class finds its own row");
    CHECK(!prices_find(t, "v100-dgx1v", "auto") && !prices_find(t, "h100-dgxh100", "spot"), "no row: NULL");
    char buf[512];
    prices_classes(t, "h100-dgxh100", buf, sizeof buf);
    CHECK(!strcmp(buf, "on-demand, capacity-block, serverless"), "the profile's classes: %s", buf);
    prices_note(r, buf, sizeof buf);
    CHECK(strstr(buf, " USD per GPU-hour: on-demand, 2026-05-07, ") && strstr(buf, r->source), "the note: %s", buf);
    prices_destroy(t);
  }
  t = NULL;
  CHECK(load_text(HEAD "# a comment\n\n" ROW("2.385", "2025-11", "https://example.org/p") "a100-dgxa100\tspot\t0.5\tEUR\t2024-02-29\tx\thttp://e/q\n",
                  &t, &e) == ERR_OK &&
            prices_find(t, "a100-dgxa100", NULL)->price_per_gpu_hour == 0.5 && prices_find(t, "h100-dgxh100", "on-demand")->line == 4,
        "comments and blank lines skipped, lines counted");
  prices_destroy(t);
  prices_destroy(NULL);

  bad("no header", ROW("1", "2025-01", "https://a"), 1, "the first line must be 'ddpsim-prices 1'");
  bad("an empty file", "", 1, "empty");
  bad("six fields", HEAD "h100-dgxh100\ton-demand\t3\tUSD\t2025-01\thttps://a\n", 2, "too few fields");
  bad("eight fields", HEAD "h100-dgxh100\ton-demand\t3\tUSD\t2025-01\tx\thttps://a\textra\n", 2, "more than seven");
  bad("a price of 0", HEAD ROW("0", "2025-01", "https://a"), 2, "the price must be a number above 0");
  bad("a price with a unit", HEAD ROW("3$", "2025-01", "https://a"), 2, "the price must be");
  bad("no date", HEAD ROW("3", "recently", "https://a"), 2, "the date must be YYYY-MM-DD or YYYY-MM");
  bad("month 13", HEAD ROW("3", "2025-13", "https://a"), 2, "the date must be");
  bad("a source that is not an address", HEAD ROW("3", "2025-01", "a blog"), 2, "the source must be the http(s) address");
  bad("a class with a space", HEAD "h100-dgxh100\ton demand\t3\tUSD\t2025-01\tx\thttps://a\n", 2, "the class must be a word");
  bad("a currency in lower case", HEAD "h100-dgxh100\ton-demand\t3\tusd\t2025-01\tx\thttps://a\n", 2, "the currency");
  bad("a currency of four letters", HEAD "h100-dgxh100\ton-demand\t3\tUSDT\t2025-01\tx\thttps://a\n", 2, "ISO 4217");
  bad("twice", HEAD ROW("3", "2025-01", "https://a") "# x\n" ROW("4", "2025-02", "https://b"), 4, "is priced on line 2 already");
  CHECK(prices_load("/nonexistent/prices.tsv", &t, &e) == ERR_IO && !t, "an unreadable file: %s", e.msg);
  return check_status();
}
