/* Measured latency of a model in MIG instances (docs/gpu-model.md, "MIG"),
 * and the rule for instances or models without a measurement.
 *
 * A table holds, per (instance size in GPCs, batch, processes), the latency
 * of one batch when `processes` identical MPS processes of the model run
 * batches back to back in one instance (1 = alone). The file gives the
 * stored latency and optionally the per-process throughput; where the
 * throughput is given the latency is batch x 1000 / throughput ms (finer
 * than a latency stored to 1 ms), checked against the stored value.
 *
 * Queries are ratios, as share tables are used: an instance's latency over
 * the whole GPU's (gpu_gpcs GPCs, alone) at the same batch, and the latency
 * with p processes over one process at the same size and batch. Both are
 * applied to the engine's isolated latency from the scenario's profile, so a
 * table measured with one framework shapes the MIG behaviour of a profile
 * measured with another. */
#ifndef CS_MIG_TABLE_H
#define CS_MIG_TABLE_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "profiles/profile.h"

G_BEGIN_DECLS

/* The rule's exponent kappa, fitted by `clustersim calibrate` on ParvaGPU's
 * A100 tables (every single-process cell below the whole GPU, log least
 * squares); tests check it equals the fit. */
#define CS_MIG_RULE_DEFAULT_KAPPA 0.8614

/* An instance of SM fraction f is of size g GPCs when |f x gpu_gpcs - g| is
 * at most this (1/7 written as 0.14 is 0.98 GPC). */
#define CS_MIG_GPC_TOLERANCE 0.05

typedef struct CsMigTable CsMigTable;

typedef struct {
  int gpcs, batch, processes;
  double latency_ms;   /* batch x 1000 / throughput when given, else the stored value */
  double stored_ms;    /* the file's latency_ms */
  const char *source;  /* the cell's source row; owned by the table */
} CsMigCell;

/* Parses the "mig" object of an interference file's model at path:
 * {"gpu_gpcs": G, "cells": [{"gpcs", "batch", "processes", "latency_ms",
 * "throughput_per_process" (optional), "source"}, ...]}. Returns NULL with
 * error set (file, JSON path, field, expectation) when a field is missing,
 * unknown or out of range, a cell is given twice, a stored latency and its
 * throughput disagree by more than the stored value's rounding (0.5 ms, or
 * 0.1 % of it), a cell of several processes lacks its single-process cell,
 * or an instance size shares no batch with the whole GPU alone. */
CsMigTable *cs_mig_table_parse(const cJSON *node, const char *file, const char *path,
                               GError **error);
void cs_mig_table_free(CsMigTable *t); /* accepts NULL */

int cs_mig_table_gpu_gpcs(const CsMigTable *t);
int cs_mig_table_n_cells(const CsMigTable *t);
const CsMigCell *cs_mig_table_cell(const CsMigTable *t, int i); /* sorted by gpcs, batch,
                                                                   processes */

/* The measured size (GPCs) an instance of SM fraction f is, or 0 when the
 * table has no single-process cell of that size (or f is no whole number of
 * GPCs within CS_MIG_GPC_TOLERANCE). */
int cs_mig_table_size(const CsMigTable *t, double sm_fraction);

/* Latency alone on gpcs GPCs over alone on the whole GPU at batch:
 * linear in batch between the batches where both are measured, the nearest
 * such batch's ratio outside them. NAN when gpcs is not a measured size. */
double cs_mig_table_iso_ratio(const CsMigTable *t, int gpcs, int batch);

/* Per-process latency with `processes` processes over one process, gpcs
 * GPCs, batch: per measured process count linear in batch between measured
 * batches (the nearest outside); between measured counts linear in the
 * count, beyond the largest linear from the two largest; at least 1 (a
 * measured ratio below 1 is noise of the stored latency). 1 for processes
 * <= 1; NAN when the size has no cell of several processes. */
double cs_mig_table_procs_ratio(const CsMigTable *t, int gpcs, int batch, int processes);

/* The rule for an instance with fraction f of the SMs and no measurement:
 * a batch b costs what b / f^kappa costs on the whole GPU,
 *
 *   ratio = L(b / f^kappa) / L(b),
 *
 * L the model's latency curve: linear between the given points (batch
 * ascending, latency > 0), beyond the last point and before the first
 * continued with slope (per request, >= 0). f >= 1: 1. Returns NAN when
 * n == 0 and slope is 0. */
double cs_mig_rule_ratio_curve(const double *batch, const double *latency, int n, double slope,
                               int b, double f, double kappa);

/* The same with the profile's points (latency_ns) and alpha; without points
 * L is the profile's linear model. */
double cs_mig_rule_ratio(const CsModelProfile *p, int batch, double f, double kappa);

/* The rule for several processes of one model in an instance without a
 * measurement: p batches b at once cost each what one batch p b costs on the
 * instance,
 *
 *   ratio = L(p b / f^kappa) / L(b / f^kappa),
 *
 * (f >= 1: the whole GPU, L(p b) / L(b)). 1 for p <= 1; NAN as above. */
double cs_mig_rule_procs_ratio_curve(const double *batch, const double *latency, int n,
                                     double slope, int b, double f, double kappa, int p);
double cs_mig_rule_procs_ratio(const CsModelProfile *prof, int batch, double f, double kappa,
                               int p);

G_END_DECLS

#endif
