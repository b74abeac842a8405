"""Errors raise Python exceptions carrying the CLI's message, the file, the
JSON path and, for several problems, each of them."""
import json
import os
import subprocess
import sys

import pytest

import clustersim as cs
from conftest import path


def test_bad_file_message_equals_the_cli(cli, tmp_path):
    bad = tmp_path / "bad.json"
    with open(path("examples", "quickstart.json")) as f:
        d = json.load(f)
    d["profiles"] = [path("data", "profiles", "v100_thesis.json")]
    d["network"]["curve"] = path("data", "profiles", "network", "gcp_n1_standard_16.json")
    d["clients"][0]["rate"] = -3
    bad.write_text(json.dumps(d))
    rc, out, err = cli("run", str(bad))
    assert rc == 2 and out == ""
    with cs.load(bad) as sc:
        with pytest.raises(cs.InputError) as e:
            sc.run()
    assert "clustersim: " + e.value.message + "\n" == err
    assert e.value.file == str(bad)
    assert e.value.path == "clients[0].rate"
    assert isinstance(e.value, ValueError)
    assert e.value.code == 2  # CS_ERROR_INVALID


def test_several_problems_each_with_its_path():
    with cs.load(path("examples", "quickstart.json")) as sc:
        sc.set("clients[0].rate", -3).set("clients[1].slo_ms", "x").set("clients[2].model", "bret")
        with pytest.raises(cs.InputError) as e:
            sc.validate()
    assert e.value.message.splitlines()[0].endswith(": 3 problems in clients:")
    assert [p for p, _ in e.value.problems] == ["clients[0].rate", "clients[1].slo_ms", "clients[2]"]
    assert e.value.path is None


def test_set_errors():
    with cs.load(path("examples", "quickstart.json")) as sc:
        with pytest.raises(cs.InputError, match=r"--set profiles\[1x\]: expected \[index\]"):
            sc.set("profiles[1x]", "a.json")
        with pytest.raises(ValueError):  # NaN is not JSON
            sc.set("clients[0].rate", float("nan"))
        with pytest.raises(ValueError, match="seed"):
            sc.run(seed=-1)


def test_missing_file():
    with pytest.raises(cs.InputError) as e:
        cs.load("/nonexistent/s.json")
    assert "/nonexistent/s.json" in e.value.message
    assert e.value.code == 0  # CS_ERROR_IO


def test_closed_scenario():
    sc = cs.load(path("examples", "quickstart.json"))
    sc.close()
    sc.close()
    with pytest.raises(ValueError, match="closed"):
        sc.run()


def test_progress_and_cancel():
    seen = []
    with cs.load(path("examples", "quickstart.json")) as sc:
        sc.run(progress=lambda f, t: seen.append((f, t)))
        assert seen and all(0 <= f <= 1 for f, _ in seen)
        assert [t for _, t in seen] == sorted(t for _, t in seen)
        with pytest.raises(cs.CancelledError):
            sc.run(progress=lambda f, t: f < 0.2)
        # An exception in the callback stops the run and comes out as itself.
        with pytest.raises(ZeroDivisionError):
            sc.run(progress=lambda f, t: 1 / 0)
        # The scenario still runs afterwards.
        assert sc.run().total.goodput_rps > 0


def _import_with(library):
    env = dict(os.environ, CLUSTERSIM_LIBRARY=library)
    return subprocess.run([sys.executable, "-c", "import clustersim"], env=env,
                          capture_output=True, text=True)


def test_refuses_a_library_of_another_abi():
    fake = os.environ.get("CLUSTERSIM_FAKE_ABI_LIBRARY")
    if not fake:
        pytest.fail("CLUSTERSIM_FAKE_ABI_LIBRARY is not set (run through meson test)")
    p = _import_with(fake)
    assert p.returncode != 0
    assert f"clustersim: {fake} has binary interface 42, this package was written for 1" in p.stderr


def test_refuses_a_library_without_an_abi_version():
    old = os.environ.get("CLUSTERSIM_NO_ABI_LIBRARY")
    if not old:
        pytest.fail("CLUSTERSIM_NO_ABI_LIBRARY is not set (run through meson test)")
    p = _import_with(old)
    assert p.returncode != 0
    assert f"clustersim: {old} has no cs_abi_version" in p.stderr


def test_refuses_a_missing_library():
    p = _import_with("/nonexistent/libclustersim.so.0")
    assert p.returncode != 0
    assert "clustersim: cannot load libclustersim from CLUSTERSIM_LIBRARY: " \
           "/nonexistent/libclustersim.so.0" in p.stderr
