/* The built-in backends (clustersim/backend.h) and what they share. */
#ifndef CS_BACKENDS_H
#define CS_BACKENDS_H

#include "clustersim/backend.h"

extern const CsBackend cs_backend_emulated;
extern const CsBackend cs_backend_cpu;
extern const CsBackend cs_backend_cuda;

/* Reads option key as a number in [min, max] into *out (left as is when
 * absent). FALSE with error set when it is not one. */
gboolean cs_backend_option_double(const CsBackendSetup *setup, const char *backend,
                                  const char *key, double min, double max, double *out,
                                  GError **error);

/* Depths of the models of a matrix-product backend (cpu, cuda): the
 * cheapest model by batch-1 latency on its profile gets min_model_mb of
 * width x width single-precision layers, every other one in proportion to
 * its batch-1 latency; option "layers=MODEL:N,..." sets some by hand.
 * Fills layers (per model); FALSE with error set on a bad "layers". */
gboolean cs_backend_size_models(const CsBackendSetup *setup, const char *backend, int width,
                                double min_model_mb, int *layers, GError **error);

/* CLOCK_MONOTONIC in ns, and sleeping until such a time. */
int64_t cs_monotonic_ns(void);
void cs_sleep_until_ns(int64_t deadline_ns);

/* Sleeping ends some 50-70 us late on a virtual machine (timer slack and
 * wake-up): cs_wait_until_ns sleeps until CS_SPIN_NS before the deadline
 * and spins the rest, which is accurate to a microsecond. */
#define CS_SPIN_NS 150000
void cs_wait_until_ns(int64_t deadline_ns);

#endif
