/* Interrupts held off and one writer per output directory; see
 * output_guard.h. */
#include "output_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clustersim/clustersim.h"

static int hold_depth;
static volatile sig_atomic_t held_signal;
static struct sigaction old_int, old_term;

static void record(int sig)
{
  if (!held_signal)
    held_signal = sig;
}

void cs_signals_hold(void)
{
  if (hold_depth++ > 0)
    return;
  held_signal = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = record;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, NULL, &old_int);
  sigaction(SIGTERM, NULL, &old_term);
  /* An ignored signal stays ignored (a background job of a shell). */
  if (old_int.sa_handler != SIG_IGN)
    sigaction(SIGINT, &sa, NULL);
  if (old_term.sa_handler != SIG_IGN)
    sigaction(SIGTERM, &sa, NULL);
}

void cs_signals_release(void)
{
  g_return_if_fail(hold_depth > 0);
  if (--hold_depth > 0)
    return;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  int sig = held_signal;
  held_signal = 0;
  if (sig)
    raise(sig);
}

void cs_spawn_own_group(gpointer user_data)
{
  (void)user_data;
  setpgid(0, 0);
}

struct CsDirLock {
  char *dir, *path;
  int fd;
  gboolean created;
};

/* Locks the whole file for writing, without waiting. A POSIX record lock:
 * it goes with the process, works on NFS, and F_GETLK names its holder. */
static int lock_file(int fd, long *holder)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
  if (fcntl(fd, F_SETLK, &fl) == 0)
    return 0;
  int err = errno;
  struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
  *holder = fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : 0;
  return err;
}

CsDirLock *cs_dir_lock_acquire(const char *dir, const char *what, GError **error)
{
  gboolean created = !g_file_test(dir, G_FILE_TEST_EXISTS);
  if (!created && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: exists and is not a directory", what);
    return NULL;
  }
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot create output directory: %s", what,
                g_strerror(errno));
    return NULL;
  }
  char *path = g_build_filename(dir, ".clustersim.lock", NULL);
  /* The file may be removed by its holder between our open and our lock:
   * then we hold a lock on a file no one else sees, so check that the path
   * still names the file locked, and try again when not. */
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot create its lock %s: %s", what, path,
                  g_strerror(errno));
      break;
    }
    long pid = 0;
    int err = lock_file(fd, &pid);
    if (err != 0) {
      close(fd);
      if (err == EACCES || err == EAGAIN) {
        char *who = pid > 0 ? g_strdup_printf(" (PID %ld)", pid) : g_strdup("");
        g_set_error(error, CS_ERROR, CS_ERROR_IO,
                    "%s: another clustersim%s is writing it; wait for it to finish, or use "
                    "another directory",
                    what, who);
        g_free(who);
      } else {
        g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot lock %s: %s", what, path,
                    g_strerror(err));
      }
      break;
    }
    struct stat held, named;
    if (fstat(fd, &held) != 0 || stat(path, &named) != 0 || held.st_ino != named.st_ino ||
        held.st_dev != named.st_dev) {
      close(fd);
      continue;
    }
    /* A lock file of a writer that was killed is simply taken over. */
    char text[32];
    int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != (ssize_t)n) {
      /* The PID only makes the message clearer: the lock holds without it. */
    }
    CsDirLock *lock = g_new0(CsDirLock, 1);
    lock->dir = g_strdup(dir);
    lock->path = path;
    lock->fd = fd;
    lock->created = created;
    return lock;
  }
  if (error && !*error)
    g_set_error(error, CS_ERROR, CS_ERROR_IO, "%s: cannot lock %s: it keeps being replaced",
                what, path);
  g_free(path);
  if (created)
    g_rmdir(dir);
  return NULL;
}

void cs_dir_lock_release(CsDirLock *lock)
{
  if (!lock)
    return;
  /* Unlinked while still held, so that no one locks the old file after. */
  g_unlink(lock->path);
  close(lock->fd);
  if (lock->created)
    g_rmdir(lock->dir); /* only when empty */
  g_free(lock->dir);
  g_free(lock->path);
  g_free(lock);
}

/* ---- figure files ---------------------------------------------------------- */

static const char *const figure_exts[] = { ".dat", ".gp", ".svg", ".png", NULL };

static gboolean is_figure_file(const char *name)
{
  for (int i = 0; figure_exts[i]; i++)
    if (g_str_has_suffix(name, figure_exts[i]))
      return TRUE;
  return FALSE;
}

void cs_output_remove_figure_files(const char *dir, gboolean all)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d)
    return;
  const char *name;
  while ((name = g_dir_read_name(d))) {
    if (!all && !is_figure_file(name))
      continue;
    char *p = g_build_filename(dir, name, NULL);
    if (!g_file_test(p, G_FILE_TEST_IS_DIR))
      g_unlink(p);
    g_free(p);
  }
  g_dir_close(d);
}

void cs_output_figures_clear(const char *dir)
{
  char *final = g_build_filename(dir, "figures", NULL);
  if (g_file_test(final, G_FILE_TEST_IS_DIR)) {
    cs_output_remove_figure_files(final, FALSE);
    g_rmdir(final); /* only when empty */
  }
  g_free(final);
}
