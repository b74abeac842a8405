/* Where data files named without a path are found: the directories
 * $CLUSTERSIM_DATA_DIR, the installed data directory and, for an uninstalled
 * build, the source tree's data directory, in that order. */
#ifndef CS_DATA_FILES_H
#define CS_DATA_FILES_H

#include <glib.h>

/* Returns the directories, NULL-terminated (g_strfreev it). */
char **cs_data_dirs(void);

/* Returns the path of <dir>/<sub>/<name> (".json" appended when name has no
 * such suffix and the plain name is not found) in the first data directory
 * that has it, or NULL. g_free the result. */
char *cs_data_file_find(const char *sub, const char *name);

#endif
