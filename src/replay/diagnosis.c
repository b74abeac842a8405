/* The likely cause of a validation's goodput gap; see diagnosis.h. */
#include "diagnosis.h"

#include <math.h>

double cs_diagnosis_load(const CsResults *sim, const CsProfileSet *profile, const char *gpu_type,
                         gboolean mps, int model)
{
  const CsPlacement *pl = cs_results_placement(sim);
  const CsModelResult *m = cs_results_model(sim, model);
  if (!pl || !m || !profile || !gpu_type)
    return NAN;
  /* Each model's load on its replicas: offered / their summed throughput. */
  int n_models = cs_results_n_models(sim);
  double *load = g_new0(double, n_models);
  for (int k = 0; k < n_models; k++) {
    double cap = 0.0;
    const CsModelResult *mk = cs_results_model(sim, k);
    const CsModelProfile *p = cs_profile_set_lookup(profile, gpu_type, mk->model);
    for (int r = 0; p && r < cs_placement_n_replicas(pl); r++) {
      const CsReplica *rep = cs_placement_replica(pl, r);
      double t = rep->model == k ? cs_model_profile_throughput_rps(p, rep->batch) : 0.0;
      cap += isfinite(t) && t > 0 ? t : 0.0;
    }
    load[k] = cap > 0 ? mk->offered_rps / cap : NAN;
  }
  double out = load[model];
  if (!mps && isfinite(out)) {
    /* Under time-slicing a GPU's replicas take turns: if the model's rate
     * splits over its replicas by their throughput, each replica is busy
     * load[k] of the time, and a GPU the sum over the replicas it holds. */
    int n_gpus = cs_results_n_gpus(sim);
    double *gpu = g_new0(double, MAX(n_gpus, 1));
    for (int r = 0; r < cs_placement_n_replicas(pl); r++) {
      const CsReplica *rep = cs_placement_replica(pl, r);
      if (rep->gpu >= 0 && rep->gpu < n_gpus && isfinite(load[rep->model]))
        gpu[rep->gpu] += load[rep->model];
    }
    for (int r = 0; r < cs_placement_n_replicas(pl); r++) {
      const CsReplica *rep = cs_placement_replica(pl, r);
      if (rep->model == model && rep->gpu >= 0 && rep->gpu < n_gpus)
        out = MAX(out, gpu[rep->gpu]);
    }
    g_free(gpu);
  }
  g_free(load);
  return out;
}

char *cs_diagnosis_text(const CsDiagnosisFacts *f)
{
  double s = f->sim_goodput_rps, r = f->real_goodput_rps;
  double hi = MAX(s, r);
  if (!(isfinite(s) && isfinite(r)) || fabs(s - r) <= MAX(CS_DIAGNOSIS_GOODPUT_GAP * hi, 0.5))
    return NULL;
  GString *t = g_string_new(NULL);
  g_string_append_printf(t, "**Why simulated and real goodput disagree** for %s (%.2f against "
                         "%.2f req/s real):", f->model, s, r);
  int causes = 0;
  if (isfinite(f->load) && f->load >= CS_DIAGNOSIS_NEAR_LOAD) {
    causes++;
    g_string_append_printf(
      t, " the plan is %s the measured profile's capacity: %s is sent %.2f req/s, %.0f %% of "
         "what its replicas run at their batch sizes on profile/profile.json. %s",
      f->load >= 1.0 ? "beyond" : "near", f->model, f->offered_rps, 100.0 * f->load,
      f->load >= 1.0 ? "The simulated queue grows through the run, so its requests miss their "
                       "SLO; a real backend a few % faster keeps up (and one a few % slower "
                       "does not): at this load goodput swings between about 0 and the rate, "
                       "and the validation says little. Validate a plan within capacity (a "
                       "lower rate, or a placement planned on the measured profile)."
                     : "Near capacity a few % of speed moves the queue, and goodput, a lot.");
  }
  double b = f->batch_signed_pct, d = f->drift_pct;
  if (isfinite(b) && fabs(b) >= CS_DIAGNOSIS_BATCH_PCT) {
    causes++;
    g_string_append_printf(t, " Real batches ran %.1f %% %s than the profile measured them "
                           "(median signed error)", fabs(b), b > 0 ? "slower" : "faster");
    if (isfinite(d) && fabs(d) > CS_DIAGNOSIS_DRIFT_PCT)
      g_string_append_printf(t, " and the machine's speed moved %+.1f %% during the validation: "
                             "the machine changed speed, not the simulator; validate again in "
                             "a quiet minute.", d);
    else if (isfinite(d))
      g_string_append_printf(t, ", while the profile measured again after the replay is within "
                             "%+.1f %% of the first: the profile was measured at a speed the "
                             "replay did not run at (a slow or fast minute of the machine while "
                             "profiling, or a backend that runs differently under the replay's "
                             "load than back to back); validate again.", d);
    else
      g_string_append(t, "; the machine's drift is unknown (the second profiling failed).");
  } else if (isfinite(d) && fabs(d) > CS_DIAGNOSIS_DRIFT_PCT) {
    causes++;
    g_string_append_printf(t, " The machine's speed moved %+.1f %% during the validation "
                           "(isolated latencies measured again after the replay).", d);
  }
  if (!f->replay_valid) {
    causes++;
    g_string_append(t, " The replay was not valid: its own scheduling ran later than its bound, "
                       "which delays real requests the simulation did not delay.");
  }
  if (f->busy_when) {
    causes++;
    g_string_append_printf(t, " The machine was busy %s: a thread of normal priority woke "
                           "%.3f ms late (p90), and batches measured or replayed then ran as "
                           "late; validate again on a quiet machine.",
                           f->busy_when, f->busy_wakeup_p90_ms);
  }
  if (causes == 0)
    g_string_append(t, " none of the known causes applies (the plan is within capacity, real "
                       "batches ran at the profile's speed, the machine held its speed and was "
                       "not busy, and the replay was valid): compare the latency distributions "
                       "(figures/latency_cdf_compare_MODEL).");
  return g_string_free(t, FALSE);
}
