/* Replay driver for builds without libFuzzer: runs the harness once on every
 * file named on the command line, or every file of a directory named there,
 * as libFuzzer does with -runs=0. The test suite replays the committed
 * corpora this way, with --expect-accepted (every seed must go the whole
 * way, see fuzz_accept), in the normal and the sanitizer builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static int compare_paths(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static gboolean expect_accepted;

static int replay_file(const char *path)
{
  gchar *data = NULL;
  gsize size = 0;
  GError *error = NULL;
  if (!g_file_get_contents(path, &data, &size, &error)) {
    fprintf(stderr, "replay: %s\n", error->message);
    g_error_free(error);
    return 1;
  }
  unsigned long before = fuzz_accepted();
  LLVMFuzzerTestOneInput((const uint8_t *)data, size);
  g_free(data);
  if (expect_accepted && fuzz_accepted() == before) {
    fprintf(stderr, "replay: %s: not accepted (CS_FUZZ_VERBOSE=1 says why)\n", path);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  LLVMFuzzerInitialize(&argc, &argv);
  int bad = 0, runs = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect-accepted") == 0) {
      expect_accepted = TRUE;
      continue;
    }
    if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
      bad |= replay_file(argv[i]);
      runs++;
      continue;
    }
    GError *error = NULL;
    GDir *dir = g_dir_open(argv[i], 0, &error);
    if (!dir) {
      fprintf(stderr, "replay: %s\n", error->message);
      g_error_free(error);
      return 1;
    }
    /* Sorted, so that a crash names the same file on every machine. */
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(dir)))
      g_ptr_array_add(names, g_build_filename(argv[i], name, NULL));
    g_dir_close(dir);
    g_ptr_array_sort(names, compare_paths);
    for (guint k = 0; k < names->len; k++) {
      bad |= replay_file(g_ptr_array_index(names, k));
      runs++;
    }
    g_ptr_array_unref(names);
  }
  printf("replayed %d inputs\n", runs);
  return bad || runs == 0;
}
