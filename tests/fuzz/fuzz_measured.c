/* Fuzzes the measured-rows CSV reader (src/profiles/measured.h), the import
 * into profile and interference files (measured_import.h) and the scoring of
 * the rows against what was imported (calibrate_measured.h). Checks the
 * reader's promises on rows (batch >= 1, latency > 0, shares in (0, 100] or
 * NAN, partners only on co-located rows, copies >= 1) and that every scored
 * row gets a finite prediction > 0 with and without interference. */
#include <math.h>

#include "fuzz_common.h"
#include "calibrate/calibrate_measured.h"
#include "profiles/measured_import.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  fuzz_init(*argv);
  return 0;
}

static void check_rows(const CsMeasuredFile *f)
{
  for (int i = 0; i < f->n_rows; i++) {
    const CsMeasuredRow *r = &f->rows[i];
    if (r->batch < 1 || !(r->latency_ms > 0) || !(isnan(r->share_pct) ||
        (r->share_pct > 0 && r->share_pct <= 100)))
      fuzz_fail("row %d: batch %d, latency %g, share %g", i, r->batch, r->latency_ms,
                r->share_pct);
    if ((r->kind == CS_MEASURED_ISOLATED) != (r->n_partners == 0))
      fuzz_fail("row %d: kind %s with %d partners", i, cs_measured_kind_name(r->kind),
                r->n_partners);
    for (int p = 0; p < r->n_partners; p++)
      if (r->partners[p].copies < 1 || r->partners[p].batch < 1 || !r->partners[p].model[0])
        fuzz_fail("row %d: partner %d malformed", i, p);
  }
}

static void score(CsMeasuredFile *f, const CsImportResult *res)
{
  char *ptext = cJSON_PrintUnformatted(res->profile);
  char *itext = res->interference ? cJSON_PrintUnformatted(res->interference) : NULL;
  CsProfileSet *prof = cs_profile_set_new();
  GError *error = NULL;
  CsInterferenceSet *tables = itext ? cs_interference_set_load_data(itext, "i.json", &error)
                                    : NULL;
  if (!cs_profile_set_load_data(prof, ptext, "p.json", &error) || (itext && !tables))
    fuzz_fail("an imported file does not load: %s", error->message);
  CsScoreOptions opt = { .files = &f, .n_files = 1, .profile = prof,
                         .gpu_type = cs_gpu_type_name(cs_profile_set_gpu_type_at(prof, 0)),
                         .tables = tables, .shipped = &f, .n_shipped = 1 };
  CsScoreResult *r = cs_score_measured(&opt, &error);
  if (r) {
    for (int i = 0; i < r->n_rows; i++)
      for (int m = CS_SCORE_MODEL; m <= CS_SCORE_NONE; m++)
        if (!(isfinite(r->sim_ms[m][i]) && r->sim_ms[m][i] > 0))
          fuzz_fail("row %d: %s predicts %g ms", i, cs_score_method_name(m), r->sim_ms[m][i]);
    cJSON_Delete(cs_score_json(r));
    cs_score_result_free(r);
  } else
    g_clear_error(&error);
  cs_interference_set_free(tables);
  cs_profile_set_free(prof);
  cJSON_free(ptext);
  cJSON_free(itext);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_write_temp("fuzz.csv", data, size);
  GError *error = NULL;
  CsMeasuredFile *f = cs_measured_file_load(path, &error);
  if (!f) {
    fuzz_reject(&error);
    return 0;
  }
  fuzz_accept();
  check_rows(f);
  char *names[] = { "fuzz.csv", NULL };
  CsImportOptions opt = { .interference = TRUE, .file_names = names, .profile_name = "p.json",
                          .interference_name = "i.json" };
  cs_interference_fallback_init(&opt.fallback);
  CsImportResult res;
  if (cs_measured_import(&f, 1, &opt, &res, &error)) {
    if (res.profile)
      score(f, &res);
  } else
    g_clear_error(&error);
  cs_import_result_clear(&res);
  cs_measured_file_free(f);
  return 0;
}
