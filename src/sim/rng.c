/* Stream seed derivation and the generator's GSL type; see rng.h. */
#include "rng.h"

#include <math.h>

/* splitmix64 finaliser: spreads every input bit over the output. */
static uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t cs_rng_stream_seed(uint64_t seed, const char *name)
{
  /* FNV-1a over the name, then mixed with the seed. */
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    h ^= *c;
    h *= 0x100000001b3ULL;
  }
  return mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ h);
}

void cs_rng_state_seed(CsRngState *st, uint64_t seed)
{
  /* splitmix64: a counter stepped by the golden-ratio increment, each
   * value mixed; its outputs are the four words. */
  uint64_t counter = seed;
  for (int i = 0; i < 4; i++) {
    counter += 0x9e3779b97f4a7c15ULL;
    st->s[i] = mix64(counter);
  }
}

static void type_set(void *state, unsigned long seed)
{
  cs_rng_state_seed(state, (uint64_t)seed);
}

static unsigned long type_get(void *state)
{
  return (unsigned long)(cs_rng_next(state) >> 32);
}

static double type_get_double(void *state)
{
  return cs_rng_to_unit(cs_rng_next(state));
}

const gsl_rng_type cs_rng_type = {
  .name = "clustersim-xoshiro256**",
  .max = 0xffffffffUL,
  .min = 0,
  .size = sizeof(CsRngState),
  .set = type_set,
  .get = type_get,
  .get_double = type_get_double,
};

gsl_rng *cs_rng_stream_new(uint64_t seed, const char *name)
{
  gsl_rng *r = gsl_rng_alloc(&cs_rng_type);
  if (G_UNLIKELY(!r)) /* GSL's error handler may be off: NULL on no memory */
    g_error("out of memory for the random stream %s", name);
  /* Seeded here, not through gsl_rng_set, whose seed is an unsigned long
   * (32 bits on some platforms): the whole 64-bit stream seed counts. */
  cs_rng_state_seed(r->state, cs_rng_stream_seed(seed, name));
  return r;
}
