/* Opening user-named input files without blocking; see input_file.h. */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_input.h"

static const char *kind_of(mode_t mode)
{
  if (S_ISREG(mode))
    return NULL;
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "an unknown kind of file";
}

static void fail_kind(GError **error, const char *path, const char *kind)
{
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
              "%s: cannot read: not a regular file (%s)", path, kind);
}

const char *cs_input_broken_link(const char *path)
{
  struct stat st;
  if (stat(path, &st) == 0)
    return NULL;
  if (errno == ELOOP)
    return "a loop of symbolic links (ELOOP)";
  if (errno == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    return "a symbolic link to a missing file";
  return NULL;
}

/* The errno of a failed open() in the words of input_file.h. */
static void fail_errno(GError **error, const char *path, int err)
{
  const char *broken = err == ENOENT || err == ELOOP ? cs_input_broken_link(path) : NULL;
  const char *why = broken                          ? broken
                    : err == ENOENT || err == ENOTDIR ? "not found"
                    : err == EACCES || err == EPERM ? "permission denied"
                                                    : g_strerror(err);
  g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: cannot read: %s", path, why);
}

const char *cs_input_not_regular(const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return NULL;
  return kind_of(st.st_mode);
}

int cs_input_open(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, -1);
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
   * writer; O_NOCTTY: a terminal device must not become ours. */
  int fd;
  do
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    fail_errno(error, path, errno);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    fail_errno(error, path, err);
    return -1;
  }
  const char *kind = kind_of(st.st_mode);
  if (kind) {
    close(fd);
    fail_kind(error, path, kind);
    return -1;
  }
  /* A regular file never blocks; clear the flag so that stdio sees a plain
   * descriptor. */
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0)
    (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

FILE *cs_input_fopen(const char *path, GError **error)
{
  int fd = cs_input_open(path, error);
  if (fd < 0)
    return NULL;
  FILE *fp = fdopen(fd, "rb");
  if (!fp) {
    int err = errno;
    close(fd);
    fail_errno(error, path, err);
  }
  return fp;
}

/* size 0: not known (the file grew past max_bytes while it was read). */
static gboolean too_large(GError **error, const char *path, guint64 size, gsize max_bytes)
{
  /* Plain ASCII (g_format_size puts a no-break space before the unit). */
  char *limit = max_bytes >= (1 << 20) && max_bytes % (1 << 20) == 0
                  ? g_strdup_printf("%" G_GSIZE_FORMAT " MiB", max_bytes >> 20)
                  : g_strdup_printf("%" G_GSIZE_FORMAT " bytes", max_bytes);
  if (size > 0)
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
                "%s: cannot read: too large (%" G_GUINT64_FORMAT " bytes, at most %s)", path,
                size, limit);
  else
    g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO,
                "%s: cannot read: too large (more than %s)", path, limit);
  g_free(limit);
  return FALSE;
}

gboolean cs_input_read(const char *path, gsize max_bytes, char **text, gsize *len,
                       GError **error)
{
  int fd = cs_input_open(path, error);
  if (fd < 0)
    return FALSE;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0 && (guint64)st.st_size > max_bytes) {
    close(fd);
    return too_large(error, path, (guint64)st.st_size, max_bytes);
  }
  /* st_size is only a hint: files of /proc say 0, and a file may grow while
   * it is read, so the cap is checked on what was read. */
  GByteArray *buf = g_byte_array_sized_new(st.st_size > 0 ? (guint)MIN((guint64)st.st_size + 1,
                                                                        (guint64)max_bytes + 1)
                                                          : 4096);
  guint8 chunk[1 << 16];
  gboolean ok = TRUE;
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      g_set_error(error, CS_INPUT_ERROR, CS_INPUT_ERROR_IO, "%s: read error: %s", path,
                  g_strerror(err));
      ok = FALSE;
      break;
    }
    if (n == 0)
      break;
    if (buf->len + (gsize)n > max_bytes) {
      ok = too_large(error, path, 0, max_bytes);
      break;
    }
    g_byte_array_append(buf, chunk, (guint)n);
  }
  close(fd);
  if (!ok) {
    g_byte_array_free(buf, TRUE);
    return FALSE;
  }
  gsize n = buf->len;
  guint8 nul = 0;
  g_byte_array_append(buf, &nul, 1);
  *text = (char *)g_byte_array_free(buf, FALSE);
  if (len)
    *len = n;
  return TRUE;
}
