#!/usr/bin/env python3
"""Tests of tools/convert_vidur.py and of the data/llm files it made.

    python3 tests/llm/test_convert_vidur.py [SOURCE_ROOT]

Needs no copy of Vidur: each case writes a tiny made-up Vidur tree (config files and CSV
tables) into a fresh git repository in a temporary directory, commits it, and runs the
converter on that. The expected values are written out below by hand from the made-up
tables. Then the shipped data/llm files are checked against the format (data/llm/README.md)
and against values read off Vidur's tables by hand (docs/research/vidur.md, section 1).
Prints one ok/FAIL line per check; exits 0 when all pass, 1 otherwise, 77 (skip) when git
is not installed. Python 3 standard library only.
"""

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "convert_vidur.py")
PREFIX = ("Converted by tools/convert_vidur.py from github:microsoft/vidur (MIT, Copyright (c) "
          "Microsoft Corporation) at commit ")
OPS = ["input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
       "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]

failures = 0


def check(name, cond, detail=""):
    global failures
    if cond:
        print(f"ok   {name}")
    else:
        failures += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))
    return cond


# ---------------------------------------------------------------------------------------
# A made-up Vidur tree

MODEL_CONFIG = '''from dataclasses import dataclass

@dataclass
class BaseModelConfig(BaseFixedConfig):
    num_layers: int
    num_q_heads: int
    num_kv_heads: int
    embedding_dim: int
    mlp_hidden_dim: int
    max_position_embeddings: int
    use_gated_mlp: bool
    post_attn_norm: bool
    vocab_size: int
    no_tensor_parallel: bool = False

@dataclass
class FamilyConfig(BaseModelConfig):
    max_position_embeddings: int = 999
    use_gated_mlp: bool = True
    post_attn_norm: bool = True
    vocab_size: int = 1000

    @staticmethod
    def get_name():
        return "org/Family-Config"

@dataclass
class TinyConfig(FamilyConfig):
    num_layers: int = 3
    num_q_heads: int = 4
    num_kv_heads: int = 2
    embedding_dim: int = 64
    mlp_hidden_dim: int = 96
    max_position_embeddings: int = 512

    @staticmethod
    def get_name():
        return "org/Tiny-1"

@dataclass
class UnprofiledConfig(FamilyConfig):
    num_layers: int = 5
    num_q_heads: int = 8
    num_kv_heads: int = 8
    embedding_dim: int = 128
    mlp_hidden_dim: int = 256

    @staticmethod
    def get_name():
        return "org/Unprofiled-2"
'''

DEVICE_CONFIG = '''@dataclass
class BaseDeviceSKUConfig(BaseFixedConfig):
    fp16_tflops: int
    total_memory_gb: int

@dataclass
class G1DeviceSKUConfig(BaseDeviceSKUConfig):
    fp16_tflops: int = 100
    total_memory_gb: int = 40

    @staticmethod
    def get_type():
        return DeviceSKUType.G1

@dataclass
class A0DeviceSKUConfig(BaseDeviceSKUConfig):
    fp16_tflops: int = 7
    total_memory_gb: int = 16

    @staticmethod
    def get_type():
        return DeviceSKUType.A0
'''

# Vidur prices a0 only: g1 gets no price_per_hour.
PRICE_CONFIG = '''CONFIG_KEY = ["x"]

# Prices from somewhere on some day.
# Prices are in $/hr
GPU_COSTS = {
    "a0": 1.5,
    "zz": 9,
}
'''

NODE_CONFIG = '''@dataclass
class BaseNodeSKUConfig(BaseFixedConfig):
    num_devices_per_node: int

@dataclass
class N1NodeSKUConfig(BaseNodeSKUConfig):
    device_sku_type: DeviceSKUType = DeviceSKUType.G1
    num_devices_per_node: int = 4

    @staticmethod
    def get_type():
        return NodeSKUType.N1_NVLINK
'''

# mlp.csv: columns in an order of their own (the converter reads them by name), with the
# emb op and the min/mean columns the converter must leave out. Line numbers (header = 1):
#   2 tp1 n8   3 tp1 n1   4 tp2 n1   5 tp1 n2   6 tp1 n1 again, same medians (other min)
#   7 tp1 n8 again, other medians (the first, line 2, must be kept)
MLP_COLS = (["num_tokens", "time_stats.emb.median", "n_head"]
            + [f"time_stats.{op}.{s}" for op in OPS for s in ("min", "median")]
            + ["n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp",
               "num_tensor_parallel_workers"])


def mlp_row(n, tp, medians, mins="0.001"):
    cell = {"num_tokens": str(n), "time_stats.emb.median": "9.5", "n_head": "4",
            "n_kv_head": "2", "n_embd": "64", "n_expanded_embd": "96", "vocab_size": "1000",
            "use_gated_mlp": "True", "num_tensor_parallel_workers": str(tp)}
    for op, m in zip(OPS, medians):
        cell[f"time_stats.{op}.min"] = mins
        cell[f"time_stats.{op}.median"] = m
    return [cell[c] for c in MLP_COLS]


def med(base):
    """Nine distinct medians: base + 0.01 * op index, written as decimal text."""
    return [f"{base + i / 100:.2f}" for i in range(9)]


MLP_ROWS = [mlp_row(8, 1, med(0.8)), mlp_row(1, 1, med(0.1)), mlp_row(1, 2, med(0.05)),
            mlp_row(2, 1, ["0.30000000000000004"] + med(0.2)[1:]),
            mlp_row(1, 1, med(0.1), mins="0.002"), mlp_row(8, 1, med(0.9))]

AR_HEAD = ",time_stats.all_reduce.min,time_stats.all_reduce.median,rank,num_workers,size,collective,devices_per_node,max_devices_per_node"
AR_ROWS = ["0,0.01,0.05,0,2,10240,all_reduce,2,4",
           "1,0.01,0.04,0,2,2048,all_reduce,2,4",
           "2,0.01,0.09,0,4,2048,all_reduce,4,4",
           "3,0.01,0.07,1,2,18432,all_reduce,2,4",     # rank 1: left out
           "4,0.02,0.04,0,2,2048,all_reduce,2,4"]      # repeats line 3 with the same median
SR_HEAD = ",time_stats.send_recv.median,rank,num_workers,size,collective,devices_per_node"
SR_ROWS = ["0,0.2,0,2,2048,send_recv,1", "1,0.3,0,2,2048,send_recv,1",  # differs: keep 0.2
           "2,0.1,0,2,2048,send_recv,2"]


def csv_text(header, rows):
    return "\n".join([header] + rows) + "\n"


def tree(**changes):
    """The made-up Vidur tree as {path: text}; CHANGES replace (text) or drop (None) files."""
    files = {
        "vidur/config/model_config.py": MODEL_CONFIG,
        "vidur/config/device_sku_config.py": DEVICE_CONFIG,
        "vidur/config/node_sku_config.py": NODE_CONFIG,
        "vidur/config_optimizer/analyzer/constants.py": PRICE_CONFIG,
        "data/profiling/compute/g1/org/Tiny-1/mlp.csv":
            csv_text(",".join(MLP_COLS), [",".join(r) for r in MLP_ROWS]),
        "data/profiling/network/n1_nvlink/all_reduce.csv": csv_text(AR_HEAD, AR_ROWS),
        "data/profiling/network/n1_nvlink/send_recv.csv": csv_text(SR_HEAD, SR_ROWS),
    }
    for k, v in changes.items():
        path = {"mlp": "data/profiling/compute/g1/org/Tiny-1/mlp.csv",
                "ar": "data/profiling/network/n1_nvlink/all_reduce.csv",
                "sr": "data/profiling/network/n1_nvlink/send_recv.csv",
                "models": "vidur/config/model_config.py",
                "prices": "vidur/config_optimizer/analyzer/constants.py"}[k]
        if v is None:
            del files[path]
        else:
            files[path] = v
    return files


GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_AUTHOR_DATE="2000-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2000-01-01T00:00:00Z")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          env=GIT_ENV, text=True).stdout.strip()


def make_repo(base, name, files):
    repo = os.path.join(base, name)
    os.makedirs(repo)
    git(repo, "init", "-q")
    for path, text in files.items():
        os.makedirs(os.path.join(repo, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(repo, path), "w", newline="") as f:
            f.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "made-up vidur tree")
    return repo


def convert(repo, out, *extra):
    p = subprocess.run([sys.executable, TOOL, "--vidur", repo, "-o", out, "--gpus", "g1",
                        "--models", "org/Tiny-1", "--nodes", "n1_nvlink"] + list(extra),
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def load(out, rel):
    with open(os.path.join(out, rel)) as f:
        return json.load(f)


def files_of(out):
    got = {}
    for p in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
        if os.path.isfile(p):
            with open(p, "rb") as f:
                got[os.path.relpath(p, out)] = f.read()
    return got


# ---------------------------------------------------------------------------------------
# The converter on the made-up tree


def test_good(base):
    repo = make_repo(base, "good", tree())
    commit = git(repo, "rev-parse", "HEAD")
    out = os.path.join(base, "out1")
    rc, err = convert(repo, out)
    if not check("converter runs on the made-up tree", rc == 0, err):
        return
    check("it writes the three files", sorted(files_of(out)) == [
        "collectives/n1_nvlink.json", "models.json", "ops/g1/org__Tiny-1.json"],
        str(sorted(files_of(out))))

    m = load(out, "models.json")
    check("models.json format/version", (m["format"], m["version"]) == ("clustersim-llm-models", 1))
    blob = git(repo, "rev-parse", "HEAD:vidur/config/model_config.py")
    check("models.json source names the commit and model_config.py's blob",
          m["source"].startswith(PREFIX + commit)
          and f"vidur/config/model_config.py (git blob {blob})" in m["source"], m["source"])
    check("models.json: only the profiled model, its inherited and own defaults",
          m["models"] == [{"name": "org/Tiny-1", "num_layers": 3, "num_q_heads": 4,
                           "num_kv_heads": 2, "embedding_dim": 64, "mlp_hidden_dim": 96,
                           "max_position_embeddings": 512, "use_gated_mlp": True,
                           "vocab_size": 1000, "post_attn_norm": True,
                           "no_tensor_parallel": False}], json.dumps(m["models"]))
    check("models.json: devices by name, memory_gib from total_memory_gb, price_per_hour "
          "from GPU_COSTS where it has one (a price of no device ignored)",
          m["devices"] == [{"name": "a0", "memory_gib": 16, "fp16_tflops": 7,
                            "price_per_hour": 1.5},
                           {"name": "g1", "memory_gib": 40, "fp16_tflops": 100}],
          json.dumps(m["devices"]))
    check("models.json: the prices' source, line and Vidur's comment; the unpriced named",
          "GPU_COSTS (line 5) for a0, which Vidur's comment dates: \"Prices from somewhere "
          "on some day; Prices are in $/hr\"; no price for g1" in m["source"], m["source"])
    check("models.json: nodes", m["nodes"] == [
        {"name": "n1_nvlink", "device": "g1", "devices_per_node": 4}], json.dumps(m["nodes"]))

    o = load(out, "ops/g1/org__Tiny-1.json")
    check("ops format/gpu/model/ops", (o["format"], o["version"], o["gpu"], o["model"], o["ops"])
          == ("clustersim-llm-ops", 1, "g1", "org/Tiny-1", OPS))
    check("ops model_shape from the rows", o["model_shape"] == {
        "n_head": 4, "n_kv_head": 2, "n_embd": 64, "n_expanded_embd": 96, "vocab_size": 1000,
        "use_gated_mlp": True}, json.dumps(o["model_shape"]))
    tp1 = {op: [v1, v2, v8] for op, v1, v2, v8 in
           zip(OPS, [0.1, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18],
               [0.30000000000000004, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28],
               [0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.87, 0.88])}
    tp2 = {op: [v] for op, v in zip(OPS, [0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.13])}
    check("ops: medians per tp, num_tokens ascending, the first of two differing rows kept",
          o["tensor_parallel"] == [{"tp": 1, "num_tokens": [1, 2, 8], "median_ms": tp1},
                                   {"tp": 2, "num_tokens": [1], "median_ms": tp2}],
          json.dumps(o["tensor_parallel"]))
    check("ops: the float text of the CSV kept as written (0.30000000000000004)",
          "0.30000000000000004" in files_of(out)["ops/g1/org__Tiny-1.json"].decode())
    check("ops: emb left out", "emb" not in o["ops"] and "emb" not in o["tensor_parallel"][0]["median_ms"])
    mlp_blob = git(repo, "rev-parse", "HEAD:data/profiling/compute/g1/org/Tiny-1/mlp.csv")
    check("ops source: commit, path, blob, the collapsed repeat and the two lines that differ",
          o["source"].startswith(PREFIX + commit)
          and f"data/profiling/compute/g1/org/Tiny-1/mlp.csv (git blob {mlp_blob})" in o["source"]
          and "1 row repeating a point with the same kept values collapsed" in o["source"]
          and "tp 1 num_tokens 8 lines 2/7" in o["source"], o["source"])

    c = load(out, "collectives/n1_nvlink.json")
    check("collectives format/node", (c["format"], c["version"], c["node"]) ==
          ("clustersim-llm-collectives", 1, "n1_nvlink"))
    check("collectives: rank-0 curves, sizes ascending, repeats collapsed, first kept",
          c["curves"] == [
              {"collective": "all_reduce", "num_workers": 2, "devices_per_node": 2,
               "size_bytes": [2048, 10240], "median_ms": [0.04, 0.05]},
              {"collective": "all_reduce", "num_workers": 4, "devices_per_node": 4,
               "size_bytes": [2048], "median_ms": [0.09]},
              {"collective": "send_recv", "num_workers": 2, "devices_per_node": 1,
               "size_bytes": [2048], "median_ms": [0.2]},
              {"collective": "send_recv", "num_workers": 2, "devices_per_node": 2,
               "size_bytes": [2048], "median_ms": [0.1]}], json.dumps(c["curves"]))
    check("collectives source: both files, rank-0 count, the differing pair",
          "data/profiling/network/n1_nvlink/all_reduce.csv (git blob " in c["source"]
          and "data/profiling/network/n1_nvlink/send_recv.csv (git blob " in c["source"]
          and "all_reduce.csv: 5 rows, 4 of rank 0" in c["source"]
          and "num_workers 2 devices_per_node 1 size 2048 lines 2/3" in c["source"], c["source"])

    out2 = os.path.join(base, "out2")
    rc2, err2 = convert(repo, out2)
    check("deterministic: a second run gives the same bytes",
          rc2 == 0 and files_of(out) == files_of(out2), err2)
    rc3, _ = convert(repo, out, "--check")
    check("--check on fresh output exits 0", rc3 == 0)
    with open(os.path.join(out, "models.json"), "a") as f:
        f.write(" ")
    rc4, err4 = convert(repo, out, "--check")
    check("--check on a changed output exits 1 naming it", rc4 == 1 and "models.json" in err4, err4)

    # An older commit is read when named (--commit), not the work tree or HEAD.
    with open(os.path.join(repo, "vidur/config/device_sku_config.py"), "w") as f:
        f.write(DEVICE_CONFIG.replace("fp16_tflops: int = 100", "fp16_tflops: int = 101"))
    git(repo, "commit", "-q", "-am", "g1 faster")
    out5 = os.path.join(base, "out5")
    rc5, err5 = convert(repo, out5, "--commit", commit)
    check("--commit reads the named commit", rc5 == 0 and files_of(out5) == files_of(out2), err5)
    rc6, _ = convert(repo, out5)
    check("HEAD reads the new commit",
          rc6 == 0 and load(out5, "models.json")["devices"][1]["fp16_tflops"] == 101)


def replace_line(text, lineno, old, new):
    lines = text.split("\n")
    assert old in lines[lineno - 1], (lineno, old)
    lines[lineno - 1] = lines[lineno - 1].replace(old, new, 1)
    return "\n".join(lines)


def mlp_text():
    return tree()["data/profiling/compute/g1/org/Tiny-1/mlp.csv"]


def mlp_cell(lineno, col, value):
    """mlp.csv with the cell of column COL on line LINENO set to VALUE."""
    lines = mlp_text().split("\n")
    cells = lines[lineno - 1].split(",")
    cells[MLP_COLS.index(col)] = value
    lines[lineno - 1] = ",".join(cells)
    return "\n".join(lines)


def test_bad(base):
    mlp = "data/profiling/compute/g1/org/Tiny-1/mlp.csv"
    ar = "data/profiling/network/n1_nvlink/all_reduce.csv"
    cases = [
        ("missing column", {"mlp": mlp_text().replace("time_stats.add.median", "time_stats.add.p50", 1)},
         [], [mlp, "line 1", "time_stats.add.median"]),
        ("non-numeric median", {"mlp": mlp_cell(4, "time_stats.mlp_act.median", "fast")},
         [], [mlp, "line 4", "time_stats.mlp_act.median", "'fast'"]),
        ("empty median", {"mlp": mlp_cell(3, "time_stats.attn_rope.median", "")},
         [], [mlp, "line 3", "time_stats.attn_rope.median"]),
        ("negative median", {"mlp": mlp_cell(5, "time_stats.add.median", "-0.1")},
         [], [mlp, "line 5", "time_stats.add.median"]),
        ("non-integer num_tokens", {"mlp": mlp_cell(2, "num_tokens", "8.5")},
         [], [mlp, "line 2", "num_tokens", "'8.5'"]),
        ("a row of another model shape", {"mlp": mlp_cell(5, "n_embd", "65")},
         [], [mlp, "line 5", "n_embd", "65"]),
        ("rows that differ from the model config", {"models": MODEL_CONFIG.replace(
            "mlp_hidden_dim: int = 96", "mlp_hidden_dim: int = 97")},
         [], [mlp, "line 2", "n_expanded_embd", "97"]),
        ("two different rows for one num_tokens, with --differing-duplicates error", {},
         ["--differing-duplicates", "error"], [mlp, "line 7", "line 2",
                                               "time_stats.input_layernorm.median"]),
        ("non-numeric size", {"ar": csv_text(AR_HEAD, [AR_ROWS[0], AR_ROWS[1].replace(",2048,", ",2k,")])},
         [], [ar, "line 3", "size", "'2k'"]),
        ("row of the wrong width", {"ar": csv_text(AR_HEAD, AR_ROWS + ["9,0.1,0.2"])},
         [], [ar, "line 7", "3 cells"]),
        ("send_recv.csv missing in git", {"sr": None}, [],
         ["data/profiling/network/n1_nvlink/send_recv.csv", "missing at commit"]),
        ("mlp.csv of an asked-for GPU missing in git", {}, ["--gpus", "g1,g2"],
         ["data/profiling/compute/g2/org/Tiny-1/mlp.csv", "missing at commit"]),
        ("a model field without a default", {"models": MODEL_CONFIG.replace(
            "    num_layers: int = 3\n", "")},
         [], ["vidur/config/model_config.py", "TinyConfig", "num_layers"]),
        ("a model field of the wrong type", {"models": MODEL_CONFIG.replace(
            "num_kv_heads: int = 2", "num_kv_heads: int = 2.5")},
         [], ["vidur/config/model_config.py", "line 31", "TinyConfig", "num_kv_heads", "2.5"]),
        ("no GPU_COSTS", {"prices": PRICE_CONFIG.replace("GPU_COSTS", "CPU_COSTS")},
         [], ["vidur/config_optimizer/analyzer/constants.py", "GPU_COSTS"]),
        ("a price that is not a positive number", {"prices": PRICE_CONFIG.replace(
            '"a0": 1.5', '"a0": -1.5')},
         [], ["vidur/config_optimizer/analyzer/constants.py", "line 5", "GPU_COSTS", "-1.5"]),
    ]
    for i, (name, changes, extra, want) in enumerate(cases):
        repo = make_repo(base, f"bad{i}", tree(**changes))
        out = os.path.join(base, f"badout{i}")
        rc, err = convert(repo, out, *extra)  # a later --gpus overrides convert()'s
        missing = [w for w in want if w not in err]
        check(f"bad input, {name}: exit 2 naming {', '.join(want)}",
              rc == 2 and not missing, f"rc {rc}, stderr {err.strip()!r}")
        check(f"bad input, {name}: nothing written", not os.path.exists(out))


# ---------------------------------------------------------------------------------------
# The attention sample (--attention-sample)

ATTN_HEAD = ("page_offset," + ",".join(f"time_stats.{op}.{k}" for op in
             ("attn_input_reshape", "attn_decode", "attn_output_reshape", "attn_prefill")
             for k in ("min", "max", "mean", "median", "std"))
             + ",n_embd,n_q_head,n_kv_head,block_size,num_tensor_parallel_workers,max_model_len,"
             "batch_size,prefill_chunk_size,kv_cache_size,is_prefill,attention_backend")
RESHAPE = "0.0,0.0,0.0,0.0,0.0"
OUT_RESHAPE = "0.001,0.002,0.0015,0.0015,0.0005"
EMPTY = ",,,,"
TAIL = "4096,32,32,16,1,4096"


def decode_row(kv, batch, median, off=0):
    stats = f"{median},{median},{median},{median},0.0"
    return f"{off},{RESHAPE},{stats},{OUT_RESHAPE},{EMPTY},{TAIL},{batch},0,{kv},False,AttentionBackend.FLASH_ATTENTION"


def prefill_row(chunk, kv, median, off=0):
    stats = f"{median},{median},{median},{median},0.0"
    return f"{off},{RESHAPE},{EMPTY},{OUT_RESHAPE},{stats},{TAIL},1,{chunk},{kv},True,AttentionBackend.FLASH_ATTENTION"


# Two kv x two batch decode points; chunks 64 and 2048 x kv 0 and 3072: 2048 + 3072 > 4096
# leaves one point of the prefill grid empty (null).
ATTN_ROWS = [decode_row(32, 1, "0.009000000000000001", 788), decode_row(32, 8, "0.018"),
             decode_row(4032, 1, "0.054"), decode_row(4032, 8, "0.40700000000000003"),
             prefill_row(64, 0, "0.015"), prefill_row(64, 3072, "0.065"),
             prefill_row(2048, 0, "0.781")]


def attn_convert(base, name, rows, *extra, header=ATTN_HEAD):
    path = os.path.join(base, name + ".csv")
    with open(path, "w") as f:
        f.write(header + "\n" + "".join(r + "\n" for r in rows))
    out = os.path.join(base, name + ".out")
    p = subprocess.run([sys.executable, TOOL, "--attention-sample", path, "-o", out] + list(extra),
                       capture_output=True, text=True)
    return p.returncode, p.stderr, out, path


def cell(row, col, value):
    cells = row.split(",")
    cells[ATTN_HEAD.split(",").index(col)] = value
    return ",".join(cells)


def test_attention(base):
    rc, err, out, path = attn_convert(base, "attn", ATTN_ROWS)
    rel = "attention/a100/meta-llama__Llama-2-7b-hf.json"
    check("attention: exit 0", rc == 0, err)
    try:
        a = load(out, rel)
    except (OSError, ValueError) as e:
        check("attention: output parses", False, str(e))
        return
    check("attention: format, version, gpu, model, tp, block size, length, backend",
          [a.get(k) for k in ("format", "version", "gpu", "model", "tp", "block_size",
                              "max_model_len", "attention_backend")] ==
          ["clustersim-llm-attention", 1, "a100", "meta-llama/Llama-2-7b-hf", 1, 16, 4096,
           "AttentionBackend.FLASH_ATTENTION"])
    check("attention: decode grid, medians as the CSV's text read (0.009000000000000001 kept)",
          a.get("decode") == {"kv_cache_size": [32, 4032], "batch_size": [1, 8],
                              "median_ms": [[0.009000000000000001, 0.018],
                                            [0.054, 0.40700000000000003]]},
          json.dumps(a.get("decode")))
    check("attention: prefill grid, null where chunk + kv > 4096",
          a.get("prefill") == {"kv_cache_size": [0, 3072], "prefill_chunk_size": [64, 2048],
                               "median_ms": [[0.015, 0.781], [0.065, None]]},
          json.dumps(a.get("prefill")))
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    check("attention: source names the sample (sha256), the fork, its commit, path and size, "
          "and Vidur's MIT notice",
          all(x in a.get("source", "") for x in (
              "data/llm/sources/attn.csv (sha256 " + sha + ")", "7 rows",
              "github:sw5sh/cs378-assignment3 at commit 7ac2fe9fb6cea9d4630659a10c5cccfc9fbdd776",
              "data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/attention.csv (10680357 characters)",
              "github:microsoft/vidur (MIT, Copyright (c) Microsoft Corporation)",
              "Git-LFS pointer")), a.get("source"))
    rc2, _, out2, _ = attn_convert(base, "attn", ATTN_ROWS)
    check("attention: same bytes twice", rc2 == 0 and files_of(out) == files_of(out2))
    p = subprocess.run([sys.executable, TOOL, "--attention-sample", path, "-o", out, "--check"],
                       capture_output=True, text=True)
    check("attention: --check on fresh output exits 0", p.returncode == 0, p.stderr)

    d0, p0 = ATTN_ROWS[1], ATTN_ROWS[4]
    cases = [
        ("a median above its max", [cell(d0, "time_stats.attn_decode.median", "0.02")] ,
         1, ["line 3", "time_stats.attn_decode.median", "0.02"]),
        ("a min above the median", [cell(p0, "time_stats.attn_prefill.min", "0.016")], 4,
         ["line 6", "time_stats.attn_prefill.median"]),
        ("another model's n_kv_head", [cell(d0, "n_kv_head", "8")], 1,
         ["line 3", "n_kv_head", "'8'"]),
        ("TP 2", [cell(p0, "num_tensor_parallel_workers", "2")], 4,
         ["line 6", "num_tensor_parallel_workers"]),
        ("another block size", [cell(d0, "block_size", "32")], 1,
         ["line 3", "block_size", "line 2"]),
        ("a decode row with prefill stats", [cell(d0, "time_stats.attn_prefill.min", "0.1")], 1,
         ["line 3", "time_stats.attn_prefill.min", "empty"]),
        ("a non-numeric median", [cell(d0, "time_stats.attn_decode.median", "fast")], 1,
         ["line 3", "time_stats.attn_decode.median", "'fast'"]),
        ("a prefill row with batch 2", [cell(p0, "batch_size", "2")], 4,
         ["line 6", "batch_size"]),
        ("a prefill point past max_model_len", [cell(p0, "kv_cache_size", "4064")], 4,
         ["line 6", "kv_cache_size"]),
        ("a duplicate point", [ATTN_ROWS[0]], 1, ["line 3", "line 2", "decode kv 32 batch 1"]),
        ("a missing grid point", [], 3, ["no row for decode kv_cache_size 4032 batch_size 8"]),
        ("a missing page_offset", [cell(d0, "page_offset", "")], 1, ["line 3", "page_offset"]),
        ("an odd is_prefill", [cell(d0, "is_prefill", "yes")], 1, ["line 3", "is_prefill"]),
    ]
    for i, (name, repl, at, want) in enumerate(cases):
        rows = list(ATTN_ROWS)
        rows[at:at + 1] = repl  # replace the row at index AT (or drop it)
        rc, err, out, path = attn_convert(base, f"attnbad{i}", rows)
        missing = [w for w in want if w not in err]
        check(f"attention bad input, {name}: exit 2 naming the file and {', '.join(want)}",
              rc == 2 and path in err and not missing, f"rc {rc}, stderr {err.strip()!r}")
        check(f"attention bad input, {name}: nothing written", not os.path.exists(out))
    rc, err, out, path = attn_convert(base, "attnbadhead", ATTN_ROWS,
                                      header=ATTN_HEAD.replace("attention_backend", "backend"))
    check("attention bad input, a missing column: exit 2 naming line 1 and the column",
          rc == 2 and "line 1" in err and "attention_backend" in err, err)

# ---------------------------------------------------------------------------------------
# The shipped files


def ascending(xs):
    return all(a < b for a, b in zip(xs, xs[1:]))


def positive_numbers(xs):
    return all(type(x) in (int, float) and x > 0 for x in xs)


def test_shipped():
    d = os.path.join(ROOT, "data", "llm")
    hexcommit = re.compile(r" at commit [0-9a-f]{40}, ")
    paths = sorted(glob.glob(os.path.join(d, "**", "*.json"), recursive=True))
    check("shipped: data/llm has models.json, 4 ops files, 4 collectives files, 1 attention file",
          sorted(os.path.relpath(p, d) for p in paths) == [
              "attention/a100/meta-llama__Llama-2-7b-hf.json",
              "collectives/a100_dgx.json", "collectives/a100_pairwise_nvlink.json",
              "collectives/h100_dgx.json", "collectives/h100_pairwise_nvlink.json",
              "models.json", "ops/a100/meta-llama__Llama-2-70b-hf.json",
              "ops/a100/meta-llama__Llama-2-7b-hf.json",
              "ops/h100/meta-llama__Llama-2-70b-hf.json",
              "ops/h100/meta-llama__Llama-2-7b-hf.json"], str(paths))
    docs = {}
    for p in paths:
        rel = os.path.relpath(p, d)
        try:
            with open(p) as f:
                docs[rel] = json.load(f)
        except (OSError, ValueError) as e:
            check(f"shipped {rel} parses", False, str(e))
            continue
        doc = docs[rel]
        if rel.startswith("attention/"):
            continue  # its source names a fork's copy and the sample (test_shipped_attention)
        check(f"shipped {rel}: version 1, source with prefix and commit",
              doc.get("version") == 1 and doc.get("source", "").startswith(PREFIX)
              and hexcommit.search(doc["source"]) is not None)

    models = {}
    m = docs.get("models.json", {})
    ok = m.get("format") == "clustersim-llm-models"
    types = {"name": str, "num_layers": int, "num_q_heads": int, "num_kv_heads": int,
             "embedding_dim": int, "mlp_hidden_dim": int, "max_position_embeddings": int,
             "use_gated_mlp": bool, "vocab_size": int, "post_attn_norm": bool,
             "no_tensor_parallel": bool}
    for x in m.get("models", []):
        ok = ok and set(x) == set(types) and all(type(x[k]) is t for k, t in types.items())
        models[x.get("name")] = x
    check("shipped models.json: models have exactly the format's fields and types", ok)
    check("shipped models.json: Llama-2-7B and -70B as in docs/research/vidur.md",
          {k: models.get("meta-llama/Llama-2-7b-hf", {}).get(k) for k in
           ("num_layers", "embedding_dim", "num_q_heads", "num_kv_heads", "mlp_hidden_dim",
            "max_position_embeddings", "vocab_size")} ==
          {"num_layers": 32, "embedding_dim": 4096, "num_q_heads": 32, "num_kv_heads": 32,
           "mlp_hidden_dim": 11008, "max_position_embeddings": 4096, "vocab_size": 32768}
          and [models.get("meta-llama/Llama-2-70b-hf", {}).get(k) for k in
               ("num_layers", "embedding_dim", "num_q_heads", "num_kv_heads", "mlp_hidden_dim")]
          == [80, 8192, 64, 8, 28672])
    check("shipped models.json: devices and nodes as in docs/research/vidur.md",
          m.get("devices") == [{"name": "a100", "memory_gib": 80, "fp16_tflops": 312,
                                "price_per_hour": 2.21},
                               {"name": "a40", "memory_gib": 45, "fp16_tflops": 150,
                                "price_per_hour": 1.28},
                               {"name": "h100", "memory_gib": 80, "fp16_tflops": 1000,
                                "price_per_hour": 4.25}]
          and {n["name"]: (n["device"], n["devices_per_node"]) for n in m.get("nodes", [])} ==
          {"a40_pairwise_nvlink": ("a40", 8), "a100_pairwise_nvlink": ("a100", 4),
           "h100_pairwise_nvlink": ("h100", 4), "a100_dgx": ("a100", 8),
           "h100_dgx": ("h100", 8)})

    for rel, o in sorted(docs.items()):
        if not rel.startswith("ops/"):
            continue
        ok = (o.get("format") == "clustersim-llm-ops" and o.get("ops") == OPS
              and rel == f"ops/{o.get('gpu')}/{o.get('model', '').replace('/', '__')}.json")
        cfg = models.get(o.get("model"), {})
        shape = o.get("model_shape", {})
        ok = ok and shape == {"n_head": cfg.get("num_q_heads"), "n_kv_head": cfg.get("num_kv_heads"),
                              "n_embd": cfg.get("embedding_dim"),
                              "n_expanded_embd": cfg.get("mlp_hidden_dim"),
                              "vocab_size": cfg.get("vocab_size"),
                              "use_gated_mlp": cfg.get("use_gated_mlp")}
        tps = o.get("tensor_parallel", [])
        ok = ok and [t["tp"] for t in tps] == [1, 2, 4, 8]
        for t in tps:
            n = t["num_tokens"]
            ok = (ok and ascending(n) and all(type(x) is int and x >= 1 for x in n)
                  and n[0] == 1 and n[-1] == 4096 and list(t["median_ms"]) == OPS
                  and all(len(v) == len(n) and positive_numbers(v) for v in t["median_ms"].values()))
        check(f"shipped {rel}: format, shape = models.json, every array as long as num_tokens, "
              "ascending, positive", ok)

    for rel, c in sorted(docs.items()):
        if not rel.startswith("collectives/"):
            continue
        ok = c.get("format") == "clustersim-llm-collectives" and rel == f"collectives/{c.get('node')}.json"
        keys = [(x["collective"], x["num_workers"], x["devices_per_node"]) for x in c.get("curves", [])]
        ok = ok and len(keys) == len(set(keys)) and ("send_recv", 2, 1) in keys and ("send_recv", 2, 2) in keys
        for x in c.get("curves", []):
            ok = (ok and ascending(x["size_bytes"]) and len(x["size_bytes"]) == len(x["median_ms"])
                  and positive_numbers(x["size_bytes"]) and positive_numbers(x["median_ms"])
                  and x["size_bytes"][0] == 2048)
        check(f"shipped {rel}: format, one curve per key, sizes ascending, positive", ok)

    # Values read off Vidur's CSVs by hand (docs/research/vidur.md, section 1).
    def op(gpu, model, tp, n, name):
        o = docs.get(f"ops/{gpu}/meta-llama__{model}.json")
        t = next(t for t in o["tensor_parallel"] if t["tp"] == tp)
        return t["median_ms"][name][t["num_tokens"].index(n)]

    def coll(node, kind, nw, dpn, size):
        c = docs.get(f"collectives/{node}.json")
        x = next(x for x in c["curves"] if (x["collective"], x["num_workers"], x["devices_per_node"]) == (kind, nw, dpn))
        return x["median_ms"][x["size_bytes"].index(size)]

    spots = [
        (lambda: op("a100", "Llama-2-7b-hf", 1, 512, "attn_pre_proj"), 0.234),
        (lambda: op("a100", "Llama-2-7b-hf", 1, 4096, "mlp_up_proj"), 3.3655),
        (lambda: op("a100", "Llama-2-7b-hf", 4, 512, "mlp_down_proj"), 0.065),
        (lambda: op("a100", "Llama-2-70b-hf", 4, 512, "attn_post_proj"), 0.1005),
        (lambda: op("a100", "Llama-2-70b-hf", 1, 1, "mlp_up_proj"), 0.58),
        (lambda: coll("a100_pairwise_nvlink", "all_reduce", 4, 4, 32 << 20), 2.157),
        (lambda: coll("a100_dgx", "all_reduce", 8, 8, 1 << 20), 0.064),
        (lambda: coll("h100_dgx", "all_reduce", 8, 8, 32 << 20), 0.196),
        (lambda: coll("a100_pairwise_nvlink", "send_recv", 2, 1, 32 << 20), 16.36),
    ]
    for i, (get, want) in enumerate(spots):
        try:
            got = get()
        except (StopIteration, ValueError, AttributeError, TypeError, KeyError) as e:
            got = f"missing ({e!r})"
        check(f"shipped spot value {i + 1} = {want} (docs/research/vidur.md)",
              isinstance(got, float) and abs(got - want) < 1e-9, f"got {got}")


def test_shipped_attention():
    rel = "attention/a100/meta-llama__Llama-2-7b-hf.json"
    try:
        with open(os.path.join(ROOT, "data", "llm", rel)) as f:
            a = json.load(f)
    except (OSError, ValueError) as e:
        check(f"shipped {rel} parses", False, str(e))
        return
    dec, pre = a.get("decode", {}), a.get("prefill", {})
    check(f"shipped {rel}: format, model, TP 1, the sampled grid values",
          a.get("format") == "clustersim-llm-attention" and a.get("version") == 1
          and a.get("model") == "meta-llama/Llama-2-7b-hf" and a.get("tp") == 1
          and dec.get("kv_cache_size") == [32, 64, 128, 256, 512, 1024, 2048, 3008, 4032]
          and dec.get("batch_size") == [1, 2, 4, 8, 16, 32, 64, 96, 128]
          and pre.get("kv_cache_size") == [0, 256, 512, 1024, 2048, 3072]
          and pre.get("prefill_chunk_size") == [64, 128, 256, 512, 1024, 2048, 4096])
    dm, pm = dec.get("median_ms", []), pre.get("median_ms", [])
    check(f"shipped {rel}: decode grid complete and positive",
          len(dm) == 9 and all(len(r) == 9 and positive_numbers(r) for r in dm))
    ok = len(pm) == 6
    for kv, r in zip(pre.get("kv_cache_size", []), pm):
        for c, v in zip(pre.get("prefill_chunk_size", []), r):
            ok = ok and len(r) == 7 and ((v is None) == (c + kv > 4096))
            ok = ok and (v is None or positive_numbers([v]))
    check(f"shipped {rel}: prefill grid complete, positive, null exactly where chunk + kv > 4096", ok)
    # Attention decode work grows with the batch: at fixed kv the median should rise with
    # batch size. Vidur's timer has 1 us steps, so at the smallest sizes two batch sizes can
    # time the same; those are listed, and more than a few would mean rows out of place.
    flat = [(kv, b) for kv, r in zip(dec.get("kv_cache_size", []), dm)
            for b, x, y in zip(dec.get("batch_size", [])[1:], r, r[1:]) if not y > x]
    check(f"shipped {rel}: decode median rises with batch at fixed kv except at most 3 points "
          f"(not rising: {flat})", len(flat) <= 3 and all(y >= x for r in dm for x, y in zip(r, r[1:])))
    # Values read off the fork's copy by hand in docs/research/vidur.md, section 1.
    try:
        spots = [(dm[0][0], 0.009), (dm[0][5], 0.048), (dm[0][6], 0.097)]
    except (IndexError, TypeError):
        spots = [(None, 0.009)]
    check(f"shipped {rel}: decode kv 32 batch 1/32/64 = 0.009/0.048/0.097 (docs/research/vidur.md)",
          all(isinstance(g, float) and abs(g - w) < 1e-9 for g, w in spots), str(spots))
    ok = True
    try:
        sample = os.path.join(ROOT, "data", "llm", "sources",
                              "vidur_attention_a100_llama2_7b_tp1_sample.csv")
        p = subprocess.run([sys.executable, TOOL, "--attention-sample", sample, "-o",
                            os.path.join(ROOT, "data", "llm"), "--check"],
                           capture_output=True, text=True)
        ok = p.returncode == 0
    except OSError:
        ok = False
    check(f"shipped {rel}: made from the shipped sample (--check exits 0)", ok)


def main():
    if shutil.which("git") is None:
        print("skip: git is not installed (the converter reads a git directory)")
        return 77
    base = tempfile.mkdtemp(prefix="convert_vidur_test.")
    try:
        test_good(base)
        test_bad(base)
        test_attention(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    test_shipped()
    test_shipped_attention()
    print(f"{'FAIL' if failures else 'ok'}: {failures} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
