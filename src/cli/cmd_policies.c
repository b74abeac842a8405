/* clustersim policies [NAME] [--json]: every placement, dispatch and
 * controller policy of the registry with its parameters, as the policies
 * themselves read them (policies/catalog.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "common/json_input.h"
#include "policies/catalog.h"

CsRegistry *cli_policies_registry(void)
{
  return cs_registry_ref(cli_registry()); /* the built-ins and the plug-ins loaded */
}

static void print_number(GString *s, double v)
{
  g_string_append_printf(s, "%.10g", v);
}

/* "(integer in [1, 16], optional, default 4)" and the like. */
static char *parameter_summary(const cJSON *p)
{
  GString *s = g_string_new(cJSON_GetStringValue(cJSON_GetObjectItem(p, "type")));
  const cJSON *min = cJSON_GetObjectItem(p, "min"), *max = cJSON_GetObjectItem(p, "max");
  const cJSON *choices = cJSON_GetObjectItem(p, "choices");
  /* G_MAXINT and the like are the readers' "no upper bound". */
  gboolean upper = max && max->valuedouble < G_MAXINT;
  if (min && upper) {
    g_string_append(s, " in [");
    print_number(s, min->valuedouble);
    g_string_append(s, ", ");
    print_number(s, max->valuedouble);
    g_string_append(s, "]");
  } else if (min) {
    g_string_append(s, " >= ");
    print_number(s, min->valuedouble);
  } else if (upper) {
    g_string_append(s, " <= ");
    print_number(s, max->valuedouble);
  }
  if (choices) {
    g_string_append(s, ":");
    const cJSON *c;
    int i = 0;
    cJSON_ArrayForEach(c, choices)
      g_string_append_printf(s, "%s \"%s\"", i++ ? "," : "", c->valuestring);
  }
  const cJSON *req = cJSON_GetObjectItem(p, "required");
  if (req)
    g_string_append(s, cJSON_IsTrue(req) ? ", required" : ", optional");
  const cJSON *d = cJSON_GetObjectItem(p, "default");
  const cJSON *dt = cJSON_GetObjectItem(p, "default_text");
  if (dt)
    g_string_append_printf(s, ", default: %s", dt->valuestring);
  else if (cJSON_IsString(d))
    g_string_append_printf(s, ", default \"%s\"", d->valuestring);
  else if (cJSON_IsBool(d))
    g_string_append_printf(s, ", default %s", cJSON_IsTrue(d) ? "true" : "false");
  else if (cJSON_IsNumber(d)) {
    g_string_append(s, ", default ");
    print_number(s, d->valuedouble);
  } else if (req && !cJSON_IsTrue(req))
    g_string_append(s, ", no default");
  return g_string_free(s, FALSE);
}

static void print_policy(const cJSON *pol)
{
  printf("%s (%s)\n  %s\n", cJSON_GetStringValue(cJSON_GetObjectItem(pol, "name")),
         cJSON_GetStringValue(cJSON_GetObjectItem(pol, "kind")),
         cJSON_GetStringValue(cJSON_GetObjectItem(pol, "description")));
  const cJSON *params = cJSON_GetObjectItem(pol, "parameters");
  if (cJSON_GetArraySize(params) == 0)
    printf("  no parameters\n");
  const cJSON *p;
  cJSON_ArrayForEach(p, params)
  {
    char *sum = parameter_summary(p);
    const char *doc = cJSON_GetStringValue(cJSON_GetObjectItem(p, "description"));
    printf("  %s (%s)\n      %s\n", cJSON_GetStringValue(cJSON_GetObjectItem(p, "name")), sum,
           doc && *doc ? doc : "(no description)");
    g_free(sum);
  }
}

int cmd_policies(int argc, char **argv)
{
  const char *prog = "clustersim policies";
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the catalogue as JSON", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = g_option_context_new("[NAME] - the policies a scenario can name");
  g_option_context_set_summary(ctx,
    "Lists every placement, dispatch and controller policy (and the LLM replica schedulers\n"
    "plug-ins add) with its parameters: name, type,\n"
    "range or choices, whether it is required, its default and one line of description. NAME\n"
    "shows one policy (every policy of that name: a placement and a dispatch policy may share\n"
    "one). The parameters are those the policies read, recorded by running each policy's\n"
    "parameter parsing on an empty object (docs/extending.md).");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  int status = 0;
  CsRegistry *reg = NULL;
  cJSON *all = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    status = cli_fail(prog, err->message);
    goto out;
  }
  if (argc > 2) {
    status = cli_fail(prog, "expected at most one policy NAME (see --help)");
    goto out;
  }
  const char *name = argc == 2 ? argv[1] : NULL;
  reg = cli_policies_registry();
  all = cs_policy_catalog(reg);
  cJSON *shown = cJSON_CreateArray();
  const cJSON *pol;
  cJSON_ArrayForEach(pol, all)
    if (!name || strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(pol, "name")), name) == 0)
      cJSON_AddItemToArray(shown, cJSON_Duplicate(pol, TRUE));
  if (cJSON_GetArraySize(shown) == 0) {
    GPtrArray *names = g_ptr_array_new();
    cJSON_ArrayForEach(pol, all)
      g_ptr_array_add(names, cJSON_GetStringValue(cJSON_GetObjectItem(pol, "name")));
    char *hint = cs_did_you_mean(name, (const char *const *)names->pdata, (int)names->len);
    char *m = g_strdup_printf("no policy \"%s\"%s (clustersim policies lists them)", name, hint);
    status = cli_fail(prog, m);
    g_free(m);
    g_free(hint);
    g_ptr_array_free(names, TRUE);
    cJSON_Delete(shown);
    goto out;
  }
  if (json) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "policies", shown);
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(root);
  } else {
    int i = 0;
    cJSON_ArrayForEach(pol, shown)
    {
      if (i++)
        printf("\n");
      print_policy(pol);
    }
    cJSON_Delete(shown);
  }
out:
  cJSON_Delete(all);
  cs_registry_unref(reg);
  g_clear_error(&err);
  g_option_context_free(ctx);
  return status;
}
