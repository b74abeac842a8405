/* Sorted, delta-encoded blocks of samples; see samples.h.
 *
 * Block encoding, one entry per distinct value in ascending order:
 *   varint((value - previous) << 1 | (weight != 1)), then varint(weight) if
 *   the flag is set; "previous" is 0 for the first entry.
 * Every INDEX_STEP-th entry is indexed (its value, the weight up to it, the
 * byte offset after it), so that counting the samples <= v decodes at most
 * INDEX_STEP entries after a binary search.
 *
 * Blocks (record, encoding and index) are carved from chunks of memory that
 * a set allocates as it grows (64 KB, doubling up to 2 MB) and frees with
 * the set. Each block had three allocations of its own before: the first
 * touch of that fresh memory, a page fault every 4 KB, took 4-9 % of a long
 * run's time on a virtual machine (docs/performance.md). 2 MB chunks are
 * aligned and advised to be transparent huge pages where the system has
 * them: one fault instead of 512; the smaller ones are pieces of slabs
 * shared by all the sets of a thread (slab.h), huge pages too. */
#define _DEFAULT_SOURCE /* madvise */
#include "samples.h"
#include "slab.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define INDEX_STEP 64
#define MAX_VALUE ((int64_t)1 << 62)
#define CHUNK_MIN ((size_t)64 << 10)
#define CHUNK_HUGE ((size_t)2 << 20)

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
  uint32_t keys[2][CS_SAMPLES_BLOCK];      /* value - min, sorted by sort_keys32 */
  uint32_t count[6][1 << 12];              /* radix histograms (RADIX_BITS 12) */
  /* Worst case: 10 bytes of delta, 10 of weight, and room for a 4-byte store. */
  guint8 encoded[CS_SAMPLES_BLOCK * 20 + 4];
  IndexPoint index[CS_SAMPLES_BLOCK / INDEX_STEP + 1];
} FlushScratch;

static GPrivate flush_scratch = G_PRIVATE_INIT(g_free);

static FlushScratch *scratch(void)
{
  FlushScratch *f = g_private_get(&flush_scratch);
  if (!f) {
    f = g_new(FlushScratch, 1);
    g_private_set(&flush_scratch, f);
  }
  return f;
}

/* A new chunk of size bytes (a multiple of CHUNK_MIN, or a block's own):
 * up to half a slab, a piece of a shared slab; larger, an allocation of its
 * own, 2 MB aligned (so that chunk_release tells the two apart: a slab's
 * pieces never start at a 2 MB boundary) and, at 2 MB, advised as a huge
 * page. */
static guint8 *chunk_new(size_t size)
{
  if (size <= CS_SLAB_MAX_PIECE)
    return cs_slab_alloc(size);
  void *p = NULL;
  if (posix_memalign(&p, CHUNK_HUGE, size) != 0)
    g_error("cs_samples: out of memory for a chunk of %zu bytes", size);
#ifdef MADV_HUGEPAGE
  if (size == CHUNK_HUGE)
    madvise(p, CHUNK_HUGE, MADV_HUGEPAGE); /* advice: refused or absent changes nothing */
#endif
  return p;
}

static void chunk_release(gpointer p)
{
  if ((uintptr_t)p % CHUNK_HUGE == 0)
    free(p);
  else
    cs_slab_free(p);
}

CsSamples *cs_samples_new(gboolean weighted, double sketch_error)
{
  g_return_val_if_fail(sketch_error >= 0.0 && sketch_error < 0.5, NULL);
  CsSamples *s = g_new0(CsSamples, 1);
  s->weighted = weighted;
  s->blocks = g_ptr_array_new();
  s->chunks = g_ptr_array_new_with_free_func(chunk_release);
  s->max = INT64_MIN;
  s->buf_min = INT64_MAX;
  s->buf_max = INT64_MIN;
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
  g_ptr_array_unref(s->chunks);
  g_free(s->values);
  g_free(s->weights);
  g_free(s->bucket);
  g_free(s);
}

/* len bytes (8-byte aligned) for a block, from the set's last chunk or a new one. */
static void *carve(CsSamples *s, size_t len)
{
  len = (len + 7) & ~(size_t)7;
  if (len > s->chunk_left) {
    size_t size = CLAMP(s->chunk_total, CHUNK_MIN, CHUNK_HUGE);
    if (len > size)
      size = len; /* a block larger than a chunk (wide values with weights): its own */
    s->chunk_free = chunk_new(size);
    s->chunk_left = size;
    s->chunk_total += size;
    g_ptr_array_add(s->chunks, s->chunk_free);
  }
  void *p = s->chunk_free;
  s->chunk_free += len;
  s->chunk_left -= len;
  return p;
}

void cs_samples_sketch_add(CsSamples *s, int64_t value, int64_t weight)
{
  s->sum += (__int128)value * weight;
  s->total += weight;
  if (value > s->max)
    s->max = value;
  if (value <= 0) {
    s->zeros += weight;
    return;
  }
  int i = (int)ceil(log((double)value) / s->log_gamma);
  if (s->n_buckets == 0) {
    s->first_bucket = i;
    s->n_buckets = 1;
    s->bucket = g_new0(int64_t, 1);
  } else if (i < s->first_bucket || i >= s->first_bucket + s->n_buckets) {
    int lo = MIN(i, s->first_bucket), hi = MAX(i, s->first_bucket + s->n_buckets - 1);
    int64_t *grown = g_new0(int64_t, hi - lo + 1);
    memcpy(grown + (s->first_bucket - lo), s->bucket, sizeof(int64_t) * (size_t)s->n_buckets);
    g_free(s->bucket);
    s->bucket = grown;
    s->first_bucket = lo;
    s->n_buckets = hi - lo + 1;
  }
  s->bucket[i - s->first_bucket] += weight;
}

/* Sketch percentiles of the union of sets (all of one relative error). */
static void sketch_stats(CsSamples *const *sets, int n, CsLatencyStats *out)
{
  int lo = INT_MAX, hi = INT_MIN;
  __int128 sum = 0;
  int64_t total = 0, zeros = 0, max = INT64_MIN;
  double log_gamma = 0.0;
  for (int i = 0; i < n; i++) {
    const CsSamples *s = sets[i];
    if (!s || s->total == 0)
      continue;
    g_return_if_fail(log_gamma == 0.0 || s->log_gamma == log_gamma);
    log_gamma = s->log_gamma;
    sum += s->sum;
    total += s->total;
    zeros += s->zeros;
    max = MAX(max, s->max);
    if (s->n_buckets > 0) {
      lo = MIN(lo, s->first_bucket);
      hi = MAX(hi, s->first_bucket + s->n_buckets - 1);
    }
  }
  if (total == 0) {
    out->p50 = out->p90 = out->p95 = out->p99 = out->max = out->mean = NAN;
    return;
  }
  int64_t *merged = g_new0(int64_t, hi >= lo ? hi - lo + 1 : 1);
  for (int i = 0; i < n; i++)
    for (int k = 0; sets[i] && k < sets[i]->n_buckets; k++)
      merged[sets[i]->first_bucket + k - lo] += sets[i]->bucket[k];
  static const double pct[4] = { 50.0, 90.0, 95.0, 99.0 };
  double *dst[4] = { &out->p50, &out->p90, &out->p95, &out->p99 };
  double gamma = exp(log_gamma);
  int64_t cum = zeros;
  int b = lo;
  for (int q = 0; q < 4; q++) {
    int64_t rank = MAX((int64_t)ceil(pct[q] / 100.0 * (double)total), 1);
    while (cum < rank && b <= hi)
      cum += merged[b++ - lo];
    /* The rank-th value is 0, or in bucket b - 1: (gamma^(b-2), gamma^(b-1)];
     * its midpoint in relative terms is within a of every value there. */
    *dst[q] = rank <= zeros ? 0.0 : 2.0 * exp(log_gamma * (b - 1)) / (gamma + 1.0) / 1e6;
  }
  out->max = max / 1e6;
  out->mean = (double)sum / (double)total / 1e6;
  g_free(merged);
}

gboolean cs_samples_make_room(CsSamples *s)
{
  if (s->sketch_error > 0.0)
    return FALSE;
  if (s->cap < CS_SAMPLES_BLOCK) {
    s->cap = s->cap ? s->cap * 4 : 256;
    s->values = g_renew(int64_t, s->values, s->cap);
    if (s->weighted)
      s->weights = g_renew(int64_t, s->weights, s->cap);
  } else {
    cs_samples_flush(s);
  }
  return TRUE;
}

void cs_samples_add_many(CsSamples *s, const int64_t *values, int k)
{
  while (k > 0) {
    if (s->n == s->cap && !cs_samples_make_room(s)) {
      for (int i = 0; i < k; i++)
        cs_samples_sketch_add(s, values[i], 1);
      return;
    }
    int m = MIN(k, s->cap - s->n);
    int64_t *dst = s->values + s->n, lo = s->buf_min, hi = s->buf_max;
    __int128 sum = 0;
    for (int i = 0; i < m; i++) {
      int64_t v = values[i];
      dst[i] = v;
      sum += v;
      lo = MIN(lo, v);
      hi = MAX(hi, v);
    }
    if (s->weighted)
      for (int i = 0; i < m; i++)
        s->weights[s->n + i] = 1;
    s->n += m;
    s->sum += sum;
    s->total += m;
    s->buf_min = lo;
    s->buf_max = hi;
    values += m;
    k -= m;
  }
}

void cs_samples_add_weighted(CsSamples *s, int64_t value, int64_t weight)
{
  g_return_if_fail(s->weighted && weight >= 1);
  if (s->sketch_error > 0.0) {
    cs_samples_sketch_add(s, value, weight);
    return;
  }
  cs_samples_add(s, value);
  s->weights[s->n - 1] = weight;
  s->sum += (__int128)value * (weight - 1);
  s->total += weight - 1;
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
  uint32_t (*count)[RADIX] = f->count;
  memset(count, 0, sizeof(uint32_t[RADIX]) * (size_t)passes);
  for (int i = 0; i < n; i++) {
    uint64_t key = (uint64_t)(v[i] - min);
    for (int p = 0; p < passes; p++)
      count[p][(key >> (RADIX_BITS * p)) & (RADIX - 1)]++;
  }
  int64_t *sv = v, *sw = w, *dv = f->values, *dw = w ? f->weights : NULL;
  for (int p = 0; p < passes; p++) {
    int shift = RADIX_BITS * p;
    if (count[p][((uint64_t)(sv[0] - min) >> shift) & (RADIX - 1)] == (uint32_t)n)
      continue; /* one digit value: the order stands */
    uint32_t *to = count[p], at = 0;
    for (int d = 0; d < RADIX; d++) {
      uint32_t c = to[d];
      to[d] = at;
      at += c;
    }
    if (sw) {
      for (int i = 0; i < n; i++) {
        uint32_t k = to[((uint64_t)(sv[i] - min) >> shift) & (RADIX - 1)]++;
        dv[k] = sv[i];
        dw[k] = sw[i];
      }
    } else {
      for (int i = 0; i < n; i++)
        dv[to[((uint64_t)(sv[i] - min) >> shift) & (RADIX - 1)]++] = sv[i];
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

/* The common case of sort_block, faster: an unweighted block whose values
 * span less than 2^32 ns (4.3 s) sorts their 32-bit keys value - min, half
 * the memory to move, in passes of at most RADIX_BITS bits each, as few as
 * the span needs (two up to 2^24, three above), the keys and all histograms
 * written in one read with the passes unrolled. Returns the sorted keys (in
 * the scratch). */
static const uint32_t *sort_keys32(const int64_t *v, int n, int64_t min, uint32_t span,
                                   FlushScratch *f)
{
  uint32_t *sk = f->keys[0], *dk = f->keys[1];
  int bits = span ? 32 - __builtin_clz(span) : 0;
  int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
  int digit = passes ? (bits + passes - 1) / passes : 0;
  uint32_t mask = ((uint32_t)1 << digit) - 1;
  uint32_t (*count)[RADIX] = f->count;
  memset(count, 0, sizeof(uint32_t) * ((size_t)1 << digit) * 3);
  uint32_t *c0 = (uint32_t *)count, *c1 = c0 + mask + 1, *c2 = c1 + mask + 1;
  switch (passes) {
  case 0:
    for (int i = 0; i < n; i++)
      sk[i] = 0;
    return sk;
  case 1:
    for (int i = 0; i < n; i++) {
      uint32_t k = (uint32_t)(v[i] - min);
      sk[i] = k;
      c0[k]++;
    }
    break;
  case 2:
    for (int i = 0; i < n; i++) {
      uint32_t k = (uint32_t)(v[i] - min);
      sk[i] = k;
      c0[k & mask]++;
      c1[k >> digit]++;
    }
    break;
  default:
    for (int i = 0; i < n; i++) {
      uint32_t k = (uint32_t)(v[i] - min);
      sk[i] = k;
      c0[k & mask]++;
      c1[(k >> digit) & mask]++;
      c2[k >> 2 * digit]++;
    }
  }
  uint32_t *hist[3] = { c0, c1, c2 };
  for (int p = 0; p < passes; p++) {
    int shift = digit * p;
    uint32_t *to = hist[p];
    if (to[(sk[0] >> shift) & mask] == (uint32_t)n)
      continue; /* one digit value: the order stands */
    uint32_t at = 0;
    for (uint32_t d = 0; d <= mask; d++) {
      uint32_t c = to[d];
      to[d] = at;
      at += c;
    }
    for (int i = 0; i < n; i++)
      dk[to[(sk[i] >> shift) & mask]++] = sk[i];
    uint32_t *t = sk;
    sk = dk;
    dk = t;
  }
  return sk;
}

/* Writes x as a varint (7 bits a byte, low first, the high bit set on every
 * byte but the last). Below 2^28, the common case, without a branch on the
 * length (a sorted block's differences take 1 to 3 bytes at random, which
 * the byte-at-a-time loop mispredicts): the four bytes are spread out of x
 * at once, the continuation bits for the length (from the highest set bit)
 * set, and stored together; the buffer has room for the store past the end. */
static inline guint8 *put_varint(guint8 *p, uint64_t x)
{
  /* By the count of leading zeros of a 32-bit value below 2^28 (4..31, and
   * 31 for 0): bytes, and their continuation bits. */
  static const uint8_t len_by_clz[32] = {
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
  };
  static const uint32_t cont_by_len[5] = { 0, 0, 0x80, 0x8080, 0x808080 };
  if (G_LIKELY(x < ((uint64_t)1 << 28))) {
    uint32_t y = (uint32_t)x;
    int len = len_by_clz[__builtin_clz(y | 1)];
    uint32_t b = (y & 0x7f) | ((y << 1) & 0x7f00) | ((y << 2) & 0x7f0000) | ((y << 3) & 0x7f000000);
    b = GUINT32_TO_LE(b | cont_by_len[len]);
    memcpy(p, &b, sizeof b);
    return p + len;
  }
  while (x >= 0x80) {
    *p++ = (guint8)(x | 0x80);
    x >>= 7;
  }
  *p++ = (guint8)x;
  return p;
}

static inline const guint8 *get_varint(const guint8 *p, uint64_t *x)
{
  uint64_t r = 0;
  int shift = 0;
  while (*p & 0x80) {
    r |= (uint64_t)(*p++ & 0x7f) << shift;
    shift += 7;
  }
  *x = r | ((uint64_t)*p++ << shift);
  return p;
}

/* The encoding of a block as it is written: one call per distinct value, in
 * ascending order, with its weight. */
typedef struct {
  guint8 *p;           /* where the next entry goes */
  IndexPoint *index;   /* the index points so far */
  int n_index;
  int until_index;     /* entries before the next index point */
  int64_t prev;        /* the previous entry's value (0 before the first) */
  int64_t before;      /* weight of the entries so far */
  const guint8 *start; /* the encoding's first byte */
} Encoder;

static inline void encode_entry(Encoder *enc, int64_t v, int64_t w)
{
  guint8 *p = put_varint(enc->p, (uint64_t)(v - enc->prev) << 1 | (w != 1));
  if (w != 1)
    p = put_varint(p, (uint64_t)w);
  enc->before += w;
  if (enc->until_index-- == 0) {
    enc->index[enc->n_index++] = (IndexPoint){ .value = v, .through = enc->before,
                                               .offset = (uint32_t)(p - enc->start) };
    enc->until_index = INDEX_STEP - 1;
  }
  enc->prev = v;
  enc->p = p;
}

void cs_samples_flush(CsSamples *s)
{
  int n = s->n;
  if (n == 0)
    return;
  g_assert(n <= CS_SAMPLES_BLOCK);
  /* Durations are never negative nor centuries long; clamping keeps the
   * encoding sound should one ever be. */
  int64_t min = s->buf_min, max = s->buf_max;
  s->max = MAX(s->max, max);
  if (G_UNLIKELY(min < 0 || max >= MAX_VALUE)) {
    min = MAX_VALUE;
    max = 0;
    for (int i = 0; i < n; i++) {
      if (s->values[i] < 0 || s->values[i] >= MAX_VALUE) {
        g_critical("cs_samples: value %" G_GINT64_FORMAT " outside [0, 2^62)", s->values[i]);
        s->values[i] = CLAMP(s->values[i], 0, MAX_VALUE - 1);
      }
      min = MIN(min, s->values[i]);
      max = MAX(max, s->values[i]);
    }
  }
  FlushScratch *f = scratch();
  Encoder enc = { .p = f->encoded, .index = f->index, .start = f->encoded };
  CsSamplesBlock *b = carve(s, sizeof *b);
  if (!s->weights && (uint64_t)(max - min) <= UINT32_MAX) {
    const uint32_t *keys = sort_keys32(s->values, n, min, (uint32_t)(max - min), f);
    b->min = min + keys[0];
    b->max = min + keys[n - 1];
    for (int i = 0; i < n;) {
      uint32_t k = keys[i];
      int from = i;
      while (++i < n && keys[i] == k)
        ;
      encode_entry(&enc, min + k, i - from);
    }
  } else {
    const int64_t *values, *weights;
    sort_block(s->values, s->weights, n, min, max, f, &values, &weights);
    b->min = values[0];
    b->max = values[n - 1];
    for (int i = 0; i < n;) {
      int64_t v = values[i], w = 0;
      if (weights) {
        do
          w += weights[i];
        while (++i < n && values[i] == v);
      } else {
        int from = i;
        while (++i < n && values[i] == v)
          ;
        w = i - from;
      }
      encode_entry(&enc, v, w);
    }
  }
  size_t index_bytes = sizeof(IndexPoint) * (size_t)enc.n_index;
  b->total = enc.before;
  b->len = (size_t)(enc.p - enc.start);
  b->data = memcpy(carve(s, b->len), enc.start, b->len);
  b->index = memcpy(carve(s, index_bytes), enc.index, index_bytes);
  b->n_index = enc.n_index;
  g_ptr_array_add(s->blocks, b);
  s->block_bytes += sizeof *b + b->len + index_bytes;
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

/* The weight of b's samples <= v. */
static int64_t count_le(const CsSamplesBlock *b, int64_t v)
{
  if (v < b->min)
    return 0;
  if (v >= b->max)
    return b->total;
  /* The last index point with value <= v (the first has b->min <= v). */
  int lo = 0, hi = b->n_index - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (b->index[mid].value <= v)
      lo = mid;
    else
      hi = mid - 1;
  }
  const IndexPoint *ip = &b->index[lo];
  const guint8 *p = b->data + ip->offset, *end = b->data + b->len;
  int64_t count = ip->through, value = ip->value;
  while (p < end) {
    uint64_t d, w = 1;
    p = get_varint(p, &d);
    if (d & 1)
      p = get_varint(p, &w);
    value += (int64_t)(d >> 1);
    if (value > v)
      break;
    count += (int64_t)w;
  }
  return count;
}

void cs_samples_stats(CsSamples *const *sets, int n, CsLatencyStats *out)
{
  for (int i = 0; i < n; i++)
    if (sets[i] && sets[i]->sketch_error > 0.0) {
      sketch_stats(sets, n, out);
      return;
    }
  __int128 sum = 0;
  int64_t total = 0, lo = INT64_MAX, hi = INT64_MIN;
  for (int i = 0; i < n; i++) {
    CsSamples *s = sets[i];
    if (!s || s->total == 0)
      continue;
    cs_samples_flush(s);
    sum += s->sum;
    total += s->total;
    hi = MAX(hi, s->max);
    for (guint k = 0; k < s->blocks->len; k++)
      lo = MIN(lo, ((const CsSamplesBlock *)g_ptr_array_index(s->blocks, k))->min);
  }
  if (total == 0) {
    out->p50 = out->p90 = out->p95 = out->p99 = out->max = out->mean = NAN;
    return;
  }
  static const double pct[4] = { 50.0, 90.0, 95.0, 99.0 };
  double *dst[4] = { &out->p50, &out->p90, &out->p95, &out->p99 };
  for (int q = 0; q < 4; q++) {
    int64_t rank = (int64_t)ceil(pct[q] / 100.0 * (double)total);
    rank = MAX(rank, 1);
    /* The smallest v with rank samples <= v: the rank-th in ascending order. */
    int64_t a = lo, z = hi;
    while (a < z) {
      int64_t mid = a + (z - a) / 2, count = 0;
      for (int i = 0; i < n; i++)
        for (guint k = 0; sets[i] && k < sets[i]->blocks->len; k++)
          count += count_le(g_ptr_array_index(sets[i]->blocks, k), mid);
      if (count >= rank)
        z = mid;
      else
        a = mid + 1;
    }
    *dst[q] = a / 1e6;
    lo = a; /* ranks ascend */
  }
  out->max = hi / 1e6;
  out->mean = (double)sum / (double)total / 1e6;
}
