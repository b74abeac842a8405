"""Sweeps from Python equal `clustersim sweep`'s files byte for byte, from an
experiment file and from a dict; shards; progress; a run's scenario."""
import json
import os

import pytest

import clustersim as cs
from conftest import path

FILES = ("runs.csv", "aggregate.csv", "aggregate.json", "sweep.json")


def experiment(base):
    return {"name": "py", "base": base,
            "set": {"clients[*].duration_s": 10},
            "variants": [{"name": "router"},
                         {"name": "symphony", "set": {"dispatch": {"policy": "symphony"}},
                          "unset": ["placement"]}],
            "axes": [{"name": "rate", "path": "clients[0].rate", "values": [200, 400]}],
            "seeds": [1, 2, 3]}


@pytest.fixture
def exp_file(tmp_path):
    p = tmp_path / "exp.json"
    p.write_text(json.dumps(experiment(path("examples", "quickstart.json"))))
    return p


def cli_files(cli, exp, out, *args):
    rc, _, err = cli("sweep", str(exp), "-o", str(out), "-j", "1", "--no-render", *args)
    assert rc == 0, err
    return {f: (out / f).read_text() for f in os.listdir(out) if f.endswith((".csv", ".json"))}


def test_files_equal_the_clis(cli, exp_file, tmp_path):
    want = cli_files(cli, exp_file, tmp_path / "cli")
    with cs.Experiment.load(exp_file) as e:
        assert e.n_runs == 12
        assert e.variants == ["router", "symphony"]
        assert e.axes == [("rate", ["200", "400"])]
        res = e.sweep(threads=3)
    assert res.n_runs == 12 and res.n_invalid == 0
    for f in FILES:
        assert res.text(f) == want[f], f
    res.write(tmp_path / "py")
    for f in FILES:
        assert (tmp_path / "py" / f).read_text() == want[f], f
    with pytest.raises(cs.InputError):
        res.write(tmp_path / "py")  # an earlier sweep's outputs, without force
    res.write(tmp_path / "py", force=True)


def test_a_dict_equals_the_file(exp_file):
    d = experiment("quickstart.json")
    a = cs.sweep(d, base_dir=path("examples"), threads=2)
    b = cs.sweep(str(exp_file), threads=1)
    assert a.text("runs.csv") == b.text("runs.csv")
    assert a.text("aggregate.json") == b.text("aggregate.json")


def test_values_and_tables(exp_file):
    res = cs.sweep(str(exp_file), threads=2)
    total = [r for r in res.runs if r["model"] == "total"]
    assert len(total) == 12 and all(r["status"] == "ok" for r in total)
    assert isinstance(total[0]["goodput_rps"], float)
    pd = pytest.importorskip("pandas")
    runs = res.to_pandas()
    assert isinstance(runs, pd.DataFrame) and len(runs) == len(res.runs)
    agg = res.to_pandas("aggregate")
    assert set(agg["variant"]) == {"router", "symphony"}


def test_a_runs_scenario_is_that_run(exp_file):
    res = cs.sweep(str(exp_file), threads=2)
    with cs.Experiment.load(exp_file) as e:
        runs = e.runs()
        assert runs[7] == {"run": 7, "variant": "symphony", "rate": "200", "seed": 2}
        with e.scenario(7) as sc:
            one = sc.run()
        with pytest.raises(IndexError):
            e.scenario(12)
    row = [r for r in res.runs if r["run_id"] == 7 and r["model"] == "total"][0]
    assert one.total.goodput_rps == pytest.approx(row["goodput_rps"], rel=1e-15)
    assert one.summary["seed"] == 2


def test_shard_equals_the_clis(cli, exp_file, tmp_path):
    want = cli_files(cli, exp_file, tmp_path / "cli", "--shard", "2/3")
    res = cs.sweep(str(exp_file), shard="2/3", threads=2)
    assert res.n_runs == 4
    assert res.text("runs.csv") == want["runs.csv"]
    assert res.text("shard.json") == want["shard.json"]
    assert res.aggregate is None
    assert cs.sweep(str(exp_file), shard=(2, 3)).text("runs.csv") == want["runs.csv"]
    for bad in ("4/3", "0/3", "x", (1, 0)):
        with pytest.raises(ValueError, match="shard"):
            cs.sweep(str(exp_file), shard=bad)


def test_progress(exp_file):
    calls = []
    cs.sweep(str(exp_file), threads=3, progress=lambda done, total: calls.append((done, total)))
    assert sorted(calls) == [(i, 12) for i in range(1, 13)]
    with pytest.raises(RuntimeError, match="stop"):
        cs.sweep(str(exp_file), progress=lambda d, t: (_ for _ in ()).throw(RuntimeError("stop")))


def test_bad_experiment(tmp_path):
    d = experiment(path("examples", "quickstart.json"))
    d["seeds"] = []
    with pytest.raises(cs.InputError) as e:
        cs.sweep(d)
    assert e.value.path == "seeds"
    with pytest.raises(ValueError, match="threads"):
        cs.sweep(experiment(path("examples", "quickstart.json")), threads=0)


def test_a_tqdm_bar_on_a_terminal(exp_file, monkeypatch):
    pytest.importorskip("tqdm")
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    cs.sweep(str(exp_file), threads=2)
    assert "sweep" in term.getvalue() and "12/12" in term.getvalue()
    # Not a terminal: nothing.
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    cs.sweep(str(exp_file), threads=2)
    assert quiet.getvalue() == ""
