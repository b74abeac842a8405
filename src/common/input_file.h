/* Opening the files a user names (scenarios, profiles, traces, experiments,
 * run and sweep outputs) so that a wrong kind of file gets a message instead
 * of a hang or a memory blow-up: a FIFO without a writer would block a plain
 * open() or read(), and /dev/zero would be read until memory runs out.
 *
 * Every function opens with O_NONBLOCK (a FIFO or a device cannot block the
 * open), checks with fstat() that the file is a regular one and only then
 * reads. Errors have domain CS_INPUT_ERROR, code CS_INPUT_ERROR_IO, and read
 * "PATH: cannot read: WHY" with WHY one of
 *   not found                       (no such file, or a path component is missing)
 *   permission denied
 *   not a regular file (a directory) / (a FIFO) / (a character device) /
 *     (a block device) / (a socket) / (an unknown kind of file)
 *   too large (N bytes, at most M)  (cs_input_read only)
 *   the system's message for any other errno.
 */
#ifndef CS_INPUT_FILE_H
#define CS_INPUT_FILE_H

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* Largest JSON document read whole (scenario, profile, experiment, sweep and
 * run outputs): far above any real one (the biggest shipped profile is a few
 * hundred kB), and small enough that cJSON's tree of it fits in memory. */
#define CS_INPUT_JSON_MAX_BYTES ((gsize)256 << 20)

/* Largest table read whole (a sweep shard's runs.csv: a row of about 300
 * bytes per run and model, so millions of rows fit). */
#define CS_INPUT_TABLE_MAX_BYTES ((gsize)1 << 30)

/* Returns a read-only file descriptor on the regular file path (close() it),
 * or -1 with error set as described above. Never blocks on FIFOs or devices. */
int cs_input_open(const char *path, GError **error);

/* Same as cs_input_open, as a stdio stream opened "rb" (fclose() it). Returns
 * NULL with error set on failure. */
FILE *cs_input_fopen(const char *path, GError **error);

/* Reads the whole regular file path into *text (NUL-terminated, g_free it)
 * and its length into *len (len may be NULL). A file larger than max_bytes is
 * refused before anything is read. Returns FALSE with error set, *text
 * untouched, on any failure above or a read error ("PATH: read error: ..."). */
gboolean cs_input_read(const char *path, gsize max_bytes, char **text, gsize *len,
                       GError **error);

/* What path is when it exists and is not a regular file: "a directory",
 * "a FIFO", "a character device", "a block device", "a socket" or "an
 * unknown kind of file". Returns NULL when path is a regular file
 * or cannot be stat()ed (missing: the caller's own "not found" applies).
 * Never blocks. For resolvers that check a name before opening it. */
const char *cs_input_not_regular(const char *path);

/* Why path, which stat() cannot follow, is not simply absent: "a loop of
 * symbolic links (ELOOP)" or "a symbolic link to a missing file". Returns
 * NULL when path can be stat()ed or does not exist at all. Never blocks.
 * Resolvers that would say "not found" ask this first, and cs_input_open's
 * messages use the same words. */
const char *cs_input_broken_link(const char *path);

G_END_DECLS

#endif
