#!/usr/bin/env python3
"""Convert Vidur's public profiling data and model configs into clustersim's LLM data files.

Run by hand when the source changes; the outputs are committed (data/llm/README.md):

    python3 tools/convert_vidur.py --vidur GITDIR [--commit REV] [-o DIR]
        [--gpus a100,h100] [--models meta-llama/Llama-2-7b-hf,...] [--nodes ...]
        [--differing-duplicates first|error] [--check]
    python3 tools/convert_vidur.py --attention-sample CSV [-o DIR] [--check]

GITDIR is a git directory (bare or a clone) of github:microsoft/vidur (MIT). Files are read
with `git show REV:PATH`, so no work tree is needed and the commit and every file's blob id
go into the outputs' "source". Outputs (format: data/llm/README.md), in DIR (default data/llm):
  models.json                       every model of vidur/config/model_config.py that has
                                    profiling data, the devices of device_sku_config.py and
                                    the nodes of node_sku_config.py
  ops/<gpu>/<org>__<model>.json     the .median columns of the nine timed ops of
                                    data/profiling/compute/<gpu>/<org>/<model>/mlp.csv
  collectives/<node>.json           the rank-0 median curves of
                                    data/profiling/network/<node>/{all_reduce,send_recv}.csv
The Python config files are parsed (module ast), never imported, so Vidur's dependencies are
not needed. Attention tables are not read from GITDIR: their blobs are missing from the
snapshot this was written against.

--attention-sample CSV converts instead a sample of one attention table, copied row by row
from a public copy of it (data/llm/sources/vidur_attention_a100_llama2_7b_tp1_sample.csv:
Vidur's a100 Llama-2-7B attention.csv, TP 1 rows, with a first column page_offset), into
attention/a100/meta-llama__Llama-2-7b-hf.json: the attn_decode medians on a kv_cache_size x
batch_size grid and the attn_prefill medians on a kv_cache_size x prefill_chunk_size grid,
null where chunk + kv exceeds max_model_len. Every point of both grids must have exactly
one row; every row must have the model shape of meta-llama/Llama-2-7b-hf at TP 1, one
block_size, max_model_len and attention_backend, the stats of its own phase only, and
min <= median <= max in each stat. Bad input exits 2 naming the file, line and column.

Two rows for one point (ops: tp and num_tokens; collectives: collective, num_workers,
devices_per_node and size) collapse when every kept median agrees. When they differ, the
first row is kept and the output's "source" names both lines (every mlp.csv of Vidur has such
pairs, at 2048 and 4096 tokens); --differing-duplicates error makes them an error instead.
Bad input (a file missing at the commit, a missing column, a cell that is not what its
column needs, rows of one file with different model shapes) exits 2 with a message naming
the file, the line and the column; nothing is written then. A float is written as Python's
repr of the CSV's own decimal text parsed to a float, so the output is the same bytes on
every run. --check compares instead of writing and exits 1 when an output is stale.
Python 3 standard library only.
"""

import argparse
import ast
import csv
import hashlib
import io
import json
import math
import os
import re
import subprocess
import sys

ORIGIN = "github:microsoft/vidur (MIT, Copyright (c) Microsoft Corporation)"
TOOL = "tools/convert_vidur.py"
OPS = ["input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
       "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]
# mlp.csv shape column -> (model_config.py field it must equal, kind)
SHAPE = [("n_head", "num_q_heads", "int"), ("n_kv_head", "num_kv_heads", "int"),
         ("n_embd", "embedding_dim", "int"), ("n_expanded_embd", "mlp_hidden_dim", "int"),
         ("vocab_size", "vocab_size", "int"), ("use_gated_mlp", "use_gated_mlp", "bool")]
MODEL_FIELDS = [("num_layers", "int"), ("num_q_heads", "int"), ("num_kv_heads", "int"),
                ("embedding_dim", "int"), ("mlp_hidden_dim", "int"),
                ("max_position_embeddings", "int"), ("use_gated_mlp", "bool"),
                ("vocab_size", "int"), ("post_attn_norm", "bool"),
                ("no_tensor_parallel", "bool")]
COLLECTIVES = ["all_reduce", "send_recv"]
DEFAULT_GPUS = ["a100", "h100"]
DEFAULT_MODELS = ["meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf"]
DEFAULT_NODES = ["a100_pairwise_nvlink", "a100_dgx", "h100_pairwise_nvlink", "h100_dgx"]
MODEL_CONFIG = "vidur/config/model_config.py"
DEVICE_CONFIG = "vidur/config/device_sku_config.py"
NODE_CONFIG = "vidur/config/node_sku_config.py"
# Vidur's config explorer prices its deployments from this dict ($ per GPU hour).
PRICE_CONFIG = "vidur/config_optimizer/analyzer/constants.py"
PRICE_NAME = "GPU_COSTS"
INT_TEXT = re.compile(r"^[0-9]+$")


class Bad(Exception):
    """Bad input: the message names the file, the line and the column or field."""


class Git:
    """Reads files of one commit of a git directory."""

    def __init__(self, gitdir, rev):
        self.gitdir = gitdir
        self.commit = self._run(["rev-parse", "--verify", "--quiet", rev + "^{commit}"],
                                f"{gitdir}: no commit {rev!r}").strip()

    def _run(self, args, what):
        try:
            p = subprocess.run(["git", "-C", self.gitdir] + args, capture_output=True)
        except OSError as e:
            raise Bad(f"cannot run git: {e}")
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace").strip()
            raise Bad(what + (f" ({err})" if err else ""))
        return p.stdout.decode("utf-8")

    def blob(self, path):
        """The blob id of PATH at the commit; Bad when the commit has no such file."""
        return self._run(["rev-parse", "--verify", "--quiet", f"{self.commit}:{path}"],
                         f"{path}: file missing at commit {self.commit}").strip()

    def show(self, path):
        """The text of PATH at the commit; Bad when missing or its blob cannot be read."""
        self.blob(path)
        return self._run(["show", f"{self.commit}:{path}"],
                         f"{path}: file present at commit {self.commit} but its contents "
                         "cannot be read (blob absent from this git directory?)")

    def ls(self, prefix):
        """The file paths under PREFIX at the commit (empty when there is none)."""
        out = self._run(["ls-tree", "-r", "--name-only", self.commit, "--", prefix],
                        f"{prefix}: cannot list at commit {self.commit}")
        return [line for line in out.split("\n") if line]

    def cite(self, path):
        return f"{path} (git blob {self.blob(path)})"


# ---------------------------------------------------------------------------------------
# Vidur's config dataclasses, read from the source text


def literal(node):
    """The value of a constant default: a Python scalar, or 'Enum.NAME' for an enum member;
    None (not a constant) for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def returned(fn):
    """The constant a one-statement method returns, or None."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return literal(body[0].value)
    return None


class ConfigFile:
    """The dataclasses of one config file: per class its bases, its own field defaults
    (with line numbers) and the constants its get_name/get_type return."""

    def __init__(self, git, path):
        self.path = path
        self.cite = git.cite(path)
        text = git.show(path)
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as e:
            raise Bad(f"{path}: line {e.lineno}: not Python: {e.msg}")
        self.classes = {}
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            fields, methods = {}, {}
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) \
                        and st.value is not None:
                    fields[st.target.id] = (st.value, st.lineno)
                elif isinstance(st, ast.FunctionDef):
                    methods[st.name] = returned(st)
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            self.classes[node.name] = {"bases": bases, "fields": fields, "methods": methods,
                                       "line": node.lineno}

    def field(self, cls, name, kind):
        """The default of field NAME of class CLS, inherited along the first bases defined
        in this file (Vidur's configs inherit singly); Bad when absent or of another kind."""
        c, seen = cls, set()
        while c in self.classes and c not in seen:
            seen.add(c)
            info = self.classes[c]
            if name in info["fields"]:
                node, line = info["fields"][name]
                v = literal(node)
                ok = {"int": type(v) is int, "bool": type(v) is bool,
                      "enum": isinstance(v, str) and "." in v}[kind]
                if not ok:
                    raise Bad(f"{self.path}: line {line}: class {c}, field {name}: expected "
                              f"{'an integer' if kind == 'int' else 'True or False' if kind == 'bool' else 'an enum member'}, "
                              f"got {ast.unparse(node)!r}")
                return v
            local = [b for b in info["bases"] if b in self.classes]
            c = local[0] if local else None
        raise Bad(f"{self.path}: line {self.classes[cls]['line']}: class {cls}: no default "
                  f"for field {name} (expected one in the class or its bases)")

    def by_method(self, method):
        """{returned constant: class name} over the classes defining METHOD as a constant."""
        out = {}
        for name, info in self.classes.items():
            v = info["methods"].get(method)
            if v is None:
                continue
            if v in out:
                raise Bad(f"{self.path}: line {info['line']}: class {name}: {method}() returns "
                          f"{v!r}, as class {out[v]} does")
            out[v] = name
        return out


def enum_name(value, enum, where):
    """Vidur's name of an enum member: its member name in lower case (BaseIntEnum.__str__)."""
    if not (isinstance(value, str) and value.startswith(enum + ".")):
        raise Bad(f"{where}: expected a member of {enum}, got {value!r}")
    return value[len(enum) + 1:].lower()


def read_models(git, names):
    cfg = ConfigFile(git, MODEL_CONFIG)
    by_name = cfg.by_method("get_name")
    models = {}
    for name in names:
        if name not in by_name:
            raise Bad(f"{MODEL_CONFIG}: no class whose get_name() returns {name!r} "
                      f"(the model has profiling data under data/profiling/compute)")
        cls = by_name[name]
        m = {"name": name}
        for f, kind in MODEL_FIELDS:
            m[f] = cfg.field(cls, f, kind)
        models[name] = m
    return cfg, models


def read_devices(git):
    cfg = ConfigFile(git, DEVICE_CONFIG)
    devices = {}
    for value, cls in cfg.by_method("get_type").items():
        name = enum_name(value, "DeviceSKUType",
                         f"{DEVICE_CONFIG}: line {cfg.classes[cls]['line']}: class {cls}: get_type()")
        devices[name] = {"name": name, "memory_gib": cfg.field(cls, "total_memory_gb", "int"),
                         "fp16_tflops": cfg.field(cls, "fp16_tflops", "int")}
    return cfg, devices


def read_prices(git):
    """{device: $ per GPU hour} from the module-level dict PRICE_NAME of PRICE_CONFIG, its
    line, and the comment lines right above it (Vidur names the prices' origin and date
    there). Bad when the dict is absent or not a dict of names to positive numbers."""
    text = git.show(PRICE_CONFIG)
    try:
        tree = ast.parse(text, filename=PRICE_CONFIG)
    except SyntaxError as e:
        raise Bad(f"{PRICE_CONFIG}: line {e.lineno}: not Python: {e.msg}")
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == PRICE_NAME):
            continue
        where = f"{PRICE_CONFIG}: line {node.lineno}: {PRICE_NAME}"
        if not isinstance(node.value, ast.Dict):
            raise Bad(f"{where}: expected a dict of device names to $ per hour, "
                      f"got {ast.unparse(node.value)!r}")
        prices = {}
        for k, v in zip(node.value.keys, node.value.values):
            key, val = literal(k) if k is not None else None, literal(v)
            if not isinstance(key, str) or type(val) not in (int, float) or not val > 0:
                raise Bad(f"{where}: expected entries \"device\": a number > 0, got "
                          f"{ast.unparse(k) if k is not None else '**'}: {ast.unparse(v)}")
            prices[key] = float(val)
        lines = text.split("\n")
        comments, i = [], node.lineno - 2
        while i >= 0 and lines[i].lstrip().startswith("#"):
            comments.insert(0, lines[i].lstrip()[1:].strip().rstrip("."))
            i -= 1
        return prices, node.lineno, "; ".join(comments)
    raise Bad(f"{PRICE_CONFIG}: no module-level {PRICE_NAME} = {{...}} (expected Vidur's GPU "
              f"prices in $ per hour)")


def read_nodes(git, devices):
    cfg = ConfigFile(git, NODE_CONFIG)
    nodes = {}
    for value, cls in cfg.by_method("get_type").items():
        where = f"{NODE_CONFIG}: line {cfg.classes[cls]['line']}: class {cls}"
        name = enum_name(value, "NodeSKUType", where + ": get_type()")
        dev = enum_name(cfg.field(cls, "device_sku_type", "enum"), "DeviceSKUType",
                        where + ": field device_sku_type")
        if dev not in devices:
            raise Bad(f"{where}: field device_sku_type: device {dev!r} is not in {DEVICE_CONFIG}")
        nodes[name] = {"name": name, "device": dev,
                       "devices_per_node": cfg.field(cls, "num_devices_per_node", "int")}
    return cfg, nodes


# ---------------------------------------------------------------------------------------
# CSV tables


class Table:
    """One CSV file at the commit: its header and rows, with cell readers whose errors name
    the file, the line and the column."""

    def __init__(self, git, path, need):
        self.path = path
        self.cite = git.cite(path)
        rd = csv.reader(io.StringIO(git.show(path), newline=""))
        try:
            header = next(rd)
        except StopIteration:
            raise Bad(f"{path}: line 1: empty file (expected a header row)")
        self.col = {}
        for i, name in enumerate(header):
            if name in self.col:
                raise Bad(f"{path}: line 1 (header): column {name!r} appears twice")
            self.col[name] = i
        missing = [c for c in need if c not in self.col]
        if missing:
            raise Bad(f"{path}: line 1 (header): missing column {', '.join(missing)}")
        self.width = len(header)
        self.rows = []
        for row in rd:
            if not row:
                continue
            if len(row) != self.width:
                raise Bad(f"{path}: line {rd.line_num}: {len(row)} cells, expected "
                          f"{self.width} (one per header column)")
            self.rows.append((rd.line_num, row))

    def _cell(self, line, row, col):
        return row[self.col[col]]

    def bad(self, line, col, expected, text):
        return Bad(f"{self.path}: line {line}, column {col}: expected {expected}, got {text!r}")

    def int(self, line, row, col, least=0):
        text = self._cell(line, row, col)
        if not INT_TEXT.match(text) or int(text) < least:
            raise self.bad(line, col, f"an integer >= {least}", text)
        return int(text)

    def bool(self, line, row, col):
        text = self._cell(line, row, col)
        if text not in ("True", "False"):
            raise self.bad(line, col, "True or False", text)
        return text == "True"

    def ms(self, line, row, col):
        """A time in ms: the float of the cell's decimal text, finite and above 0."""
        text = self._cell(line, row, col)
        try:
            v = float(text)
        except ValueError:
            v = None
        if v is None or not math.isfinite(v) or v <= 0 or text.strip() != text:
            raise self.bad(line, col, "a positive number of ms", text)
        return v

    def text(self, line, row, col):
        return self._cell(line, row, col)


class Points:
    """Values by key, in the first row's order of keys; a second row for a key collapses
    when its values agree and is dropped (noted, or an error) when they differ."""

    def __init__(self, table, mode, columns):
        self.table, self.mode, self.columns = table, mode, columns
        self.values, self.lines, self.differing, self.repeats = {}, {}, [], 0

    def add(self, key, line, values, label):
        if key not in self.values:
            self.values[key], self.lines[key] = values, line
            return
        old = self.values[key]
        if old == values:
            self.repeats += 1
            return
        col = next(c for c, a, b in zip(self.columns, old, values) if a != b)
        if self.mode == "error":
            raise Bad(f"{self.table.path}: line {line}, column {col}: {label} also has line "
                      f"{self.lines[key]}, whose value differs ({old[self.columns.index(col)]!r} "
                      f"vs {values[self.columns.index(col)]!r}); expected one row per point "
                      "or identical rows")
        self.differing.append((label, self.lines[key], line))

    def note(self):
        out = ""
        if self.repeats:
            out += (f"; {self.repeats} row{'s' if self.repeats > 1 else ''} repeating a point "
                    "with the same kept values collapsed")
        if self.differing:
            n = len(self.differing)
            pairs = "; ".join(f"{label} lines {a}/{b}" for label, a, b in self.differing)
            out += (f"; {n} point{'s' if n > 1 else ''} had a second row with other values, "
                    f"the first row was kept ({pairs})")
        return out


def convert_ops(git, gpu, model, config, mode):
    path = f"data/profiling/compute/{gpu}/{model}/mlp.csv"
    med = [f"time_stats.{op}.median" for op in OPS]
    t = Table(git, path, med + [c for c, _, _ in SHAPE]
              + ["num_tokens", "num_tensor_parallel_workers"])
    if not t.rows:
        raise Bad(f"{path}: line 2: no data rows (expected at least one)")
    shape, shape_line = None, None
    pts = Points(t, mode, med)
    for line, row in t.rows:
        s = {c: (t.int(line, row, c, 1) if kind == "int" else t.bool(line, row, c))
             for c, _, kind in SHAPE}
        if shape is None:
            shape, shape_line = s, line
            for c, field, _ in SHAPE:
                if s[c] != config[field]:
                    raise Bad(f"{path}: line {line}, column {c}: expected {config[field]!r} "
                              f"({MODEL_CONFIG} {model} field {field}), got {s[c]!r}")
        else:
            for c, _, _ in SHAPE:
                if s[c] != shape[c]:
                    raise Bad(f"{path}: line {line}, column {c}: expected {shape[c]!r} as on "
                              f"line {shape_line} (one model shape per file), got {s[c]!r}")
        tp = t.int(line, row, "num_tensor_parallel_workers", 1)
        n = t.int(line, row, "num_tokens", 1)
        pts.add((tp, n), line, [t.ms(line, row, c) for c in med], f"tp {tp} num_tokens {n}")
    tps = []
    for tp in sorted({k[0] for k in pts.values}):
        ns = sorted(k[1] for k in pts.values if k[0] == tp)
        tps.append({"tp": tp, "num_tokens": ns,
                    "median_ms": {op: [pts.values[(tp, n)][i] for n in ns]
                                  for i, op in enumerate(OPS)}})
    source = (f"Converted by {TOOL} from {ORIGIN} at commit {git.commit}, {t.cite}: the "
              f".median columns (ms per layer per tensor-parallel shard) of the nine ops "
              f"{', '.join(OPS)}, by num_tensor_parallel_workers and num_tokens, from "
              f"{len(t.rows)} rows; emb and the min/max/mean/std columns left out{pts.note()}")
    return {"format": "clustersim-llm-ops", "version": 1, "source": source,
            "gpu": gpu, "model": model, "model_shape": shape, "ops": OPS,
            "tensor_parallel": tps}


def convert_collectives(git, node, nodes, mode):
    if node not in nodes:
        raise Bad(f"{NODE_CONFIG}: no node {node!r} (nodes there: {', '.join(sorted(nodes))})")
    curves, cites, notes = {}, [], []
    for coll in COLLECTIVES:
        path = f"data/profiling/network/{node}/{coll}.csv"
        col = f"time_stats.{coll}.median"
        t = Table(git, path, [col, "rank", "num_workers", "size", "collective",
                              "devices_per_node"])
        cites.append(t.cite)
        pts = Points(t, mode, [col])
        other_ranks = 0
        for line, row in t.rows:
            if t.text(line, row, "collective") != coll:
                raise t.bad(line, "collective", repr(coll), t.text(line, row, "collective"))
            if "max_devices_per_node" in t.col:
                mx = t.int(line, row, "max_devices_per_node", 1)
                if mx != nodes[node]["devices_per_node"]:
                    raise t.bad(line, "max_devices_per_node",
                                 f"{nodes[node]['devices_per_node']} ({NODE_CONFIG} {node})",
                                 t.text(line, row, "max_devices_per_node"))
            if t.int(line, row, "rank") != 0:
                other_ranks += 1
                continue
            nw = t.int(line, row, "num_workers", 1)
            dpn = t.int(line, row, "devices_per_node", 1)
            size = t.int(line, row, "size", 1)
            pts.add((coll, nw, dpn, size), line, [t.ms(line, row, col)],
                    f"num_workers {nw} devices_per_node {dpn} size {size}")
        if not pts.values:
            raise Bad(f"{path}: line 2: no rank-0 rows (expected at least one)")
        for k, v in pts.values.items():
            curves.setdefault(k[:3], []).append((k[3], v[0]))
        notes.append(f"{coll}.csv: {len(t.rows)} rows, {len(t.rows) - other_ranks} of rank 0"
                     f"{pts.note()}")
    out = []
    for (coll, nw, dpn) in sorted(curves, key=lambda k: (COLLECTIVES.index(k[0]), k[1], k[2])):
        pts = sorted(curves[(coll, nw, dpn)])
        out.append({"collective": coll, "num_workers": nw, "devices_per_node": dpn,
                    "size_bytes": [s for s, _ in pts], "median_ms": [v for _, v in pts]})
    source = (f"Converted by {TOOL} from {ORIGIN} at commit {git.commit}, "
              f"{' and '.join(cites)}: the median column (ms) of the rank-0 rows, one curve "
              f"per collective, num_workers and devices_per_node, by size in bytes; "
              + "; ".join(notes))
    return {"format": "clustersim-llm-collectives", "version": 1, "source": source,
            "node": node, "curves": out}


def convert_models(git):
    profiled = sorted({"/".join(p.split("/")[4:-1]) for p in git.ls("data/profiling/compute")
                       if p.endswith("/mlp.csv") and len(p.split("/")) == 7})
    if not profiled:
        raise Bad(f"data/profiling/compute: no <gpu>/<org>/<model>/mlp.csv at commit {git.commit}")
    mcfg, models = read_models(git, profiled)
    dcfg, devices = read_devices(git)
    ncfg, nodes = read_nodes(git, devices)
    prices, price_line, price_note = read_prices(git)
    priced = [n for n in sorted(devices) if n in prices]
    for n in priced:
        devices[n]["price_per_hour"] = prices[n]
    source = (f"Converted by {TOOL} from {ORIGIN} at commit {git.commit}, {mcfg.cite}, "
              f"{dcfg.cite}, {ncfg.cite} and {git.cite(PRICE_CONFIG)}: the field defaults of "
              f"every model config class whose model has an mlp.csv under "
              f"data/profiling/compute, every device (total_memory_gb as memory_gib, "
              f"fp16_tflops) and every node (device_sku_type, num_devices_per_node); "
              f"price_per_hour ($ per GPU hour) from {PRICE_NAME} (line {price_line}) for "
              f"{', '.join(priced) if priced else 'no device'}"
              + (f", which Vidur's comment dates: \"{price_note}\"" if price_note else "")
              + (f"; no price for {', '.join(n for n in sorted(devices) if n not in prices)}"
                 if len(priced) < len(devices) else ""))
    doc = {"format": "clustersim-llm-models", "version": 1, "source": source,
           "models": [models[n] for n in profiled],
           "devices": [devices[n] for n in sorted(devices)],
           "nodes": [nodes[n] for n in sorted(nodes)]}
    return doc, models, nodes


# ---------------------------------------------------------------------------------------
# A sample of an attention table (attention.csv), from a local CSV file

# Where the shipped sample was copied from, and why that copy is taken as Vidur's file.
ATTN_COPY = {
    "repo": "github:sw5sh/cs378-assignment3",
    "commit": "7ac2fe9fb6cea9d4630659a10c5cccfc9fbdd776",
    "path": "data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/attention.csv",
    "chars": 10680357,
    "why": ("the snapshot of github:microsoft/vidur used for the other files lacks every "
            "attention.csv blob; this public fork's copy has the size (10680357) that the "
            "Git-LFS pointer of another fork (github:Nisarg-M-Patel/llm-fair-scheduling) "
            "records for the same path, so it is taken to be Vidur's file"),
}
ATTN_GPU = "a100"
ATTN_MODEL = "meta-llama/Llama-2-7b-hf"
# Vidur's model_config.py values for that model (data/llm/models.json); the TP is the sample's.
ATTN_SHAPE = [("n_embd", 4096), ("n_q_head", 32), ("n_kv_head", 32),
              ("num_tensor_parallel_workers", 1)]
ATTN_SAME = ["block_size", "max_model_len", "attention_backend"]
ATTN_STATS = ["attn_input_reshape", "attn_decode", "attn_output_reshape", "attn_prefill"]
ATTN_KINDS = ["min", "max", "mean", "median", "std"]


class CsvFile:
    """A local CSV file: header and rows, with cell readers whose errors name the file,
    the line and the column."""

    def __init__(self, path, need):
        self.path = path
        try:
            with open(path, "rb") as f:
                self.data = f.read()
            text = self.data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise Bad(f"{path}: cannot read as UTF-8 text ({e})")
        rd = csv.reader(io.StringIO(text, newline=""))
        try:
            header = next(rd)
        except StopIteration:
            raise Bad(f"{path}: line 1: empty file (expected a header row)")
        except csv.Error as e:
            raise Bad(f"{path}: line 1: not CSV ({e})")
        self.col = {}
        for i, name in enumerate(header):
            if name in self.col:
                raise Bad(f"{path}: line 1 (header): column {name!r} appears twice")
            self.col[name] = i
        missing = [c for c in need if c not in self.col]
        if missing:
            raise Bad(f"{path}: line 1 (header): missing column {', '.join(missing)}")
        self.rows = []
        try:
            for row in rd:
                if not row:
                    continue
                if len(row) != len(header):
                    raise Bad(f"{path}: line {rd.line_num}: {len(row)} cells, expected "
                              f"{len(header)} (one per header column)")
                self.rows.append((rd.line_num, row))
        except csv.Error as e:
            raise Bad(f"{path}: line {rd.line_num}: not CSV ({e})")

    def text(self, line, row, col):
        return row[self.col[col]]

    def bad(self, line, col, expected, text):
        return Bad(f"{self.path}: line {line}, column {col}: expected {expected}, got {text!r}")

    def int(self, line, row, col, least=0):
        text = self.text(line, row, col)
        if not INT_TEXT.match(text) or int(text) < least:
            raise self.bad(line, col, f"an integer >= {least}", text)
        return int(text)

    def number(self, line, row, col):
        """A time in ms or a standard deviation: the float of the cell's text, finite, >= 0."""
        text = self.text(line, row, col)
        try:
            v = float(text)
        except ValueError:
            v = None
        if v is None or not math.isfinite(v) or v < 0 or text.strip() != text:
            raise self.bad(line, col, "a number >= 0", text)
        return v


def attention_stat(t, line, row, op, present):
    """The median of stat OP on a row, after checking that its five cells are all empty
    (PRESENT false) or all numbers with min <= median <= max (PRESENT true); None when empty."""
    cols = [f"time_stats.{op}.{k}" for k in ATTN_KINDS]
    if not present:
        for c in cols:
            if t.text(line, row, c) != "":
                raise t.bad(line, c, "an empty cell (this row times the other phase)",
                            t.text(line, row, c))
        return None
    v = {k: t.number(line, row, c) for k, c in zip(ATTN_KINDS, cols)}
    if not v["min"] <= v["median"] <= v["max"]:
        raise Bad(f"{t.path}: line {line}, column time_stats.{op}.median: expected a value "
                  f"between time_stats.{op}.min ({v['min']!r}) and .max ({v['max']!r}), "
                  f"got {v['median']!r}")
    return v["median"]


def convert_attention(path):
    need = (["page_offset"] + [f"time_stats.{op}.{k}" for op in ATTN_STATS for k in ATTN_KINDS]
            + [c for c, _ in ATTN_SHAPE] + ATTN_SAME
            + ["batch_size", "prefill_chunk_size", "kv_cache_size", "is_prefill"])
    t = CsvFile(path, need)
    if not t.rows:
        raise Bad(f"{path}: line 2: no data rows (expected at least one)")
    first = None
    decode, prefill = {}, {}
    for line, row in t.rows:
        t.int(line, row, "page_offset")
        for c, want in ATTN_SHAPE:
            if t.int(line, row, c) != want:
                raise t.bad(line, c, f"{want} ({ATTN_MODEL} at TP 1)", t.text(line, row, c))
        same = {"block_size": t.int(line, row, "block_size", 1),
                "max_model_len": t.int(line, row, "max_model_len", 1),
                "attention_backend": t.text(line, row, "attention_backend")}
        if first is None:
            first = (line, same)
            if same["attention_backend"] == "":
                raise t.bad(line, "attention_backend", "a backend name", "")
        for c in ATTN_SAME:
            if same[c] != first[1][c]:
                raise t.bad(line, c, f"{first[1][c]!r} as on line {first[0]} (one table)",
                            t.text(line, row, c))
        phase = t.text(line, row, "is_prefill")
        if phase not in ("True", "False"):
            raise t.bad(line, "is_prefill", "True or False", phase)
        pre = phase == "True"
        kv = t.int(line, row, "kv_cache_size")
        for op in ("attn_input_reshape", "attn_output_reshape"):
            attention_stat(t, line, row, op, True)
        if pre:
            if t.int(line, row, "batch_size") != 1:
                raise t.bad(line, "batch_size", "1 (prefill rows time one request)",
                            t.text(line, row, "batch_size"))
            chunk = t.int(line, row, "prefill_chunk_size", 1)
            if chunk + kv > same["max_model_len"]:
                raise t.bad(line, "kv_cache_size", f"at most max_model_len - prefill_chunk_size "
                            f"= {same['max_model_len'] - chunk}", t.text(line, row, "kv_cache_size"))
            attention_stat(t, line, row, "attn_decode", False)
            med = attention_stat(t, line, row, "attn_prefill", True)
            key, points, what = (kv, chunk), prefill, f"prefill chunk {chunk} kv {kv}"
        else:
            if t.text(line, row, "prefill_chunk_size") != "0":
                raise t.bad(line, "prefill_chunk_size", "0 (decode row)",
                            t.text(line, row, "prefill_chunk_size"))
            batch = t.int(line, row, "batch_size", 1)
            med = attention_stat(t, line, row, "attn_decode", True)
            attention_stat(t, line, row, "attn_prefill", False)
            key, points, what = (kv, batch), decode, f"decode kv {kv} batch {batch}"
        if med <= 0:
            raise t.bad(line, f"time_stats.{'attn_prefill' if pre else 'attn_decode'}.median",
                        "a positive number of ms", str(med))
        if key in points:
            raise Bad(f"{path}: line {line}, column kv_cache_size: {what} also has line "
                      f"{points[key][0]}; expected one row per point (take the first of "
                      "Vidur's repeated rows)")
        points[key] = (line, med)
    same = first[1]

    def grid(points, label, other, allowed):
        kvs = sorted({k for k, _ in points})
        xs = sorted({x for _, x in points})
        out = []
        for kv in kvs:
            r = []
            for x in xs:
                if (kv, x) in points:
                    r.append(points[(kv, x)][1])
                elif allowed(kv, x):
                    raise Bad(f"{path}: line {len(t.rows) + 2}: no row for {label} kv_cache_size "
                              f"{kv} {other} {x} (expected every point of the grid "
                              f"{len(kvs)} kv x {len(xs)} {other})")
                else:
                    r.append(None)
            out.append(r)
        return kvs, xs, out

    if not decode or not prefill:
        raise Bad(f"{path}: line {len(t.rows) + 2}: no {'decode' if not decode else 'prefill'} "
                  "rows (expected both phases)")
    dkv, batches, dmed = grid(decode, "decode", "batch_size", lambda kv, b: True)
    pkv, chunks, pmed = grid(prefill, "prefill", "prefill_chunk_size",
                             lambda kv, c: kv + c <= same["max_model_len"])
    name = os.path.basename(path)
    sha = hashlib.sha256(t.data).hexdigest()
    c = ATTN_COPY
    source = (f"Converted by {TOOL} from data/llm/sources/{name} (sha256 {sha}), {len(t.rows)} "
              f"rows copied character for character, with their page_offset, from {c['repo']} "
              f"at commit {c['commit']}, {c['path']} ({c['chars']} characters), a copy of "
              f"{ORIGIN}'s file of that path: {c['why']}. A sample of Vidur's TP 1 grid: decode "
              f"kv_cache_size {dkv} x batch_size {batches}; prefill prefill_chunk_size {chunks} x "
              f"kv_cache_size {pkv} where chunk + kv <= {same['max_model_len']}; the "
              "time_stats.attn_decode.median and time_stats.attn_prefill.median columns (ms per "
              "layer per tensor-parallel shard); where Vidur's table repeats a point the sample "
              "holds its first row")
    return {"format": "clustersim-llm-attention", "version": 1, "source": source,
            "gpu": ATTN_GPU, "model": ATTN_MODEL, "tp": ATTN_SHAPE[-1][1],
            "block_size": same["block_size"], "max_model_len": same["max_model_len"],
            "attention_backend": same["attention_backend"],
            "decode": {"kv_cache_size": dkv, "batch_size": batches, "median_ms": dmed},
            "prefill": {"kv_cache_size": pkv, "prefill_chunk_size": chunks, "median_ms": pmed}}


# ---------------------------------------------------------------------------------------
# Output


def dump(v, indent=0):
    """JSON text with objects one key a line and arrays of numbers on one line, so the long
    tables stay small and diffs stay readable; key order is the order built above."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(v, dict):
        items = [f"{inner}{json.dumps(k)}: {dump(x, indent + 2)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        return "[\n" + ",\n".join(inner + dump(x, indent + 2) for x in v) + "\n" + pad + "]"
    return json.dumps(v, allow_nan=False)


def model_file(model):
    return model.replace("/", "__") + ".json"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vidur", help="git directory of github:microsoft/vidur")
    ap.add_argument("--attention-sample", metavar="CSV",
                    help="convert only this sample of an attention table (see above)")
    ap.add_argument("--commit", default="HEAD", help="revision to read (default HEAD)")
    ap.add_argument("-o", "--out", default="data/llm", help="output directory (default data/llm)")
    ap.add_argument("--gpus", default=",".join(DEFAULT_GPUS))
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--nodes", default=",".join(DEFAULT_NODES))
    ap.add_argument("--differing-duplicates", choices=["first", "error"], default="first",
                    help="two rows for one point with other values: keep the first (default, "
                         "noted in source) or fail")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in the output directory instead of writing")
    a = ap.parse_args(argv)
    if (a.vidur is None) == (a.attention_sample is None):
        ap.error("give exactly one of --vidur and --attention-sample")
    lists = {k: [x for x in getattr(a, k).split(",") if x] for k in ("gpus", "models", "nodes")}
    try:
        if a.attention_sample is not None:
            outputs = {f"attention/{ATTN_GPU}/{model_file(ATTN_MODEL)}":
                       convert_attention(a.attention_sample)}
        else:
            outputs = convert_vidur(a, lists)
    except Bad as e:
        sys.stderr.write(f"convert_vidur: {e}\n")
        return 2
    return write(outputs, a.out, a.check)


def convert_vidur(a, lists):
    """The outputs of the --vidur mode, by path relative to the output directory."""
    git = Git(a.vidur, a.commit)
    doc, models, nodes = convert_models(git)
    outputs = {"models.json": doc}
    for gpu in lists["gpus"]:
        for model in lists["models"]:
            if model not in models:
                raise Bad(f"--models: {model!r} has no mlp.csv under data/profiling/compute "
                          f"at commit {git.commit}")
            outputs[f"ops/{gpu}/{model_file(model)}"] = convert_ops(
                git, gpu, model, models[model], a.differing_duplicates)
    for node in lists["nodes"]:
        outputs[f"collectives/{node}.json"] = convert_collectives(
            git, node, nodes, a.differing_duplicates)
    return outputs


def write(outputs, out, check):
    """Writes (or with CHECK compares) each output; returns the exit status."""
    stale = []
    for rel, d in outputs.items():
        data = (dump(d) + "\n").encode("utf-8")
        path = os.path.join(out, rel)
        if check:
            try:
                with open(path, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                stale.append(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".partial", "wb") as f:
            f.write(data)
        os.replace(path + ".partial", path)
    if stale:
        sys.stderr.write("convert_vidur: stale (rerun without --check): " + ", ".join(stale) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
