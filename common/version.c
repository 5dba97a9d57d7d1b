/* version: ddpsim's version string (version.h). */
#include "version.h"

#ifndef DDPSIM_VERSION
#error "DDPSIM_VERSION comes from CMake's project version (python/ddpsim_export/VERSION)"
#endif

const char *version_string(void) { return DDPSIM_VERSION; }

int version_stamp(cJSON *obj) {
  if (!cJSON_IsObject(obj)) return -1;
  cJSON *v = cJSON_CreateString(DDPSIM_VERSION);
  if (!v) return -1;
  if (cJSON_GetObjectItemCaseSensitive(obj, "ddpsim_version")) return cJSON_ReplaceItemInObjectCaseSensitive(obj, "ddpsim_version", v) ? 0 : (cJSON_Delete(v), -1);
  return cJSON_AddItemToObject(obj, "ddpsim_version", v) ? 0 : (cJSON_Delete(v), -1);
}
