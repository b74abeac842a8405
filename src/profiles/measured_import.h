/* Measured rows (measured.h) to the project's formats: `clustersim profile
 * import` (docs/profiles.md, "Importing measured data").
 *
 *  - isolated rows at share 100 % or blank -> batch points of a
 *    clustersim-profile (one model per (GPU type, model); the batch point's
 *    note is the row's source_path);
 *  - isolated rows of a model that has any row below 100 % -> that model's
 *    share_latency table of a clustersim-interference file (100 % included);
 *  - co-located rows next to one partner (one copy, shares of both given)
 *    -> pairs[] of the interference file: per ordered (victim, aggressor) the
 *    scale on the fallback's excess fitted by cs_fit_pair_scale
 *    (interference_fit.h) on log(latency / isolated_latency), with samples.
 * Rows that map to none of these (MIG instances, time quotas below 100 %,
 * several partners or copies, a co-located row without an isolated latency,
 * or an interference row when no interference output is asked for) are not
 * used; each is counted in the result with the reason, for the caller to
 * state. Every number written is traced in a provenance CSV (one per output;
 * columns json_path, file, line, source_path). Output is deterministic:
 * models sorted by (GPU type, model), batches by batch, cells by (batch,
 * share), pairs by (victim, aggressor).
 */
#ifndef CS_MEASURED_IMPORT_H
#define CS_MEASURED_IMPORT_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "profiles/interference.h"
#include "profiles/measured.h"

G_BEGIN_DECLS

typedef struct {
  /* GPU type names: "NAME" for every row (all rows must have one gpu), or
   * "GPU=NAME" entries (every gpu value of the rows must be mapped); NULL:
   * each gpu value slugged (lowercase, runs of other characters as "_"). */
  char **gpu_types;
  /* Columns whose values make a model name unique: model "@" slug(values),
   * e.g. framework_context,precision; NULL: the model column as it is. */
  char **variant_by;
  gboolean interference;                 /* build the interference file too */
  CsInterferenceFallback fallback;       /* the fallback the pairs' scales refer to
                                            (written into the file); batch_share only */
  const char *fallback_source;           /* where it comes from, for the source text */
  char **file_names;                     /* name of each input as written into source
                                            fields (the basename: no machine paths) */
  const char *profile_name;              /* basename of the profile output, for the sidecar */
  const char *interference_name;         /* basename of the interference output */
} CsImportOptions;

typedef struct {
  cJSON *profile;                        /* NULL when no row maps to a batch point */
  cJSON *interference;                   /* NULL unless asked for */
  GString *profile_sources;              /* provenance CSV text of each */
  GString *interference_sources;
  GPtrArray *skipped;                    /* "N rows: REASON (FILE lines A, B, ...)" */
  int n_batch_points, n_share_cells, n_pairs, n_pair_rows;
} CsImportResult;

/* Builds the outputs from files[0..n). Returns FALSE with error set
 * (CS_INPUT_ERROR INVALID) when two isolated rows give the same point (same
 * GPU type, model, batch, share; the message names both lines), a gpu value
 * has no type (gpu_types), a variant column is not a text column, the
 * interference rows span several GPU types, the fallback is not of the
 * batch_share form, an output does not load back (a share table that cannot
 * be completed), or nothing maps at all. A model with one batch point at full
 * share is not an error: it is left out of the profile and counted in
 * skipped. On failure the outputs are cleared; skipped is kept for the
 * caller to print. */
gboolean cs_measured_import(CsMeasuredFile *const *files, int n, const CsImportOptions *opt,
                            CsImportResult *result, GError **error);
void cs_import_result_clear(CsImportResult *result);

/* slug of text: lowercase ASCII letters and digits, every run of anything
 * else as one "_", none at either end; text in parentheses dropped.
 * g_free it. */
char *cs_measured_slug(const char *text);

G_END_DECLS

#endif
