/* The framework's side of policy parameters (public side: clustersim/params.h):
 * creating views over the scenario's JSON, the check that every field was
 * asked for, and writers over cJSON objects. */
#ifndef CS_PARAMS_INTERNAL_H
#define CS_PARAMS_INTERNAL_H

#include <cjson/cJSON.h>

#include "clustersim/params.h"

/* Returns a root view of node (not copied: it must outlive the view); file
 * and path are copied. Free with cs_params_free. */
CsParams *cs_params_new_root(const cJSON *node, const char *file, const char *path);
void cs_params_free(CsParams *p);

/* Counts key as asked for (the framework's own fields, such as "policy"). */
void cs_params_mark_known(CsParams *p, const char *key);

/* Checks that every field of every object view taken so far, the root
 * included, was asked for; FALSE with the "unknown field" error otherwise. */
gboolean cs_params_check_asked(CsParams *p, GError **error);

/* The JSON value of the view. */
const cJSON *cs_params_json(const CsParams *p);

/* A writer adding fields to obj (not owned). */
CsParamsWriter *cs_params_writer_new(cJSON *obj);
void cs_params_writer_free(CsParamsWriter *w);

#endif
