#!/usr/bin/env python3
"""iGniter's provisioning algorithm, outside the code under test.

A port to the Python standard library of predict(), alloc_gpus() and
algorithm() of icloud-ecnu/igniter, i-Gniter/Algorithm/igniter-algorithm.py
(commit b1ff2ab), with the same operations in the same order. Its only
change: scipy's curve_fit is replaced by closed-form least squares for the
linear fits (power, L2, idle time per kernel, frequency above the power cap:
scipy converges to these to about 1e-8 relative), and by the coefficients
scipy 1.10.1 returned for the nonlinear active-time fit (ACT below, the ref[]
table of test_igniter.c).

It prints the numbers that tests/policies/test_igniter.c takes from iGniter:
run it with the path of the upstream repository's i-Gniter/Algorithm/config
(the file data/profiles/igniter_v100_coefficients.json was converted from):

    python3 tests/policies/igniter_reference.py path/to/i-Gniter/Algorithm/config

Without an argument it prints only the cases on hand-written coefficients.
Not run by meson: it needs the upstream file.
"""
import copy
import json
import math
import sys

# scipy 1.10.1's curve_fit of the active-time model on igniter_config:
# k1..k5 of (k1 b^2 + k2 b + k3) / (r + k4) + k5.
ACT = {
    "alexnet": [0.004153511274058949, 8.711584617309109, 23.73607011929307,
                0.055520698554309036, 0.3460109386306921],
    "resnet50": [-0.017512005342600587, 58.26450646248401, -0.010383839042495726,
                 0.3448827660141423, 1.909449630741246],
    "vgg19": [-0.004834680882839295, 158.19296988876056, 44.452125104393744,
              0.18840719304606088, 0.9261921526929787],
    "ssd": [0.025159256652544783, 235.8469434392252, -16.78163861392029,
            0.26427273961464665, 3.416978715642997],
}


class Context:
    """Hardware constants and the fitted hardware coefficients."""

    frequency = power = idlepower = bandwidth = unit = 0.0
    slope = alpha = beta = 0.0


ctx = Context()


def linfit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return k, my - k * mx


def active(m, b, r):
    k = m["act"]
    return (k[0] * b ** 2 + k[1] * b + k[2]) / (r + k[3]) + k[4]


def predict(models, batch, share):
    """iGniter's predict(): (throughputs, latencies)."""
    p = len(models)
    inc = ctx.alpha * p + ctx.beta if p >= 2 else 0
    total_l2, total_power, f, l2 = 0.0, ctx.idlepower, ctx.frequency, []
    for i, m in enumerate(models):
        thr = 1000 * batch[i] / active(m, batch[i], share[i])
        total_power += m["pk"] * thr + m["pc"]
        l2.append(m["ck"] * thr + m["cc"])
        total_l2 += l2[-1]
    if total_power > ctx.power:
        f = ctx.slope * (total_power - ctx.power) + ctx.frequency
    thr, lat = [], []
    for i, m in enumerate(models):
        idle = m["kernels"] * inc + m["baseidle"]
        act = active(m, batch[i], share[i]) * (1 + m["k_l2"] * (total_l2 - l2[i]))
        gpu = (idle + act) / (f / ctx.frequency)
        thr.append(batch[i] * 1000 / (gpu + m["out"] * batch[i] / ctx.bandwidth))
        lat.append(gpu + (m["in"] + m["out"]) * batch[i] / ctx.bandwidth)
    return thr, lat


def r_total(gpu):
    return sum(r for _, r in gpu)


def alloc_gpus(inference, batch, slo, ra_ij, r_lower, w, j):
    """iGniter's alloc_gpus(): add w at r_lower to GPU j, raise every share
    by one unit while its latency exceeds its target and the sum is <= 100."""
    ra_ij[j].append([w, r_lower])
    if r_total(ra_ij[j]) > 100:
        return ra_ij
    infs = [inference[x[0]] for x in ra_ij[j]]
    bs = [batch[x[0]] for x in ra_ij[j]]
    res = [x[1] for x in ra_ij[j]]
    flag = 1
    while sum(res) <= 100 and flag == 1:
        flag = 0
        lat = predict(infs, bs, res)[1]
        for i in range(len(res)):
            if lat[i] > slo[ra_ij[j][i][0]]:
                res[i] += ctx.unit
                flag = 1
    for i in range(len(res)):
        ra_ij[j][i][1] = res[i]
    return ra_ij


def algorithm(inference, slo, rate, solo_new_gpu=False):
    """iGniter's algorithm() without its "workload is too large" branch (the
    callers print r_lower instead). Returns (batches, r_lower, plan); a plan
    GPU is a list of [workload, name, batch, share].

    solo_new_gpu: a new GPU takes the workload at the share alloc_gpus gives
    it alone, as clustersim documents (igniter.h); upstream takes r_lower
    (the first GPU, which upstream fills through alloc_gpus, aside)."""
    slo = [s / 2 for s in slo]
    m = len(inference)
    batch, r_lower = [0] * m, [[i, 0] for i in range(m)]
    arr = [r / 1000 for r in rate]
    for i, inf in enumerate(inference):
        k = inf["act"]
        batch[i] = math.ceil(slo[i] * arr[i] * ctx.bandwidth / (ctx.bandwidth + inf["in"] * arr[i]))
        gama = k[0] * batch[i] ** 2 + k[1] * batch[i] + k[2]
        delta = slo[i] - inf["baseidle"] - batch[i] * (inf["in"] + inf["out"]) / ctx.bandwidth - k[4]
        r_lower[i][1] = math.ceil((gama / delta - k[3]) / ctx.unit) * ctx.unit
    lower = {i: r for i, r in r_lower}
    resource, g = [[]], 1
    r_lower.sort(key=lambda x: x[1], reverse=True)  # stable: ties in input order
    for i, r_l in r_lower:
        ra_ij = copy.deepcopy(resource)
        q, r_inter_min = -1, 101
        for j in range(g):
            ra_ij = alloc_gpus(inference, batch, slo, ra_ij, r_l, i, j)
            r_inter = r_total(ra_ij[j]) - r_total(resource[j])
            if r_total(ra_ij[j]) <= 100 and r_inter < r_inter_min:
                q, r_inter_min = j, r_inter
        if q == -1:
            g += 1
            share = r_l
            if solo_new_gpu:
                share = alloc_gpus(inference, batch, slo, [[]], r_l, i, 0)[0][0][1]
            resource.append([[i, share]])
        else:
            resource[q] = copy.deepcopy(ra_ij[q])
    plan = [[[w, inference[w]["name"], batch[w], r] for w, r in gpu] for gpu in resource if gpu]
    return batch, [lower[i] for i in range(m)], plan


def load_igniter(path):
    """Hardware constants and per-model coefficients from igniter_config."""
    prof = {}
    with open(path) as f:
        for line in f:
            for key, value in json.loads(line).items():
                prof.setdefault(key, {}).update(value)
    hw = prof["hardware"]
    ctx.frequency, ctx.power = hw["maxGPUfrequency"], hw["maxGPUpower"]
    ctx.idlepower, ctx.bandwidth, ctx.unit = hw["idlepower"], hw["bandwidth"], hw["unit"]
    # power_frequency(): extend the throttled points' power by the average
    # step of the unthrottled ones, fit a in a (P - cap) + F through them.
    power, freq = list(hw["power"]), hw["frequency"]
    k = n = 0
    for i in range(len(freq)):
        if freq[i] == ctx.frequency:
            if i >= 1:
                k += power[i] - power[i - 1]
                n += 1
        else:
            k = k / n if n > 0 else power[0] - ctx.idlepower
            for j in range(i, len(power)):
                power[j] = power[j - 1] + k
            xs = [p - ctx.power for p in power[i:]]
            ys = [f - ctx.frequency for f in freq[i:]]
            ctx.slope = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
            break
    idle = [hw["idletime"][i] * freq[i] / ctx.frequency for i in range(len(freq))]
    ctx.alpha, ctx.beta = linfit([2, 3, 4, 5], [idle[i] - idle[0] for i in range(1, len(idle))])
    models = {}
    for name, act in ACT.items():
        p = prof[name]
        m = {"name": name, "kernels": p["kernel"], "baseidle": p["idletime_1"],
             "in": p["inputdata"], "out": p["outputdata"], "act": act}
        m["k_l2"] = ((p["activetime_2"] * p["frequency_2"] / ctx.frequency) / p["activetime_1"]
                     - 1) / p["l2cache"]
        ability, ability_p, ypower = [], [], []
        for i, b in enumerate([1, 16, 32]):
            for j in range(3):
                a = 1000 * b / (p["gpulatency"][i][j] - m["baseidle"])
                ability.append(a)
                if p["frequency"][i][j] > ctx.frequency - 1:
                    ability_p.append(a)
                    ypower.append(p["power"][i][j] - ctx.idlepower)
        m["pk"], m["pc"] = linfit(ability_p, ypower)
        m["ck"], m["cc"] = linfit([ability[0], ability[4], ability[8]], p["l2caches"])
        models[name] = m
    return models


def hand_written():
    """The exact coefficients of test_igniter.c's test_share_at_target_not_raised
    and test_growth_tie_goes_to_first_gpu."""
    ctx.frequency, ctx.power, ctx.idlepower, ctx.bandwidth, ctx.unit = 1500, 250, 0, 1024, 5
    ctx.slope = ctx.alpha = ctx.beta = 0

    def model(name, k2):
        return {"name": name, "kernels": 10, "baseidle": 1, "in": 512, "out": 512,
                "act": [0, k2, 0, 4, 2], "k_l2": 0, "pk": 0, "pc": 0, "ck": 0, "cc": 0}

    at = model("at_target", 96)
    print("at_target:", algorithm([at], [16], [125]), predict([at], [1], [20]))
    big, small = model("big", 248), model("small", 48)
    print("tie:", algorithm([big, big, small], [16, 16, 16], [125, 125, 125]))


def main():
    if len(sys.argv) > 1:
        m = load_igniter(sys.argv[1])
        print("freq slope %.17g, sch alpha %.17g, beta %.17g" % (ctx.slope, ctx.alpha, ctx.beta))
        for name, c in m.items():
            print("%s: power %r %r, L2 %r %r, k_l2 %r" % (name, c["pk"], c["pc"], c["ck"], c["cc"],
                                                          c["k_l2"]))
        a, r, v, s = m["alexnet"], m["resnet50"], m["vgg19"], m["ssd"]
        print("README:", algorithm([a, r, v], [15, 40, 60], [500, 400, 200]))
        thr, lat = predict([v, r, a], [6, 8, 4], [37.5, 30, 10])
        print("  predict:", [repr(x) for x in lat], [repr(x) for x in thr])
        batch, lower, plan = algorithm([a, r, v, s], [20, 40, 60, 60], [2000, 800, 400, 200])
        print("four models:", batch, lower, plan)
        for gpu in plan:
            print("  throughput:", predict([m[x[1]] for x in gpu], [x[2] for x in gpu],
                                           [x[3] for x in gpu])[0])
        for k in (1, 2):
            print("vgg19 1000 req/s in %d part(s):" % k,
                  algorithm([v] * k + [a], [60] * k + [15], [1000 / k] * k + [500],
                            solo_new_gpu=True))
        print("  throughput of a part at 90 %:", predict([v], [15], [90])[0])
    ctx.__init__()
    hand_written()


if __name__ == "__main__":
    main()
