/* The joint interference fit over GPU types and its out-of-sample scores;
 * see calibrate_joint.h. */
#include "calibrate/calibrate_joint.h"

#include <math.h>
#include <string.h>

#include "common/data_files.h"
#include "common/json_input.h"
#include "profiles/share_rule.h"

/* Every observation of every group, with what the scores group them by. */
typedef struct {
  CsPairObs *obs;
  int n;
  int *pair;        /* index into its group's pair_names */
  int *victim;      /* index into its group's model_names */
  int *aggressor;   /* likewise */
} Rows;

static int name_slot(char **names, int *n, int max, const char *name)
{
  for (int i = 0; i < *n; i++)
    if (strcmp(names[i], name) == 0)
      return i;
  if (*n >= max)
    return -1;
  names[*n] = g_strdup(name);
  return (*n)++;
}

static int compare_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int find_name(char *const *names, int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0)
      return i;
  return -1;
}

/* The one-partner co-locations of a file row that the fit can use. */
static gboolean usable(const CsMeasuredRow *r)
{
  return r->kind == CS_MEASURED_COLOCATED && r->n_partners == 1 && r->partners[0].copies == 1 &&
         r->mig_gpcs == 0 && r->share_pct > 0.0 && r->share_pct < 100.0 &&
         r->partners[0].share_pct > 0.0 && r->partners[0].share_pct < 100.0 &&
         !(r->time_quota_pct < 100.0);
}

static char *pair_name(const char *a, const char *b)
{
  return strcmp(a, b) <= 0 ? g_strdup_printf("%s+%s", a, b) : g_strdup_printf("%s+%s", b, a);
}

/* First pass over a group's rows: names of its pairs and victims (sorted,
 * so the report does not depend on the files' order). */
static gboolean collect_names(const CsJointGroupSpec *g, CsJointGroupResult *res, GError **error)
{
  for (int f = 0; f < g->n_files; f++)
    for (int i = 0; i < g->files[f]->n_rows; i++) {
      const CsMeasuredRow *r = &g->files[f]->rows[i];
      if (!usable(r))
        continue;
      char *pn = pair_name(r->model, r->partners[0].model);
      int p = name_slot(res->pair_names, &res->n_pairs, CS_JOINT_MAX_PAIRS, pn);
      g_free(pn);
      int m = name_slot(res->model_names, &res->n_models, CS_JOINT_MAX_MODELS, r->model);
      int a = name_slot(res->model_names, &res->n_models, CS_JOINT_MAX_MODELS,
                        r->partners[0].model);
      if (p < 0 || m < 0 || a < 0)
        return cs_json_fail(error, g->files[f]->path, NULL, "line %" G_GINT64_FORMAT ": more "
                            "than %d model pairs or %d models in group \"%s\"", r->line,
                            CS_JOINT_MAX_PAIRS, CS_JOINT_MAX_MODELS, g->name);
    }
  qsort(res->pair_names, (size_t)res->n_pairs, sizeof(char *), compare_str);
  qsort(res->model_names, (size_t)res->n_models, sizeof(char *), compare_str);
  return TRUE;
}

static gboolean add_rows(const CsJointGroupSpec *g, int gi, CsJointGroupResult *res,
                         GArray *obs, GArray *pair, GArray *victim, GArray *aggressor,
                         GError **error)
{
  for (int f = 0; f < g->n_files; f++) {
    const CsMeasuredFile *file = g->files[f];
    for (int i = 0; i < file->n_rows; i++) {
      const CsMeasuredRow *r = &file->rows[i];
      if (!usable(r)) {
        res->n_skipped++;
        continue;
      }
      const CsMeasuredPartner *a = &r->partners[0];
      if (!(r->isolated_latency_ms > 0.0))
        return cs_json_fail(error, file->path, NULL, "line %" G_GINT64_FORMAT ": column "
                            "isolated_latency_ms: expected the victim's latency alone at its "
                            "batch and share (the fit needs it), got none", r->line);
      const CsModelProfile *prof = cs_profile_set_lookup(g->profiles, g->gpu_type, r->model);
      double scalable = prof ? cs_share_scalable_fraction(prof, r->batch) : NAN;
      if (isnan(scalable))
        return cs_json_fail(error, file->path, NULL, "line %" G_GINT64_FORMAT ": model \"%s\" "
                            "has no profile with a latency line on GPU type \"%s\" (its fixed "
                            "part phi comes from there)", r->line, r->model, g->gpu_type);
      char *pn = pair_name(r->model, a->model);
      int p = find_name(res->pair_names, res->n_pairs, pn);
      g_free(pn);
      int v = find_name(res->model_names, res->n_models, r->model);
      int ag = find_name(res->model_names, res->n_models, a->model);
      CsPairObs o = { .victim = v, .aggressor = ag, .batch_v = r->batch, .batch_a = a->batch,
                      .share_v = r->share_pct / 100.0, .share_a = a->share_pct / 100.0,
                      .ratio = r->latency_ms / r->isolated_latency_ms,
                      .fixed_v = 1.0 - scalable, .group = gi };
      g_array_append_val(obs, o);
      g_array_append_val(pair, p);
      g_array_append_val(victim, v);
      g_array_append_val(aggressor, ag);
      res->n_rows++;
    }
  }
  if (res->n_rows == 0)
    return cs_json_fail(error, g->n_files > 0 ? g->files[0]->path : g->name, NULL,
                        "group \"%s\": no one-partner co-located row with both shares to fit",
                        g->name);
  return TRUE;
}

/* Errors of the rows with want[i], predicted by the fit of their group. */
static void score(const Rows *rows, const gboolean *want, const CsJointFit *fit,
                  const CsBatchShareFit *single, CsCalibStat *out)
{
  double *err = g_new(double, MAX(rows->n, 1));
  int k = 0;
  for (int i = 0; i < rows->n; i++) {
    if (!want[i])
      continue;
    const CsPairObs *o = &rows->obs[i];
    const CsBatchShareFit *f = single ? single : &fit->group[o->group];
    double pred = cs_batch_share_slowdown(f, o);
    err[k++] = fabs(pred - o->ratio) / o->ratio;
  }
  cs_calib_stat_of(err, k, out);
  g_free(err);
}

/* One set of coefficients for the rows with train[i], whatever their group
 * (a copy of the rows, all in group 0), the victim term fitted. */
static gboolean pooled_fit(const Rows *rows, const gboolean *train, CsBatchShareFit *out)
{
  CsPairObs *copy = g_memdup2(rows->obs, sizeof(CsPairObs) * (size_t)MAX(rows->n, 1));
  for (int i = 0; i < rows->n; i++)
    copy[i].group = 0;
  gboolean yes = TRUE;
  CsJointFit fit;
  gboolean ok = cs_fit_joint(copy, rows->n, train, 1, &yes, &fit);
  g_free(copy);
  if (ok)
    *out = fit.group[0];
  return ok;
}

/* Fits on the rows with train[i] and appends the errors of the rows with
 * test[i] to pool (and their statistics to one, when not NULL); FALSE when
 * the fit fails. */
static gboolean fold_into(const Rows *rows, int n_groups, const gboolean *fit_fixed,
                          const gboolean *train, const gboolean *test, GArray *pool,
                          CsCalibStat *one)
{
  CsJointFit fit;
  if (!cs_fit_joint(rows->obs, rows->n, train, n_groups, fit_fixed, &fit))
    return FALSE;
  GArray *mine = g_array_new(FALSE, FALSE, sizeof(double));
  for (int i = 0; i < rows->n; i++) {
    if (!test[i])
      continue;
    const CsPairObs *o = &rows->obs[i];
    double e = fabs(cs_batch_share_slowdown(&fit.group[o->group], o) - o->ratio) / o->ratio;
    g_array_append_val(pool, e);
    g_array_append_val(mine, e);
  }
  if (one)
    cs_calib_stat_of((double *)mine->data, (int)mine->len, one);
  g_array_unref(mine);
  return TRUE;
}

static void pool_stat(GArray *pool, CsCalibStat *out)
{
  cs_calib_stat_of((double *)pool->data, (int)pool->len, out);
  g_array_set_size(pool, 0);
}

/* A scale per measured ordered pair of each group, on the joint fit. */
static void fit_scales(const Rows *rows, CsJointCalibration *c)
{
  gboolean *use = g_new(gboolean, MAX(rows->n, 1));
  for (int g = 0; g < c->n_groups; g++) {
    CsJointGroupResult *res = &c->group[g];
    for (int v = 0; v < res->n_models; v++)
      for (int a = 0; a < res->n_models; a++) {
        int k = 0;
        for (int i = 0; i < rows->n; i++) {
          use[i] = rows->obs[i].group == g && rows->victim[i] == v && rows->aggressor[i] == a;
          k += use[i];
        }
        if (k == 0 || res->n_scales >= CS_JOINT_MAX_PAIRS * 2)
          continue;
        int s = res->n_scales++;
        res->scale_victim[s] = g_strdup(res->model_names[v]);
        res->scale_aggressor[s] = g_strdup(res->model_names[a]);
        res->scale[s] = cs_fit_pair_scale(rows->obs, rows->n, use, &c->fit.group[g]);
        res->scale_samples[s] = k;
      }
  }
  g_free(use);
}

static gboolean run_scores(const Rows *rows, CsJointCalibration *c, const gboolean *fit_fixed,
                           GError **error)
{
  int n = rows->n, ng = c->n_groups;
  gboolean *train = g_new(gboolean, MAX(n, 1)), *test = g_new(gboolean, MAX(n, 1));
  GArray *pool = g_array_new(FALSE, FALSE, sizeof(double));
  gboolean ok = TRUE;
  for (int g = 0; ok && g < ng; g++) {
    CsJointGroupResult *res = &c->group[g];
    for (int i = 0; i < n; i++)
      test[i] = rows->obs[i].group == g;
    score(rows, test, &c->fit, NULL, &res->in_sample);
    /* leave each pair out, as shipped and with the victim term switched */
    gboolean toggled[CS_JOINT_MAX_GROUPS];
    memcpy(toggled, fit_fixed, sizeof(gboolean) * (size_t)ng);
    toggled[g] = !fit_fixed[g];
    for (int t = 0; ok && t < 2; t++) {
      for (int p = 0; ok && p < res->n_pairs; p++) {
        for (int i = 0; i < n; i++) {
          gboolean mine = rows->obs[i].group == g && rows->pair[i] == p;
          train[i] = !mine;
          test[i] = mine;
        }
        ok = fold_into(rows, ng, t == 0 ? fit_fixed : toggled, train, test, pool,
                       t == 0 ? &res->lopo_pair[p] : NULL);
      }
      if (ok)
        pool_stat(pool, t == 0 ? &res->lopo : &res->toggle);
    }
    /* leave each model out: every row it is in */
    for (int m = 0; ok && m < res->n_models; m++) {
      for (int i = 0; i < n; i++) {
        gboolean in_group = rows->obs[i].group == g;
        train[i] = !(in_group && (rows->victim[i] == m || rows->aggressor[i] == m));
        test[i] = in_group && rows->victim[i] == m;
      }
      ok = fold_into(rows, ng, fit_fixed, train, test, pool, &res->lomo_model[m]);
    }
    if (ok)
      pool_stat(pool, &res->lomo);
    /* leave the group out: pooled coefficients of the others */
    if (ok && ng > 1) {
      for (int i = 0; i < n; i++) {
        train[i] = rows->obs[i].group != g;
        test[i] = !train[i];
      }
      ok = pooled_fit(rows, train, &res->logo_fit);
      if (ok)
        score(rows, test, NULL, &res->logo_fit, &res->logo);
    } else if (ok) {
      res->logo = (CsCalibStat){ 0, NAN, NAN, NAN };
    }
    if (!ok)
      cs_json_fail(error, res->name, NULL, "a fit of the joint calibration did not converge "
                   "to a result (too few rows left in a fold)");
  }
  g_array_unref(pool);
  g_free(train);
  g_free(test);
  return ok;
}

CsJointCalibration *cs_joint_calibrate(const CsJointGroupSpec *groups, int n_groups,
                                       GError **error)
{
  g_return_val_if_fail(groups != NULL || n_groups == 0, NULL);
  if (n_groups < 1 || n_groups > CS_JOINT_MAX_GROUPS) {
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID,
                "calibrate: expected 1 to %d groups of measurements, got %d",
                CS_JOINT_MAX_GROUPS, n_groups);
    return NULL;
  }
  CsJointCalibration *c = g_new0(CsJointCalibration, 1);
  c->n_groups = n_groups;
  GArray *obs = g_array_new(FALSE, FALSE, sizeof(CsPairObs));
  GArray *pair = g_array_new(FALSE, FALSE, sizeof(int));
  GArray *victim = g_array_new(FALSE, FALSE, sizeof(int));
  GArray *aggressor = g_array_new(FALSE, FALSE, sizeof(int));
  gboolean fit_fixed[CS_JOINT_MAX_GROUPS];
  gboolean ok = TRUE;
  for (int g = 0; ok && g < n_groups; g++) {
    CsJointGroupResult *res = &c->group[g];
    res->name = g_strdup(groups[g].name);
    res->fit_fixed = fit_fixed[g] = groups[g].fit_fixed;
    ok = collect_names(&groups[g], res, error) &&
         add_rows(&groups[g], g, res, obs, pair, victim, aggressor, error);
  }
  Rows rows = { (CsPairObs *)(void *)obs->data, (int)obs->len, (int *)(void *)pair->data,
                 (int *)(void *)victim->data, (int *)(void *)aggressor->data };
  if (ok && !cs_fit_joint(rows.obs, rows.n, NULL, n_groups, fit_fixed, &c->fit))
    ok = cs_json_fail(error, c->group[0].name, NULL, "the joint fit failed");
  if (ok)
    ok = run_scores(&rows, c, fit_fixed, error);
  if (ok)
    fit_scales(&rows, c);
  g_array_unref(obs);
  g_array_unref(pair);
  g_array_unref(victim);
  g_array_unref(aggressor);
  if (!ok) {
    cs_joint_calibration_free(c);
    return NULL;
  }
  return c;
}

void cs_joint_calibration_free(CsJointCalibration *c)
{
  if (!c)
    return;
  for (int g = 0; g < c->n_groups; g++) {
    CsJointGroupResult *res = &c->group[g];
    g_free(res->name);
    for (int p = 0; p < res->n_pairs; p++)
      g_free(res->pair_names[p]);
    for (int m = 0; m < res->n_models; m++)
      g_free(res->model_names[m]);
    for (int k = 0; k < res->n_scales; k++) {
      g_free(res->scale_victim[k]);
      g_free(res->scale_aggressor[k]);
    }
  }
  g_free(c);
}

static void stat2(FILE *out, const CsCalibStat *s)
{
  if (s->n == 0)
    fprintf(out, "%17s", "-");
  else
    fprintf(out, "  %5.1f %% / %5.1f %%", 100.0 * s->median, 100.0 * s->p90);
}

void cs_joint_calibration_print(const CsJointCalibration *c, FILE *out)
{
  fprintf(out, "Joint fit of the interference model over %d GPU type%s (%d latencies): "
          "slowdown = 1 + c * b_a^x * (4 s_a s_v)^z * max(phi_v, %.2f)^w, z shared\n",
          c->n_groups, c->n_groups == 1 ? "" : "s", c->fit.n, CS_INTERFERENCE_MIN_FIXED);
  for (int g = 0; g < c->n_groups; g++) {
    const CsBatchShareFit *f = &c->fit.group[g];
    fprintf(out, "  %-14s c = %.4g [%.4g, %.4g], x = %.4g [%.4g, %.4g], ", c->group[g].name,
            f->c, f->ci[0][0], f->ci[0][1], f->x, f->ci[1][0], f->ci[1][1]);
    if (c->group[g].fit_fixed)
      fprintf(out, "w = %.4g [%.4g, %.4g]\n", f->w, c->fit.w_ci[g][0], c->fit.w_ci[g][1]);
    else
      fprintf(out, "w = 0 (not fitted)\n");
  }
  const CsBatchShareFit *f0 = &c->fit.group[0];
  fprintf(out, "  shared         z = %.4g [%.4g, %.4g]; residual sigma %.3f (log); %s\n",
          f0->z, f0->ci[2][0], f0->ci[2][1], c->fit.sigma,
          c->fit.converged ? "converged" : "NOT converged (last iterate)");
  fprintf(out, "Error median / p90 of |predicted - measured| / measured, on rows the fit did "
          "not see:\n");
  fprintf(out, "  %-14s %6s %18s %18s %18s %18s %18s\n", "GPU type", "rows", "leave pair out",
          "victim term sw.", "leave model out", "leave type out", "(in sample)");
  for (int g = 0; g < c->n_groups; g++) {
    const CsJointGroupResult *r = &c->group[g];
    fprintf(out, "  %-14s %6d", r->name, r->n_rows);
    stat2(out, &r->lopo);
    stat2(out, &r->toggle);
    stat2(out, &r->lomo);
    stat2(out, &r->logo);
    stat2(out, &r->in_sample);
    fputc('\n', out);
  }
  for (int g = 0; g < c->n_groups; g++) {
    const CsJointGroupResult *r = &c->group[g];
    fprintf(out, "  %s, each pair left out:", r->name);
    for (int p = 0; p < r->n_pairs; p++) {
      fprintf(out, "%s %s", p ? ";" : "", r->pair_names[p]);
      stat2(out, &r->lopo_pair[p]);
    }
    fprintf(out, "\n  %s, each model left out (as the victim):", r->name);
    for (int m = 0, shown = 0; m < r->n_models; m++) {
      if (r->lomo_model[m].n == 0) /* never a victim */
        continue;
      fprintf(out, "%s %s", shown++ ? ";" : "", r->model_names[m]);
      stat2(out, &r->lomo_model[m]);
    }
    fputc('\n', out);
    fprintf(out, "  %s, scale of each measured (victim | aggressor) on the joint fit:", r->name);
    for (int k = 0; k < r->n_scales; k++)
      fprintf(out, "%s (%s | %s) %.4g", k ? "," : "", r->scale_victim[k], r->scale_aggressor[k],
              r->scale[k]);
    fputc('\n', out);
    if (r->n_skipped > 0)
      fprintf(out, "  %s: %d rows of its files are not one-partner co-locations with both "
              "shares and were not fitted\n", r->name, r->n_skipped);
  }
}

/* The shipped measurements, one group per GPU type: its pair rows, the
 * profile its victims' fixed parts come from, and whether its victim term
 * is fitted (the choice each group's "victim term switched" column
 * justifies: on Gpulet's A100 rows it is what carries to unseen pairs, on
 * iGniter's V100 rows it makes unseen pairs worse). */
static const struct {
  const char *gpu_type, *pairs, *profile;
  gboolean fit_fixed;
} shipped[] = {
  { "a100_gpulet", "gpulet_a100_pairs.csv", "a100_gpulet.json", TRUE },
  { "v100_igniter", "igniter_v100_pairs.csv", "igniter_v100_profile.json", FALSE },
};
#define N_SHIPPED ((int)G_N_ELEMENTS(shipped))

/* A data file in the first data directory that has it, else under data/. */
static char *find(const char *dir, const char *name)
{
  char *found = cs_data_file_find(dir, name);
  return found ? found : g_build_filename("data", dir, name, NULL);
}

CsJointCalibration *cs_joint_calibrate_shipped(GError **error)
{
  CsMeasuredFile *files[N_SHIPPED] = { NULL };
  CsProfileSet *profiles[N_SHIPPED] = { NULL };
  const CsMeasuredFile *one[N_SHIPPED][1];
  CsJointGroupSpec groups[N_SHIPPED];
  CsJointCalibration *c = NULL;
  gboolean ok = TRUE;
  for (int g = 0; ok && g < N_SHIPPED; g++) {
    char *pairs = find("measured", shipped[g].pairs);
    char *profile = find("profiles", shipped[g].profile);
    files[g] = cs_measured_file_load(pairs, error);
    profiles[g] = cs_profile_set_new();
    ok = files[g] && cs_profile_set_load_file(profiles[g], profile, error);
    g_free(pairs);
    g_free(profile);
    if (!ok)
      break;
    one[g][0] = files[g];
    groups[g] = (CsJointGroupSpec){ shipped[g].gpu_type, one[g], 1, profiles[g],
                                    shipped[g].gpu_type, shipped[g].fit_fixed };
  }
  if (ok)
    c = cs_joint_calibrate(groups, N_SHIPPED, error);
  for (int g = 0; g < N_SHIPPED; g++) {
    cs_measured_file_free(files[g]);
    cs_profile_set_free(profiles[g]);
  }
  return c;
}
