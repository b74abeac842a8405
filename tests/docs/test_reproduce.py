#!/usr/bin/env python3
"""The judge of tools/reproduce.py on hand-made results: each verdict word and
each comparison on both sides of its tolerance, non-default settings, parts not
judged, and bad findings files (file, JSON path, what was expected)."""

import importlib.util
import json
import math
import os
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
spec_ = importlib.util.spec_from_file_location("reproduce", os.path.join(ROOT, "tools", "reproduce.py"))
rp = importlib.util.module_from_spec(spec_)
spec_.loader.exec_module(rp)

failures = 0
checks = 0


def check(name, cond):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL {name}")
    else:
        print(f"ok   {name}")


def raises(fn, text):
    """Whether fn raises FindingsError with text in its message."""
    try:
        fn()
    except rp.FindingsError as e:
        if text in str(e):
            return True
        print(f"     (message was: {e})")
        return False
    return False


def results():
    r = rp.Results()
    # A sweep "s" with variants a, b, c over an axis n = 1, 2, 3.
    for variant, values in {"a": [100.0, 104.0, 110.0], "b": [90.0, 91.0, 89.0], "c": [100.0, 60.0, 95.0]}.items():
        for n, v in zip((1, 2, 3), values):
            r.add(variant, f"n={n}", "total", "goodput_rps", 5, v, 1.0)
            r.add(variant, f"n={n}", "total", "submitted_rps", 5, 100.0, 0.5)
    r.add("a", "", "total", "fewest_gpus_max", 5, math.nan, 0.0)
    return {"s": r}


def spec(findings, nondefault=None):
    return {"name": "t", "page": "x.md", "_path": os.path.join(ROOT, "experiments", "findings", "t.json"),
            "sources": {"s": {"kind": "sweep"}}, "nondefault": nondefault or {},
            "defaults": {"source": "s", "metric": "goodput_rps"}, "findings": findings}


def verdict(finding, nondefault=None):
    s = spec([finding], nondefault)
    return rp.Finding(s, finding, 0).verdict(results())


def one(check_node, nondefault=None):
    return verdict({"finding": "f", "checks": [check_node]}, nondefault)[0]


# within: 104 against 100 is +4 % (holds at 5 %, not at 3 %); 106 would be outside.
check("within 5 %: 104 vs 100 holds", one({"variant": "a", "point": {"n": 2}, "within": 100}) == "reproduced")
check("within 3 %: 104 vs 100 fails", one({"variant": "a", "point": {"n": 2}, "within": 100, "tol": 0.03}) == "not reproduced")
check("within: 110 vs 104.7 is +5.06 %, outside 5 %", one({"variant": "a", "point": {"n": 3}, "within": 104.7}) == "not reproduced")
# range: 89 is 1.1 % below 90 (holds at 5 %, not at 1 %).
check("range with tolerance", one({"variant": "b", "point": {"n": 3}, "range": [90, 95]}) == "reproduced")
check("range, tolerance 1 %", one({"variant": "b", "point": {"n": 3}, "range": [90, 95], "tol": 0.01}) == "not reproduced")
# order and highest.
check("order a > b > c at n = 2", one({"order": True, "point": {"n": 2}, "values": [{"variant": "a"}, {"variant": "b"}, {"variant": "c"}]}) == "reproduced")
check("order a > c at n = 1 (equal) fails", one({"order": True, "point": {"n": 1}, "values": [{"variant": "a"}, {"variant": "c"}]}) == "not reproduced")
check("a tie is not highest", one({"highest": True, "point": {"n": 1}, "values": [{"variant": "a"}, {"variant": "b"}, {"variant": "c"}]}) == "not reproduced")
check("highest: above every other beyond the intervals", one({"highest": True, "point": {"n": 2}, "values": [{"variant": "a"}, {"variant": "b"}, {"variant": "c"}]}) == "reproduced")
check("highest fails when another is above", one({"highest": True, "point": {"n": 1}, "values": [{"variant": "b"}, {"variant": "a"}]}) == "not reproduced")
# A gap within the combined intervals is a tie: 91 ± 1 against 90 ± 1 (gap 1 < 1.41).
check("order within the intervals does not hold", one({"order": True, "values": [{"variant": "b", "point": {"n": 2}}, {"variant": "b", "point": {"n": 1}}]}) == "not reproduced")
# A missing value fails an order, a highest and a trend, wherever it is.
check("flat with a missing value fails", one({"trend": "flat", "values": [{"variant": "a", "point": {"n": 1}}, {"variant": "a", "metric": "fewest_gpus_max"}, {"variant": "a", "point": {"n": 1}}]}) == "not reproduced")
check("highest with a missing competitor fails", one({"highest": True, "values": [{"variant": "a", "point": {"n": 3}}, {"variant": "a", "metric": "fewest_gpus_max"}]}) == "not reproduced")
# max_of: the best of several variants (a: 110 at n = 3).
check("max_of takes the best", one({"max_of": ["b", "a", "c"], "point": {"n": 3}, "equal": 110}) == "reproduced")
# trends over n: a increases, b is flat within 5 % (89..91 of 91), c is not monotone.
series = lambda v: [{"variant": v, "point": {"n": n}} for n in (1, 2, 3)]
check("increasing", one({"trend": "increasing", "values": series("a")}) == "reproduced")
check("flat within 5 %", one({"trend": "flat", "values": series("b")}) == "reproduced")
check("flat within 1 % fails (89 to 91)", one({"trend": "flat", "tol": 0.01, "values": series("b")}) == "not reproduced")
check("decreasing fails for c", one({"trend": "decreasing", "values": series("c")}) == "not reproduced")
# not_decreasing is within the tolerance of the highest value before, not of the step before:
# 100 -> 96 -> 91.5 steps down 4 % and 4.7 % but is 8.5 % below 100.
r2 = results()
for n, v in zip((1, 2, 3), (100.0, 96.0, 91.5)):
    r2["s"].add("d", f"n={n}", "total", "goodput_rps", 5, v, 0.0)
nd_check = rp.Finding(spec([]), {"finding": "f", "checks": [{"trend": "not_decreasing", "values": series("d")}]}, 0)
check("not_decreasing does not compound its tolerance", nd_check.verdict(r2)[0] == "not reproduced")
check("per a stated number", one({"variant": "a", "point": {"n": 3}, "per": 110, "equal": 1}) == "reproduced")
# ratios and differences: a/submitted at n = 3 is 1.10; a - b at n = 2 is 13.
check("per: 110 / 100 at least 1.1", one({"variant": "a", "point": {"n": 3}, "per": {"metric": "submitted_rps"}, "at_least": 1.1}) == "reproduced")
check("per: 104 / 100 not at least 1.05", one({"variant": "a", "point": {"n": 2}, "per": {"metric": "submitted_rps"}, "at_least": 1.05}) == "not reproduced")
check("minus: 104 - 91 = 13", one({"variant": "a", "point": {"n": 2}, "minus": {"variant": "b"}, "equal": 13}) == "reproduced")
# none (a search that found nothing) fails every comparison unless none_as says what it means.
check("none fails", one({"variant": "a", "metric": "fewest_gpus_max", "at_least": 1}) == "not reproduced")
check("none_as", one({"variant": "a", "metric": "fewest_gpus_max", "none_as": 49, "at_least": 48}) == "reproduced")

# Verdict words over several checks.
two = {"finding": "f", "checks": [{"variant": "a", "point": {"n": 2}, "within": 100},
                                  {"variant": "b", "point": {"n": 2}, "within": 100}]}
word, text = verdict(two)
check("one of two holds: partly, naming both", word == "partly reproduced" and "holds:" in text and "Does not hold:" in text)
unj = {"finding": "f", "checks": [{"variant": "a", "point": {"n": 2}, "within": 100}], "unjudged": ["the shape of a figure"]}
word, text = verdict(unj)
check("every check holds but a part is not judged: partly, naming it", word == "partly reproduced" and "the shape of a figure" in text)
nd = {"finding": "f", "checks": [{"variant": "a", "point": {"n": 2}, "within": 100, "default": {"variant": "b"}}]}
word, text = verdict(nd, {"s.a": "a setting"})
check("holds only with a non-default setting: says so, with the default's figure",
      word == "reproduced only with non-default settings" and "with a setting" in text and "at defaults 91.0" in text)
nd2 = {"finding": "f", "checks": [{"variant": "a", "point": {"n": 1}, "within": 100, "default": {"variant": "c"}}]}
check("a check that holds at the defaults too needs no setting", verdict(nd2, {"s.a": "a setting"})[0] == "reproduced")
nd3 = {"finding": "f", "checks": [{"variant": "c", "point": {"n": 2}, "per": {"variant": "a"}, "at_most": 1}]}
check("a non-default setting behind per is seen (and needs a default)",
      raises(lambda: verdict(nd3, {"s.a": "a setting"}), "default: required"))
word, text = verdict({"finding": "f", "not_judged": "no numbers"})
check("not judged", word == "not judged" and "no numbers" in text)

# Prose that quotes a result which moved is found, also wrapped across lines,
# and not inside a generated part (which the program rewrites itself).
page = os.path.join(rp.ROOT, "docs", "x.md")
text = "a\nquote 12.0 ±\n  1.0 here\n<!-- gen:v -->12.0 ± 1.0<!-- /gen -->\n13.0 ± 1.0 stays\n"
stale = rp.stale_quotes({"docs/x.md": {"12.0 ± 1.0"}}, {page: ("", text)})
check("a quote of a moved result is reported with its line", stale == ["docs/x.md:2: quotes 12.0 ± 1.0, a result that has moved"])
r = rp.Results()
r.add("a", "", "total", "goodput_rps", 5, 12.04, 0.96)
check("quoted strings at 1 and 2 decimals", rp.quoted_strings(r) == {"12.0 ± 1.0", "12.04 ± 0.96"})

# A single number of the results for the prose, and a table, as the docs show them.
sp = spec([{"finding": "f", "not_judged": "x"}])
sp["values"] = {"a2": {"variant": "a", "point": {"n": 2}}}
sp["tables"] = [{"id": "t", "source": "s", "metric": "goodput_rps", "corner": "n",
                 "rows": [{"dim": "n", "values": [1, 2]}], "columns": [{"dim": "variant", "values": ["a", "b"]}]}]
blocks = rp.generated_blocks(sp, results())
check("an inline value", blocks.get("value:t:a2") == "104.0 ± 1.0")
check("a table", blocks.get("table:t:t") == "\n| n | a | b |\n|---|---|---|\n| 1 | 100.0 ± 1.0 | 90.0 ± 1.0 |\n| 2 | 104.0 ± 1.0 | 91.0 ± 1.0 |\n")

# Bad findings files: file, JSON path, what was expected.
check("an unknown key of a check is refused (a misspelt unjudged or tol)",
      raises(lambda: verdict({"finding": "f", "checks": [{"variant": "a", "within": 1, "tolerance": 0.1}]}), "tolerance: not a field of a check"))
check("an unknown key of a finding is refused",
      raises(lambda: verdict({"finding": "f", "unjudgd": ["x"], "checks": [{"variant": "a", "point": {"n": 1}, "within": 100}]}), "unjudgd: not a field of a finding"))
check("a comparison's value of the wrong type is refused", raises(lambda: verdict({"finding": "f", "checks": [{"variant": "a", "within": "90"}]}), "within: expected a number"))
check("per and minus together are refused", raises(lambda: verdict({"finding": "f", "checks": [{"variant": "a", "per": {"variant": "b"}, "minus": {"variant": "b"}, "at_least": 1}]}), "expected one of them"))
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        json.dump({"name": "x", "page": "README.md", "sources": {"s": {"kind": "sweeep"}}, "findings": []}, f)
    try:
        rp.load_findings(bad)
        msg = ""
    except rp.FindingsError as e:
        msg = str(e)
    check("bad source kind names the path and what is expected", 'sources.s.kind: expected "sweep", "provision" or "run"' in msg)
try:
    rp.Finding(spec([]), {"finding": "f", "checks": [{"variant": "a", "within": 1, "range": [1, 2]}]}, 0)
    msg = ""
except rp.FindingsError as e:
    msg = str(e)
check("two comparisons in one check are refused", "findings[0].checks[0]: expected exactly one comparison" in msg)
try:
    rp.Finding(spec([]), {"finding": "f", "checks": [{"variant": "zz", "point": {"n": 1}, "within": 1}]}, 0).verdict(results())
    msg = ""
except rp.FindingsError as e:
    msg = str(e)
check("a value with no result names what is missing", "no result for variant 'zz' at n=1" in msg)

print(f"{checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
