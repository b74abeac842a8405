/* Figures (internal): a figure is a data file NAME.dat (tab-separated, a
 * header comment saying what each column holds) and a gnuplot script NAME.gp
 * that draws it into NAME.svg and NAME.png. The script is meant to be read
 * and edited: a user restyles a figure by editing NAME.gp and running
 * `gnuplot NAME.gp` in its directory (docs/experiments.md, "Figures").
 *
 * The tool writes a figure set into DIR/figures and, when gnuplot is found,
 * runs it on every script. gnuplot is optional: without it the .dat and .gp
 * files are still written and the caller warns that nothing was rendered.
 *
 * Determinism: the .dat and .gp texts depend only on the inputs; gnuplot's
 * svg and pngcairo terminals draw the same bytes for the same script (pdf
 * would not: pdfcairo stamps a creation date), and gnuplot runs with -d (no
 * user initialisation file) in the C locale, so the figures are byte-identical
 * from run to run on one machine. */
#ifndef CS_FIGURE_H
#define CS_FIGURE_H

#include <glib.h>

G_BEGIN_DECLS

/* Size of every figure, in SVG units and PNG pixels, and its font. */
#define CS_FIGURE_WIDTH 800
#define CS_FIGURE_HEIGHT 500
#define CS_FIGURE_FONT "DejaVu Sans,11"

typedef struct {
  char *name;  /* file stem, unique in its set: [A-Za-z0-9._-] only */
  GString *dat; /* NAME.dat */
  GString *gp;  /* NAME.gp */
} CsFigure;

typedef struct {
  GPtrArray *figures; /* CsFigure *, in the order they are written and rendered */
  GPtrArray *notes;   /* char *: figures skipped and why, for the user */
  /* FALSE (cs_figure_set_new): cs_figure_set_save replaces every figure of
   * dir/figures. TRUE: only the set's own (the files of its names); the
   * others stay: `sweep plot --metric` adds a metric's figures, drawn from
   * the same aggregate.csv, beside those drawn before. */
  gboolean keep_others;
} CsFigureSet;

CsFigureSet *cs_figure_set_new(void);
void cs_figure_set_free(CsFigureSet *s);

/* Adds an empty figure called stem (reduced to safe characters, with "-2",
 * "-3", ... appended when the set already has that name). The set owns it. */
CsFigure *cs_figure_set_add(CsFigureSet *s, const char *stem);

/* Records why a figure was not made ("latency CDF skipped: ..."). */
void cs_figure_set_note(CsFigureSet *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* ---- Writing the texts ---- */

/* Appends s as a gnuplot double-quoted string ("..." with \\, \" and \n
 * escaped; tabs become spaces). */
void cs_gp_string(GString *out, const char *s);

/* The same for a tic label, which gnuplot reads as a format: % doubled. */
void cs_gp_tic(GString *out, const char *s);

/* Appends s as a .dat text field: tabs and line breaks become spaces, an
 * empty string becomes "-" (gnuplot would read an empty field as missing). */
void cs_dat_field(GString *out, const char *s);

/* Begins NAME.gp: a comment naming the figure (what, one line) and its data
 * file, how to restyle it, then the settings every figure shares (UTF-8,
 * tab-separated data, grid, key font). */
void cs_gp_begin(CsFigure *f, const char *what);

/* Opens the drawing loop of NAME.gp: the commands appended after it until
 * cs_gp_end run once per output, NAME.svg then NAME.png, with the terminals
 * of the header above. */
void cs_gp_outputs_begin(CsFigure *f);
void cs_gp_end(CsFigure *f);

/* The colour of series i (a colour-blind-safe palette of 8, then again with
 * other dash patterns), as "#rrggbb". */
const char *cs_figure_colour(int i);

/* ---- Writing and rendering a set ---- */

/* The gnuplot to run: $CLUSTERSIM_GNUPLOT when set (a path, or a name looked
 * up on PATH), else gnuplot on PATH. Returns the program's path (g_free it),
 * or NULL with *why set (g_free it) saying what was missing. */
char *cs_figure_find_gnuplot(char **why);

/* Writes the set into dir/figures: first into dir/figures.new, rendering
 * there with gnuplot when gnuplot is not NULL, then replacing the .dat, .gp,
 * .svg and .png files of dir/figures with the new ones (other files there are
 * left alone; with s->keep_others only the files of the set's names are
 * replaced, and the other figures stay). gnuplot's messages on a script that renders (warnings) are
 * appended to messages, one "NAME.gp: ..." line each. Returns FALSE with
 * error set when a file cannot be written or gnuplot fails on a script (the
 * .dat and .gp files are in dir/figures then, to see why). */
gboolean cs_figure_set_save(const CsFigureSet *s, const char *dir, const char *gnuplot,
                            GString *messages, GError **error);

/* Removes the figures of dir: the .dat, .gp, .svg and .png files of
 * dir/figures, and the directory when nothing else is left in it. For
 * outputs being replaced, whose figures would no longer match them. */
void cs_figure_dir_clear(const char *dir);

G_END_DECLS

#endif
