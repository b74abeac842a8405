/* CsErrorList (clustersim/core.h): problems of a validation reported as one
 * error. The expected texts are written out here from the header's contract:
 * one problem unchanged, several under "FILE: N problems in WHAT:", the file
 * named once, a problem of several lines kept together, at most
 * CS_ERROR_LIST_SHOWN shown and the rest counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "clustersim/core.h"

static void fail_into(GError **slot, GQuark domain, int code, const char *msg)
{
  g_set_error_literal(slot, domain, code, msg);
}

static void test_empty_is_success(void **state)
{
  (void)state;
  CsErrorList *l = cs_error_list_new();
  /* Slots handed out and left empty are no problem. */
  (void)cs_error_list_slot(l);
  (void)cs_error_list_slot(l);
  assert_int_equal(cs_error_list_count(l), 0);
  GError *err = NULL;
  assert_true(cs_error_list_finish(l, "s.json", "clients", &err));
  assert_null(err);
}

static void test_one_problem_unchanged(void **state)
{
  (void)state;
  CsErrorList *l = cs_error_list_new();
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_IO, "s.json: clients[0].rate: bad");
  (void)cs_error_list_slot(l);
  assert_int_equal(cs_error_list_count(l), 1);
  GError *err = NULL;
  assert_false(cs_error_list_finish(l, "s.json", "clients", &err));
  assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_IO));
  assert_string_equal(err->message, "s.json: clients[0].rate: bad");
  g_error_free(err);
}

static void test_several_listed(void **state)
{
  (void)state;
  CsErrorList *l = cs_error_list_new();
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_INVALID, "s.json: clients[0].rate: bad");
  (void)cs_error_list_slot(l); /* a check that passed */
  /* Not prefixed by the file: kept whole. So is a name that only starts like it. */
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_PARSE, "other.json: line 3: bad");
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_PARSE, "s.json2: x");
  GError *taken = NULL;
  fail_into(&taken, CS_ERROR, CS_ERROR_IO, "s.json: clients[2]: two\nlines");
  cs_error_list_take(l, &taken);
  assert_null(taken);
  cs_error_list_take(l, &taken); /* nothing to take */
  assert_int_equal(cs_error_list_count(l), 4);
  GError *err = NULL;
  assert_false(cs_error_list_finish(l, "s.json", "clients", &err));
  /* The first problem's domain and code. */
  assert_true(g_error_matches(err, CS_ERROR, CS_ERROR_INVALID));
  assert_string_equal(err->message, "s.json: 4 problems in clients:\n"
                                    "  clients[0].rate: bad\n"
                                    "  other.json: line 3: bad\n"
                                    "  s.json2: x\n"
                                    "  clients[2]: two\n"
                                    "  lines");
  g_error_free(err);
}

static void test_many_counted(void **state)
{
  (void)state;
  CsErrorList *l = cs_error_list_new();
  for (int i = 0; i < CS_ERROR_LIST_SHOWN + 3; i++)
    g_set_error(cs_error_list_slot(l), CS_ERROR, CS_ERROR_INVALID, "f: r[%d]: bad", i);
  GError *err = NULL;
  assert_false(cs_error_list_finish(l, "f", "r", &err));
  GString *want = g_string_new(NULL);
  g_string_append_printf(want, "f: %d problems in r:", CS_ERROR_LIST_SHOWN + 3);
  for (int i = 0; i < CS_ERROR_LIST_SHOWN; i++)
    g_string_append_printf(want, "\n  r[%d]: bad", i);
  g_string_append(want, "\n  ... and 3 more");
  assert_string_equal(err->message, want->str);
  g_string_free(want, TRUE);
  g_error_free(err);
}

static void test_free_drops_problems(void **state)
{
  (void)state;
  /* Under ASan, a leak here fails the test. */
  CsErrorList *l = cs_error_list_new();
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_INVALID, "a");
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_INVALID, "b");
  cs_error_list_free(l);
  cs_error_list_free(NULL);
  /* A NULL error: the problems are dropped, FALSE still returned. */
  l = cs_error_list_new();
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_INVALID, "a");
  fail_into(cs_error_list_slot(l), CS_ERROR, CS_ERROR_INVALID, "b");
  assert_false(cs_error_list_finish(l, "f", "r", NULL));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_empty_is_success),
    cmocka_unit_test(test_one_problem_unchanged),
    cmocka_unit_test(test_several_listed),
    cmocka_unit_test(test_many_counted),
    cmocka_unit_test(test_free_drops_problems),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
