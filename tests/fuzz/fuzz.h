/* What the fuzz targets share: libFuzzer's bytes as the NUL-terminated text the loaders read. */
#ifndef DDPSIM_FUZZ_H
#define DDPSIM_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A copy of data[0..size) with a NUL after it (the caller frees), or NULL when out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return NULL;
  memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

#endif
