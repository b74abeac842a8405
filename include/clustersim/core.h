/* libclustersim: what every public header shares: the export macro, the one
 * error domain and the library version. Include <clustersim/clustersim.h>
 * rather than this header. */
#ifndef CLUSTERSIM_CORE_H
#define CLUSTERSIM_CORE_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#if defined(__GNUC__)
#define CS_API __attribute__((visibility("default")))
#else
#define CS_API
#endif

/* Error domain of every error this library reports. */
#define CS_ERROR (cs_error_quark())
CS_API GQuark cs_error_quark(void);

typedef enum {
  CS_ERROR_IO,      /* a file cannot be read or written */
  CS_ERROR_PARSE,   /* a file is not valid JSON / CSV */
  CS_ERROR_INVALID, /* valid syntax, invalid content */
  CS_ERROR_POLICY,  /* a policy cannot produce a placement, or misused the engine */
  CS_ERROR_CANCELLED, /* the progress callback stopped the run */
} CsErrorCode;

/* Returns the library version, e.g. "0.1.0". */
CS_API const char *cs_version(void);

/* Returns the version of the library's binary interface: the
 * CS_PLUGIN_ABI_VERSION of the headers it was built with (clustersim/
 * plugin.h), which a plug-in, or a binding that lays out the public structs
 * itself (the Python package), must have been written for. */
CS_API int cs_abi_version(void);

/* ---- Several problems at once --------------------------------------------- *
 *
 * A validation that goes on past its first problem (a list of replicas, of
 * clients, a policy's parameters) files each into a CsErrorList and reports
 * them as one error, so that a user who wrote five mistakes learns of all five
 * from one run:
 *
 *   CsErrorList *el = cs_error_list_new();
 *   for each item:
 *     ok = check_one(item, cs_error_list_slot(el)) && check_two(item, cs_error_list_slot(el));
 *   if (!cs_error_list_finish(el, file, "placement.replicas", error))
 *     return FALSE;
 *
 * A check that depends on an earlier one stays behind it (as above): only
 * independent problems are listed together. */
typedef struct CsErrorList CsErrorList;

/* At most this many problems are shown in the error; the rest are counted. */
#define CS_ERROR_LIST_SHOWN 20

/* Returns a new, empty list. Never fails. */
CS_API CsErrorList *cs_error_list_new(void);

/* Returns an empty GError * slot for the next check, to pass as its
 * GError **; a problem left in the slot handed out before is filed first.
 * The slot stays valid until the next call on the list. */
CS_API GError **cs_error_list_slot(CsErrorList *l);

/* Files *error (when set) into the list and sets *error to NULL. */
CS_API void cs_error_list_take(CsErrorList *l, GError **error);

/* Returns the number of problems filed so far (the last slot's included). */
CS_API guint cs_error_list_count(CsErrorList *l);

/* Frees the list. Returns TRUE when it held no problem. Otherwise returns
 * FALSE with *error set: one problem as it was; several as one error with
 * the first one's domain and code,
 *   "FILE: 3 problems in WHAT:\n  clients[0].rate: ...\n  clients[2]: ..."
 * one a line, each without the "FILE: " its message began with, the first
 * CS_ERROR_LIST_SHOWN of them and then how many more. */
CS_API gboolean cs_error_list_finish(CsErrorList *l, const char *file, const char *what,
                                     GError **error);

/* Frees the list and the problems in it (for a caller that gives up on it). */
CS_API void cs_error_list_free(CsErrorList *l);

G_END_DECLS

#endif
