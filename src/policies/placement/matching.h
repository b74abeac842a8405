/* Minimum-weight maximum-cardinality matching on small general graphs.
 *
 * Usher's grouping (thesis 5.2.2) merges groups pairwise in rounds; each
 * round is a matching that first matches as many groups as possible and,
 * among those matchings, minimises the summed edge weight (networkx's
 * min_weight_matching in the thesis). Group counts are small (one node per
 * model of a scenario), so the solver here is an exact dynamic programme over
 * subsets: O(2^n * n) time and O(2^n) memory, n <= CS_MATCHING_MAX_NODES.
 *
 * Determinism: matchings whose weights differ by no more than a relative
 * 1e-9 are ties (weights are sums of measured percentages, and different
 * pairings of the same numbers differ only by rounding). Among ties the
 * matching that pairs the lowest-numbered node with its lowest-numbered
 * partner wins, recursively; leaving a node unmatched is tried after every
 * partner of it. So the result depends only on the node numbering.
 */
#ifndef CS_MATCHING_H
#define CS_MATCHING_H

#include <glib.h>

G_BEGIN_DECLS

#define CS_MATCHING_MAX_NODES 20

/* Computes a minimum-weight maximum-cardinality matching.
 *
 * n: number of nodes, 0 <= n <= CS_MATCHING_MAX_NODES.
 * weight: n*n row-major matrix, weight[i*n+j] for the edge {i,j}; only i < j is
 *   read; a non-finite entry (INFINITY or NAN) means "no edge". Weights may be
 *   negative.
 * mate: out, n entries: the partner of each node or -1 when unmatched.
 * total_weight: out (may be NULL): summed weight of the matched edges.
 * Returns the number of matched pairs, or -1 with error set (domain
 * CS_ERROR, code CS_ERROR_POLICY) when n is out of range. */
int cs_min_weight_matching(int n, const double *weight, int *mate, double *total_weight,
                           GError **error);

G_END_DECLS

#endif
