/* Warnings of a run; see warnings.h. */
#include "warnings.h"

#include <stdarg.h>

struct CsWarningList {
  GArray *items; /* CsWarning with owned strings */
};

static void warning_clear(gpointer p)
{
  CsWarning *w = p;
  g_free((char *)w->code);
  g_free((char *)w->model);
  g_free((char *)w->message);
}

CsWarningList *cs_warning_list_new(void)
{
  CsWarningList *l = g_new0(CsWarningList, 1);
  l->items = g_array_new(FALSE, TRUE, sizeof(CsWarning));
  g_array_set_clear_func(l->items, warning_clear);
  return l;
}

void cs_warning_list_free(CsWarningList *l)
{
  if (!l)
    return;
  g_array_unref(l->items);
  g_free(l);
}

static void add_owned(CsWarningList *l, const char *code, const char *model, int gpu, char *msg)
{
  CsWarning w = { .code = g_strdup(code), .model = g_strdup(model), .gpu = gpu, .message = msg };
  g_array_append_val(l->items, w);
}

void cs_warning_add(CsWarningList *l, const char *code, const char *model, int gpu,
                    const char *fmt, ...)
{
  g_return_if_fail(l != NULL && code != NULL && fmt != NULL);
  va_list ap;
  va_start(ap, fmt);
  add_owned(l, code, model, gpu, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

void cs_warning_list_extend(CsWarningList *dst, const CsWarningList *src)
{
  for (guint i = 0; src && i < src->items->len; i++) {
    const CsWarning *w = &g_array_index(src->items, CsWarning, i);
    add_owned(dst, w->code, w->model, w->gpu, g_strdup(w->message));
  }
}

int cs_warning_list_len(const CsWarningList *l)
{
  return l ? (int)l->items->len : 0;
}

const CsWarning *cs_warning_list_get(const CsWarningList *l, int i)
{
  if (!l || i < 0 || (guint)i >= l->items->len)
    return NULL;
  return &g_array_index(l->items, CsWarning, i);
}
