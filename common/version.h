/* version: ddpsim's version, the one string every tool prints for --version and every JSON output
 * carries as "ddpsim_version".
 *
 * Defined once, in python/ddpsim_export/VERSION (the exporter's package ships it; CMake reads it as
 * the project version and passes it here as DDPSIM_VERSION). */
#ifndef DDPSIM_VERSION_H
#define DDPSIM_VERSION_H

#include <cjson/cJSON.h>

/* "0.1.0": static, never NULL. */
const char *version_string(void);

/* Sets obj's "ddpsim_version" member to version_string() (replacing one already there). Returns 0,
 * or -1 when obj is not an object or memory ran out (obj is then unchanged). */
int version_stamp(cJSON *obj);

#endif
