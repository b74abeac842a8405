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

G_END_DECLS

#endif
