/* Runs a command and writes its peak resident memory (its own, or that of
 * a child it waited for if larger) and its wall time to a file:
 * bench/engine_suite.py's measurement of a run.
 *
 * Why not the benchmark's own wait4(): Linux keeps a process's peak RSS
 * across exec, and a child started by Python begins as the interpreter
 * (vfork shares its memory; fork copies it), so every run measured from
 * Python read at least the interpreter's 14 MB, and a 10 MB run as 15.
 * Forked from this small program, the command's peak is its own.
 *
 * Usage: peak_rss OUT COMMAND [ARG...]
 * Writes "PEAK_RSS_KB WALL_S" to OUT; exits with the command's status
 * (128 + the signal when a signal ended it), 127 when it cannot start it,
 * 2 on bad usage. The command's stdin, stdout and stderr are this one's. */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: peak_rss OUT COMMAND [ARG...]\n");
    return 2;
  }
  FILE *out = fopen(argv[1], "we"); /* close-on-exec: not the command's */
  if (!out) {
    perror(argv[1]);
    return 2;
  }
  double start = now_s();
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 127;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  int status;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) < 0) {
    perror("wait4");
    return 127;
  }
  double wall = now_s() - start;
  fprintf(out, "%ld %.6f\n", usage.ru_maxrss, wall);
  if (fclose(out) != 0) {
    perror(argv[1]);
    return 2;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
