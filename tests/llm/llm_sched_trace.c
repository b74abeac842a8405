/* Runs one workload through the replica scheduler (src/llm/llm_sched.c)
 * and prints its trace, one line an iteration, for test_sched_vidur.py to
 * compare with Vidur's schedulers on the same workload.
 *
 * Input (stdin): "POLICY NUM_BLOCKS BLOCK_SIZE BATCH_SIZE_CAP MAX_BATCH_SIZE
 * WATERMARK_FRACTION MAX_TOKENS_IN_BATCH CHUNK_SIZE MAX_TOKENS STAGES N",
 * then N lines "ARRIVAL_ITERATION PROMPT OUTPUT" (arrivals non-decreasing).
 * An iteration: the requests arriving at or before its index are added;
 * batches are formed while fewer than STAGES are in flight (Vidur's
 * on_schedule loop; one with one stage); then the oldest in flight ends.
 * With none in flight, time jumps to the next arrival.
 * Output: "ITER b ID:TOKENS{p|d}... | rID (restarted while it formed, by
 * id)" for each batch formed, "ITER e | fID (first token) xID (finished)
 * | ALLOCATED_BLOCKS" for the batch that ended, "ITER none" when none is in
 * flight, and "end FINISHED". Exit 2 on bad input. */
#include <stdio.h>
#include <stdlib.h>

#include "llm/llm_sched.h"

static int cmp_id(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int main(void)
{
  char name[32];
  long long num_blocks;
  int block_size, cap, max_batch, mtib, chunk, max_tokens, stages, n;
  double wm;
  if (scanf("%31s %lld %d %d %d %lf %d %d %d %d %d", name, &num_blocks, &block_size, &cap,
            &max_batch, &wm, &mtib, &chunk, &max_tokens, &stages, &n) != 11 ||
      n < 0) {
    fprintf(stderr, "llm_sched_trace: stdin: expected the config line\n");
    return 2;
  }
  GError *e = NULL;
  CsLlmSchedPolicy policy;
  if (!cs_llm_sched_policy_parse(name, &policy, &e)) {
    fprintf(stderr, "llm_sched_trace: %s\n", e->message);
    return 2;
  }
  CsLlmSchedConfig c;
  cs_llm_sched_config_init(&c, policy);
  c.num_blocks = num_blocks;
  c.block_size = block_size;
  c.batch_size_cap = cap;
  c.max_batch_size = max_batch;
  c.watermark_blocks_fraction = wm;
  c.max_tokens_in_batch = mtib;
  c.chunk_size = chunk;
  c.max_tokens = max_tokens;
  c.num_stages = stages;
  CsLlmSched *s = cs_llm_sched_new(&c, &e);
  if (s == NULL) {
    fprintf(stderr, "llm_sched_trace: %s\n", e->message);
    return 2;
  }
  CsLlmRequest *req = g_new0(CsLlmRequest, n > 0 ? n : 1);
  int *arrive = g_new0(int, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    int prompt, output;
    if (scanf("%d %d %d", &arrive[i], &prompt, &output) != 3) {
      fprintf(stderr, "llm_sched_trace: stdin: request %d: expected 3 numbers\n", i);
      return 2;
    }
    /* Arrival key = index, as the workload's order is the arrival order. */
    cs_llm_request_init(&req[i], i, i, prompt, output);
  }
  int added = 0, finished = 0, iter = 0;
  while (finished < n && iter < 1000000) {
    while (added < n && arrive[added] <= iter) {
      if (!cs_llm_sched_add(s, &req[added], &e)) {
        fprintf(stderr, "llm_sched_trace: %s\n", e->message);
        return 2;
      }
      added++;
    }
    const CsLlmBatch *b;
    while (cs_llm_sched_n_in_flight(s) < stages && (b = cs_llm_sched_next_batch(s, NULL))) {
      printf("%d b", iter);
      for (int i = 0; i < b->n; i++)
        printf(" %lld:%d%c", (long long)b->entries[i].req->id, b->entries[i].tokens,
               b->entries[i].prefill ? 'p' : 'd');
      printf(" |");
      /* By id: the other side sees only who restarted, not in what order. */
      int64_t *ids = g_new(int64_t, b->n_restarted + 1);
      for (int i = 0; i < b->n_restarted; i++)
        ids[i] = b->restarted[i]->id;
      qsort(ids, (size_t)b->n_restarted, sizeof *ids, cmp_id);
      for (int i = 0; i < b->n_restarted; i++)
        printf(" r%lld", (long long)ids[i]);
      g_free(ids);
      printf("\n");
    }
    if (cs_llm_sched_n_in_flight(s) == 0) {
      printf("%d none\n", iter);
      if (added == n)
        break;
      iter = arrive[added];
      continue;
    }
    b = cs_llm_sched_batch_done(s, NULL);
    printf("%d e |", iter);
    for (int i = 0; i < b->n; i++) {
      if (b->entries[i].first_token)
        printf(" f%lld", (long long)b->entries[i].req->id);
      if (b->entries[i].finished) {
        printf(" x%lld", (long long)b->entries[i].req->id);
        finished++;
      }
    }
    printf(" | %lld\n", (long long)cs_llm_sched_allocated_blocks(s));
    iter++;
  }
  printf("end %d\n", finished);
  cs_llm_sched_free(s);
  g_free(req);
  g_free(arrive);
  return 0;
}
