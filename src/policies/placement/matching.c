/* Exact minimum-weight maximum-cardinality matching by dynamic programming
 * over node subsets; see matching.h for the contract and the tie rule. */
#include "matching.h"

#include <math.h>

#include "clustersim/placement.h"

/* TRUE when weight a is smaller than b by more than the tie tolerance. */
static gboolean lighter(double a, double b)
{
  double scale = MAX(1.0, MAX(fabs(a), fabs(b)));
  return a < b - 1e-9 * scale;
}

int cs_min_weight_matching(int n, const double *weight, int *mate, double *total_weight,
                           GError **error)
{
  if (n < 0 || n > CS_MATCHING_MAX_NODES) {
    g_set_error(error, CS_ERROR, CS_ERROR_POLICY,
                "matching: %d nodes, at most %d supported", n, CS_MATCHING_MAX_NODES);
    return -1;
  }
  for (int i = 0; i < n; i++)
    mate[i] = -1;
  if (total_weight)
    *total_weight = 0.0;
  if (n < 2)
    return 0;

  /* For every subset S of nodes, the best matching of S: its cardinality,
   * weight and what it does with the lowest node of S (partner or -1). Every
   * subproblem removes the lowest node, so increasing subset order is a valid
   * evaluation order. */
  size_t n_sets = (size_t)1 << n;
  gint8 *card = g_new(gint8, n_sets);
  gint8 *choice = g_new(gint8, n_sets);
  double *wsum = g_new(double, n_sets);
  card[0] = 0;
  choice[0] = -1;
  wsum[0] = 0.0;
  for (size_t set = 1; set < n_sets; set++) {
    int i = __builtin_ctzll((unsigned long long)set);
    size_t without_i = set & ~((size_t)1 << i);
    int best_card = -1, best_choice = -1;
    double best_w = 0.0;
    /* Partners first, in increasing order, then "unmatched": with strict
     * improvement only, the earliest of tied options is kept (matching.h). */
    for (int j = i + 1; j < n; j++) {
      if (!(set & ((size_t)1 << j)))
        continue;
      double w = weight[i * n + j];
      if (!isfinite(w))
        continue;
      size_t rest = without_i & ~((size_t)1 << j);
      int c = card[rest] + 1;
      double tw = w + wsum[rest];
      if (c > best_card || (c == best_card && lighter(tw, best_w))) {
        best_card = c;
        best_w = tw;
        best_choice = j;
      }
    }
    int c = card[without_i];
    if (c > best_card || (c == best_card && lighter(wsum[without_i], best_w))) {
      best_card = c;
      best_w = wsum[without_i];
      best_choice = -1;
    }
    card[set] = (gint8)best_card;
    wsum[set] = best_w;
    choice[set] = (gint8)best_choice;
  }

  /* Walk the choices down from the full set. */
  size_t set = n_sets - 1;
  int pairs = card[set];
  if (total_weight)
    *total_weight = wsum[set];
  while (set) {
    int i = __builtin_ctzll((unsigned long long)set);
    int j = choice[set];
    set &= ~((size_t)1 << i);
    if (j >= 0) {
      mate[i] = j;
      mate[j] = i;
      set &= ~((size_t)1 << j);
    }
  }
  g_free(card);
  g_free(choice);
  g_free(wsum);
  return pairs;
}
