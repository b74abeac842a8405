/* Stream seed derivation; see rng.h. */
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

gsl_rng *cs_rng_stream_new(uint64_t seed, const char *name)
{
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  uint64_t s = cs_rng_stream_seed(seed, name);
  unsigned long s32 = (unsigned long)((s ^ (s >> 32)) & 0xffffffffUL);
  /* GSL's mt19937 maps seed 0 to its default seed; keep distinct streams distinct. */
  gsl_rng_set(r, s32 ? s32 : 1UL);
  return r;
}

void cs_rng_mt19937_refill(CsMt19937State *st)
{
  enum { N = 624, M = 397 };
  const unsigned long upper = 0x80000000UL, lower = 0x7fffffffUL, magic = 0x9908b0dfUL;
  unsigned long *mt = st->mt;
  /* GSL's MAGIC(y) is magic when y is odd, else 0: a mask, not a branch. */
  int k = 0;
  for (; k < N - M; k++) {
    unsigned long y = (mt[k] & upper) | (mt[k + 1] & lower);
    mt[k] = mt[k + M] ^ (y >> 1) ^ (-(y & 1UL) & magic);
  }
  for (; k < N - 1; k++) {
    unsigned long y = (mt[k] & upper) | (mt[k + 1] & lower);
    mt[k] = mt[k + (M - N)] ^ (y >> 1) ^ (-(y & 1UL) & magic);
  }
  unsigned long y = (mt[N - 1] & upper) | (mt[0] & lower);
  mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ (-(y & 1UL) & magic);
  st->mti = 0;
}
