/* Private to the profile subcommand (clustersim profile list|show), whose
 * files are split by concept:
 *   cmd_profile.c      the command: options, `profile list`, printing;
 *   profile_catalog.c  reading the data files into a Catalog, and queries
 *                      over it;
 *   profile_format.c   the text tables and JSON pieces list and show share;
 *   profile_show.c     `profile show NAME`.
 * The functions below were static in one cmd_profile.c and keep their names:
 * they are symbols of the clustersim executable only (libclustersim's all
 * carry the cs_ prefix). */
#ifndef CS_CLI_CMD_PROFILE_H
#define CS_CLI_CMD_PROFILE_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "profiles/igniter_coef.h"
#include "profiles/interference.h"
#include "profiles/profile.h"

typedef enum { KIND_PROFILE, KIND_INTERFERENCE, KIND_IGNITER } FileKind;

/* One data file the command read. */
typedef struct {
  char *name;        /* file name without ".json": what NAME and the tables use */
  char *path;        /* where it was read */
  char *canonical;   /* absolute path, to tell the same file found twice */
  gboolean given;    /* from --profile (or a path given to show) */
  FileKind kind;
  char *source;      /* the file's "source" text, "" when it has none */
  /* KIND_PROFILE: the set holding it and its GPU types / models in that set
   * (indices [first, end), see cs_profile_set_n_gpu_types). */
  const CsProfileSet *set;
  int gpu_first, gpu_end, model_first, model_end;
  CsInterferenceSet *interference; /* KIND_INTERFERENCE, owned */
  CsIgniterCoefs *igniter;         /* KIND_IGNITER, owned */
} DataFile;

/* Everything read: data-directory files sorted by name, then given files in
 * the order given. */
typedef struct {
  GPtrArray *files;    /* DataFile*, owned */
  GPtrArray *sets;     /* CsProfileSet*, owned */
  char **dirs;         /* the data directories searched */
} Catalog;

/* A text table: rows of cells, printed with columns padded to their widest
 * cell (the last column is not padded). */
typedef struct {
  GPtrArray *rows; /* char** rows, owned */
  int n_cols;
} Table;

/* profile_catalog.c: reading */
gboolean catalog_load(Catalog *cat, char **given, GError **error);
void catalog_clear(Catalog *cat);
char *stem_of(const char *path);
int compare_str_ptr(const void *a, const void *b);
gboolean fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* profile_catalog.c: queries */
GPtrArray *file_gpu_types(const DataFile *f);
GPtrArray *file_profiles(const DataFile *f, const char *gpu_type, const char *model);
int file_n_models(const DataFile *f, const char *gpu_type);
GPtrArray *file_model_names(const DataFile *f);
GPtrArray *interference_pairs(const CsInterferenceSet *s, int i);
GPtrArray *igniter_files_for(const Catalog *cat, const char *gpu_type, const char *model);
GPtrArray *interference_files_for(const Catalog *cat, const char *model);

/* profile_format.c */
char *one_line(const char *text, int width);
void append_batches(GString *s, const int *b, int n);
const char *coverage(int have, int n);
int count_mreq(const CsModelProfile *p);
int count_creq(const CsModelProfile *p, int m);
void format_gpu(GString *s, const CsGpuType *g);
void latency_range_ms(const CsModelProfile *p, double *lo, double *hi);
void table_init(Table *t, int n_cols);
void table_add(Table *t, char **cells);
void table_print(Table *t, GString *out);
cJSON *json_strings(GPtrArray *names);
cJSON *json_gpu_type(const CsGpuType *g);
cJSON *json_file(const DataFile *f);

/* profile_show.c */
int show(const Catalog *cat, const char *name, gboolean json, GString *out, cJSON **json_out,
         GError **error);

#endif
