"""Stand-in for ddsketch.ddsketch.DDSketch: keeps every value, exact quantiles.

Vidur uses DDSketch(relative_accuracy=0.001) only in vidur/metrics/cdf_sketch.py (CDFSketch),
for the distributions of per-batch metrics (batch_num_tokens, batch_size, batch execution time,
operation times) and per-token metrics (decode_token_execution_plus_preemption_time, i.e. TBT,
recorded only with --metrics_config_store_token_completion_metrics). It reads add(), count,
_count, _min, _max, avg, sum and get_quantile_value(q), and writes 101 quantiles
(q = 0, 0.01, ..., 1) to plots/<metric>.csv. The simulation itself (which batch runs when, every
time in request_metrics.csv) never reads a sketch.

Difference from the real package: DDSketch returns the representative value of the log-spaced
bucket that holds the element of rank floor(q * (count - 1)) (its key_at_rank with lower=True),
within 0.1% relative of the true value; this stand-in returns that element itself, exactly. So
quantiles in plots/*.csv may differ from a run with the real package by at most 0.1% relative.
"""
import math


class DDSketch:
    def __init__(self, relative_accuracy=0.01):
        self.relative_accuracy = relative_accuracy
        self._values = []
        self._sorted = True
        self._count = 0
        self._min = float("+inf")
        self._max = float("-inf")
        self._sum = 0.0

    def add(self, val, weight=1.0):
        if weight != 1.0:
            raise ValueError("DDSketch stand-in: only weight 1 is supported")
        self._values.append(val)
        self._sorted = False
        self._count += 1
        self._sum += val
        self._min = min(self._min, val)
        self._max = max(self._max, val)

    @property
    def count(self):
        return self._count

    @property
    def sum(self):
        return self._sum

    @property
    def avg(self):
        return self._sum / self._count

    def get_quantile_value(self, quantile):
        if quantile < 0 or quantile > 1 or self._count == 0:
            return None
        if not self._sorted:
            self._values.sort()
            self._sorted = True
        return self._values[int(math.floor(quantile * (self._count - 1)))]
