/* Warnings of a run: conditions that do not stop a simulation but would
 * mislead a reader of its numbers (an unstable queue, a model left unserved,
 * a setting that disagrees with the simulated world). Each has a stable code
 * (docs/scenario.md lists them), the model and GPU it concerns, and a
 * message. They are collected while a scenario is compiled and after it
 * runs, printed by the CLI on stderr and stored in summary.json. */
#ifndef CS_WARNINGS_H
#define CS_WARNINGS_H

#include <glib.h>

#include "clustersim/clustersim.h"

typedef struct CsWarningList CsWarningList;

/* Returns an empty list (free with cs_warning_list_free, which accepts NULL). */
CsWarningList *cs_warning_list_new(void);
void cs_warning_list_free(CsWarningList *l);

/* Appends a warning. code is a stable identifier ("unstable", ...); model may
 * be NULL and gpu -1 when the warning concerns no single model or GPU. */
void cs_warning_add(CsWarningList *l, const char *code, const char *model, int gpu,
                    const char *fmt, ...) G_GNUC_PRINTF(5, 6);

/* Appends copies of every warning of src to dst. */
void cs_warning_list_extend(CsWarningList *dst, const CsWarningList *src);

int cs_warning_list_len(const CsWarningList *l);
/* The i-th warning, owned by the list; NULL when i is out of range. */
const CsWarning *cs_warning_list_get(const CsWarningList *l, int i);

#endif
