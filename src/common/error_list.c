/* Several problems reported as one error: clustersim/core.h, "Several
 * problems at once". */
#include <string.h>

#include "clustersim/core.h"
#include "json_input.h"

struct CsErrorList {
  GPtrArray *errors; /* GError *, in the order found */
  GError *pending;   /* the slot handed out last */
};

CsErrorList *cs_error_list_new(void)
{
  CsErrorList *l = g_new0(CsErrorList, 1);
  l->errors = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
  return l;
}

void cs_error_append_problem(GString *m, const char *file, const char *message)
{
  /* The file is named once, on the first line. */
  size_t flen = strlen(file);
  if (strncmp(message, file, flen) == 0 && strncmp(message + flen, ": ", 2) == 0)
    message += flen + 2;
  g_string_append(m, "\n  ");
  /* A problem of several lines keeps them together, indented under it. */
  for (const char *p = message; *p; p++) {
    g_string_append_c(m, *p);
    if (*p == '\n')
      g_string_append(m, "  ");
  }
}

static void file_pending(CsErrorList *l)
{
  if (l->pending)
    g_ptr_array_add(l->errors, g_steal_pointer(&l->pending));
}

GError **cs_error_list_slot(CsErrorList *l)
{
  file_pending(l);
  return &l->pending;
}

void cs_error_list_take(CsErrorList *l, GError **error)
{
  file_pending(l);
  if (error && *error)
    g_ptr_array_add(l->errors, g_steal_pointer(error));
}

guint cs_error_list_count(CsErrorList *l)
{
  file_pending(l);
  return l->errors->len;
}

void cs_error_list_free(CsErrorList *l)
{
  if (!l)
    return;
  g_clear_error(&l->pending);
  g_ptr_array_unref(l->errors);
  g_free(l);
}

gboolean cs_error_list_finish(CsErrorList *l, const char *file, const char *what, GError **error)
{
  guint n = cs_error_list_count(l);
  if (n == 0) {
    cs_error_list_free(l);
    return TRUE;
  }
  if (n == 1) {
    g_propagate_error(error, g_ptr_array_steal_index(l->errors, 0));
    cs_error_list_free(l);
    return FALSE;
  }
  const GError *first = g_ptr_array_index(l->errors, 0);
  GString *m = g_string_new(NULL);
  g_string_append_printf(m, "%s: %u problems in %s:", file, n, what);
  for (guint i = 0; i < n && i < CS_ERROR_LIST_SHOWN; i++)
    cs_error_append_problem(m, file,
                            ((const GError *)g_ptr_array_index(l->errors, i))->message);
  if (n > CS_ERROR_LIST_SHOWN)
    g_string_append_printf(m, "\n  ... and %u more", n - CS_ERROR_LIST_SHOWN);
  g_set_error_literal(error, first->domain, first->code, m->str);
  g_string_free(m, TRUE);
  cs_error_list_free(l);
  return FALSE;
}
