"""Stand-in for the `ray` package (distributed tasks and actors), absent from Debian.

Vidur's capacity search imports it in vidur/config_optimizer/config_explorer/
{capacity_search,ray_utils,config_explorer}.py to spread many searches over the cores of a
cluster: `ray.init` and `RayParallelRunner.map` (config_explorer.py) run one `CapacitySearch`
per job as a remote task, `CpuAssignmentManager` (ray_utils.py, a `@ray.remote` actor) hands
each task a core that `CapacitySearch` pins its simulations to with `taskset`, and
`release_cpu_core_id` gives it back through `ray.get`. None of it touches a search's result:
the search itself (`CapacitySearch.search`, the bisection) runs in one process and starts one
`python -m vidur.main` per probe.

bench/vidur/capacity_vidur.py builds `CapacitySearch` itself, one job at a time in one
process, without a core manager (`cpu_core_id` None, so no `taskset` and no `ray.get` in
`release_cpu_core_id`). So only the import-time use remains: `@ray.remote` on the
`CpuAssignmentManager` class, which here returns the class unchanged. Every other entry
raises, so a path that would need ray fails loudly instead of running differently.
"""


def remote(*args, **kwargs):
    # @ray.remote on a class or function (ray_utils.py): returned as is, never called here.
    if len(args) == 1 and not kwargs and callable(args[0]):
        return args[0]
    raise RuntimeError("ray stand-in: ray.remote with options is not available")


def _unavailable(*args, **kwargs):
    raise RuntimeError("ray stand-in: ray's tasks and actors are not available")


init = get = available_resources = _unavailable
