/* Checked and saturating int64 arithmetic for simulated times (ns), payload
 * sizes (bytes) and counts.
 *
 * GLib has g_uint64_checked_add/mul for unsigned values only; simulated
 * times are signed, so these wrap the compiler's overflow builtins. Every
 * time computed from user input goes through them (or through a validation
 * that bounds the inputs first): a wrapped int64 is a time in the past, which
 * the engine would take for a valid one.
 *
 * Simulated time is limited to CS_TIME_LIMIT_NS. Any sum of two times below
 * it fits in an int64, so the engine may add a duration to the current time
 * with cs_i64_add_sat and refuse the result when it reaches the limit. */
#ifndef CS_CHECKED_H
#define CS_CHECKED_H

#include <glib.h>
#include <math.h>
#include <stdint.h>

/* The latest simulated time a run may reach: 2^62 ns, about 146 years. The
 * engine stops a run with an error rather than schedule anything later. */
#define CS_TIME_LIMIT_NS (INT64_C(1) << 62)

/* The latest time a scenario may ask for: where a client's sending ends
 * (start + warm-up + measured phase), an explicit send time, a trace window.
 * 10^18 ns = 10^9 s, about 31.7 years, which leaves the engine more than
 * 100 years below CS_TIME_LIMIT_NS for queues to drain. */
#define CS_SCENARIO_HORIZON_NS INT64_C(1000000000000000000)

/* Returns TRUE and stores a + b in *out, or FALSE (and leaves *out
 * unspecified) when the sum does not fit in an int64. */
static inline gboolean cs_i64_add(int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_add_overflow(a, b, out);
}

/* Returns TRUE and stores a * b in *out, or FALSE when the product does not
 * fit in an int64. */
static inline gboolean cs_i64_mul(int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_mul_overflow(a, b, out);
}

/* Returns a + b, or INT64_MAX / INT64_MIN when the sum overflows upwards /
 * downwards. */
static inline int64_t cs_i64_add_sat(int64_t a, int64_t b)
{
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* Returns x rounded to the nearest integer, saturating at INT64_MAX above
 * and INT64_MIN below; NaN gives INT64_MAX (a time that is never reached,
 * which the engine refuses). llround() of a value out of range is undefined
 * behaviour in C; this never is. */
static inline int64_t cs_i64_round_sat(double x)
{
  /* (double)INT64_MAX is 2^63, one past the largest int64: >= saturates. */
  if (!(x < 9223372036854775808.0))
    return INT64_MAX;
  if (x < -9223372036854775808.0)
    return INT64_MIN;
  /* llround inline (glibc's is a call, 2 % of a run in the arrival path):
   * truncate, then add one when the fraction is at least a half; x - i is
   * exact (both within one unit, or x already whole past 2^52). Ties go
   * away from zero, as llround's. The two comparisons are added, not
   * branched on: for random times the fraction is above a half every other
   * time, which no branch predictor guesses. */
  int64_t i = (int64_t)x;
  double frac = x - (double)i;
  return i + (frac >= 0.5) - (frac <= -0.5);
}

/* Returns TRUE and stores x rounded to the nearest integer in *out when x is
 * finite and the result lies in [lo, hi]; FALSE otherwise. */
static inline gboolean cs_i64_round_in(double x, int64_t lo, int64_t hi, int64_t *out)
{
  if (!isfinite(x) || !(x >= -9.2e18 && x <= 9.2e18))
    return FALSE;
  int64_t r = llround(x);
  if (r < lo || r > hi)
    return FALSE;
  *out = r;
  return TRUE;
}

#endif
