/* Sorted, delta-encoded blocks of samples; see samples.h.
 *
 * Block encoding, one entry per distinct value in ascending order:
 *   varint((value - previous) << 1 | (weight != 1)), then varint(weight) if
 *   the flag is set; "previous" is 0 for the first entry. A varint here is
 *   prefix-coded (put_varint): its length in unary in the first byte's low
 *   bits, then the value, 7 bits a byte up to 8 bytes (2^56), so exactly as
 *   long as the usual 7-bits-and-a-continuation-bit varint; 9 bytes (0xff
 *   and the 8 bytes of the value) above, where that takes 9 or 10. It is
 *   written with one store and read with one load, without a loop.
 * Every INDEX_STEP-th entry is indexed (its value, the weight up to it, the
 * byte offset after it): the index alone bounds the samples <= v to within
 * INDEX_STEP entries, and counting them exactly decodes at most those.
 *
 * A block is one piece of memory: its record, its encoding, its index.
 * Pieces come from cs_slab_alloc (slab.h): 2 MB slabs shared by all the
 * sets of a thread and advised as transparent huge pages, one fault instead
 * of 512 where the system has them. A block is encoded straight into the
 * slab's free end when it has room for the largest encoding, else in the
 * flush scratch and copied. Each block had three allocations of its own
 * before, then chunks per set (64 KB doubling up to 2 MB); the first touch
 * of that fresh memory, a page fault every 4 KB, took 4-9 % of a long run's
 * time on a virtual machine, and each set's half-used last chunk was more
 * huge pages to clear (docs/performance.md). */
#include "samples.h"
#include "slab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_STEP 64
#define MAX_VALUE ((int64_t)1 << 62)

typedef struct {
  int64_t value;      /* the entry's value */
  int64_t through;    /* weight of the entries up to and including it */
  uint32_t offset;    /* byte offset of the entry after it */
} IndexPoint;

struct CsSamplesBlock {
  guint8 *data;
  size_t len;
  int64_t min, max, total;
  IndexPoint *index;
  int n_index;
};

/* Working memory of a flush, one per thread and reused: allocating and
 * freeing these ~700 KB at every block made glibc return and fault in the
 * pages each time (5 % of a run's cycles in page faults). */
typedef struct {
  int64_t values[CS_SAMPLES_BLOCK], weights[CS_SAMPLES_BLOCK];
  /* value - min, sorted by sort_keys32; one more for a sentinel past the end */
  uint32_t keys[2][CS_SAMPLES_BLOCK + 1];
  /* Radix histograms (RADIX_BITS 12); a block's counts and offsets are at
   * most CS_SAMPLES_BLOCK, which 16 bits hold: half the memory to clear. */
  uint16_t count[6][1 << 12];
  /* Worst case: 9 bytes of delta, 9 of weight, and room for an 8-byte store. */
  guint8 encoded[CS_SAMPLES_BLOCK * 18 + 8];
  IndexPoint index[CS_SAMPLES_BLOCK / INDEX_STEP + 1];
} FlushScratch;

G_STATIC_ASSERT(CS_SAMPLES_BLOCK <= UINT16_MAX);
/* A block is one slab piece: the largest (its record, the scratch's whole
 * encoding, which bounds the in-place one too, 8 bytes of padding, the
 * whole index) fits in one. */
G_STATIC_ASSERT(sizeof(struct CsSamplesBlock) + sizeof(((FlushScratch *)0)->encoded) + 8 +
                  sizeof(((FlushScratch *)0)->index) <= CS_SLAB_MAX_PIECE);

/* A piece of a slab (slab.h): its ~700 KB in a huge page, not 180 faults. */
G_STATIC_ASSERT(sizeof(FlushScratch) <= CS_SLAB_MAX_PIECE);
static GPrivate flush_scratch = G_PRIVATE_INIT(cs_slab_free);

static FlushScratch *scratch(void)
{
  FlushScratch *f = g_private_get(&flush_scratch);
  if (!f) {
    f = cs_slab_alloc(sizeof *f);
    g_private_set(&flush_scratch, f);
  }
  return f;
}

static int64_t *buffer_grow(int64_t *buf, int cap, int new_cap)
{
  if (new_cap < CS_SAMPLES_BLOCK)
    return g_renew(int64_t, buf, new_cap);
  int64_t *grown = cs_slab_alloc(sizeof(int64_t) * CS_SAMPLES_BLOCK);
  if (cap > 0)
    memcpy(grown, buf, sizeof(int64_t) * (size_t)cap);
  g_free(buf);
  return grown;
}

static void buffer_release(int64_t *buf, int cap)
{
  if (cap == CS_SAMPLES_BLOCK)
    cs_slab_free(buf);
  else
    g_free(buf);
}

CsSamples *cs_samples_new(gboolean weighted, double sketch_error)
{
  g_return_val_if_fail(sketch_error >= 0.0 && sketch_error < 0.5, NULL);
  CsSamples *s = g_new0(CsSamples, 1);
  s->weighted = weighted;
  s->blocks = g_ptr_array_new_with_free_func(cs_slab_free);
  s->max = INT64_MIN;
  s->buf_min = INT64_MAX;
  s->buf_max = INT64_MIN;
  s->sketch_min = INT64_MAX;
  if (sketch_error > 0.0) {
    s->sketch_error = sketch_error;
    s->log_gamma = log((1.0 + sketch_error) / (1.0 - sketch_error));
  }
  return s;
}

void cs_samples_free(CsSamples *s)
{
  if (!s)
    return;
  g_ptr_array_unref(s->blocks);
  buffer_release(s->values, s->cap);
  buffer_release(s->weights, s->weighted ? s->cap : 0);
  g_free(s->bucket);
  g_free(s);
}

gboolean cs_samples_make_room(CsSamples *s)
{
  if (s->sketch_error > 0.0)
    return FALSE;
  if (s->cap < CS_SAMPLES_BLOCK) {
    /* Small sets stay small; a buffer at its full size (128 KB) is a piece
     * of a slab, like the blocks (buffer_release tells them apart). */
    int cap = s->cap ? s->cap * 4 : 256;
    s->values = buffer_grow(s->values, s->cap, cap);
    if (s->weighted) {
      s->weights = buffer_grow(s->weights, s->cap, cap);
      s->weighted_cap = cap;
    }
    s->cap = cap;
  } else {
    cs_samples_flush(s);
  }
  return TRUE;
}

void cs_samples_add_many_slow(CsSamples *s, const int64_t *values, int k)
{
  while (k > 0) {
    if (s->n == s->cap && !cs_samples_make_room(s)) {
      for (int i = 0; i < k; i++)
        cs_samples_sketch_add(s, values[i], 1);
      return;
    }
    /* What fits in the buffer, by the fast paths. */
    int m = MIN(k, s->cap - s->n);
    if (s->weighted)
      for (int i = 0; i < m; i++)
        cs_samples_add_weighted(s, values[i], 1);
    else
      cs_samples_add_many(s, values, m);
    values += m;
    k -= m;
  }
}

void cs_samples_add_weighted_slow(CsSamples *s, int64_t value, int64_t weight)
{
  g_return_if_fail(s->weighted && weight >= 1);
  if (s->sketch_error > 0.0) {
    cs_samples_sketch_add(s, value, weight);
    return;
  }
  if (s->n == s->cap)
    cs_samples_make_room(s);
  cs_samples_add_weighted(s, value, weight);
}

#define RADIX_BITS 12
#define RADIX (1 << RADIX_BITS)

/* LSD radix sort of the buffer's n values (and weights alongside, when not
 * NULL), all in [min, max]: keys are value - min, RADIX_BITS a pass, as
 * many passes as the range needs (two for a block of latencies within 16 ms
 * of one another, three within 68 s), a pass whose digit is the same
 * everywhere skipped, all histograms from one read, buffers swapped instead
 * of copied, and *sorted_v and *sorted_w left pointing where the last pass
 * wrote (the buffer or the scratch). */
static void sort_block(int64_t *v, int64_t *w, int n, int64_t min, int64_t max, FlushScratch *f,
                       const int64_t **sorted_v, const int64_t **sorted_w)
{
  *sorted_v = v;
  *sorted_w = w;
  uint64_t range = (uint64_t)(max - min);
  int passes = 0;
  while (passes < 6 && (range >> (RADIX_BITS * passes)) > 0)
    passes++;
  if (passes == 0)
    return;
  G_STATIC_ASSERT(RADIX == G_N_ELEMENTS(f->count[0]));
  uint16_t (*count)[RADIX] = f->count;
  memset(count, 0, sizeof(uint16_t[RADIX]) * (size_t)passes);
  for (int i = 0; i < n; i++) {
    uint64_t key = (uint64_t)(v[i] - min);
    for (int p = 0; p < passes; p++)
      count[p][(key >> (RADIX_BITS * p)) & (RADIX - 1)]++;
  }
  int64_t *sv = v, *sw = w, *dv = f->values, *dw = w ? f->weights : NULL;
  for (int p = 0; p < passes; p++) {
    int shift = RADIX_BITS * p;
    if (count[p][((uint64_t)(sv[0] - min) >> shift) & (RADIX - 1)] == n)
      continue; /* one digit value: the order stands */
    uint16_t *to = count[p];
    uint32_t at = 0;
    for (int d = 0; d < RADIX; d++) {
      uint32_t c = to[d];
      to[d] = (uint16_t)at;
      at += c;
    }
    for (int i = 0; i < n; i++) {
      uint32_t k = to[((uint64_t)(sv[i] - min) >> shift) & (RADIX - 1)]++;
      dv[k] = sv[i];
      if (sw)
        dw[k] = sw[i];
    }
    int64_t *t = sv;
    sv = dv;
    dv = t;
    t = sw;
    sw = dw;
    dw = t;
  }
  *sorted_v = sv;
  *sorted_w = sw;
}

/* One counting-sort pass of the 32-bit keys src[0..n) into dst by the
 * digit (key >> shift) & mask, to[] holding the digits' first offsets.
 * Inlined with constant shift 0 or mask UINT32_MAX for the first and last
 * passes (one operation less a key), and unrolled by four. */
static inline void scatter32(const uint32_t *restrict src, uint32_t *restrict dst, int n,
                             uint16_t *restrict to, int shift, uint32_t mask)
{
  int i = 0;
  for (; i + 4 <= n; i += 4)
    for (int u = 0; u < 4; u++) /* unrolled by the compiler */
      dst[to[(src[i + u] >> shift) & mask]++] = src[i + u];
  for (; i < n; i++)
    dst[to[(src[i] >> shift) & mask]++] = src[i];
}

/* The common case of sort_block, faster: an unweighted block whose values
 * span less than 2^32 ns (4.3 s) sorts their 32-bit keys value - min, half
 * the memory to move, in passes of at most RADIX_BITS bits each, as few as
 * the span needs (two up to 2^24, three above), the keys and all histograms
 * written in one read with the passes unrolled. Returns the sorted keys (in
 * the scratch), followed by a sentinel that differs from the last, and sets
 * *key_sum to the keys' sum (the buffer's sum is min x n plus it). */
static const uint32_t *sort_keys32(const int64_t *v, int n, int64_t min, uint32_t span,
                                   FlushScratch *f, uint64_t *key_sum)
{
  uint32_t *sk = f->keys[0], *dk = f->keys[1];
  int bits = span ? 32 - __builtin_clz(span) : 0;
  int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
  int digit = passes ? (bits + passes - 1) / passes : 0;
  uint32_t mask = ((uint32_t)1 << digit) - 1;
  uint16_t *c0 = f->count[0], *c1 = c0 + mask + 1, *c2 = c1 + mask + 1;
  memset(c0, 0, sizeof(uint16_t) * ((size_t)mask + 1) * (size_t)passes);
  uint64_t sum = 0;
  switch (passes) {
  case 0:
    for (int i = 0; i < n; i++)
      sk[i] = 0;
    break;
  case 1:
    for (int i = 0; i < n; i++) {
      uint32_t k = (uint32_t)(v[i] - min);
      sk[i] = k;
      sum += k;
      c0[k]++;
    }
    break;
  case 2:
    for (int i = 0; i < n; i++) {
      uint32_t k = (uint32_t)(v[i] - min);
      sk[i] = k;
      sum += k;
      c0[k & mask]++;
      c1[k >> digit]++;
    }
    break;
  default:
    for (int i = 0; i < n; i++) {
      uint32_t k = (uint32_t)(v[i] - min);
      sk[i] = k;
      sum += k;
      c0[k & mask]++;
      c1[(k >> digit) & mask]++;
      c2[k >> 2 * digit]++;
    }
  }
  *key_sum = sum;
  uint16_t *hist[3] = { c0, c1, c2 };
  for (int p = 0; p < passes; p++) {
    int shift = digit * p;
    uint16_t *to = hist[p];
    if (to[(sk[0] >> shift) & mask] == n)
      continue; /* one digit value: the order stands */
    uint32_t at = 0;
    for (uint32_t d = 0; d <= mask; d += 2) { /* mask + 1: a power of 2, >= 2 */
      uint32_t c0 = to[d], c1 = to[d + 1];
      to[d] = (uint16_t)at;
      to[d + 1] = (uint16_t)(at + c0);
      at += c0 + c1;
    }
    if (p == passes - 1)
      scatter32(sk, dk, n, to, shift, UINT32_MAX); /* the top digit: no mask */
    else if (p == 0)
      scatter32(sk, dk, n, to, 0, mask);
    else
      scatter32(sk, dk, n, to, shift, mask);
    uint32_t *t = sk;
    sk = dk;
    dk = t;
  }
  sk[n] = ~sk[n - 1];
  return sk;
}

/* By the index of the highest set bit of x: a varint's length - 1. */
static const uint8_t varint_shift[64] = {
  0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4,
  4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8,
};

/* Writes x < 2^56 as a varint of L bytes (the fewest with 7 x L bits for
 * x): (x << L) | (2^(L-1) - 1) in little-endian order, L - 1 one bits and
 * a zero before the value, with one 8-byte store: the buffer has room for
 * it past the end. No branch on the length (a sorted block's differences
 * take 1 to 3 bytes at random, which a branch mispredicts). */
static inline guint8 *put_varint56(guint8 *p, uint64_t x)
{
  int shift = varint_shift[__builtin_clzll(x | 1) ^ 63]; /* ^ 63: the compiler's bsr as is */
  uint64_t b = GUINT64_TO_LE((((x << 1) | 1) << shift) - 1);
  memcpy(p, &b, sizeof b);
  return p + shift + 1;
}

/* Any x: below 2^56 as above, else 0xff and the 8 bytes of x. */
static inline guint8 *put_varint(guint8 *p, uint64_t x)
{
  if (G_LIKELY(x < ((uint64_t)1 << 56)))
    return put_varint56(p, x);
  uint64_t b = GUINT64_TO_LE(x);
  *p = 0xff;
  memcpy(p + 1, &b, sizeof b);
  return p + 9;
}

/* Reads the varint at p, the block's data ending at end: with one 8-byte
 * load, from a copy padded with zeros for the last bytes of a block. */
static inline const guint8 *get_varint(const guint8 *p, const guint8 *end, uint64_t *x)
{
  static const uint64_t keep[9] = { /* by len: its 8 x len bits */
    0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, ~0ull,
  };
  guint8 pad[9 + 8] = { 0 };
  const guint8 *q = p;
  if (G_UNLIKELY(end - p < 9))
    q = memcpy(pad, p, (size_t)(end - p));
  uint64_t b;
  if (G_UNLIKELY(*q == 0xff)) {
    memcpy(&b, q + 1, sizeof b);
    *x = GUINT64_FROM_LE(b);
    return p + 9;
  }
  int len = __builtin_ctz(~(unsigned)*q) + 1;
  memcpy(&b, q, sizeof b);
  *x = (GUINT64_FROM_LE(b) & keep[len]) >> len; /* the value, without the length */
  return p + len;
}

/* Encodes the sorted keys[0..n) (followed by a sentinel that differs from
 * keys[n - 1]) of an unweighted block, values min + key, at p; fills
 * index[] (every INDEX_STEP-th entry from the first) and *n_index. Returns
 * the end. The weight through an entry is the number of keys through it. */
static guint8 *encode_keys(const uint32_t *keys, int n, int64_t min, guint8 *p, IndexPoint *index,
                           int *n_index)
{
  const guint8 *start = p;
  /* The first entry: its value whole, and indexed. */
  uint32_t prev = keys[0];
  int i = 1;
  while (keys[i] == prev)
    i++;
  p = put_varint(p, (uint64_t)(min + prev) << 1 | (i > 1));
  if (i > 1)
    p = put_varint56(p, (uint64_t)i);
  index[0] = (IndexPoint){ .value = min + prev, .through = i, .offset = (uint32_t)(p - start) };
  int ni = 1, until = INDEX_STEP - 1;
  for (const uint32_t *kp = keys + i, *end = keys + n; kp < end;) {
    uint32_t k = *kp++;
    uint64_t x = (uint64_t)(k - prev) << 1;
    if (G_LIKELY(*kp != k)) {
      p = put_varint56(p, x);
    } else {
      const uint32_t *from = kp - 1;
      while (*++kp == k)
        ;
      p = put_varint56(p, x | 1);
      p = put_varint56(p, (uint64_t)(kp - from));
    }
    prev = k;
    if (G_UNLIKELY(--until < 0)) {
      index[ni++] = (IndexPoint){ .value = min + k, .through = kp - keys,
                                  .offset = (uint32_t)(p - start) };
      until = INDEX_STEP - 1;
    }
  }
  *n_index = ni;
  return p;
}

void cs_samples_flush(CsSamples *s)
{
  int n = s->n;
  if (n == 0)
    return;
  g_assert(n <= CS_SAMPLES_BLOCK);
  /* Durations are never negative nor centuries long; clamping keeps the
   * encoding sound should one ever be (the sum keeps the values given). */
  int64_t min = s->buf_min, max = s->buf_max;
  s->max = MAX(s->max, max);
  __int128 sum = 0, given = 0; /* of the values sorted, and as given */
  gboolean clamped = G_UNLIKELY(min < 0 || max >= MAX_VALUE);
  if (clamped) {
    min = MAX_VALUE;
    max = 0;
    for (int i = 0; i < n; i++) {
      given += (__int128)s->values[i] * (s->weights ? s->weights[i] : 1);
      if (s->values[i] < 0 || s->values[i] >= MAX_VALUE) {
        g_critical("cs_samples: value %" G_GINT64_FORMAT " outside [0, 2^62)", s->values[i]);
        s->values[i] = CLAMP(s->values[i], 0, MAX_VALUE - 1);
      }
      min = MIN(min, s->values[i]);
      max = MAX(max, s->values[i]);
    }
  }
  FlushScratch *f = scratch();
  CsSamplesBlock b;
  guint8 *data;
  int n_index;
  if (!s->weights && (uint64_t)(max - min) <= UINT32_MAX) {
    uint64_t key_sum;
    const uint32_t *keys = sort_keys32(s->values, n, min, (uint32_t)(max - min), f, &key_sum);
    sum = (__int128)min * n + key_sum;
    b.min = min + keys[0];
    b.max = min + keys[n - 1];
    b.total = n;
    /* Each entry takes at most 5 + 3 bytes (a difference below 2^32,
     * shifted for the weight flag: below 2^33; a weight below 2^21), the
     * first 9 + 3: written in place, after the block's record, when the
     * slab's free end has room for the record, that (and 8 bytes for the
     * last store, 8 of padding) and the largest index, else in the scratch
     * and copied. */
    size_t room, bound = sizeof b + (size_t)n * 8 + 4 + 8 + 8 + sizeof f->index;
    guint8 *end = cs_slab_free_end(&room);
    data = room >= bound ? end + sizeof b : f->encoded;
    b.len = (size_t)(encode_keys(keys, n, min, data, f->index, &n_index) - data);
  } else {
    /* Wide or weighted: the same entries as encode_keys's, from values. */
    const int64_t *values, *weights;
    sort_block(s->values, s->weights, n, min, max, f, &values, &weights);
    b.min = values[0];
    b.max = values[n - 1];
    int64_t prev = 0, before = 0;
    guint8 *p = f->encoded;
    n_index = 0;
    for (int i = 0, until = 0; i < n;) {
      int64_t v = values[i], w = 0;
      do
        w += weights ? weights[i] : 1;
      while (++i < n && values[i] == v);
      sum += (__int128)v * w;
      p = put_varint(p, (uint64_t)(v - prev) << 1 | (w != 1));
      if (w != 1)
        p = put_varint(p, (uint64_t)w);
      before += w;
      if (until-- == 0) {
        f->index[n_index++] = (IndexPoint){ .value = v, .through = before,
                                            .offset = (uint32_t)(p - f->encoded) };
        until = INDEX_STEP - 1;
      }
      prev = v;
    }
    b.total = before;
    data = f->encoded;
    b.len = (size_t)(p - f->encoded);
  }
  /* One piece: the record, the encoding (to 8 bytes), the index. */
  size_t index_at = sizeof b + ((b.len + 7) & ~(size_t)7);
  size_t index_bytes = sizeof(IndexPoint) * (size_t)n_index, bytes = index_at + index_bytes;
  guint8 *piece = cs_slab_alloc(bytes);
  b.data = piece + sizeof b;
  if (b.data != data)
    memcpy(b.data, data, b.len);
  b.index = memcpy(piece + index_at, f->index, index_bytes);
  b.n_index = n_index;
  g_ptr_array_add(s->blocks, memcpy(piece, &b, sizeof b));
  s->block_bytes += bytes;
  s->sum += clamped ? given : sum;
  s->n = 0;
  s->buf_min = INT64_MAX;
  s->buf_max = INT64_MIN;
}

size_t cs_samples_bytes(const CsSamples *s)
{
  if (s->sketch_error > 0.0)
    return sizeof *s + sizeof(int64_t) * (size_t)s->n_buckets;
  size_t buffer = (size_t)s->cap * sizeof(int64_t) * (s->weighted ? 2 : 1);
  return sizeof *s + s->block_bytes + buffer + s->blocks->len * sizeof(gpointer);
}

/* The last index point of b with value <= v (b->min <= v). */
static int last_point_le(const CsSamplesBlock *b, int64_t v)
{
  int lo = 0, hi = b->n_index - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (b->index[mid].value <= v)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* An entry decoded by select_rank: its value, and the weight of its block's
 * decoded entries up to it. */
typedef struct {
  int64_t value, cum;
} Decoded;

/* The smallest v in [a, z] whose bound on the weight of the samples <= v
 * in blocks[0..n), from their indexes alone, reaches rank (z when none does
 * before). Between index points j and j + 1 the weight is at least that
 * through j (upper 0: the lower bound), and less than that through j + 1
 * (upper 1: the upper bound). */
static int64_t bisect_bound(const CsSamplesBlock *const *blocks, int n, int64_t a, int64_t z,
                            int64_t rank, int upper)
{
  while (a < z) {
    int64_t mid = a + (z - a) / 2, bound = 0;
    for (int i = 0; i < n; i++) {
      const CsSamplesBlock *b = blocks[i];
      if (mid >= b->max) {
        bound += b->total;
      } else if (mid >= b->min) {
        int j = last_point_le(b, mid) + upper;
        bound += j < b->n_index ? b->index[j].through : b->total;
      }
    }
    if (bound >= rank)
      z = mid;
    else
      a = mid + 1;
  }
  return a;
}

/* The rank-th smallest sample of blocks[0..n), all values in [lo, hi]:
 * bisections on the value with the indexes' bounds alone narrow it to
 * [a, z] (z: the lower bound reaches rank, so the count does; below a the
 * upper bound, so the count, stays under rank), which holds a few index
 * steps of each block; those entries are decoded once, the ones below a
 * counted, and a last bisection over [a, z] counts by binary searches in
 * them. Every count is exact where it decides. */
static int64_t select_rank(const CsSamplesBlock *const *blocks, int n, int64_t lo, int64_t hi,
                           int64_t rank, Decoded **dec, int *cap, int *first)
{
  int64_t z = bisect_bound(blocks, n, lo, hi, rank, 0);
  int64_t a = bisect_bound(blocks, n, lo, z, rank, 1);
  int64_t below = 0; /* weight of the samples < a */
  int n_dec = 0;
  for (int i = 0; i < n; i++) {
    const CsSamplesBlock *b = blocks[i];
    first[i] = n_dec;
    if (z < b->min)
      continue;
    if (a > b->max) {
      below += b->total;
      continue;
    }
    const guint8 *p = b->data, *end = b->data + b->len;
    int64_t value = 0, cum = 0;
    if (a > b->min) {
      const IndexPoint *ip = &b->index[last_point_le(b, a - 1)];
      p += ip->offset;
      value = ip->value;
      below += ip->through;
    }
    while (p < end) {
      uint64_t d, w = 1;
      p = get_varint(p, end, &d);
      if (d & 1)
        p = get_varint(p, end, &w);
      value += (int64_t)(d >> 1);
      if (value > z)
        break;
      if (value < a) {
        below += (int64_t)w;
      } else {
        if (n_dec == *cap)
          *dec = g_renew(Decoded, *dec, *cap *= 2);
        cum += (int64_t)w;
        (*dec)[n_dec++] = (Decoded){ value, cum };
      }
    }
  }
  first[n] = n_dec;
  const Decoded *e = *dec;
  while (a < z) {
    int64_t mid = a + (z - a) / 2, count = below;
    for (int i = 0; i < n; i++) {
      /* The weight of block i's decoded entries <= mid: the last one's cum. */
      int l = first[i], h = first[i + 1];
      while (l < h) {
        int m = l + (h - l) / 2;
        if (e[m].value <= mid)
          l = m + 1;
        else
          h = m;
      }
      if (l > first[i])
        count += e[l - 1].cum;
    }
    if (count >= rank)
      z = mid;
    else
      a = mid + 1;
  }
  return a;
}

void cs_samples_stats(CsSamples *const *sets, int n, CsLatencyStats *out)
{
  for (int i = 0; i < n; i++)
    if (sets[i] && sets[i]->sketch_error > 0.0) {
      cs_samples_sketch_stats(sets, n, out);
      return;
    }
  __int128 sum = 0;
  int64_t total = 0, lo = INT64_MAX, hi = INT64_MIN;
  GPtrArray *blocks = g_ptr_array_new();
  for (int i = 0; i < n; i++) {
    CsSamples *s = sets[i];
    if (!s || s->total == 0)
      continue;
    cs_samples_flush(s);
    sum += s->sum;
    total += s->total;
    hi = MAX(hi, s->max);
    for (guint k = 0; k < s->blocks->len; k++) {
      const CsSamplesBlock *b = g_ptr_array_index(s->blocks, k);
      lo = MIN(lo, b->min);
      g_ptr_array_add(blocks, (gpointer)b);
    }
  }
  if (total == 0) {
    out->p50 = out->p90 = out->p95 = out->p99 = out->max = out->mean = NAN;
    g_ptr_array_unref(blocks);
    return;
  }
  static const double pct[4] = { 50.0, 90.0, 95.0, 99.0 };
  double *dst[4] = { &out->p50, &out->p90, &out->p95, &out->p99 };
  int cap = 1024, *first = g_new(int, blocks->len + 1);
  Decoded *dec = g_new(Decoded, cap);
  for (int q = 0; q < 4; q++) {
    int64_t rank = (int64_t)ceil(pct[q] / 100.0 * (double)total);
    rank = MAX(rank, 1);
    lo = select_rank((const CsSamplesBlock *const *)blocks->pdata, (int)blocks->len, lo, hi, rank,
                     &dec, &cap, first);
    *dst[q] = lo / 1e6; /* ranks ascend: the next is not below */
  }
  out->max = hi / 1e6;
  out->mean = (double)sum / (double)total / 1e6;
  g_free(first);
  g_free(dec);
  g_ptr_array_unref(blocks);
}
