#!/usr/bin/env python3
"""Independent checks of the figures clustersim writes (docs/experiments.md,
"Figures"): each recomputes what a figure should show from the files it was
drawn from, or reads what gnuplot actually drew, without clustersim's code.

Usage: check_figures.py CHECK ARGS...   (exit 0: passed; else the reason on stderr)

  sweep-dat DIR METRIC MODEL     every sweep figure's .dat rows are aggregate.csv's
                                 mean, ci95 and n of its variant and point, and every
                                 aggregate.csv cell of METRIC and MODEL is in a figure
  table FIGDIR NAME              gnuplot's own table of NAME.gp (dodge 0, error bars
                                 as yerrorbars) holds the .dat's x, mean and mean +- ci95
  svg FILE TEXT...               FILE parses as XML and its text holds every TEXT
  png FILE W H GP                FILE is a W x H PNG, more than 1 % of its pixels are
                                 not the background, it has at least (series + 2)
                                 colours, and every series colour of GP is drawn
  cdf RUNDIR                     latency_cdf.dat's points lie on the empirical CDF of
                                 requests.csv's served measured requests per model
  stages RUNDIR                  stage_breakdown.dat is summary.json's stage means, and
                                 these are the means of requests.csv's stage times
  placement RUNDIR               placement.dat's boxes are summary.json's replicas, as
                                 tall as their MPS share (equal to worker_latency.csv's),
                                 stacked without overlap on their GPU
  batches RUNDIR                 batch_sizes.dat is the CDF of summary.json's batch sizes
                                 per model (by batches and by requests) and its medians
  compare OUTDIR RUNDIR...       the comparison figures: each run's block of
                                 batch_sizes_compare_MODEL is its summary.json's CDF with
                                 its median, each of latency_cdf_compare_MODEL lies on its
                                 requests.csv's empirical CDF
  gpu-busy RUNDIR                gpu_busy.dat is gpus_over_time.csv and
                                 gpu_timeseries.csv (0 in the bins they have no row
                                 for: no GPU, or that GPU, ran anything)
"""
import csv
import glob
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def dat_blocks(path):
    """The data rows of a .dat, as a list of blocks (split at two blank lines),
    each a list of field lists; comments skipped."""
    text = open(path).read()
    blocks = []
    for chunk in re.split(r"\n\n\n", text):
        rows = [l.split("\t") for l in chunk.split("\n") if l and not l.startswith("#")]
        if rows:
            blocks.append(rows)
    return blocks


def num(s):
    return float("nan") if s in ("", "NaN", "nan") else float(s)


def same(a, b, rel=0.0):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


# ---- sweep figures -----------------------------------------------------------

def isnumber(s):
    try:
        return math.isfinite(float(s)) and s.strip() == s
    except ValueError:
        return False


def check_sweep_dat(d, metric, model):
    sweep = json.load(open(os.path.join(d, "sweep.json")))
    axes = [a["name"] for a in sweep["axes"]]
    labels = {a["name"]: a["labels"] for a in sweep["axes"]}
    agg = {}
    for r in csv.DictReader(open(os.path.join(d, "aggregate.csv"))):
        if r["model"] == model and r["metric"] == metric:
            agg[(r["variant"],) + tuple(r[a] for a in axes)] = r
    prefix = ("" if model == "total" else model + "_") + metric + "_vs_"
    dats = sorted(glob.glob(os.path.join(d, "figures", prefix + "*.dat")))
    if not dats:
        fail("no figure %s*.dat" % prefix)
    seen = {}  # x axis -> cells drawn against it
    for path in dats:
        gp = open(path[:-4] + ".gp").read()
        xaxis = re.search(r'^set xlabel "(.*)" noenhanced$', gp, re.M).group(1)
        header = [l for l in open(path) if l.startswith("# variant\t")][-1][2:].rstrip("\n").split("\t")
        if header != ["variant", "x"] + axes + ["mean", "ci95", "n"]:
            fail("%s: columns %s" % (path, header))
        cells = seen.setdefault(xaxis, set())
        for block in dat_blocks(path):
            variant = block[0][0]
            for row in block:
                f = dict(zip(header, row))
                if f["variant"] != variant:
                    fail("%s: a block mixes variants %s and %s" % (path, variant, f["variant"]))
                key = (variant,) + tuple(f[a] for a in axes)
                if key not in agg:
                    fail("%s: row %s is no aggregate.csv cell" % (path, row))
                if key in cells:
                    fail("%s: cell %s drawn twice against %s" % (path, key, xaxis))
                cells.add(key)
                a = agg[key]
                if not same(num(f["mean"]), num(a["mean"])) or not same(num(f["ci95"]), num(a["ci95"])) \
                        or int(f["n"]) != int(a["n"]):
                    fail("%s: %s has mean %s ci95 %s n %s, aggregate.csv %s %s %s"
                         % (path, key, f["mean"], f["ci95"], f["n"], a["mean"], a["ci95"], a["n"]))
                if xaxis in labels:
                    ls = labels[xaxis]
                    want = float(f[xaxis]) if all(isnumber(l) for l in ls) else ls.index(f[xaxis])
                else:
                    want = sweep["variants"].index(variant)
                if float(f["x"]) != want:
                    fail("%s: x %s for %s = %s, expected %s" % (path, f["x"], xaxis, f.get(xaxis), want))
    for xaxis, cells in seen.items():
        if set(agg) - cells:
            fail("aggregate.csv cells in no figure against %s: %s" % (xaxis, sorted(set(agg) - cells)[:5]))


def gnuplot_table(figdir, name):
    """Runs NAME.gp in a copy of figdir with set table; returns {title: [[x, y, ylow, yhigh]]}."""
    tmp = tempfile.mkdtemp()
    try:
        for f in (name + ".gp", name + ".dat"):
            shutil.copy(os.path.join(figdir, f), tmp)
        gp = open(os.path.join(tmp, name + ".gp")).read()
        # The table of yerrorlines lacks the bars' ends; yerrorbars has them.
        gp = gp.replace("with yerrorlines", "with yerrorbars")
        open(os.path.join(tmp, name + ".gp"), "w").write(gp)
        env = dict(os.environ, LC_ALL="C.UTF-8")
        subprocess.run(["gnuplot", "-d", "-e", "dodge = 0; set table 'out.tab'", name + ".gp"],
                       cwd=tmp, check=True, env=env, capture_output=True)
        text = open(os.path.join(tmp, "out.tab")).read()
    finally:
        shutil.rmtree(tmp)
    curves = {}
    title = None
    for line in text.splitlines():
        m = re.match(r'# Curve title: "(.*)"', line)
        if m:
            title = m.group(1)
            if title in curves:  # the second drawing (png) repeats the first
                title = None
            else:
                curves[title] = []
        elif title is not None and line.strip() and not line.startswith("#"):
            f = line.split()
            curves[title].append([float(v) for v in f[:-1]] + [f[-1]])
    return curves


def check_table(figdir, name):
    curves = gnuplot_table(figdir, name)
    blocks = dat_blocks(os.path.join(figdir, name + ".dat"))
    titles = [t for t in curves if not t.startswith("SLO")]
    if [b[0][0] for b in blocks] != titles:
        fail("gnuplot's curves %s are not the .dat's variants %s" % (titles, [b[0][0] for b in blocks]))
    gp = open(os.path.join(figdir, name + ".gp")).read()
    ymin = float(re.search(r"^ymin = (\S+)$", gp, re.M).group(1))
    for block in blocks:
        drawn = curves[block[0][0]]
        if len(drawn) != len(block):
            fail("%s: %d points drawn, %d in the .dat" % (block[0][0], len(drawn), len(block)))
        for row, p in zip(block, drawn):
            x, mean, ci = float(row[1]), num(row[-3]), num(row[-2])
            ci = 0.0 if math.isnan(ci) else ci
            want = [x, mean, max(mean - ci, ymin), mean + ci]
            if math.isnan(mean):
                if p[-1] != "u":
                    fail("%s: NaN mean drawn as %s" % (block[0][0], p))
                continue
            for w, g in zip(want, p[:4]):
                if not same(w, g, 2e-5):
                    fail("%s: gnuplot drew %s, the .dat says %s" % (block[0][0], p[:4], want))


# ---- rendered files --------------------------------------------------------------

def check_svg(path, texts):
    root = ET.parse(path).getroot()
    if not root.tag.endswith("svg"):
        fail("%s: root element %s" % (path, root.tag))
    alltext = " ".join("".join(e.itertext()) for e in root.iter() if e.tag.endswith("text"))
    for t in texts:
        if t not in alltext:
            fail("%s: no text %r (texts: %s)" % (path, t, alltext[:300]))


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: not a PNG" % path)
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail("%s: depth %d colour type %d interlace %d not handled" % (path, depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    pixels = []
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 2:
            # Bytewise addition mod 256 on whole lines as integers (no carry
            # crosses a byte: the high bits are added apart), for speed.
            lo, hi = int.from_bytes(b"\x7f" * stride, "big"), int.from_bytes(b"\x80" * stride, "big")
            x, z = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = bytearray((((x & lo) + (z & lo)) ^ ((x ^ z) & hi)).to_bytes(stride, "big"))
            ftype = 0
        for i in range(stride if ftype else 0):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.extend(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return w, h, pixels


def check_png(path, w, h, gp):
    pw, ph, pixels = png_pixels(path)
    if (pw, ph) != (w, h):
        fail("%s: %dx%d, expected %dx%d" % (path, pw, ph, w, h))
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    background = max(counts, key=counts.get)
    ink = 1 - counts[background] / len(pixels)
    script = open(gp).read()
    colours = re.findall(r'[lf]c rgb "#([0-9a-f]{6})"', script)
    series = sorted(set(c for c in colours if c not in ("dddddd", "404040", "ffffff")))
    # A fill of density d is the colour over white: d c + (1 - d) 255.
    densities = [float(x) for x in re.findall(r"solid ([0-9.]+)", script)] + [1.0]
    if ink <= 0.01:
        fail("%s: %.2f %% of the pixels are not the background" % (path, 100 * ink))
    if len(counts) < len(series) + 2:
        fail("%s: %d colours for %d series" % (path, len(counts), len(series)))
    for c in series:
        drawn = 0
        for d in densities:
            want = [d * v + (1 - d) * 255 for v in bytes.fromhex(c)]
            drawn += sum(n for p, n in counts.items()
                         if all(abs(a - b) <= 1 for a, b in zip(p, want)))
        if drawn < 10:
            fail("%s: series colour #%s drawn on %d pixels" % (path, c, drawn))


# ---- run figures --------------------------------------------------------------------

def served(rundir):
    lat = {}
    for r in csv.DictReader(open(os.path.join(rundir, "requests.csv"))):
        if r["measured"] == "1" and r["status"] == "ok":
            lat.setdefault(r["model"], []).append(int(r["latency_ns"]))
    return {m: sorted(v) for m, v in lat.items()}


def check_cdf(rundir):
    lat = served(rundir)
    blocks = dat_blocks(os.path.join(rundir, "figures", "latency_cdf.dat"))
    if sorted(b[0][0] for b in blocks) != sorted(lat):
        fail("CDF models %s, requests.csv %s" % ([b[0][0] for b in blocks], sorted(lat)))
    for b in blocks:
        v = lat[b[0][0]]
        n = len(v)
        ranks = []
        for model, ms, frac, rank, nn in b:
            r = int(rank)
            if int(nn) != n or round(float(frac) * n) != r or abs(float(frac) - r / n) > 1e-8:
                fail("%s: rank %s fraction %s n %s, requests.csv has %d" % (model, rank, frac, nn, n))
            if ms != "%d.%06d" % divmod(v[r - 1], 1000000):
                fail("%s: rank %d at %s ms, requests.csv %d ns" % (model, r, ms, v[r - 1]))
            ranks.append(r)
        want = set(range(1, n + 1)) if n <= 2000 else \
            {1} | {-(-k * n // 1000) for k in range(1, 1001)} | \
            {-(-(9900 + j) * n // 10000) for j in range(1, 100)}
        if ranks != sorted(want):
            fail("%s: ranks %s... are not the documented ones %s..." % (b[0][0], ranks[:5], sorted(want)[:5]))


STAGES = ["router_wait", "to_node", "queue_wait", "gpu", "result_return"]


def check_stages(rundir):
    s = json.load(open(os.path.join(rundir, "summary.json")))
    rows = dat_blocks(os.path.join(rundir, "figures", "stage_breakdown.dat"))[0]
    # Stage times of each served measured request, from its timestamps.
    cols = [("send_ns", "dispatch_ns"), ("dispatch_ns", "node_ns"), ("node_ns", "exec_start_ns"),
            ("exec_start_ns", "exec_end_ns"), ("exec_end_ns", "receive_ns")]
    sums = {}
    for r in csv.DictReader(open(os.path.join(rundir, "requests.csv"))):
        if r["measured"] == "1" and r["status"] == "ok":
            acc = sums.setdefault(r["model"], [0] * 6)
            for i, (a, b) in enumerate(cols):
                acc[i] += int(r[b]) - int(r[a])
            acc[5] += 1
    models = {m["model"]: m for m in s["models"]}
    for row in rows:
        m = models[row[0]]
        for i, st in enumerate(STAGES):
            if float(row[1 + i]) != m["stages_ms"][st]["mean"]:
                fail("%s %s: .dat %s, summary.json %s" % (row[0], st, row[1 + i], m["stages_ms"][st]["mean"]))
            mean = sums[row[0]][i] / sums[row[0]][5] / 1e6
            if not same(mean, float(row[1 + i]), 1e-9) and abs(mean - float(row[1 + i])) > 1e-9:
                fail("%s %s: %.9f ms in the figure, %.9f from requests.csv" % (row[0], st, float(row[1 + i]), mean))
        if not same(float(row[6]), m["latency_ms"]["mean"]) or not same(sum(map(float, row[1:6])), float(row[6]), 1e-9):
            fail("%s: stages add up to %s, latency mean %s" % (row[0], sum(map(float, row[1:6])), row[6]))
        if float(row[7]) != m["slo_ms"]:
            fail("%s: SLO %s, summary %s" % (row[0], row[7], m["slo_ms"]))


def check_placement(rundir):
    s = json.load(open(os.path.join(rundir, "summary.json")))
    mps = s["setup"]["cluster"]["mps"]
    blocks = dat_blocks(os.path.join(rundir, "figures", "placement.dat"))
    boxes = [r for b in blocks[:-1] for r in b]
    want = sorted((m["model"], x["gpu"], x["batch"], x["mps_share"])
                  for m in s["models"] for x in m["replicas"])
    got = sorted((r[1], int(r[0]), int(r[3]), float(r[4])) for r in boxes)
    if got != want:
        fail("placement.dat boxes %s, summary.json replicas %s" % (got, want))
    # Shares as the engine's workers ran them.
    shares = {(r["model"], int(r["gpu"])): float(r["mps_share"])
              for r in csv.DictReader(open(os.path.join(rundir, "worker_latency.csv")))}
    for model, gpu, batch, share in want:
        if mps and (model, gpu) in shares and not same(shares[(model, gpu)], share, 1e-3):
            fail("%s on GPU %d: share %s, worker_latency.csv %s" % (model, gpu, share, shares[(model, gpu)]))
    for g in set(int(r[0]) for r in boxes):
        col = sorted((float(r[5]), float(r[6]), float(r[4])) for r in boxes if int(r[0]) == g)
        top = 0.0
        for y0, y1, share in col:
            if abs(y0 - top) > 1e-12:
                fail("GPU %d: boxes overlap or leave a gap at %s" % (g, y0))
            if mps and share > 0 and abs((y1 - y0) - share) > 1e-12:
                fail("GPU %d: box of share %s is %s tall" % (g, share, y1 - y0))
            if not mps and abs((y1 - y0) - 1 / len(col)) > 1e-12:
                fail("GPU %d: time-sliced box %s tall of %d" % (g, y1 - y0, len(col)))
            top = y1
    gpus = blocks[-1]
    if [float(r[1]) for r in gpus] != [g["busy_fraction"] for g in s["gpus"]]:
        fail("placement.dat busy fractions differ from summary.json")


def check_gpu_busy(rundir):
    blocks = dat_blocks(os.path.join(rundir, "figures", "gpu_busy.dat"))
    s = json.load(open(os.path.join(rundir, "summary.json")))
    # The CSV series' width: the scenario's, or the doubled one a long run
    # states in "timeseries" (docs/scenario.md).
    bin_s = s.get("timeseries", {}).get("bin_s", s["autoscaling"]["timeseries_bin_s"])
    # gpus_over_time.csv has a row per bin some GPU ran in; the figure draws
    # every bin up to the last, the idle ones as zeros.
    rows = {round(float(r["time_s"]) / bin_s): r
            for r in csv.DictReader(open(os.path.join(rundir, "gpus_over_time.csv")))}
    top = [[rows[b]["time_s"], rows[b]["gpus_used"], rows[b]["busy_gpus"]] if b in rows else [b * bin_s, 0, 0]
           for b in range(1 + max(rows, default=-1))]
    if len(blocks[0]) != len(top) or any(
            not same(float(d[0]), float(c[0]), 1e-9) or float(d[1]) != float(c[1]) or float(d[2]) != float(c[2])
            for d, c in zip(blocks[0], top)):
        fail("gpu_busy.dat index 0 differs from gpus_over_time.csv (idle bins as zeros)")
    per = {(int(r["gpu"]), round(float(r["time_s"]) / bin_s)): (float(r["busy_fraction"]), float(r["sm_use"]))
           for r in csv.DictReader(open(os.path.join(rundir, "gpu_timeseries.csv")))}
    grid = [r for r in open(os.path.join(rundir, "figures", "gpu_busy.dat")).read().split("\n\n\n")[1].splitlines()
            if r and not r.startswith("#")]
    n_gpus = len(s["gpus"])
    n_bins = max(len(top), 1 + max((b for _, b in per), default=0))
    if len(grid) != n_gpus * n_bins:
        fail("gpu_busy.dat grid has %d cells, expected %d GPUs x %d bins" % (len(grid), n_gpus, n_bins))
    for line in grid:
        t, g, busy, sm = line.split("\t")
        b = round(float(t) / bin_s - 0.5)
        if abs(float(t) - (b + 0.5) * bin_s) > 1e-9:
            fail("grid time %s is not a bin's middle" % t)
        if (float(busy), float(sm)) != per.get((int(g), b), (0.0, 0.0)):
            fail("GPU %s bin %d: %s %s, gpu_timeseries.csv %s" % (g, b, busy, sm, per.get((int(g), b))))
    total = sum(v[0] for v in per.values())
    drawn = sum(float(l.split("\t")[2]) for l in grid)
    if not same(total, drawn, 1e-9):
        fail("busy fractions drawn sum to %s, gpu_timeseries.csv %s" % (drawn, total))


def batch_cdf(sizes):
    """Rows [size, batches, cum, fraction, cum_requests, fraction_requests] of a
    {"size": count} map, from size 0, and the nearest-rank medians by batches
    and by requests and the p90 by batches."""
    items = sorted((int(k), v) for k, v in sizes.items())
    n = sum(v for _, v in items)
    req = sum(k * v for k, v in items)
    rows, cum, creq = [[0, 0, 0, 0.0, 0, 0.0]], 0, 0
    for k, v in items:
        cum += v
        creq += k * v
        rows.append([k, v, cum, cum / n, creq, creq / req])

    def quantile(q, col):
        rank = math.ceil(q * (n if col == 2 else req))
        return next(r[0] for r in rows[1:] if r[col] >= rank)
    return rows, quantile(0.5, 2), quantile(0.5, 4), quantile(0.9, 2)


def check_batch_block(where, block, label, sizes):
    want, med, _, _ = batch_cdf(sizes)
    if len(block) != len(want):
        fail("%s: %d rows, summary.json gives %d sizes" % (where, len(block), len(want) - 1))
    for row, w in zip(block, want):
        if row[0] != label or [int(x) for x in row[1:4]] != w[:3] or int(row[5]) != w[4] \
                or abs(float(row[4]) - w[3]) > 1e-9 or abs(float(row[6]) - w[5]) > 1e-9:
            fail("%s: row %s, expected %s %s" % (where, row, label, w))
    return med


def check_batches(rundir):
    s = json.load(open(os.path.join(rundir, "summary.json")))
    blocks = dat_blocks(os.path.join(rundir, "figures", "batch_sizes.dat"))
    models = [m for m in s["models"] if m["batches"]["count"] > 0]
    if [b[0][0] for b in blocks[:-1]] != [m["model"] for m in models]:
        fail("batch_sizes.dat models %s, summary.json %s" % ([b[0][0] for b in blocks[:-1]], models))
    for block, m in zip(blocks, models):
        check_batch_block("batch_sizes.dat " + m["model"], block, m["model"], m["batches"]["sizes"])
    medians = [[m["model"]] + [str(x) for x in batch_cdf(m["batches"]["sizes"])[1:]] + [str(m["batches"]["count"])]
               for m in models]
    if blocks[-1] != medians:
        fail("batch_sizes.dat medians %s, expected %s" % (blocks[-1], medians))


def check_compare(outdir, rundirs):
    runs = [json.load(open(os.path.join(d, "summary.json"))) for d in rundirs]
    common = [m["model"] for m in runs[0]["models"]
              if all(m["model"] in [x["model"] for x in r["models"]] for r in runs)]
    lat = [served(d) if os.path.exists(os.path.join(d, "requests.csv")) else None for d in rundirs]
    for model in common:
        path = os.path.join(outdir, "figures", "batch_sizes_compare_%s.dat" % model)
        blocks = dat_blocks(path)
        header = [l for l in open(path) if l.startswith("# run ")]
        labels = [re.match(r"# run \d+: (.*) = ", l).group(1) for l in header]
        with_batches = [i for i, r in enumerate(runs)
                        if next(m for m in r["models"] if m["model"] == model)["batches"]["count"] > 0]
        if len(blocks) != len(with_batches) + 1:
            fail("%s: %d blocks for %d runs with batches" % (path, len(blocks), len(with_batches)))
        for block, i in zip(blocks, with_batches):
            sizes = next(m for m in runs[i]["models"] if m["model"] == model)["batches"]["sizes"]
            med = check_batch_block(path, block, labels[i], sizes)
            if blocks[-1][with_batches.index(i)][:2] != [labels[i], str(med)]:
                fail("%s: median row %s, expected %s %s" % (path, blocks[-1][with_batches.index(i)], labels[i], med))
        if all(v is not None for v in lat):
            path = os.path.join(outdir, "figures", "latency_cdf_compare_%s.dat" % model)
            blocks = dat_blocks(path)
            have = [i for i in range(len(runs)) if lat[i].get(model)]
            for block, i in zip(blocks, have):
                v = lat[i][model]
                n = len(v)
                for label, ms, frac, rank, nn in block:
                    r = int(rank)
                    if label != labels[i] or int(nn) != n or abs(float(frac) - r / n) > 1e-8 \
                            or ms != "%d.%06d" % divmod(v[r - 1], 1000000):
                        fail("%s: row %s is not on %s's empirical CDF" % (path, [label, ms, frac, rank, nn], rundirs[i]))
            for row, i in zip(blocks[-1], have):
                v = lat[i][model]
                if row[:3] != [labels[i], "%d.%06d" % divmod(v[(len(v) + 1) // 2 - 1], 1000000), str(len(v))]:
                    fail("%s: median row %s" % (path, row))


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "sweep-dat":
        check_sweep_dat(*args)
    elif cmd == "table":
        check_table(*args)
    elif cmd == "svg":
        check_svg(args[0], args[1:])
    elif cmd == "png":
        check_png(args[0], int(args[1]), int(args[2]), args[3])
    elif cmd == "cdf":
        check_cdf(*args)
    elif cmd == "stages":
        check_stages(*args)
    elif cmd == "placement":
        check_placement(*args)
    elif cmd == "batches":
        check_batches(*args)
    elif cmd == "compare":
        check_compare(args[0], args[1:])
    elif cmd == "gpu-busy":
        check_gpu_busy(*args)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
