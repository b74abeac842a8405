/* Random streams derived from one scenario seed and a stable stream name.
 *
 * Each entity that draws random numbers gets its own GSL generator, seeded from
 * hash(scenario seed, stream name), e.g. "client/resnet50/arrivals". Streams
 * never share state, so adding a client leaves every other client's draws
 * unchanged, and results do not depend on the order entities are created.
 *
 * Generator: GSL's mt19937. It takes a 32-bit seed, so the derived seed is a
 * 64-bit hash folded to 32 bits; two distinct names collide with probability
 * 2^-32 per pair, which is the price of using GSL's well-tested generator.
 */
#ifndef CS_RNG_H
#define CS_RNG_H

#include <glib.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>

/* Returns the 64-bit stream seed for (seed, name). Pure; same inputs, same value. */
uint64_t cs_rng_stream_seed(uint64_t seed, const char *name);

/* Returns a new generator for the stream (free with gsl_rng_free). */
gsl_rng *cs_rng_stream_new(uint64_t seed, const char *name);

/* The state of GSL's mt19937 (its rng/mt.c: the 624 words and the index of
 * the next one), the reference Mersenne Twister of Matsumoto and Nishimura. */
typedef struct {
  unsigned long mt[624];
  int mti;
} CsMt19937State;

/* Regenerates the 624 words as GSL's mt_get does when they are used up
 * (rng.c), without its branch on each word's low bit. */
void cs_rng_mt19937_refill(CsMt19937State *st);

/* gsl_rng_uniform(r): the same number and the same change of r's state. For
 * an mt19937 generator (checked by type and state size) the draw is made
 * here as GSL's mt_get makes it, instead of through two indirect calls and a
 * regeneration that mispredicts every other word (10 % of a run's cycles
 * in GSL); any other generator goes to GSL. tests/sim/test_stats.c compares
 * millions of draws, mixed with GSL's own, against GSL. */
static inline double cs_rng_uniform(const gsl_rng *r)
{
  if (G_LIKELY(r->type == gsl_rng_mt19937 && r->type->size == sizeof(CsMt19937State))) {
    CsMt19937State *st = r->state;
    if (G_UNLIKELY(st->mti >= 624))
      cs_rng_mt19937_refill(st);
    unsigned long k = st->mt[st->mti++];
    k ^= (k >> 11);
    k ^= (k << 7) & 0x9d2c5680UL;
    k ^= (k << 15) & 0xefc60000UL;
    k ^= (k >> 18);
    return k / 4294967296.0;
  }
  return gsl_rng_uniform(r);
}

/* An exponential draw of mean mu from r: GSL's gsl_ran_exponential (inverse
 * CDF of one uniform, -mu log(1 - u)) computed with log instead of log1p,
 * which is 2.7 times faster and the largest single cost of an arrival.
 * For the streams of cs_rng_stream_new (mt19937, u = k / 2^32) 1 - u is
 * exact, so both are the log of the same number within an ulp: draws
 * agree to 1e-16 relative and, for means up to 10 s, round to the same
 * nanosecond (tests/sim/test_stats.c; at a 60 s mean about one draw in a
 * million moves by 1 ns). */
static inline double cs_rng_exponential(const gsl_rng *r, double mu)
{
  return -mu * log(1.0 - cs_rng_uniform(r));
}

#endif
