/* Keeping an output directory whole: interrupts held off while a set of
 * files is replaced, and one writer at a time.
 *
 * cs_signals_hold / cs_signals_release bracket a section that must not be
 * cut by SIGINT or SIGTERM (replacing a set of output files by renames,
 * rendering figures into place). While held, either signal is recorded,
 * not acted on; the outermost release restores the earlier dispositions and
 * raises the first recorded signal again, so a default disposition ends the
 * process right after the section (an ignored one stays ignored). Unlike a
 * blocked signal mask, which is per thread, this holds for every thread of
 * the process: a sweep's worker threads would otherwise take the signal and
 * end the process in the middle. Sections nest. Call from one thread (the
 * main one); not async-signal-safe. */
#ifndef CS_OUTPUT_GUARD_H
#define CS_OUTPUT_GUARD_H

#include <glib.h>

G_BEGIN_DECLS

void cs_signals_hold(void);
void cs_signals_release(void);

/* A child process spawned while signals are held should not take the
 * terminal's Ctrl-C either (it goes to the whole foreground process group):
 * pass this as g_spawn's child_setup to put the child in a process group of
 * its own. */
void cs_spawn_own_group(gpointer user_data);

/* An exclusive lock on output directory dir, held until cs_dir_lock_release:
 * dir is created when absent (with its parents), and dir/.clustersim.lock is
 * locked (a POSIX record lock, which NFS honours too) and holds the
 * holder's PID. The lock goes with the
 * process, so a writer that was killed leaves no stale lock: its file is
 * simply locked again. Returns NULL with error set (CS_ERROR_IO) when dir
 * cannot be created or is not a directory, or when another process holds
 * the lock: "--output DIR: another clustersim (PID N) is writing it; wait
 * for it to finish, or use another directory". what names dir in messages
 * ("--output DIR", "DIR"). */
typedef struct CsDirLock CsDirLock;
CsDirLock *cs_dir_lock_acquire(const char *dir, const char *what, GError **error);

/* Removes the lock file and releases the lock; removes dir too when this
 * lock created it and nothing else is in it (a sweep interrupted before
 * writing anything). Accepts NULL. */
void cs_dir_lock_release(CsDirLock *lock);

/* Removes the figure files (.dat, .gp, .svg, .png) of dir, or all its
 * files when all (a staging directory that is ours alone); directories in
 * it are left. */
void cs_output_remove_figure_files(const char *dir, gboolean all);

/* Removes the figures of dir: the figure files of dir/figures, and the
 * directory when nothing else is left in it. For outputs being replaced,
 * whose figures would no longer match them (a sweep written from the
 * library, which draws none, and cs_figure_dir_clear). */
void cs_output_figures_clear(const char *dir);

G_END_DECLS

#endif
