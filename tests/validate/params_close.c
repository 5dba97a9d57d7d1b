/* params_close A B [ATOL RTOL]: compares two raw float32 files element by element with
 * |a - b| <= atol + rtol |a| (a is the reference). Prints the worst element and the first few
 * mismatches (at most ten), one line per check; exits 0 if every element passes, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static float *load(const char *path, long *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  float *v = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long bytes = ftell(f);
    rewind(f);
    if (bytes > 0 && bytes % 4 == 0 && (v = malloc((size_t)bytes)) && fread(v, 1, (size_t)bytes, f) != (size_t)bytes) {
      free(v);
      v = NULL;
    }
    *n = bytes / 4;
  }
  fclose(f);
  return v;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 5) {
    fprintf(stderr, "usage: params_close A B [ATOL RTOL]\n");
    return 2;
  }
  /* Default tolerance: the two runs sum the same gradients in a different order (per-rank means
   * then an all-reduce, against one mean over the whole batch), a few float ulps per step that
   * the optimizer carries on; 1e-5 absolute is well above that and far below a wrong update. */
  double atol = argc == 5 ? atof(argv[3]) : 1e-5, rtol = argc == 5 ? atof(argv[4]) : 1e-4;
  long na = 0, nb = 0;
  float *a = load(argv[1], &na), *b = load(argv[2], &nb);
  if (!a || !b || na != nb) {
    printf("FAIL load: %s (%ld floats) vs %s (%ld floats)\n", argv[1], na, argv[2], nb);
    free(a), free(b);
    return 1;
  }
  long bad = 0, worst = 0, differ = 0;
  double worst_excess = -1;
  for (long i = 0; i < na; i++) {
    double d = fabs((double)a[i] - (double)b[i]), lim = atol + rtol * fabs((double)a[i]);
    differ += a[i] != b[i];
    if (!(d <= lim)) {
      if (bad < 10) printf("  mismatch [%ld]: %.9g vs %.9g\n", i, a[i], b[i]);
      bad++;
    }
    if (d - lim > worst_excess || isnan(d)) worst_excess = d - lim, worst = i;
  }
  printf("%s %ld floats, %ld differ, %ld beyond |d| <= %g + %g|a|; worst [%ld] %.9g vs %.9g\n", bad ? "FAIL" : "ok",
         na, differ, bad, atol, rtol, worst, a[worst], b[worst]);
  free(a), free(b);
  return bad ? 1 : 0;
}
