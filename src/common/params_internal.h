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
 * included, was asked for; FALSE with the "unknown field" error otherwise,
 * one line per object with unknown fields. */
gboolean cs_params_check_asked(CsParams *p, GError **error);

/* The JSON value of the view. */
const cJSON *cs_params_json(const CsParams *p);

/* ---- Describing a policy's parameters (clustersim policies) ---------------- */

typedef enum {
  CS_PARAM_ANY,     /* only named (check_keys, get, has, doc): a list or object the policy
                       reads itself; its doc line says what it holds */
  CS_PARAM_NUMBER,
  CS_PARAM_INTEGER,
  CS_PARAM_BOOL,
  CS_PARAM_STRING,
  CS_PARAM_CHOICE,
} CsParamType;

/* What one reader call said about a field. */
typedef struct {
  char *key;
  CsParamType type;
  gboolean required;
  gboolean has_range;   /* NUMBER, INTEGER: [min, max] */
  double min, max;
  gboolean has_default; /* the value *out held before the call, when a value */
  double num_default;   /* NUMBER, INTEGER, BOOL (0 or 1) */
  char *str_default;    /* STRING, CHOICE */
  GPtrArray *choices;   /* CHOICE: char * */
  char *default_text;   /* cs_params_doc_default, or NULL */
  char *doc;            /* cs_params_doc, or NULL */
  gboolean hidden;      /* cs_params_doc_hide: not listed */
} CsParamInfo;

/* Returns a root view over an empty object in describing mode (params.h):
 * every reader records its call and returns TRUE leaving *out as it was.
 * Free with cs_params_free. */
CsParams *cs_params_new_describing(const char *path);

/* The fields recorded, in the order of their first mention; the records
 * belong to the view. */
int cs_params_n_infos(const CsParams *p);
const CsParamInfo *cs_params_info(const CsParams *p, int i);

/* A writer adding fields to obj (not owned). */
CsParamsWriter *cs_params_writer_new(cJSON *obj);
void cs_params_writer_free(CsParamsWriter *w);

/* ---- Running a policy's parameter hooks ----------------------------------- */

/* A policy's parameter hooks, shared by dispatch policies and controllers
 * (their kinds' registries in src/policies run them). */
typedef void *(*CsParseFn)(CsParams *params, void *user_data, GError **error);
typedef void (*CsWriteParamsFn)(const void *params, CsParamsWriter *out);

/* Runs parse (may be NULL: no parameters) on obj (NULL: an empty object;
 * file and path locate it in messages), with "policy" and known
 * (NULL-terminated, may be NULL) accepted, then rejects any field nobody
 * asked for. kind and name ("dispatch policy", "router") name the policy in
 * messages. Sets *params and returns TRUE, or returns FALSE with error set. */
gboolean cs_policy_params_parse(const char *kind, const char *name, CsParseFn parse,
                                void (*free_params)(void *), void *user_data, const cJSON *obj,
                                const char *const *known, const char *file, const char *path,
                                void **params, GError **error);

/* The parameters as describe writes them (NULL: none), compact JSON text
 * ("{}" without); g_free it. */
char *cs_policy_params_json(CsWriteParamsFn describe, const void *params);

/* Adds to obj every field write_defaults (may be NULL) writes that obj lacks. */
void cs_policy_params_fill(CsWriteParamsFn write_defaults, const void *params, cJSON *obj);

#endif
