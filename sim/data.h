/* data: where bundled models, topologies and profiles are, and resolving a user's `--model NAME`.
 *
 * A value that names an existing file (or contains a '/') is a path. Anything else is a bundled
 * name, looked up as <data dir>/<kind dir>/<name><ext>, where the data dir is $DDPSIM_DATA_DIR if
 * set; else, for an installed program, the data installed beside it (<program's directory>/
 * ../share/ddpsim, as `cmake --install` lays it out: the path from the install's bin to its data
 * directory); else the source tree it was built from (a build tree). */
#ifndef DDPSIM_DATA_H
#define DDPSIM_DATA_H

#include <stddef.h>

#include "err.h"

typedef enum { DATA_MODEL = 0, DATA_TOPOLOGY = 1, DATA_PROFILE = 2 } data_kind;

/* The data dir in use (models/, topologies/, profiles/, validate/published.txt, calib/'s helper). */
const char *data_dir(void);

/* Where the running ddpsim's cache of the validated error model is (validate/accuracy.h; written when ddpsim
 * is built, installed with the data): installed, <data installed beside it>/validate/
 * DATA_RATIOS_FILE; in a build tree, DATA_RATIOS_FILE beside the program. The path in out (len
 * bytes) and 0, or -1 (no /proc, or the path too long): no cache. Whether it exists is the
 * reader's question. It belongs to the program, not to the data dir: its rows carry fingerprints
 * of the data they were predicted from. */
#define DATA_RATIOS_FILE "validated-ratios.tsv"
int data_ratios_path(char *out, size_t len);

/* Resolves value to a file path in out (len bytes). ERR_INPUT if it is neither an existing file nor
 * a bundled name; the message lists the bundled names of that kind. */
int data_resolve(data_kind kind, const char *value, char *out, size_t len, err_t *e);

/* The file value names (data_resolve into out), or NULL when it names none (value NULL included):
 * the file to compare an output with (common/afile.h's afile_not_input), where a name that
 * resolves to nothing is no file an output could replace. */
const char *data_resolved(data_kind kind, const char *value, char *out, size_t len);

/* Writes the bundled names of a kind, comma-separated, into out. */
void data_list(data_kind kind, char *out, size_t len);

#endif
