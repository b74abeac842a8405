/* Tests of the path-aware JSON readers (common/json_input.h) and the data
 * directory search (common/data_files.h): every message a reader can give,
 * with the file and JSON path it names, and the order data directories are
 * searched in. Expected messages are the wording docs/scenario.md promises:
 * "FILE: PATH: what was expected, got what". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

#include "common/data_files.h"
#include "common/input_file.h"
#include "common/json_input.h"

/* Asserts that error is an INVALID input error with exactly this message. */
static void expect_message(GError **error, const char *want)
{
  assert_non_null(*error);
  if (strcmp((*error)->message, want) != 0)
    print_error("got      \"%s\"\nexpected \"%s\"\n", (*error)->message, want);
  assert_string_equal((*error)->message, want);
  g_clear_error(error);
}

static void test_parse_positions(void **state)
{
  (void)state;
  GError *error = NULL;
  /* The parse stops at the 'x' on line 3, column 8 (1-based). */
  assert_null(cs_json_parse("{\n  \"a\": 1,\n  \"b\": x\n}", "doc.json", &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_PARSE));
  assert_string_equal(error->message, "doc.json: line 3, column 8: not valid JSON");
  g_clear_error(&error);
  /* Trailing garbage after a complete value is refused too. */
  assert_null(cs_json_parse("{} {}", "two.json", &error));
  assert_string_equal(error->message, "two.json: line 1, column 4: not valid JSON");
  g_clear_error(&error);
  cJSON *ok = cs_json_parse(" [1, 2] ", "ok.json", &error);
  assert_non_null(ok);
  assert_int_equal(cJSON_GetArraySize(ok), 2);
  cJSON_Delete(ok);

  assert_null(cs_json_load_file("/nonexistent/dir/x.json", &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  assert_string_equal(error->message, "/nonexistent/dir/x.json: cannot read: not found");
  g_clear_error(&error);
}

/* A key given twice in one object is refused, naming the object's path and
 * both lines (cJSON would keep both and read only the first). */
static void test_duplicate_keys(void **state)
{
  (void)state;
  GError *error = NULL;
  assert_null(cs_json_parse("{\"seed\": 1,\n \"seed\": -1}", "d.json", &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_INVALID));
  assert_string_equal(error->message, "d.json: field \"seed\" given twice, on line 1 and line 2 "
                                      "(a field may appear once)");
  g_clear_error(&error);
  /* Nested in an array, on one line; an escaped key is the same key. */
  assert_null(cs_json_parse("{\"clients\": [{}, {\"rate\": 1, \"r\\u0061te\": 2}]}", "d.json",
                            &error));
  assert_string_equal(error->message, "d.json: clients[1]: field \"rate\" given twice on line 1 "
                                      "(a field may appear once)");
  g_clear_error(&error);
  /* Past the linear-compare size, in a nested object after strings holding
   * braces and newlines escaped. */
  GString *big = g_string_new("{\"s\": \"}{\\\"\\n\", \"o\": {");
  for (int i = 0; i < 40; i++)
    g_string_append_printf(big, "\"k%d\": [%d, {\"k%d\": null}],\n", i, i, i);
  g_string_append(big, "\"k7\": true}}");
  assert_null(cs_json_parse(big->str, "big.json", &error));
  assert_string_equal(error->message, "big.json: o: field \"k7\" given twice, on line 8 and "
                                      "line 41 (a field may appear once)");
  g_clear_error(&error);
  /* The same key in two objects, or in an object and its child, is fine. */
  g_string_truncate(big, big->len - strlen("\"k7\": true}}"));
  g_string_append(big, "\"k40\": true}}");
  cJSON *ok = cs_json_parse(big->str, "big.json", &error);
  assert_non_null(ok);
  cJSON_Delete(ok);
  g_string_free(big, TRUE);
  ok = cs_json_parse("\xEF\xBB\xBF [{\"a\": 1}, {\"a\": {\"a\": 2}}]", "bom.json", &error);
  assert_non_null(ok);
  cJSON_Delete(ok);
}

/* Asserts that cs_json_load_file(path) fails with "path: cannot read: why". */
static void expect_unreadable(const char *path, const char *why)
{
  GError *error = NULL;
  assert_null(cs_json_load_file(path, &error));
  assert_true(g_error_matches(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO));
  char *want = g_strdup_printf("%s: cannot read: %s", path, why);
  if (strcmp(error->message, want) != 0)
    print_error("got      \"%s\"\nexpected \"%s\"\n", error->message, want);
  assert_string_equal(error->message, want);
  g_free(want);
  g_error_free(error);
}

/* Files that are not regular ones are refused by what they are, without
 * blocking (a FIFO without a writer hung the reader before) or reading
 * without end (/dev/zero was read until memory ran out), and a file larger
 * than the cap is refused before it is read. */
static void test_load_file_kinds(void **state)
{
  (void)state;
  char *tmp = g_dir_make_tmp("cs-input-XXXXXX", NULL);
  assert_non_null(tmp);
  char *dir = g_build_filename(tmp, "dir.json", NULL);
  char *fifo = g_build_filename(tmp, "fifo.json", NULL);
  char *big = g_build_filename(tmp, "big.json", NULL);
  char *file = g_build_filename(tmp, "x.json", NULL);
  assert_int_equal(g_mkdir(dir, 0700), 0);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  expect_unreadable(dir, "not a regular file (a directory)");
  expect_unreadable(fifo, "not a regular file (a FIFO)");
  expect_unreadable("/dev/zero", "not a regular file (a character device)");
  /* A path through a regular file: not found, like a missing one. */
  assert_true(g_file_set_contents(file, "{}", -1, NULL));
  char *under = g_build_filename(file, "y.json", NULL);
  expect_unreadable(under, "not found");
  /* Sparse: one byte past the cap costs no disk space. */
  FILE *fp = fopen(big, "wb");
  assert_non_null(fp);
  assert_int_equal(fseeko(fp, (off_t)CS_INPUT_JSON_MAX_BYTES, SEEK_SET), 0);
  assert_int_equal(fputc(' ', fp), ' ');
  assert_int_equal(fclose(fp), 0);
  char *why = g_strdup_printf("too large (%" G_GUINT64_FORMAT " bytes, at most 256 MiB)",
                              (guint64)CS_INPUT_JSON_MAX_BYTES + 1);
  expect_unreadable(big, why);
  g_free(why);
  if (geteuid() != 0) { /* root reads whatever the mode says */
    assert_int_equal(g_chmod(file, 0), 0);
    expect_unreadable(file, "permission denied");
  }
  /* The same file, readable, still loads: the helper refuses only what it must. */
  assert_int_equal(g_chmod(file, 0600), 0);
  GError *error = NULL;
  cJSON *ok = cs_json_load_file(file, &error);
  assert_non_null(ok);
  cJSON_Delete(ok);
  char *text = NULL;
  gsize len = 0;
  assert_true(cs_input_read(file, 2, &text, &len, &error));
  assert_int_equal(len, 2);
  assert_string_equal(text, "{}");
  g_free(text);
  assert_false(cs_input_read(file, 1, &text, &len, &error));
  assert_true(g_str_has_suffix(error->message, ": cannot read: too large (2 bytes, at most 1 bytes)"));
  g_clear_error(&error);
  /* A file whose size stat() does not tell (as in /proc) is read to its end. */
  assert_true(cs_input_read("/proc/self/stat", CS_INPUT_JSON_MAX_BYTES, &text, &len, &error));
  assert_true(len > 0 && strlen(text) == len);
  g_free(text);
  g_unlink(big);
  g_unlink(file);
  g_unlink(fifo);
  g_rmdir(dir);
  g_rmdir(tmp);
  g_free(under);
  g_free(big);
  g_free(file);
  g_free(fifo);
  g_free(dir);
  g_free(tmp);
}

static void test_paths_and_types(void **state)
{
  (void)state;
  char *s = cs_json_path_key("a.b", "c");
  assert_string_equal(s, "a.b.c");
  g_free(s);
  s = cs_json_path_key("", "c");
  assert_string_equal(s, "c");
  g_free(s);
  s = cs_json_path_key(NULL, "c");
  assert_string_equal(s, "c");
  g_free(s);
  s = cs_json_path_index("clients", 2);
  assert_string_equal(s, "clients[2]");
  g_free(s);
  s = cs_json_path_index(NULL, 0);
  assert_string_equal(s, "[0]");
  g_free(s);

  GError *error = NULL;
  assert_false(cs_json_fail(&error, "f.json", "", "bad %d", 7));
  expect_message(&error, "f.json: bad 7");
  assert_false(cs_json_fail(&error, "f.json", NULL, "bad"));
  expect_message(&error, "f.json: bad");
  assert_false(cs_json_fail(&error, "f.json", "x[1]", "bad"));
  expect_message(&error, "f.json: x[1]: bad");

  cJSON *doc = cs_json_parse("[null, true, false, 1.5, \"s\", [], {}]", "t.json", NULL);
  static const char *const names[] = { "null",     "a boolean", "a boolean", "a number",
                                       "a string", "an array",  "an object" };
  for (int i = 0; i < 7; i++)
    assert_string_equal(cs_json_type_name(cJSON_GetArrayItem(doc, i)), names[i]);
  cJSON_Delete(doc);
  assert_string_equal(cs_json_type_name(NULL), "nothing");
  cJSON invalid = { 0 }; /* type cJSON_Invalid */
  assert_string_equal(cs_json_type_name(&invalid), "an unknown value");

  assert_false(cs_json_expect_object(&invalid, "t.json", "root", &error));
  expect_message(&error, "t.json: root: expected an object, got an unknown value");
}

static void test_read_double(void **state)
{
  (void)state;
  GError *error = NULL;
  cJSON *o = cs_json_parse("{\"neg\": -1, \"big\": 2e9, \"mid\": 150, \"str\": \"5\", "
                           "\"ok\": 0.25}",
                           "d.json", NULL);
  cJSON_AddItemToObject(o, "inf", cJSON_CreateNumber(INFINITY));
  double v = 42;
  /* Absent and optional: untouched. */
  assert_true(cs_json_read_double(o, "absent", FALSE, 0, 1, &v, "d.json", "p", &error));
  assert_true(v == 42);
  assert_false(cs_json_read_double(o, "absent", TRUE, 0, 1, &v, "d.json", "p", &error));
  expect_message(&error, "d.json: p.absent: required field is missing");
  assert_true(cs_json_read_double(o, "ok", TRUE, 0, 1, &v, "d.json", "p", &error));
  assert_true(v == 0.25);
  assert_false(cs_json_read_double(o, "str", TRUE, 0, 1, &v, "d.json", "p", &error));
  expect_message(&error, "d.json: p.str: expected a number, got a string");
  /* Before, "expected a number, got a number". 1e999 is how a file says it. */
  assert_false(cs_json_read_double(o, "inf", TRUE, 0, 1, &v, "d.json", "p", &error));
  expect_message(&error, "d.json: p.inf: expected a finite number, got infinity (a number beyond "
                         "the range of a double, about 1.8e308)");
  cJSON *lit = cs_json_parse("{\"x\": -1e999}", "d.json", NULL);
  assert_false(cs_json_read_double(lit, "x", TRUE, -1e9, 1e9, &v, "d.json", "", &error));
  expect_message(&error, "d.json: x: expected a finite number, got -infinity (a number beyond the "
                         "range of a double, about -1.8e308)");
  cJSON_Delete(lit);
  /* The ways a range is worded. */
  assert_false(cs_json_read_double(o, "neg", TRUE, 1e-9, 1e12, &v, "d.json", "", &error));
  expect_message(&error, "d.json: neg: expected a number > 0, got -1");
  assert_false(cs_json_read_double(o, "neg", TRUE, 0, 1e9, &v, "d.json", "", &error));
  expect_message(&error, "d.json: neg: expected a number >= 0, got -1");
  assert_false(cs_json_read_double(o, "mid", TRUE, 0, 100, &v, "d.json", "", &error));
  expect_message(&error, "d.json: mid: expected a number in [0, 100], got 150");
  /* A big maximum with a minimum of 0 (not "tiny positive"). */
  assert_false(cs_json_read_double(o, "neg", TRUE, 0.5, 1e9, &v, "d.json", "", &error));
  expect_message(&error, "d.json: neg: expected a number >= 0.5, got -1");
  assert_true(cs_json_read_double(o, "big", TRUE, 0, 1e10, &v, "d.json", "", &error));
  assert_true(v == 2e9);
  /* Above a large maximum, the message names the bound that failed (it
   * said "expected a number > 0, got 1e+300" for a rate of 1e300). */
  assert_false(cs_json_read_double(o, "big", TRUE, 1e-9, 1e9, &v, "d.json", "", &error));
  expect_message(&error, "d.json: big: expected a number > 0 and <= 1e+09, got 2e+09");
  assert_false(cs_json_read_double(o, "big", TRUE, 0, 1e9, &v, "d.json", "", &error));
  expect_message(&error, "d.json: big: expected a number in [0, 1e+09], got 2e+09");
  assert_false(cs_json_read_double(o, "mid", TRUE, 1e-6, 100, &v, "d.json", "", &error));
  expect_message(&error, "d.json: mid: expected a number > 0 and <= 100, got 150");
  cJSON_Delete(o);
}

static void test_read_integers(void **state)
{
  (void)state;
  GError *error = NULL;
  cJSON *o = cs_json_parse("{\"frac\": 2.5, \"str\": \"3\", \"huge\": 1e16, \"neg\": -4, "
                           "\"ten\": 10, \"exact\": 9007199254740991, \"two53\": 9007199254740992, "
                           "\"two53p1\": 9007199254740993, \"inf\": 1e999}",
                           "i.json", NULL);
  cJSON_AddItemToObject(o, "nan", cJSON_CreateNumber(NAN));
  int64_t v = 0;
  int iv = 0;
  assert_false(cs_json_read_int64(o, "frac", TRUE, 0, 100, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.frac: expected an integer, got a fractional number");
  assert_false(cs_json_read_int64(o, "str", TRUE, 0, 100, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.str: expected an integer, got a string");
  /* From 2^53 on a double no longer holds every integer. */
  assert_false(cs_json_read_int64(o, "huge", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.huge: expected an integer, got 10000000000000000: too large "
                         "to be exact (a double holds every integer only below 2^53 = "
                         "9007199254740992)");
  /* Before, "a fractional number" for both. */
  assert_false(cs_json_read_int64(o, "nan", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.nan: expected an integer, got NaN");
  assert_false(cs_json_read_int64(o, "inf", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.inf: expected an integer, got infinity (a number beyond the "
                         "range of a double, about 1.8e308)");
  cJSON_AddItemToObject(o, "minus_huge", cJSON_CreateNumber(-1e300));
  assert_false(cs_json_read_int64(o, "minus_huge", TRUE, INT64_MIN, 0, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.minus_huge: expected an integer, got -1e+300: too large to be "
                         "exact (a double holds every integer only below 2^53 = 9007199254740992)");
  /* 2^53 + 1 is read as 2^53: both refused (before, silently 2^53). */
  assert_false(cs_json_read_int64(o, "two53p1", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.two53p1: expected an integer, got 9007199254740992: too large "
                         "to be exact (a double holds every integer only below 2^53 = "
                         "9007199254740992)");
  assert_false(cs_json_read_int64(o, "two53", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  g_clear_error(&error);
  assert_true(cs_json_read_int64(o, "exact", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  assert_true(v == INT64_C(9007199254740991));
  assert_false(cs_json_read_int64(o, "neg", TRUE, 0, INT64_MAX, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.neg: expected an integer >= 0, got -4");
  assert_false(cs_json_read_int64(o, "ten", TRUE, 0, 9, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.ten: expected an integer in [0, 9], got 10");
  assert_false(cs_json_read_int64(o, "missing", TRUE, 0, 9, &v, "i.json", "n", &error));
  expect_message(&error, "i.json: n.missing: required field is missing");
  /* int: the same checks; absent and optional leaves the value. */
  iv = 77;
  assert_true(cs_json_read_int(o, "missing", FALSE, 0, 9, &iv, "i.json", "n", &error));
  assert_int_equal(iv, 77);
  assert_false(cs_json_read_int(o, "ten", TRUE, 0, 9, &iv, "i.json", "n", &error));
  expect_message(&error, "i.json: n.ten: expected an integer in [0, 9], got 10");
  assert_int_equal(iv, 77);
  assert_true(cs_json_read_int(o, "ten", TRUE, 0, 10, &iv, "i.json", "n", &error));
  assert_int_equal(iv, 10);
  cJSON_Delete(o);
}

static void test_read_string_and_bool(void **state)
{
  (void)state;
  GError *error = NULL;
  cJSON *o = cs_json_parse("{\"empty\": \"\", \"num\": 1, \"s\": \"x\", \"t\": true, "
                           "\"zero\": 0}",
                           "s.json", NULL);
  const char *s = "unchanged";
  assert_true(cs_json_read_string(o, "absent", FALSE, &s, "s.json", "", &error));
  assert_string_equal(s, "unchanged");
  assert_false(cs_json_read_string(o, "absent", TRUE, &s, "s.json", "", &error));
  expect_message(&error, "s.json: absent: required field is missing");
  assert_false(cs_json_read_string(o, "empty", TRUE, &s, "s.json", "", &error));
  expect_message(&error, "s.json: empty: expected a non-empty string, got an empty string");
  assert_false(cs_json_read_string(o, "num", TRUE, &s, "s.json", "", &error));
  expect_message(&error, "s.json: num: expected a non-empty string, got a number");
  assert_true(cs_json_read_string(o, "s", TRUE, &s, "s.json", "", &error));
  assert_string_equal(s, "x");

  gboolean b = FALSE;
  assert_false(cs_json_read_bool(o, "absent", TRUE, &b, "s.json", "q", &error));
  expect_message(&error, "s.json: q.absent: required field is missing");
  /* 0 is not false: JSON booleans only. */
  assert_false(cs_json_read_bool(o, "zero", TRUE, &b, "s.json", "q", &error));
  expect_message(&error, "s.json: q.zero: expected true or false, got a number");
  assert_true(cs_json_read_bool(o, "absent", FALSE, &b, "s.json", "q", &error));
  assert_false(b);
  assert_true(cs_json_read_bool(o, "t", TRUE, &b, "s.json", "q", &error));
  assert_true(b);
  cJSON_Delete(o);
}

static void test_check_keys(void **state)
{
  (void)state;
  static const char *const keys[] = { "rate", "slo_ms", "model", NULL };
  GError *error = NULL;
  cJSON *o = cs_json_parse("{\"rate\": 1, \"model\": \"m\"}", "k.json", NULL);
  assert_true(cs_json_check_keys(o, keys, "k.json", "clients[0]", &error));
  cJSON_Delete(o);
  /* Close to a known key: a suggestion. */
  o = cs_json_parse("{\"rate\": 1, \"slo\": 2}", "k.json", NULL);
  assert_false(cs_json_check_keys(o, keys, "k.json", "clients[0]", &error));
  expect_message(&error, "k.json: clients[0]: unknown field \"slo\" (did you mean \"slo_ms\"?)");
  cJSON_Delete(o);
  /* Nothing close: the list of known fields instead. */
  o = cs_json_parse("{\"throughput\": 1}", "k.json", NULL);
  assert_false(cs_json_check_keys(o, keys, "k.json", "", &error));
  expect_message(&error, "k.json: unknown field \"throughput\" (known fields: rate, slo_ms, "
                         "model)");
  cJSON_Delete(o);
}

static void test_did_you_mean_lists(void **state)
{
  (void)state;
  /* "gpu" is one edit from each of the four; the first CS_SUGGEST_MAX (3) in
   * strcmp order are named, joined by ", " and " or ". */
  static const char *const known[] = { "gpa", "gpb", "gpc", "gpd" };
  char *hint = cs_did_you_mean("gpu", known, 4);
  assert_string_equal(hint, " (did you mean \"gpa\", \"gpb\" or \"gpc\"?)");
  g_free(hint);
  hint = cs_did_you_mean("gpu", known, 2);
  assert_string_equal(hint, " (did you mean \"gpa\" or \"gpb\"?)");
  g_free(hint);
  hint = cs_did_you_mean("gpu", known, 1);
  assert_string_equal(hint, " (did you mean \"gpa\"?)");
  g_free(hint);
  /* No known names at all. */
  hint = cs_did_you_mean("gpu", NULL, -1);
  assert_string_equal(hint, "");
  g_free(hint);
}

/* ---- data files -------------------------------------------------------------- */

static void test_data_dirs(void **state)
{
  (void)state;
  GError *error = NULL;
  char *tmp = g_dir_make_tmp("cs-test-data-XXXXXX", &error);
  assert_non_null(tmp);
  char *sub = g_build_filename(tmp, "profiles", NULL);
  assert_int_equal(g_mkdir(sub, 0700), 0);
  char *mine = g_build_filename(sub, "v100_thesis.json", NULL);
  assert_true(g_file_set_contents(mine, "{}", -1, NULL));
  char *plain = g_build_filename(sub, "notes", NULL);
  assert_true(g_file_set_contents(plain, "", -1, NULL));

  /* $CLUSTERSIM_DATA_DIR comes first and shadows the shipped file. */
  g_setenv("CLUSTERSIM_DATA_DIR", tmp, TRUE);
  char **dirs = cs_data_dirs();
  assert_int_equal(g_strv_length(dirs), 3);
  assert_string_equal(dirs[0], tmp);
  g_strfreev(dirs);
  char *found = cs_data_file_find("profiles", "v100_thesis");
  assert_string_equal(found, mine);
  g_free(found);
  found = cs_data_file_find("profiles", "v100_thesis.json");
  assert_string_equal(found, mine);
  g_free(found);
  /* The plain name is tried before NAME.json. */
  found = cs_data_file_find("profiles", "notes");
  assert_string_equal(found, plain);
  g_free(found);
  assert_null(cs_data_file_find("profiles", "no_such_profile"));
  /* A directory is not a data file. */
  assert_null(cs_data_file_find("", "profiles"));

  /* Empty: ignored, the two built-in directories remain; the shipped file
   * (data/profiles/v100_thesis.json of the source tree) is found. */
  g_setenv("CLUSTERSIM_DATA_DIR", "", TRUE);
  dirs = cs_data_dirs();
  assert_int_equal(g_strv_length(dirs), 2);
  g_strfreev(dirs);
  found = cs_data_file_find("profiles", "v100_thesis");
  assert_non_null(found);
  assert_string_not_equal(found, mine);
  assert_true(g_str_has_suffix(found, "profiles/v100_thesis.json"));
  g_free(found);
  g_unsetenv("CLUSTERSIM_DATA_DIR");

  g_remove(mine);
  g_remove(plain);
  g_rmdir(sub);
  g_rmdir(tmp);
  g_free(mine);
  g_free(plain);
  g_free(sub);
  g_free(tmp);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_positions),   cmocka_unit_test(test_paths_and_types),
    cmocka_unit_test(test_load_file_kinds),
    cmocka_unit_test(test_duplicate_keys), cmocka_unit_test(test_read_double),       cmocka_unit_test(test_read_integers),
    cmocka_unit_test(test_read_string_and_bool), cmocka_unit_test(test_check_keys),
    cmocka_unit_test(test_did_you_mean_lists), cmocka_unit_test(test_data_dirs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
