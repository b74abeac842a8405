"""Runs from Python equal the CLI's, byte for byte: the summary (summary.json),
the table, requests.csv; --set and --unset through Scenario.set/unset; seeds;
determinism."""
import csv
import glob
import json
import os
import tempfile

import pytest

import clustersim as cs
from conftest import path

def without_engine_line(table):
    return [l for l in table.splitlines() if not l.startswith("engine: ")]


REGRESSION = sorted(glob.glob(path("tests", "regression", "*.json")))


def test_the_regression_scenarios_are_there():
    assert len(REGRESSION) >= 20


@pytest.mark.parametrize("scenario", REGRESSION, ids=os.path.basename)
def test_summary_and_table_equal_the_cli(cli, scenario):
    rc, out, err = cli("run", scenario, "--json")
    assert rc == 0, err
    with cs.Scenario.load(scenario) as sc:
        res = sc.run()
    assert res.to_json() == out
    rc, table, _ = cli("run", scenario)
    assert rc == 0
    # Byte for byte but for the engine's line, which times the run itself.
    assert without_engine_line(res.table()) == without_engine_line(table)
    assert "engine: " in table
    # The values are the summary's, as Python values.
    summary = json.loads(out)
    assert res.summary == summary
    assert [m.model for m in res.models] == [m["model"] for m in summary["models"]]
    assert res.total.goodput_rps == summary["total"]["goodput_rps"]
    assert [w.code for w in res.warnings] == [w["code"] for w in summary["warnings"]]


def test_seed_set_and_unset_as_the_cli(cli):
    q = path("examples", "quickstart.json")
    rc, out, err = cli("run", q, "--json", "--seed", "7", "--set", "clients[0].rate=450",
                       "--set", 'clients[2].arrival="constant"', "--unset", "clients[1].warmup_s",
                       "--set", "dispatch.max_wait_ms=20")
    assert rc == 0, err
    with cs.load(q) as sc:
        sc.set("clients[0].rate", 450).set("clients[2].arrival", "constant")
        sc.unset("clients[1].warmup_s").set("dispatch.max_wait_ms", 20)
        res = sc.run(seed=7)
    assert res.to_json() == out
    assert res.summary["seed"] == 7
    assert res.provenance.setup.overrides == json.loads(out)["setup"]["overrides"]


def test_from_dict_equals_the_file(cli):
    q = path("examples", "quickstart.json")
    with open(q) as f:
        d = json.load(f)
    with cs.Scenario.from_dict(d, name=q, base_dir=os.path.dirname(q)) as sc:
        res = sc.run()
    rc, out, _ = cli("run", q, "--json")
    assert res.to_json() == out
    # The dict round-trips, edits included.
    with cs.Scenario.from_dict(d, base_dir=os.path.dirname(q)) as sc:
        sc.set("seed", 5)
        assert sc.to_dict() == dict(d, seed=5)


def test_deterministic():
    q = path("examples", "quickstart.json")
    with cs.load(q) as sc:
        a = sc.run(seed=3).to_json()
        b = sc.run(seed=3).to_json()
        c = sc.run(seed=4).to_json()
    assert a == b
    assert a != c


def test_requests_equal_the_clis_csv(cli):
    scenario = path("tests", "regression", "maf2019_router_manual.json")
    with tempfile.TemporaryDirectory() as d:
        rc, _, err = cli("run", scenario, "-o", d, "--set", "outputs.requests_csv=true")
        assert rc == 0, err
        with open(os.path.join(d, "requests.csv"), newline="") as f:
            want = list(csv.DictReader(f))
    with cs.load(scenario) as sc:
        res = sc.run(requests=True)
    got = res.requests()
    assert got == want
    assert len(got) == sum(m.requests.generated for m in res.models)
    frame = res.to_pandas("requests")
    assert len(frame) == len(want)
    res.close()
    with pytest.raises(ValueError, match="closed"):
        res.table()


def test_effective_scenario_reruns_to_the_same_summary():
    q = path("examples", "quickstart.json")
    with cs.load(q) as sc:
        sc.set("clients[0].rate", 350)
        res = sc.run(seed=9)
    eff = res.effective_scenario()
    with cs.Scenario.from_dict(eff, base_dir=os.path.dirname(q)) as again:
        assert again.run().to_json() == res.to_json()


def test_module_run_takes_a_path_a_dict_or_a_scenario():
    q = path("examples", "quickstart.json")
    a = cs.run(q, seed=2).to_json()
    with open(q) as f:
        d = json.load(f)
    d["profiles"] = [path("data", "profiles", os.path.basename(p)) for p in d["profiles"]]
    d["network"]["curve"] = path("data", "profiles", "network", os.path.basename(d["network"]["curve"]))
    b = json.loads(cs.run(d, seed=2).to_json())
    assert json.loads(a)["total"] == b["total"]
    with cs.load(q) as sc:
        assert cs.run(sc, seed=2).to_json() == a


def test_time_series_equal_the_clis_files(cli, tmp_path):
    q = path("examples", "quickstart.json")
    rc, _, err = cli("run", q, "-o", str(tmp_path))
    assert rc == 0, err
    with cs.load(q) as sc:
        res = sc.run(timeseries=True)
    for name in ("gpus_over_time", "gpu_timeseries", "worker_latency", "models_over_time",
                 "cluster_over_time"):
        with open(tmp_path / (name + ".csv"), newline="") as f:
            want = [{k: _num(v) for k, v in r.items()} for r in csv.DictReader(f)]
        frame = res.to_pandas(name)
        got = frame.to_dict("records") if hasattr(frame, "to_dict") else frame
        assert len(got) == len(want), name
        assert got == want, name


def _num(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def test_llm_deployments_as_the_cli(cli):
    """examples/mixed_llm_dnn.json: the summary as the CLI's, the LLM rows
    as summary.json's "llm", llm_over_time as `clustersim run -o` writes it."""
    q = path("examples", "mixed_llm_dnn.json")
    rc, out, err = cli("run", q, "--json")
    assert rc == 0, err
    with cs.load(q) as sc:
        res = sc.run(timeseries=True)
    assert res.to_json() == out
    assert [m["model"] for m in res.llm] == ["chat"]
    assert res["chat"].requests.measured == 360
    assert res.llm[0].ttft_ms.p99 == json.loads(out)["llm"][0]["ttft_ms"]["p99"]
    rows = res.to_pandas("llm")
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert rows[0]["ttft_ms.p50"] == res.llm[0].ttft_ms.p50
    with tempfile.TemporaryDirectory() as d:
        rc, _, err = cli("run", q, "-o", d)
        assert rc == 0, err
        with open(os.path.join(d, "llm_over_time.csv"), newline="") as f:
            want = list(csv.DictReader(f))
    got = res.to_pandas("llm_over_time")
    got = got.to_dict("records") if hasattr(got, "to_dict") else got
    assert len(got) == len(want) > 0
    assert [float(r["kv_util"]) for r in got] == [float(r["kv_util"]) for r in want]
    with cs.load(path("examples", "quickstart.json")) as sc:
        plain = sc.run(timeseries=True)
    assert plain.llm == []
    with pytest.raises(ValueError, match="no LLM deployment"):
        plain.to_pandas("llm_over_time")
