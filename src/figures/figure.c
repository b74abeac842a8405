/* Figure sets: texts, writing, rendering with gnuplot; see figure.h. */
#include "figure.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

#include "clustersim/clustersim.h"
#include "common/output_guard.h"

/* Okabe & Ito's palette (Color Universal Design), black last: eight colours
 * that stay distinct for the common colour-vision deficiencies and in
 * greyscale print by their lightness. */
static const char *const palette[] = { "#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                       "#e69f00", "#56b4e9", "#f0e442", "#000000" };

const char *cs_figure_colour(int i)
{
  return palette[i % (int)G_N_ELEMENTS(palette)];
}

static void figure_free(gpointer p)
{
  CsFigure *f = p;
  g_free(f->name);
  g_string_free(f->dat, TRUE);
  g_string_free(f->gp, TRUE);
  g_free(f);
}

CsFigureSet *cs_figure_set_new(void)
{
  CsFigureSet *s = g_new0(CsFigureSet, 1);
  s->figures = g_ptr_array_new_with_free_func(figure_free);
  s->notes = g_ptr_array_new_with_free_func(g_free);
  return s;
}

void cs_figure_set_free(CsFigureSet *s)
{
  if (!s)
    return;
  g_ptr_array_unref(s->figures);
  g_ptr_array_unref(s->notes);
  g_free(s);
}

static gboolean has_name(const CsFigureSet *s, const char *name)
{
  for (guint i = 0; i < s->figures->len; i++)
    if (strcmp(((CsFigure *)g_ptr_array_index(s->figures, i))->name, name) == 0)
      return TRUE;
  return FALSE;
}

CsFigure *cs_figure_set_add(CsFigureSet *s, const char *stem)
{
  /* File names come from axis labels and model names: keep them portable
   * and free of anything a shell or gnuplot's string syntax would trip on. */
  char *base = g_strdup(*stem ? stem : "figure");
  for (char *c = base; *c; c++)
    if (!g_ascii_isalnum(*c) && *c != '.' && *c != '_' && *c != '-')
      *c = '_';
  if (base[0] == '.')
    base[0] = '_';
  char *name = g_strdup(base);
  for (int k = 2; has_name(s, name); k++) {
    g_free(name);
    name = g_strdup_printf("%s-%d", base, k);
  }
  g_free(base);
  CsFigure *f = g_new0(CsFigure, 1);
  f->name = name;
  f->dat = g_string_new(NULL);
  f->gp = g_string_new(NULL);
  g_ptr_array_add(s->figures, f);
  return f;
}

void cs_figure_set_note(CsFigureSet *s, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_ptr_array_add(s->notes, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

void cs_gp_string(GString *out, const char *s)
{
  g_string_append_c(out, '"');
  for (const char *c = s; *c; c++) {
    if (*c == '"' || *c == '\\')
      g_string_append_c(out, '\\');
    if (*c == '\n')
      g_string_append(out, "\\n");
    else if (*c == '\t' || *c == '\r')
      g_string_append_c(out, ' ');
    else
      g_string_append_c(out, *c);
  }
  g_string_append_c(out, '"');
}

void cs_gp_tic(GString *out, const char *s)
{
  char **parts = g_strsplit(s, "%", -1);
  char *escaped = g_strjoinv("%%", parts);
  cs_gp_string(out, escaped);
  g_free(escaped);
  g_strfreev(parts);
}

void cs_dat_field(GString *out, const char *s)
{
  if (!*s) {
    g_string_append_c(out, '-');
    return;
  }
  for (const char *c = s; *c; c++)
    g_string_append_c(out, (*c == '\t' || *c == '\n' || *c == '\r') ? ' ' : *c);
}

void cs_gp_begin(CsFigure *f, const char *what)
{
  g_string_append_printf(f->gp,
                         "# clustersim figure: %s\n"
                         "# Data: %s.dat (its header says what each column holds).\n"
                         "# Restyle it here and run `gnuplot %s.gp` in this directory: it\n"
                         "# rewrites %s.svg and %s.png.\n"
                         "set encoding utf8\n"
                         "set datafile separator \"\\t\"\n"
                         "set grid lc rgb \"#dddddd\" lw 1 dt 1\n"
                         "set border lc rgb \"#404040\"\n"
                         "set key noenhanced\n",
                         what, f->name, f->name, f->name, f->name);
}

void cs_gp_outputs_begin(CsFigure *f)
{
  /* One loop draws both files, so that a multiplot (which `replot` cannot
   * repeat) and a single plot are written the same way. */
  g_string_append_printf(f->gp,
                         "\n# Drawn once per file: edit the terminals for another size or "
                         "format.\n"
                         "do for [format in \"svg png\"] {\n"
                         "  if (format eq \"svg\") {\n"
                         "    set terminal svg size %d,%d dynamic enhanced font \"%s\" "
                         "background rgb \"white\"\n"
                         "  } else {\n"
                         "    set terminal pngcairo size %d,%d enhanced font \"%s\" "
                         "background rgb \"white\"\n"
                         "  }\n"
                         "  set output \"%s.\".format\n",
                         CS_FIGURE_WIDTH, CS_FIGURE_HEIGHT, CS_FIGURE_FONT, CS_FIGURE_WIDTH,
                         CS_FIGURE_HEIGHT, CS_FIGURE_FONT, f->name);
}

void cs_gp_end(CsFigure *f)
{
  g_string_append(f->gp, "}\nunset output\n");
}

char *cs_figure_find_gnuplot(char **why)
{
  const char *env = g_getenv("CLUSTERSIM_GNUPLOT");
  if (env && *env) {
    char *p = strchr(env, '/') ? g_strdup(env) : g_find_program_in_path(env);
    if (p && g_file_test(p, G_FILE_TEST_IS_EXECUTABLE) && !g_file_test(p, G_FILE_TEST_IS_DIR))
      return p;
    g_free(p);
    *why = g_strdup_printf("CLUSTERSIM_GNUPLOT=%s is not an executable program", env);
    return NULL;
  }
  char *p = g_find_program_in_path("gnuplot");
  if (!p)
    *why = g_strdup("gnuplot is not on PATH (Debian: apt-get install gnuplot-nox; or set "
                    "CLUSTERSIM_GNUPLOT to its path)");
  return p;
}

static gboolean write_texts(const CsFigureSet *s, const char *dir, GError **error)
{
  for (guint i = 0; i < s->figures->len; i++) {
    const CsFigure *f = g_ptr_array_index(s->figures, i);
    char *dat = g_strdup_printf("%s/%s.dat", dir, f->name);
    char *gp = g_strdup_printf("%s/%s.gp", dir, f->name);
    gboolean ok = g_file_set_contents(dat, f->dat->str, (gssize)f->dat->len, error) &&
                  g_file_set_contents(gp, f->gp->str, (gssize)f->gp->len, error);
    g_free(dat);
    g_free(gp);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* Runs gnuplot on NAME.gp in dir. Its stderr goes to messages when it
 * succeeds (gnuplot warns there and still exits 0), into error when not. */
static gboolean render(const CsFigure *f, const char *dir, const char *final_dir,
                       const char *gnuplot, GString *messages, GError **error)
{
  char *script = g_strconcat(f->name, ".gp", NULL);
  char *argv[] = { (char *)gnuplot, (char *)"-d", script, NULL };
  /* The C locale with UTF-8 text: numbers read and drawn with a decimal
   * point, labels in UTF-8, whatever the user's locale. */
  char **envp = g_environ_setenv(g_get_environ(), "LC_ALL", "C.UTF-8", TRUE);
  char *out = NULL, *err = NULL;
  int status = 0;
  GError *spawn_err = NULL;
  gboolean ok = g_spawn_sync(dir, argv, envp, (GSpawnFlags)0, cs_spawn_own_group, NULL, &out,
                             &err, &status, &spawn_err);
  if (!ok) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "cannot run %s: %s", gnuplot,
                spawn_err->message);
    g_error_free(spawn_err);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    g_strchomp(err);
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s failed on %s/%s: %s", gnuplot, final_dir,
                script, *err ? err : "(no message)");
    ok = FALSE;
  } else {
    char **lines = g_strsplit(err, "\n", -1);
    for (int i = 0; lines[i]; i++)
      if (*g_strstrip(lines[i]))
        g_string_append_printf(messages, "%s: %s\n", script, lines[i]);
    g_strfreev(lines);
  }
  g_free(out);
  g_free(err);
  g_free(script);
  g_strfreev(envp);
  return ok;
}

/* The kinds of figure file (as cs_output_remove_figure_files knows them). */
static const char *const figure_exts[] = { ".dat", ".gp", ".svg", ".png", NULL };

/* Removes the figure files of final that s's figures would write: NAME
 * with each figure extension, rendered or not, so that no earlier render
 * of a figure outlives its new script. */
static void remove_own_files(const CsFigureSet *s, const char *final)
{
  for (guint i = 0; i < s->figures->len; i++) {
    const CsFigure *f = g_ptr_array_index(s->figures, i);
    for (int k = 0; figure_exts[k]; k++) {
      char *p = g_strdup_printf("%s/%s%s", final, f->name, figure_exts[k]);
      g_unlink(p);
      g_free(p);
    }
  }
}

/* Moves the staged files into final (created if absent), replacing its
 * figure files (s->keep_others: only those of s's figures). */
static gboolean install(const CsFigureSet *s, const char *stage, const char *final,
                        GError **error)
{
  gboolean ok = TRUE;
  if (!g_file_test(final, G_FILE_TEST_EXISTS)) {
    if (g_rename(stage, final) != 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot create: %s", final,
                  g_strerror(errno));
      ok = FALSE;
    }
  } else {
    if (s->keep_others)
      remove_own_files(s, final);
    else
      cs_output_remove_figure_files(final, FALSE);
    GDir *d = g_dir_open(stage, 0, NULL);
    const char *name;
    while (ok && d && (name = g_dir_read_name(d))) {
      char *from = g_build_filename(stage, name, NULL);
      char *to = g_build_filename(final, name, NULL);
      if (g_rename(from, to) != 0) {
        g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot write: %s", to,
                    g_strerror(errno));
        ok = FALSE;
      }
      g_free(from);
      g_free(to);
    }
    if (d)
      g_dir_close(d);
    cs_output_remove_figure_files(stage, TRUE);
    g_rmdir(stage);
  }
  return ok;
}

void cs_figure_dir_clear(const char *dir)
{
  cs_output_figures_clear(dir);
}

gboolean cs_figure_set_save(const CsFigureSet *s, const char *dir, const char *gnuplot,
                            GString *messages, GError **error)
{
  char *final = g_build_filename(dir, "figures", NULL);
  char *stage = g_build_filename(dir, "figures.new", NULL);
  if (g_file_test(final, G_FILE_TEST_EXISTS) && !g_file_test(final, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: exists and is not a directory", final);
    g_free(final);
    g_free(stage);
    return FALSE;
  }
  /* SIGINT and SIGTERM wait until the figures are in place (a second or so
   * for the largest runs), so that an interrupt leaves either the old
   * figures or the new ones and no staging directory; gnuplot runs in a
   * process group of its own, out of reach of the terminal's Ctrl-C. */
  cs_signals_hold();
  /* A staging directory left by a crashed earlier call. */
  cs_output_remove_figure_files(stage, TRUE);
  g_rmdir(stage);
  gboolean ok = TRUE;
  if (g_mkdir_with_parents(stage, 0755) != 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot create: %s", stage,
                g_strerror(errno));
    ok = FALSE;
  }
  ok = ok && write_texts(s, stage, error);
  gboolean rendered = TRUE;
  for (guint i = 0; ok && rendered && gnuplot && i < s->figures->len; i++)
    rendered = render(g_ptr_array_index(s->figures, i), stage, final, gnuplot, messages, error);
  /* A script gnuplot refused is installed all the same: the user needs it
   * and its data to see why. */
  if (ok)
    ok = install(s, stage, final, rendered ? error : NULL) && rendered;
  if (!ok) {
    cs_output_remove_figure_files(stage, TRUE);
    g_rmdir(stage);
  }
  cs_signals_release();
  g_free(final);
  g_free(stage);
  return ok;
}
