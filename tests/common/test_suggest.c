/* Tests of the "did you mean" suggestions (common/json_input.h). Every
 * expected distance below is counted by hand in the comment next to it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "common/json_input.h"

/* Checks that cs_suggest_names(name, known) is exactly want (NULL-terminated). */
static void expect_suggestions(const char *name, const char *const *known, int n_known,
                               const char *const *want)
{
  const char **got = cs_suggest_names(name, known, n_known);
  assert_non_null(got);
  int i = 0;
  for (; want[i]; i++) {
    if (!got[i])
      print_error("suggestions for \"%s\": %d, expected more\n", name, i);
    assert_non_null(got[i]);
    assert_string_equal(got[i], want[i]);
  }
  if (got[i])
    print_error("suggestions for \"%s\": unexpected \"%s\"\n", name, got[i]);
  assert_null(got[i]);
  g_free(got);
}

static void test_distance(void **state)
{
  (void)state;
  assert_int_equal(cs_name_distance("", ""), 0);
  assert_int_equal(cs_name_distance("", "abc"), 3);          /* 3 inserts */
  assert_int_equal(cs_name_distance("abc", ""), 3);          /* 3 deletes */
  assert_int_equal(cs_name_distance("kitten", "sitting"), 3); /* k->s, e->i, +g */
  assert_int_equal(cs_name_distance("rate", "rat"), 1);      /* -e */
  assert_int_equal(cs_name_distance("vgg16", "vgg19"), 1);   /* 6->9 */
  assert_int_equal(cs_name_distance("bert", "gpt2"), 4);     /* b->g, e->p, r->t, t->2 */
  assert_int_equal(cs_name_distance("v100", "a100"), 1);     /* v->a */
  assert_int_equal(cs_name_distance("ab", "ba"), 2);         /* no transposition edit */
}

static void test_distance_ignores_ascii_case(void **state)
{
  (void)state;
  assert_int_equal(cs_name_distance("ResNet50", "resnet50"), 0);
  assert_int_equal(cs_name_distance("V100", "v100"), 0);
  assert_int_equal(cs_name_distance("ALEXNT", "alexnet"), 1); /* +e */
  /* Symmetric. */
  assert_int_equal(cs_name_distance("resnet50", "ResNet50"), 0);
  assert_int_equal(cs_name_distance("sitting", "KITTEN"), 3);
}

static void test_case_insensitive_match_wins(void **state)
{
  (void)state;
  /* "ResNet50" is at 0 from "resnet50"; "resnet101" is further (5->1, 0->0, +1: 2). */
  static const char *const models[] = { "alexnet", "resnet101", "resnet50", NULL };
  expect_suggestions("ResNet50", models, -1, (const char *const[]){ "resnet50", NULL });
  /* "V100" is at 0 from "v100"; "v100_igniter" extends it (1), "a100" is at 1. */
  static const char *const gpus[] = { "a100", "v100_igniter", "v100", NULL };
  expect_suggestions("V100", gpus, -1, (const char *const[]){ "v100", NULL });
}

static void test_typos_and_missing_suffix(void **state)
{
  (void)state;
  static const char *const fields[] = { "rate", "slo_ms", "model", NULL };
  /* "rat": prefix of "rate" (1); limit max(1, 3 / 3) = 1. */
  expect_suggestions("rat", fields, -1, (const char *const[]){ "rate", NULL });
  /* "slo": prefix of "slo_ms", which is 3 edits away but counts as 1. */
  expect_suggestions("slo", fields, -1, (const char *const[]){ "slo_ms", NULL });
  /* "modle": 2 edits from "model" (l->e, e->l) > limit max(1, 5 / 3) = 1. */
  expect_suggestions("modle", fields, -1, (const char *const[]){ NULL });
  /* "mdel": 1 edit (+o) <= 1. */
  expect_suggestions("mdel", fields, -1, (const char *const[]){ "model", NULL });
  /* "resnet" (6 chars, limit 2) is a prefix of both: a tie at 1, ordered by plain distance
   * (+5+0: 2 before +1+0+1: 3); "resnext50_32x4d" is not a prefix match and 9 edits away. */
  static const char *const models[] = { "resnext50_32x4d", "resnet101", "resnet50", NULL };
  expect_suggestions("resnet", models, -1, (const char *const[]){ "resnet50", "resnet101", NULL });
  /* Equal plain distances (2): by strcmp, upper case first. */
  expect_suggestions("resnet", (const char *const[]){ "resnet50", "ResNet50", NULL }, -1,
                     (const char *const[]){ "ResNet50", "resnet50", NULL });
  /* A prefix rule needs 3 characters: "re" is 2 edits from anything here. */
  expect_suggestions("re", (const char *const[]){ "rate", NULL }, -1,
                     (const char *const[]){ NULL });
}

static void test_ties_sorted_and_unique(void **state)
{
  (void)state;
  /* "vgg18" is 1 edit from vgg16 and vgg19 (limit max(1, 5 / 3) = 1), 6 from resnet50.
   * Ties at the same plain distance come sorted by strcmp whatever the order of known,
   * and each name once. */
  static const char *const known[] = { "vgg19", "resnet50", "vgg16", "vgg19", NULL };
  expect_suggestions("vgg18", known, -1, (const char *const[]){ "vgg16", "vgg19", NULL });
  /* Only the closest: "vgg16" is 0 from itself, 1 from "vgg19". */
  expect_suggestions("vgg16", known, -1, (const char *const[]){ "vgg16", NULL });
  /* n_known limits the scan: only "vgg19" and "resnet50" are looked at. */
  expect_suggestions("vgg18", known, 2, (const char *const[]){ "vgg19", NULL });
}

static void test_nothing_close(void **state)
{
  (void)state;
  /* "bert": 4 edits from "gpt2" (b->g, e->p, r->t, t->2), 4 from "t5" (-b, -e, -r, +5);
   * limit max(1, 4 / 3) = 1. */
  static const char *const known[] = { "gpt2", "t5", NULL };
  expect_suggestions("bert", known, -1, (const char *const[]){ NULL });
  /* "kitten" -> "sitting" is 3 edits, over the limit max(1, 6 / 3) = 2. */
  expect_suggestions("kitten", (const char *const[]){ "sitting", NULL }, -1,
                     (const char *const[]){ NULL });
  /* ... but "sitten" (1) is close. */
  expect_suggestions("kitten", (const char *const[]){ "sitting", "sitten", NULL }, -1,
                     (const char *const[]){ "sitten", NULL });
  /* Nothing to suggest from. */
  expect_suggestions("bert", (const char *const[]){ NULL }, -1, (const char *const[]){ NULL });
  expect_suggestions("bert", NULL, 0, (const char *const[]){ NULL });
}

static void test_did_you_mean_text(void **state)
{
  (void)state;
  char *s = cs_did_you_mean("ResNet50", (const char *const[]){ "resnet50", "alexnet" }, 2);
  assert_string_equal(s, " (did you mean \"resnet50\"?)");
  g_free(s);
  s = cs_did_you_mean("vgg18", (const char *const[]){ "vgg19", "vgg16", NULL }, -1);
  assert_string_equal(s, " (did you mean \"vgg16\" or \"vgg19\"?)");
  g_free(s);
  /* Four ties at 1 ("vgg1" + one character): the first three, sorted. */
  s = cs_did_you_mean("vgg1", (const char *const[]){ "vgg14", "vgg13", "vgg12", "vgg11", NULL },
                      -1);
  assert_string_equal(s, " (did you mean \"vgg11\", \"vgg12\" or \"vgg13\"?)");
  g_free(s);
  s = cs_did_you_mean("bert", (const char *const[]){ "gpt2", NULL }, -1);
  assert_string_equal(s, "");
  g_free(s);
}

/* The JSON readers use the same suggestions for unknown fields. */
static void test_check_keys_uses_suggestions(void **state)
{
  (void)state;
  static const char *const keys[] = { "rate", "slo_ms", NULL };
  GError *error = NULL;
  cJSON *obj = cJSON_Parse("{\"Rate\": 3}");
  assert_false(cs_json_check_keys(obj, keys, "f.json", "clients[0]", &error));
  assert_string_equal(error->message,
                      "f.json: clients[0]: unknown field \"Rate\" (did you mean \"rate\"?)");
  g_clear_error(&error);
  cJSON_Delete(obj);
  obj = cJSON_Parse("{\"xyz\": 3}");
  assert_false(cs_json_check_keys(obj, keys, "f.json", "clients[0]", &error));
  assert_string_equal(error->message,
                      "f.json: clients[0]: unknown field \"xyz\" (known fields: rate, slo_ms)");
  g_clear_error(&error);
  cJSON_Delete(obj);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_distance),
    cmocka_unit_test(test_distance_ignores_ascii_case),
    cmocka_unit_test(test_case_insensitive_match_wins),
    cmocka_unit_test(test_typos_and_missing_suffix),
    cmocka_unit_test(test_ties_sorted_and_unique),
    cmocka_unit_test(test_nothing_close),
    cmocka_unit_test(test_did_you_mean_text),
    cmocka_unit_test(test_check_keys_uses_suggestions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
