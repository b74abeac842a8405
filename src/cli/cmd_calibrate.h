/* `clustersim calibrate --measured` (cmd_calibrate_measured.c), called by
 * cmd_calibrate.c with its parsed options. */
#ifndef CS_CMD_CALIBRATE_H
#define CS_CMD_CALIBRATE_H

#include <glib.h>

typedef struct {
  char **measured;          /* --measured files, NULL-terminated, at least one */
  const char *profile;      /* --profile: a path, shipped name or GPU type */
  const char *gpu_type;     /* --gpu-type, or NULL */
  const char *interference; /* --interference, or NULL: beside the profile */
  double gamma;
  gboolean json;
} CalibrateMeasuredArgs;

/* Scores the measured rows and prints the report; returns the exit status
 * (2 after printing the error on bad input). */
int cmd_calibrate_measured(const CalibrateMeasuredArgs *a);

#endif
