/* Random streams derived from one scenario seed and a stable stream name.
 *
 * Each entity that draws random numbers gets its own generator, seeded from
 * hash(scenario seed, stream name), e.g. "client/resnet50/arrivals". Streams
 * never share state, so adding a client leaves every other client's draws
 * unchanged, and results do not depend on the order entities are created.
 *
 * Generator (stream version 2, CS_RNG_STREAM_VERSION): xoshiro256** 1.0 of
 * Blackman and Vigna ("Scrambled linear pseudorandom number generators",
 * ACM TOMS 47(4), 2021), implemented here and nowhere else, so that no
 * result depends on a library's private layout. Why this one: 256 bits of
 * state (period 2^256 - 1), every one of its 64 output bits passes the
 * authors' and others' test batteries (BigCrush, PractRand), and a draw is
 * a few shifts, xors and two multiplications with no table and no branch
 * (mt19937 regenerated 624 words every 624 draws). A counter-based
 * generator (Philox) would add random access to any draw, which nothing
 * here needs, at a higher cost per draw (ten rounds of multiplications).
 *
 * Seeding: the stream's 64-bit seed (cs_rng_stream_seed) is expanded into
 * the four state words by four successive outputs of splitmix64, the
 * expansion the authors recommend. The seed is no longer folded to 32 bits
 * (version 1, GSL's mt19937, took a 32-bit seed): two stream names collide
 * with probability 2^-64 per pair, not 2^-32. splitmix64's output is a
 * bijection of its counter, so four successive outputs are never all zero,
 * the one state xoshiro must not start from.
 *
 * Numbers: a uniform is the top 53 bits of a draw times 2^-53, a multiple of
 * 2^-53 in [0, 1) (every double there of that grid equally likely).
 * Distributions drawn by GSL (gsl_ran_gamma) draw through cs_rng_type, a
 * gsl_rng_type defined here (GSL's public struct), whose get_double is that
 * uniform and whose get is the top 32 bits of a draw (max 2^32 - 1, the same
 * on every platform whatever width unsigned long has). So gsl_rng_uniform(r)
 * and cs_rng_uniform(r) are the same number and the same change of state.
 *
 * Reference outputs: tests/sim/test_stats.c checks the generator against
 * the outputs of the authors' reference implementation (as the Rust crate
 * rand_xoshiro publishes them in its tests) and whole streams against an
 * independent implementation (tests/sim/rng_reference.py).
 */
#ifndef CS_RNG_H
#define CS_RNG_H

#include <glib.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>

/* The version of the streams, recorded in summary.json ("rng_stream_version")
 * and in a sweep's description (sweep.json, shard.json): results of two
 * versions are other draws and do not compare run for run. 1: GSL's mt19937
 * with the 64-bit stream seed folded to 32 bits; 2: xoshiro256** above. */
#define CS_RNG_STREAM_VERSION 2

/* The state of one stream: xoshiro256**'s four words, never all zero. */
typedef struct {
  uint64_t s[4];
} CsRngState;

/* The generator's type for GSL: a gsl_rng of this type draws through the
 * functions of rng.c (see above). gsl_rng_alloc(&cs_rng_type) works, and
 * gsl_rng_set(r, seed) seeds as cs_rng_state_seed does. */
extern const gsl_rng_type cs_rng_type;

/* Returns the 64-bit stream seed for (seed, name). Pure; same inputs, same value. */
uint64_t cs_rng_stream_seed(uint64_t seed, const char *name);

/* Sets st from a 64-bit seed (splitmix64 expansion). Every seed is valid. */
void cs_rng_state_seed(CsRngState *st, uint64_t seed);

/* Returns a new generator of type cs_rng_type for the stream (free with
 * gsl_rng_free); aborts when out of memory. */
gsl_rng *cs_rng_stream_new(uint64_t seed, const char *name);

static inline uint64_t cs_rng_rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

/* Returns the next 64-bit output of st and advances it (xoshiro256**: the
 * scrambler is a rotation of the second word times 5, times 9; the linear
 * engine xors the words into each other, shifts one by 17 and rotates the
 * last by 45). */
static inline uint64_t cs_rng_next(CsRngState *st)
{
  uint64_t *w = st->s;
  uint64_t out = cs_rng_rotl(w[1] * 5, 7) * 9;
  uint64_t shifted = w[1] << 17;
  w[2] ^= w[0];
  w[3] ^= w[1];
  w[1] ^= w[2];
  w[0] ^= w[3];
  w[2] ^= shifted;
  w[3] = cs_rng_rotl(w[3], 45);
  return out;
}

/* The uniform of one 64-bit output: its top 53 bits times 2^-53, in [0, 1). */
static inline double cs_rng_to_unit(uint64_t x)
{
  return (double)(x >> 11) * 0x1.0p-53;
}

/* Returns the next 64 bits of a stream of cs_rng_stream_new (r of type
 * cs_rng_type: asserted). */
static inline uint64_t cs_rng_bits64(const gsl_rng *r)
{
  g_assert(r->type == &cs_rng_type);
  return cs_rng_next(r->state);
}

/* gsl_rng_uniform(r): the same number and the same change of r's state.
 * For the project's generator (cs_rng_type) the draw is made here, without
 * GSL's two indirect calls; any other generator goes to GSL. */
static inline double cs_rng_uniform(const gsl_rng *r)
{
  if (G_LIKELY(r->type == &cs_rng_type))
    return cs_rng_to_unit(cs_rng_next(r->state));
  return gsl_rng_uniform(r);
}

/* An exponential draw of mean mu from r: GSL's gsl_ran_exponential (inverse
 * CDF of one uniform, -mu log(1 - u)) computed with log instead of log1p,
 * which is 2.7 times faster and the largest single cost of an arrival.
 * For the streams of cs_rng_stream_new (u a multiple of 2^-53) 1 - u is
 * exact, so both are the log of the same number within an ulp: draws
 * agree to 1e-16 relative and, for means up to 10 s, round to the same
 * nanosecond (tests/sim/test_stats.c; at a 60 s mean about one draw in a
 * million moves by 1 ns). */
static inline double cs_rng_exponential(const gsl_rng *r, double mu)
{
  return -mu * log(1.0 - cs_rng_uniform(r));
}

#endif
