"""Stand-in for the `wandb` package (Weights & Biases logging), absent from Debian.

Vidur imports it in vidur/metrics/{metrics_store,data_series,series_average_meter,cdf_sketch}.py.
Every use there is behind `if wandb.run` (None here, so never taken), except `wandb.init`, which
Vidur calls only when both --metrics_config_wandb_project and --metrics_config_wandb_group are
set (run_vidur.py sets neither). Nothing Vidur writes to its output files passes through here.
"""
run = None


def init(*args, **kwargs):
    raise RuntimeError("wandb stand-in: logging to Weights & Biases is not available")


def log(*args, **kwargs):
    raise RuntimeError("wandb stand-in: called although wandb.run is None")


class Table:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("wandb stand-in: called although wandb.run is None")


class plot:
    line = bar = staticmethod(log)
