#!/usr/bin/env python3
"""Replicas through time (src/llm/llm_sim.c) against Vidur's own event loop.

    python3 tests/llm/test_sim_vidur.py SIM_TRACE_EXE [VIDUR_GIT] [N]

Runs N seeded random workloads per policy (default 200) through both
clustersim's simulation (SIM_TRACE_EXE: tests/llm/llm_sim_trace) and
Vidur's: its event classes (vidur/events/*), its heap ordered by (time,
event id) as vidur/simulator.py runs it, its round_robin and lor global
schedulers, its replica stage scheduler, its Request, Batch and BatchStage
and its replica schedulers, imported from Vidur's source at the commit
docs/research/vidur.md read (VIDUR_GIT, or CS_VIDUR_GIT; skipped, exit 77,
without one). Nothing of Vidur is copied: the modules are loaded from its
git directory at run time, with stand-ins for what they import but do not
use here (configs, the memory planner, the metrics store, the predictor).

The predictor's stand-in times a batch as llm_sim_trace's constant tables
do: 3 ms for prefills only, 2.5 ms for decodes only, 3.5 ms mixed, in
integer ns (Vidur adds times as given, so no float rounding enters). The
metrics store's stand-in records, at each batch end, Vidur's TBT for every
request of the batch that has started decoding: time - batch.scheduled_at
+ request.latest_iteration_scheduling_delay (metrics_store.py's
_update_per_token_execution_times), from Vidur's own request fields.
Arrivals are multiples of 0.5 ms, so they often fall on batch ends: the
order at one instant is exercised. With 2 pipeline stages (llm_sim_trace's
one layer a stage), the stand-in times a stage at half of those, the first
stage adding a send_recv of 0.5 ms, and Vidur's own replica stage
schedulers (one per stage) and stage events move batches through them.

Compared per request: replica, scheduled_at, prefill_completed_at,
completed_at, restarts, TBT count, sum and max; and the batch and restart
counts. clustersim's two documented differences in the replica schedulers
(src/llm/llm_sched.h) are applied on Vidur's side as test_sched_vidur.py
applies them.
"""
import heapq
import importlib.util
import os
import random
import shutil
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("test_sched_vidur",
                                              os.path.join(HERE, "test_sched_vidur.py"))
tsv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tsv)

PREFILL_NS, DECODE_NS, MIXED_NS = 3000000, 2500000, 3500000
SEND_NS = 500000
EVENT_FILES = ["base_event", "request_arrival_event", "global_schedule_event",
               "replica_schedule_event", "batch_stage_arrival_event",
               "replica_stage_schedule_event", "batch_stage_end_event", "batch_end_event"]


class VidurSim(tsv.Vidur):
    """test_sched_vidur's loader, plus the events, the global schedulers,
    the stage scheduler and BatchStage."""

    def __init__(self, root):
        super().__init__(root)
        ent = sys.modules["vidur.entities"]
        self.batch_stage = self.load("vidur.entities.batch_stage", "vidur/entities/batch_stage.py")
        ent.BatchStage, ent.ExecutionTime = self.batch_stage.BatchStage, object
        self.stage = self.load("vidur.scheduler.replica_stage_scheduler.replica_stage_schduler",
                               "vidur/scheduler/replica_stage_scheduler/replica_stage_schduler.py")
        sys.modules["vidur.types"] = types.ModuleType("vidur.types")
        self.load("vidur.types.base_int_enum", "vidur/types/base_int_enum.py")
        et = self.load("vidur.types.event_type", "vidur/types/event_type.py")
        sys.modules["vidur.types"].EventType = et.EventType
        metrics = types.ModuleType("vidur.metrics")
        metrics.MetricsStore = object
        sys.modules["vidur.metrics"] = metrics
        sys.modules["vidur.scheduler"].BaseGlobalScheduler = object
        sys.modules["vidur.config"].SimulationConfig = object
        sys.modules["vidur.execution_time_predictor"].ExecutionTimePredictorRegistry = object
        reg = types.ModuleType("vidur.scheduler.replica_scheduler.replica_scheduler_registry")
        reg.ReplicaSchedulerRegistry = object
        sys.modules[reg.__name__] = reg
        gs = "vidur/scheduler/global_scheduler/"
        self.gbase = self.load("vidur.scheduler.global_scheduler.base_global_scheduler",
                               gs + "base_global_scheduler.py")
        self.routers = {
            "round_robin": self.load("vidur.scheduler.global_scheduler.round_robin_global_scheduler",
                                     gs + "round_robin_global_scheduler.py").RoundRobinGlobalScheduler,
            "lor": self.load("vidur.scheduler.global_scheduler.lor_global_scheduler",
                             gs + "lor_global_scheduler.py").LORGlobalScheduler}
        events = types.ModuleType("vidur.events")
        sys.modules["vidur.events"] = events
        self.events = {}
        for f in EVENT_FILES:
            m = self.load("vidur.events." + f, "vidur/events/%s.py" % f)
            self.events[f] = m
            if f == "base_event":
                events.BaseEvent = m.BaseEvent

    def simulate(self, cfg, replicas, router, reqs, stages=1):
        Request = self.request.Request
        conf = types.SimpleNamespace(
            num_blocks=cfg["num_blocks"], block_size=cfg["block_size"],
            batch_size_cap=cfg["cap"], watermark_blocks_fraction=cfg["wm"],
            max_tokens_in_batch=cfg["mtib"], chunk_size=cfg["chunk"])
        n_batches = [0]

        class Predictor:
            def get_execution_time(self, batch, stage_id):
                decode = [r.is_prefill_complete for r in batch.requests]
                t = DECODE_NS if all(decode) else PREFILL_NS if not any(decode) else MIXED_NS
                # The stage's layers, and the send to the next but on the last.
                t = t // stages + (SEND_NS if stage_id < stages - 1 else 0)
                n_batches[0] += stage_id == 0
                return types.SimpleNamespace(total_time=t, model_time=t)

        stage_cls = self.stage.ReplicaStageScheduler

        def base_init(sched, replica_id):
            sched._config = conf
            sched._replica_id = replica_id
            sched._num_stages = stages
            sched._max_blocks_per_sequence = cfg["max_tokens"] // cfg["block_size"]
            sched._max_batch_size = min(cfg["max_batch"], cfg["cap"])
            sched._request_queue = []
            sched._num_allocated_blocks = 0
            sched._allocation_map = {}
            sched._replica_stage_schedulers = {
                k: stage_cls(replica_id, k, k == stages - 1, Predictor()) for k in range(stages)}

        cls = self.classes[cfg["policy"]]
        # The subclass __init__ calls super().__init__(*args) and then sets
        # its own fields; the replica id travels as the only argument.
        self.base.BaseReplicaScheduler.__init__ = lambda s, rid: base_init(s, rid)
        vidur_restart = self.vidur_restart

        def restart_keeping_prompt(r):
            if r.is_prefill_complete:
                return vidur_restart(r)
            r._num_processed_tokens = 0
            r._scheduled = r._preempted = r._completed = r._is_prefill_complete = False
            r._num_restarts += 1

        Request.restart = restart_keeping_prompt
        where = {}
        scheds = {}
        for i in range(replicas):
            s = cls(i)
            if cfg["policy"] == "static":
                def on_batch_end(batch, s=s):
                    s._num_running_batches -= 1
                    for r in batch.requests:
                        if r.completed and r.id in s._allocation_map:
                            s.free(r.id)
                    if not batch.all_requests_completed:
                        s._preempted_batches.append(batch)
                s.on_batch_end = on_batch_end
            add = s.add_request

            def add_request(r, add=add, i=i):
                where[r.id] = i
                add(r)
            s.add_request = add_request
            scheds[i] = s
        g = object.__new__(self.routers[router])
        g._replicas = {i: None for i in range(replicas)}
        g._num_replicas = replicas
        g._replica_schedulers = scheds
        g._request_queue = []
        g._request_counter = 0
        tbt = {}

        class Metrics:
            def on_request_arrival(self, *a):
                pass

            def on_replica_schedule(self, *a):
                pass

            def on_replica_stage_schedule(self, *a):
                pass

            def on_batch_stage_end(self, *a):
                pass

            def on_batch_end(self, time, batch, replica_id, mem):
                for r in batch.requests:
                    if r.has_started_decode:
                        tbt.setdefault(r.id, []).append(
                            time - batch.scheduled_at + r.latest_iteration_scheduling_delay)

        Request._id = -1
        self.events["base_event"].BaseEvent._id = 0
        rs = [Request(arrived_at=t, num_prefill_tokens=p, num_decode_tokens=o)
              for (t, p, o) in reqs]
        arrival = self.events["request_arrival_event"].RequestArrivalEvent
        heap = []
        for r in rs:
            e = arrival(r.arrived_at, r)
            heapq.heappush(heap, (e._priority_number, e))
        metrics = Metrics()
        while heap:
            _, e = heapq.heappop(heap)
            for x in e.handle_event(g, metrics):
                heapq.heappush(heap, (x._priority_number, x))
        out = []
        for r in rs:
            t = tbt.get(r.id, [])
            out.append("%d %d %d %d %d %d %d %d %d" % (
                r.id, where[r.id], r._scheduled_at, r._prefill_completed_at, r._completed_at,
                r._num_restarts, len(t), sum(t), max(t) if t else 0))
        restarts = sum(r._num_restarts for r in rs)
        out.append("batches %d restarts %d" % (n_batches[0], restarts))
        return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    exe = sys.argv[1]
    git_dir = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else os.environ.get("CS_VIDUR_GIT")
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    if not git_dir or shutil.which("git") is None:
        print("SKIP: no Vidur git directory (argument or CS_VIDUR_GIT) or no git")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="test_sim_vidur_")
    try:
        paths = ["vidur/logger.py", "vidur/entities/base_entity.py", "vidur/entities/request.py",
                 "vidur/entities/batch.py", "vidur/entities/batch_stage.py",
                 "vidur/types/base_int_enum.py", "vidur/types/event_type.py",
                 "vidur/scheduler/replica_scheduler/base_replica_scheduler.py",
                 "vidur/scheduler/replica_stage_scheduler/replica_stage_schduler.py",
                 "vidur/scheduler/global_scheduler/base_global_scheduler.py",
                 "vidur/scheduler/global_scheduler/round_robin_global_scheduler.py",
                 "vidur/scheduler/global_scheduler/lor_global_scheduler.py"] + \
                ["vidur/events/%s.py" % f for f in EVENT_FILES] + \
                ["vidur/scheduler/replica_scheduler/%s.py" % f for f in tsv.VIDUR_FILES.values()]
        tar = subprocess.run(["git", "--git-dir", git_dir, "archive", tsv.VIDUR_COMMIT, "--"]
                             + paths, capture_output=True, check=True).stdout
        subprocess.run(["tar", "x", "-C", tmp], input=tar, check=True)
        vidur = VidurSim(tmp)
        failures = 0
        for stages, k, policy in [(st, k, p) for st in (1, 2) for k, p in enumerate(tsv.POLICIES)]:
            restarts = ties = differ = 0
            for seed in range(n):
                rng = random.Random(seed * 4 + k)
                cfg, reqs = tsv.workload(rng, policy, stages)
                replicas, router = rng.randint(1, 3), rng.choice(["round_robin", "lor"])
                reqs = [(t * 500000, p, o) for (t, p, o) in reqs]
                head = "%(policy)s %%d %%s %(num_blocks)d %(block_size)d %(cap)d " \
                       "%(max_batch)d %(wm)r %(mtib)d %(chunk)d %(max_tokens)d %(stages)d" % cfg
                text = head % (replicas, router) + " %d\n" % len(reqs) + \
                    "".join("%d %d %d\n" % r for r in reqs)
                ours = subprocess.run([exe], input=text, capture_output=True, text=True,
                                      check=True).stdout
                theirs = vidur.simulate(cfg, replicas, router, reqs, stages)
                restarts += int(ours.split()[-1])
                if ours != theirs:
                    failures += 1
                    differ += 1
                    a, b = ours.splitlines(), theirs.splitlines()
                    i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), 0)
                    print("FAIL %s stages %d seed %d (%d replicas, %s): request line %d\n"
                          "  clustersim: %s\n  vidur:      %s\nworkload:\n%s" % (
                              policy, stages, seed, replicas, router,
                                                            i + 1, a[i], b[i], text))
                ends = {int(x) for line in ours.splitlines()[:-1] for x in line.split()[2:5]}
                ties += sum(t in ends for (t, _, _) in reqs)
            print("%s, %d stage(s): %d workloads, %s (%d restarts, %d arrivals at an instant "
                  "where something else happens)" % (
                      policy, stages, n, "%d different" % differ if differ else "identical",
                      restarts, ties))
        sys.exit(1 if failures else 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
