/* libclustersim: reading a policy's parameters with errors a user can act on.
 *
 * A policy's parameters are the scenario's "placement" or "dispatch" object.
 * The policy sees it as a CsParams: a read-only view of one JSON value with
 * the file it came from and its JSON path, so that every error it reports
 * reads like the library's own:
 *   exp.json: placement.max_share: expected a number in [0.1, 1], got 3
 *   exp.json: placement: unknown field "max_shar" (did you mean "max_share"?)
 *
 * Unknown fields: a view remembers every field a policy asked for (with a
 * reader, cs_params_get or cs_params_has), present or not. When the policy's
 * parse or place returns successfully, the framework rejects any field of its
 * object that the policy never asked for, so a misspelt or unsupported
 * setting is never silently ignored. The field "policy" (the policy's name)
 * is known from the start.
 *
 * Ownership: the framework owns the root view and frees it when the call it
 * was passed to returns; views of members are owned by their parent. Strings
 * returned point into the view: copy what you keep.
 *
 * Field readers (cs_params_double ...) take an object view and a key. An
 * absent optional field leaves *out unchanged (the caller's default) and
 * returns TRUE; they return FALSE with error set (domain CS_ERROR, code
 * CS_ERROR_INVALID) when the field is required and absent, has the wrong type
 * or is out of range.
 */
#ifndef CLUSTERSIM_PARAMS_H
#define CLUSTERSIM_PARAMS_H

#include "core.h"

G_BEGIN_DECLS

typedef struct CsParams CsParams;

typedef enum {
  CS_PARAMS_NULL,
  CS_PARAMS_BOOL,
  CS_PARAMS_NUMBER,
  CS_PARAMS_STRING,
  CS_PARAMS_ARRAY,
  CS_PARAMS_OBJECT,
} CsParamsKind;

/* The file named in messages, and the JSON path of the value ("placement",
 * "dispatch.budgets[2]", ...). */
CS_API const char *cs_params_file(const CsParams *p);
CS_API const char *cs_params_path(const CsParams *p);

/* What the value is. */
CS_API CsParamsKind cs_params_kind(const CsParams *p);

/* What the value is, for messages: "a number", "a string", "an array", "an
 * object", "a boolean" or "null" (the library's own wording). */
CS_API const char *cs_params_kind_name(const CsParams *p);

/* Number of elements of an array or members of an object; 0 otherwise.
 * Both this and cs_params_at take constant time (the members are listed
 * once, on first use): reading a list by index is linear. */
CS_API int cs_params_size(const CsParams *p);

/* The i-th element of an array or member of an object, in document order;
 * NULL when i is out of range. Taking a member counts as asking for it. */
CS_API CsParams *cs_params_at(CsParams *p, int i);

/* The member name of a view taken from an object; NULL otherwise. */
CS_API const char *cs_params_name(const CsParams *p);

/* The field key of an object, or NULL when it is absent (or p is not an
 * object). Counts as asking for key. */
CS_API CsParams *cs_params_get(CsParams *p, const char *key);

/* TRUE when the object has the field. Counts as asking for key. */
CS_API gboolean cs_params_has(CsParams *p, const char *key);

/* ---- Field readers ------------------------------------------------------------ */

/* A number in [min, max]. */
CS_API gboolean cs_params_double(CsParams *obj, const char *key, gboolean required, double min,
                                 double max, double *out, GError **error);
/* An integer (a JSON number without fraction) in [min, max]. */
CS_API gboolean cs_params_int(CsParams *obj, const char *key, gboolean required, int min,
                              int max, int *out, GError **error);
CS_API gboolean cs_params_bool(CsParams *obj, const char *key, gboolean required, gboolean *out,
                               GError **error);
/* A non-empty string; *out points into the view. */
CS_API gboolean cs_params_string(CsParams *obj, const char *key, gboolean required,
                                 const char **out, GError **error);
/* A string among choices (NULL-terminated): *out is its index. The error
 * lists the choices. */
CS_API gboolean cs_params_choice(CsParams *obj, const char *key, gboolean required,
                                 const char *const *choices, int *out, GError **error);

/* ---- The value itself ------------------------------------------------------------ */

/* The value as a number in [min, max] / an integer in [min, max] / a boolean /
 * a non-empty string; FALSE with error set naming the view's path otherwise. */
CS_API gboolean cs_params_as_double(const CsParams *p, double min, double max, double *out,
                                    GError **error);
CS_API gboolean cs_params_as_int(const CsParams *p, int min, int max, int *out, GError **error);
CS_API gboolean cs_params_as_bool(const CsParams *p, gboolean *out, GError **error);
CS_API gboolean cs_params_as_string(const CsParams *p, const char **out, GError **error);

/* Checks now that every field of the object is in known (NULL-terminated),
 * with the same message as the framework's check. */
CS_API gboolean cs_params_check_keys(CsParams *obj, const char *const *known, GError **error);

/* Sets error to "file: path: message" for the view (domain CS_ERROR, code
 * CS_ERROR_INVALID) and returns FALSE: for a policy's own checks. */
CS_API gboolean cs_params_fail(const CsParams *p, GError **error, const char *fmt, ...)
  G_GNUC_PRINTF(3, 4);
/* The same for the field key of the object p (whether present or not). */
CS_API gboolean cs_params_fail_field(const CsParams *p, const char *key, GError **error,
                                     const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* The value as JSON text (newly allocated; g_free it), for a policy with a
 * nested format of its own. Counts as asking for every field below it. */
CS_API char *cs_params_to_json(CsParams *p);

/* ---- Documenting parameters (`clustersim policies`) ------------------------ *
 *
 * The policy catalogue lists every parameter of every policy of a registry
 * without a second list to keep in sync: the framework calls the policy's
 * parse (dispatch, controller) or place (placement) once on a describing
 * view of an empty object, and records each reader call: key, type,
 * required, range or choices, and the default (what *out held before the
 * call). In that mode every reader returns TRUE and leaves *out unchanged,
 * so the policy goes on to read the rest; a required field (absent) reads
 * as its lowest allowed value, the first choice or an empty string when *out
 * holds none, so that code after the readers does not meet an unset value.
 * What the policy returns is discarded. A placement policy's place gets an empty problem
 * (no models, no GPUs, no simulator); it may return NULL as soon as it has
 * read its parameters when cs_params_describing is TRUE. Fields named only
 * through cs_params_check_keys, cs_params_get or cs_params_has (nested
 * lists and objects) are listed without a type: their cs_params_doc line
 * says what they hold. */

/* TRUE when p is a describing view (see above). */
CS_API gboolean cs_params_describing(const CsParams *p);

/* One line describing field key of obj (text is copied), for the catalogue;
 * a no-op outside describing mode, so it may be called on every parse. */
CS_API void cs_params_doc(CsParams *obj, const char *key, const char *text);

/* What the catalogue shows as key's default instead of the reader's value:
 * for a default derived from elsewhere ("the network's delay"). A no-op
 * outside describing mode. */
CS_API void cs_params_doc_default(CsParams *obj, const char *key, const char *text);

/* Leaves field key of obj out of the catalogue: for a parser shared by a
 * family of policies that reads a field only to refuse it in some of them
 * (the sibling's field, with a better message than "unknown field"). A
 * no-op outside describing mode. */
CS_API void cs_params_doc_hide(CsParams *obj, const char *key);

/* ---- Writing parameters back (a policy's describe and defaults) -------------- */

typedef struct CsParamsWriter CsParamsWriter;

/* Each adds a field key to the object being written (inside an array, key is
 * ignored and the value appended). A field written twice keeps the first. */
CS_API void cs_params_write_double(CsParamsWriter *w, const char *key, double v);
CS_API void cs_params_write_int(CsParamsWriter *w, const char *key, int64_t v);
CS_API void cs_params_write_bool(CsParamsWriter *w, const char *key, gboolean v);
CS_API void cs_params_write_string(CsParamsWriter *w, const char *key, const char *v);
/* Opens an object or array field; what follows goes into it until
 * cs_params_write_end. */
CS_API void cs_params_write_begin_object(CsParamsWriter *w, const char *key);
CS_API void cs_params_write_begin_array(CsParamsWriter *w, const char *key);
CS_API void cs_params_write_end(CsParamsWriter *w);

G_END_DECLS

#endif
