/* Tests of the measured-rows CSV reader (src/profiles/measured.c): rows of the
 * shipped measured files read back as the source files give them (values
 * copied from the CSV text), the partner grammar on every form the shared
 * data uses, and every bad input refused with file, line, column and what was
 * expected. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/json_input.h"
#include "profiles/measured.h"

#define assert_close(a, b, eps) assert_close_impl((a), (b), (eps), #a, __FILE__, __LINE__)
static void assert_close_impl(double a, double b, double eps, const char *what, const char *file,
                              int line)
{
  if (!(fabs(a - b) <= eps)) {
    print_error("%s = %.17g, expected %.17g (eps %g)\n", what, a, b, eps);
    _fail(file, line);
  }
}

/* Writes text to a temporary file named NAME in a fresh directory; returns its path. */
static char *write_temp(const char *name, const char *text)
{
  GError *e = NULL;
  char *dir = g_dir_make_tmp("test_measured_XXXXXX", &e);
  assert_non_null(dir);
  char *path = g_build_filename(dir, name, NULL);
  g_free(dir);
  assert_true(g_file_set_contents(path, text, -1, &e));
  return path;
}

static void remove_temp(char *path)
{
  char *dir = g_path_get_dirname(path);
  g_remove(path);
  g_rmdir(dir);
  g_free(dir);
  g_free(path);
}

#define HDR "source,gpu,model,batch,share_pct,partners,latency_ms,isolated_latency_ms,kind\n"

static void test_reads_rows(void **state)
{
  (void)state;
  /* Line 2 is the first row of gpulet_a100_pairs.csv, columns reordered
   * and quoted as the source file quotes them. */
  char *path = write_temp("ok.csv",
                          "kind,source,gpu,model,batch,share_pct,partners,latency_ms,"
                          "isolated_latency_ms,source_path,notes,mig_gpcs\r\n"
                          "colocated,gpulet_0909wlgur,\"A100-80GB? (inferred, not stated; see "
                          "README)\",vgg19,1,20,vgg19:b=1:s=80,7.52,5.4663,"
                          "0909wlgur/Gpulet@8015c3d3f3:data/interference.csv line 1,\"a \"\"q\"\"\",\r\n"
                          "\r\n"
                          "isolated,s,g,caffe:vgg16:1,3,,,18.1801,,,,\n"
                          "colocated_same_model,p,g,bert,1,,\"bert:b=1:same MIG instance x2 (MPS "
                          "default, no SM limit)\",25.0,13.0,,,1\n");
  GError *e = NULL;
  CsMeasuredFile *f = cs_measured_file_load(path, &e);
  if (!f)
    print_error("%s\n", e->message);
  assert_non_null(f);
  assert_int_equal(f->n_rows, 3);
  assert_int_equal(strlen(f->sha256), 64);
  const CsMeasuredRow *r = &f->rows[0];
  assert_int_equal(r->line, 2);
  assert_string_equal(r->source, "gpulet_0909wlgur");
  assert_string_equal(r->gpu, "A100-80GB? (inferred, not stated; see README)");
  assert_string_equal(r->model, "vgg19");
  assert_int_equal(r->batch, 1);
  assert_close(r->share_pct, 20, 0);
  assert_close(r->latency_ms, 7.52, 0);
  assert_close(r->isolated_latency_ms, 5.4663, 0);
  assert_int_equal(r->kind, CS_MEASURED_COLOCATED);
  assert_int_equal(r->n_partners, 1);
  assert_string_equal(r->partners[0].model, "vgg19");
  assert_int_equal(r->partners[0].batch, 1);
  assert_close(r->partners[0].share_pct, 80, 0);
  assert_int_equal(r->partners[0].copies, 1);
  assert_null(r->partners[0].placement);
  assert_string_equal(r->notes, "a \"q\"");
  assert_string_equal(r->source_path, "0909wlgur/Gpulet@8015c3d3f3:data/interference.csv line 1");
  assert_int_equal(r->mig_gpcs, 0);
  assert_true(isnan(r->throughput));
  assert_string_equal(r->machine, "");

  r = &f->rows[1];
  assert_int_equal(r->line, 4); /* the blank line 3 is skipped but counted */
  assert_string_equal(r->model, "caffe:vgg16:1");
  assert_true(isnan(r->share_pct));
  assert_true(isnan(r->isolated_latency_ms));
  assert_int_equal(r->n_partners, 0);

  r = &f->rows[2];
  assert_int_equal(r->kind, CS_MEASURED_COLOCATED_SAME_MODEL);
  assert_int_equal(r->mig_gpcs, 1);
  assert_int_equal(r->n_partners, 1);
  assert_string_equal(r->partners[0].model, "bert");
  assert_int_equal(r->partners[0].copies, 2);
  assert_true(isnan(r->partners[0].share_pct));
  assert_string_equal(r->partners[0].placement, "same MIG instance");
  assert_string_equal(r->partners[0].note, "MPS default, no SM limit");
  assert_int_equal(cs_measured_row_n_corunners(r), 2);
  cs_measured_file_free(f);
  remove_temp(path);
}

/* The digest is of the bytes: "abc" has the FIPS 180-2 test vector's. */
static void test_sha256_of_bytes(void **state)
{
  (void)state;
  const char *text = "source,gpu,model,batch,latency_ms,kind\ns,g,m,1,2,isolated\n";
  char *path = write_temp("d.csv", text);
  GError *e = NULL;
  CsMeasuredFile *f = cs_measured_file_load(path, &e);
  assert_non_null(f);
  char *want = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
  assert_string_equal(f->sha256, want);
  g_free(want);
  cs_measured_file_free(f);
  remove_temp(path);
  want = g_compute_checksum_for_string(G_CHECKSUM_SHA256, "abc", -1);
  assert_string_equal(want, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  g_free(want);
}

static void test_partner_grammar(void **state)
{
  (void)state;
  CsMeasuredPartner *p = NULL;
  char *why = NULL;
  assert_int_equal(cs_measured_parse_partners("", &p, &why), 0);
  assert_null(p);

  assert_int_equal(cs_measured_parse_partners("a:b=2:s=37.5 x3; c:d:b=16", &p, &why), 2);
  assert_string_equal(p[0].model, "a");
  assert_int_equal(p[0].batch, 2);
  assert_close(p[0].share_pct, 37.5, 0);
  assert_int_equal(p[0].copies, 3);
  assert_string_equal(p[1].model, "c:d");
  assert_int_equal(p[1].batch, 16);
  assert_true(isnan(p[1].share_pct));
  assert_int_equal(p[1].copies, 1);
  cs_measured_partners_free(p, 2);

  assert_int_equal(cs_measured_parse_partners("m:b=4:s=50:same MIG instance", &p, &why), 1);
  assert_close(p[0].share_pct, 50, 0);
  assert_string_equal(p[0].placement, "same MIG instance");
  assert_null(p[0].note);
  cs_measured_partners_free(p, 1);
}

typedef struct {
  const char *text;
  const char *why;
} BadPartner;

static const BadPartner bad_partners[] = {
  { "vgg19", "expected MODEL:b=BATCH[:s=SHARE][:PLACEMENT][ xN][ (NOTE)], got \"vgg19\"" },
  { "vgg19:b=", "partner \"vgg19:b=\": batch: expected an integer >= 1, got \"\"" },
  { "vgg19:b=0", "partner \"vgg19:b=0\": batch: expected an integer >= 1, got \"0\"" },
  { "vgg19:b=x:s=80", "partner \"vgg19:b=x:s=80\": batch: expected an integer >= 1, got \"x\"" },
  { "vgg19:b=1:s=0", "partner \"vgg19:b=1:s=0\": share: expected a number in (0, 100], got \"0\"" },
  { "vgg19:b=1:s=101",
    "partner \"vgg19:b=1:s=101\": share: expected a number in (0, 100], got \"101\"" },
  { "vgg19:b=1:s=", "partner \"vgg19:b=1:s=\": share: expected a number in (0, 100], got \"\"" },
  { "vgg19:b=1:s=ab", "partner \"vgg19:b=1:s=ab\": share: expected a number in (0, 100], got \"ab\"" },
  { "vgg19:b=1 x0", "partner \"vgg19:b=1 x0\": copies: expected xN with N >= 1, got \"x0\"" },
  { "vgg19:b=1 xx", "partner \"vgg19:b=1 xx\": copies: expected xN with N >= 1, got \"xx\"" },
  { "a:b=1;", "expected MODEL:b=BATCH[:s=SHARE][:PLACEMENT][ xN][ (NOTE)], got \"\"" },
  { "a:b=1 (x", "partner \"a:b=1 (x\": batch: expected an integer >= 1, got \"1 (x\"" },
};

static void test_bad_partners(void **state)
{
  (void)state;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_partners); i++) {
    CsMeasuredPartner *p = NULL;
    char *why = NULL;
    int n = cs_measured_parse_partners(bad_partners[i].text, &p, &why);
    if (n >= 0 || strcmp(why, bad_partners[i].why) != 0)
      print_error("partners \"%s\": got %d, \"%s\"\n", bad_partners[i].text, n, why ? why : "");
    assert_int_equal(n, -1);
    assert_string_equal(why, bad_partners[i].why);
    g_free(why);
  }
}

typedef struct {
  const char *text;
  const char *message; /* after "bad.csv: " */
} BadFile;

static const BadFile bad_files[] = {
  { "", "empty file: expected a header line with columns source, gpu, model, batch, latency_ms, "
        "kind" },
  { "source,gpu,model,batch,kind\n",
    "line 1: header: missing column \"latency_ms\" (required columns: source, gpu, model, batch, "
    "latency_ms, kind)" },
  { "source,gpu,model,batch,latency_ms,kind,latancy\n",
    "line 1: header: unknown column \"latancy\" (known columns: source, gpu, model, batch, "
    "latency_ms, kind, share_pct, partners, isolated_latency_ms, sharing, stat, source_path, "
    "notes, throughput, throughput_per_process, std_ms, p90_ms, p99_ms, mig_gpcs, "
    "time_quota_pct, precision, framework_context, server_compute_infer_ms, machine)" },
  { "source,gpu,model,batch,latency_ms,kind,batch\n",
    "line 1: header: column \"batch\" appears twice" },
  { HDR, "line 1: no data rows after the header (expected one row per measured latency)" },
  { HDR "s,g,m,1,,,2\n", "line 2: expected 9 columns as in the header, got 7" },
  { HDR "s,g,m,1,,,2,,alone\n",
    "line 2: column kind: expected isolated, colocated or colocated_same_model, got \"alone\"" },
  { HDR ",g,m,1,,,2,,isolated\n", "line 2: column source: expected a non-empty text, got \"\"" },
  { HDR "s,g,,1,,,2,,isolated\n", "line 2: column model: expected a non-empty text, got \"\"" },
  { HDR "s,g,m,0,,,2,,isolated\n", "line 2: column batch: expected an integer >= 1, got \"0\"" },
  { HDR "s,g,m,1.5,,,2,,isolated\n",
    "line 2: column batch: expected an integer >= 1, got \"1.5\"" },
  { HDR "s,g,m,1,,,0,,isolated\n", "line 2: column latency_ms: expected a number > 0 (ms), got \"0\"" },
  { HDR "s,g,m,1,,,2ms,,isolated\n",
    "line 2: column latency_ms: expected a number > 0 (ms), got \"2ms\"" },
  { HDR "s,g,m,1,,,nan,,isolated\n",
    "line 2: column latency_ms: expected a number > 0 (ms), got \"nan\"" },
  { HDR "s,g,m,1,120,,2,,isolated\n",
    "line 2: column share_pct: expected blank or a number in (0, 100], got \"120\"" },
  { HDR "s,g,m,1,, 50,2,,isolated\n",
    "line 2: column partners: expected MODEL:b=BATCH[:s=SHARE][:PLACEMENT][ xN][ (NOTE)], got \"50\"" },
  { HDR "s,g,m,1,,a:b=1,2,-1,colocated\n",
    "line 2: column isolated_latency_ms: expected blank or a number > 0 (ms), got \"-1\"" },
  { HDR "s,g,m,1,,a:b=1,2,,isolated\n",
    "line 2: column partners: expected blank on an isolated row, got \"a:b=1\"" },
  { HDR "s,g,m,1,,,2,,colocated\n",
    "line 2: column partners: expected at least one partner on a co-located row, got \"\"" },
  { HDR "s,g,m,1,,a:b=1:s=0,2,,colocated\n",
    "line 2: column partners: partner \"a:b=1:s=0\": share: expected a number in (0, 100], got "
    "\"0\"" },
  { HDR "s,g,m,1,,\"a:b=1,2,,colocated\n",
    "line 2: unterminated quoted field in column 6 (a quoted field must end on the same line)" },
  { "source,gpu,model,batch,latency_ms,kind,mig_gpcs\ns,g,m,1,2,isolated,9\n",
    "line 2: column mig_gpcs: expected blank or an integer in [1, 8] (GPCs), got \"9\"" },
  { "source,gpu,model,batch,latency_ms,kind,time_quota_pct\ns,g,m,1,2,isolated,0\n",
    "line 2: column time_quota_pct: expected blank or a number in (0, 100], got \"0\"" },
  { "source,gpu,model,batch,latency_ms,kind,throughput\ns,g,m,1,2,isolated,-3\n",
    "line 2: column throughput: expected blank or a number >= 0, got \"-3\"" },
};

static void test_bad_files(void **state)
{
  (void)state;
  for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++) {
    char *path = write_temp("bad.csv", bad_files[i].text);
    GError *e = NULL;
    CsMeasuredFile *f = cs_measured_file_load(path, &e);
    char *want = g_strdup_printf("%s: %s", path, bad_files[i].message);
    if (f || !e || strcmp(e->message, want) != 0)
      print_error("case %zu: got \"%s\"\n  expected \"%s\"\n", i, e ? e->message : "(loaded)", want);
    assert_null(f);
    assert_non_null(e);
    assert_true(g_error_matches(e, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID));
    assert_string_equal(e->message, want);
    g_free(want);
    g_error_free(e);
    remove_temp(path);
  }
}

static void test_missing_file(void **state)
{
  (void)state;
  GError *e = NULL;
  assert_null(cs_measured_file_load("no/such/file.csv", &e));
  assert_true(g_error_matches(e, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  assert_non_null(strstr(e->message, "no/such/file.csv"));
  g_error_free(e);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_reads_rows),
    cmocka_unit_test(test_sha256_of_bytes),
    cmocka_unit_test(test_partner_grammar),
    cmocka_unit_test(test_bad_partners),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_missing_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
