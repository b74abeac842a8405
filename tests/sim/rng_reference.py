#!/usr/bin/env python3
"""An independent implementation of clustersim's random streams (stream
version 2, src/sim/rng.h), written from the algorithms' descriptions:
FNV-1a and the splitmix64 finaliser for the stream seed, splitmix64 for the
state, xoshiro256** 1.0 (Blackman and Vigna) for the draws, the top 53 bits
times 2^-53 for a uniform.

It first checks itself against outputs published by others:
  - xoshiro256** from the state {1, 2, 3, 4}: the ten values of the
    `reference` test of rand_xoshiro's xoshiro256starstar.rs (Rust, "produced
    with the reference implementation" of the authors);
  - splitmix64 from the seed 1477776061723855037: the first values of the
    `reference` test of rand_xoshiro's splitmix64.rs;
  - FNV-1a 64 of "" is its offset basis, of "a" 0xaf63dc4c8601ec8c (the
    FNV authors' test vectors).
Then it computes the first draws of a few streams and compares them with
the table that tests/sim/test_stats.c checks the C code against (between
the lines "rng_reference.py: begin" and "rng_reference.py: end"), so that
the C test's expected values come from here, not from the C code.

Usage: rng_reference.py [TEST_STATS_C]   (without it: print the table)
Exit status: 0 when everything agrees, 1 otherwise.
"""
import re
import sys

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15

# (seed, stream name) of the table; the names are those the engine uses.
STREAMS = [
    (1, "client/resnet50/arrivals"),
    (42, "dispatch/nexus"),
    (0, ""),
    (2**64 - 1, "client/bert/arrivals"),
]
DRAWS = 4


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


def stream_seed(seed, name):
    return mix64(mix64((seed + GOLDEN) & MASK) ^ fnv1a64(name))


def splitmix64(seed, n):
    out, x = [], seed
    for _ in range(n):
        x = (x + GOLDEN) & MASK
        out.append(mix64(x))
    return out


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro256ss:
    def __init__(self, words):
        self.s = list(words)

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result


def published_checks():
    errors = []
    x = Xoshiro256ss([1, 2, 3, 4])
    want = [11520, 0, 1509978240, 1215971899390074240, 1216172134540287360,
            607988272756665600, 16172922978634559625, 8476171486693032832,
            10595114339597558777, 2904607092377533576]
    got = [x.next() for _ in want]
    if got != want:
        errors.append(f"xoshiro256** from {{1, 2, 3, 4}}: {got} != published {want}")
    want = [1985237415132408290, 2979275885539914483, 13511426838097143398]
    got = splitmix64(1477776061723855037, len(want))
    if got != want:
        errors.append(f"splitmix64 from 1477776061723855037: {got} != published {want}")
    if fnv1a64("") != 0xCBF29CE484222325 or fnv1a64("a") != 0xAF63DC4C8601EC8C:
        errors.append("FNV-1a 64 differs from its authors' test vectors")
    return errors


def table():
    """Lines of the C table: { seed, "name", stream seed, { draws } }."""
    lines = []
    for seed, name in STREAMS:
        ss = stream_seed(seed, name)
        g = Xoshiro256ss(splitmix64(ss, 4))
        draws = ", ".join(f"0x{g.next():016x}ULL" for _ in range(DRAWS))
        lines.append(f'  {{ 0x{seed:016x}ULL, "{name}", 0x{ss:016x}ULL, {{ {draws} }} }},')
    return lines


def main(argv):
    errors = published_checks()
    for e in errors:
        print(f"rng_reference: FAIL: {e}")
    if errors:
        return 1
    want = table()
    if len(argv) < 2:
        print("\n".join(want))
        return 0
    text = open(argv[1], encoding="utf-8").read()
    m = re.search(r"rng_reference\.py: begin[^\n]*\n(.*?)\n[^\n]*rng_reference\.py: end", text, re.S)
    if not m:
        print(f"rng_reference: FAIL: {argv[1]} has no table between the begin and end lines")
        return 1
    got = [line.rstrip() for line in m.group(1).split("\n")]
    if got != want:
        print(f"rng_reference: FAIL: the table of {argv[1]} is not this implementation's:")
        print("\n".join(want))
        return 1
    print(f"rng_reference: ok: published vectors, and {len(want)} streams of {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
