/* Reading user-written JSON (scenarios, profiles, policy parameters) with
 * errors a user can act on: every message names the file, the JSON path and
 * what was expected, e.g.
 *   quickstart.json: clients[0].rate: expected a number > 0, got -3
 *   quickstart.json: clients[0]: unknown field "rat" (did you mean "rate"?)
 *
 * Conventions for the readers below: obj is a JSON object, key the field to
 * read, file the name used in messages, path the JSON path of obj ("" for the
 * root). An absent optional field leaves *out unchanged (the caller's
 * default). Each returns FALSE with error set (domain CS_INPUT_ERROR) when the
 * field is required and absent, has the wrong type or is out of range.
 */
#ifndef CS_JSON_INPUT_H
#define CS_JSON_INPUT_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define CS_INPUT_ERROR (cs_input_error_quark())
GQuark cs_input_error_quark(void);

typedef enum {
  CS_INPUT_ERROR_IO,      /* file cannot be read */
  CS_INPUT_ERROR_PARSE,   /* not valid JSON (message gives line and column) */
  CS_INPUT_ERROR_INVALID, /* valid JSON, wrong content */
} CsInputErrorCode;

/* Parses a JSON file. Returns the tree (caller frees with cJSON_Delete) or NULL
 * with error set when the file cannot be read or is not JSON. */
cJSON *cs_json_load_file(const char *path, GError **error);

/* cJSON_Print of root, formatted, with every integral number of magnitude
 * 1e15 or more written with 17 significant digits: cJSON writes 15 and
 * accepts them when they are close, which changes integers such as the seed
 * 9007199254740991. Returns a g_malloc'd string (g_free it). */
char *cs_json_print_exact(const cJSON *root);

/* The same text followed by a newline, as a file holds it (g_free it). */
char *cs_json_print_exact_line(const cJSON *root);

/* Parses JSON text; name is the file name used in messages. A key given
 * twice in one object is refused (cs_json_check_unique). */
cJSON *cs_json_parse(const char *text, const char *name, GError **error);

/* Checks that no object of root, parsed from text[0..len-1] (whose first line
 * is line first_line of file), has a key twice. Returns FALSE with error set
 * (CS_INPUT_ERROR_INVALID) on the first duplicate, naming the object's JSON
 * path, the key and the lines of both occurrences:
 *   "file: clients[0]: field "rate" given twice, on line 3 and line 5 ..."
 * cJSON keeps both members and reads the first, so a duplicate's value would
 * never be validated and a copy of the tree would carry both. */
gboolean cs_json_check_unique(const cJSON *root, const char *text, size_t len, const char *file,
                              int first_line, GError **error);

/* Returns a newly allocated path: "path.key" (or "key" at the root). */
char *cs_json_path_key(const char *path, const char *key);
/* Returns a newly allocated path: "path[index]". */
char *cs_json_path_index(const char *path, int index);

/* Appends message to m as one problem of a list: a new line indented by
 * two spaces, without the "file: " it begins with, its own further lines
 * indented under it (CsErrorList's form, clustersim/core.h). */
void cs_error_append_problem(GString *m, const char *file, const char *message);

/* Sets error: "file: path: message" (printf-style message). Returns FALSE. */
gboolean cs_json_fail(GError **error, const char *file, const char *path, const char *fmt, ...)
  G_GNUC_PRINTF(4, 5);

/* Checks that node is an object. */
gboolean cs_json_expect_object(const cJSON *node, const char *file, const char *path,
                               GError **error);

/* Checks that every field of obj is in known (NULL-terminated); unknown
 * fields are one error naming all of them, each with the closest known names
 * when one is close (cs_did_you_mean), and the known fields listed when one
 * has no suggestion. */
gboolean cs_json_check_keys(const cJSON *obj, const char *const *known, const char *file,
                            const char *path, GError **error);

/* "Did you mean" for an unknown name (field, model, GPU type, file).
 *
 * cs_name_distance returns the Levenshtein distance between a and b (edits of
 * one byte: insert, delete, substitute) with ASCII letters compared
 * case-insensitively, so "ResNet50" is at distance 0 from "resnet50".
 *
 * cs_suggest_names returns the names of known[0..n_known-1] (n_known < 0:
 * known is NULL-terminated) that a user most likely meant by name: those at
 * the smallest distance, when that distance is at most max(1, strlen(name) / 3)
 * (at most a third of the name differs). A known name that starts with name
 * (case-insensitively, name of 3 or more characters) counts as distance 1 at
 * most: a missing suffix such as a unit ("slo" -> "slo_ms"). Ties are all
 * returned, each distinct string once, whatever the order of known sorted by
 * plain distance (so "resnet" gives "resnet50" before "resnet101"), then by
 * strcmp. The result is a
 * NULL-terminated array of pointers into known (g_free the array only); it is
 * empty (first element NULL) when no name is close enough. Never fails.
 *
 * cs_did_you_mean returns those suggestions as text to append to a message:
 * " (did you mean \"a\"?)", " (did you mean \"a\" or \"b\"?)", " (did you mean
 * \"a\", \"b\" or \"c\"?)" (the first CS_SUGGEST_MAX ties), or "" when none is
 * close. g_free the result. */
#define CS_SUGGEST_MAX 3
int cs_name_distance(const char *a, const char *b);
const char **cs_suggest_names(const char *name, const char *const *known, int n_known);
char *cs_did_you_mean(const char *name, const char *const *known, int n_known);

/* Number in [min, max]. An infinite value (a literal beyond a double's
 * range) is "expected a finite number, got infinity (...)". */
gboolean cs_json_read_double(const cJSON *obj, const char *key, gboolean required, double min,
                             double max, double *out, const char *file, const char *path,
                             GError **error);
/* Integer (a JSON number without fraction) in [min, max]. Magnitudes of
 * 2^53 and more are refused as "too large to be exact": a double cannot tell
 * 2^53 + 1 from 2^53. */
gboolean cs_json_read_int64(const cJSON *obj, const char *key, gboolean required, int64_t min,
                            int64_t max, int64_t *out, const char *file, const char *path,
                            GError **error);
gboolean cs_json_read_int(const cJSON *obj, const char *key, gboolean required, int min, int max,
                          int *out, const char *file, const char *path, GError **error);
/* Non-empty string; *out points into obj (valid while obj lives). */
gboolean cs_json_read_string(const cJSON *obj, const char *key, gboolean required,
                             const char **out, const char *file, const char *path,
                             GError **error);
gboolean cs_json_read_bool(const cJSON *obj, const char *key, gboolean required, gboolean *out,
                           const char *file, const char *path, GError **error);

/* The same checks on a value v itself, whose JSON path is path: v is a number
 * in [min, max], an integer in [min, max], a non-empty string, a boolean. */
gboolean cs_json_value_double(const cJSON *v, double min, double max, double *out,
                              const char *file, const char *path, GError **error);
gboolean cs_json_value_int64(const cJSON *v, int64_t min, int64_t max, int64_t *out,
                             const char *file, const char *path, GError **error);
gboolean cs_json_value_string(const cJSON *v, const char **out, const char *file,
                              const char *path, GError **error);
gboolean cs_json_value_bool(const cJSON *v, gboolean *out, const char *file, const char *path,
                            GError **error);

/* For messages about a number that is not finite: "infinity (...)",
 * "-infinity (...)" or "NaN"; NULL when v is finite. cJSON reads a literal
 * too large for a double (1e999) as infinity. */
const char *cs_json_nonfinite_name(double v);

/* Short description of a JSON value's type for messages ("a string", "null", ...). */
const char *cs_json_type_name(const cJSON *node);

G_END_DECLS

#endif
