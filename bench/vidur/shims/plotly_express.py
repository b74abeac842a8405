"""Stand-in for the `plotly_express` module (the old top-level alias of plotly.express).

Debian's python3-plotly has plotly.express but no top-level plotly_express. Vidur imports it in
vidur/metrics/{metrics_store,data_series,cdf_sketch}.py and calls px.line / px.bar /
px.histogram only when metrics_config.store_plots is true, to draw PNG figures (which would also
need kaleido, not in Debian). run_vidur.py passes --no-metrics_config_store_plots, so no figure
is made; the CSV files Vidur writes next to the figures do not depend on this module. Any call
fails loudly rather than draw something.
"""


def _no_plots(*args, **kwargs):
    raise RuntimeError("plotly_express stand-in: run Vidur with --no-metrics_config_store_plots")


line = bar = histogram = scatter = _no_plots
