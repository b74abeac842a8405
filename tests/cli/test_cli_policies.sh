#!/usr/bin/env bash
# clustersim policies (the catalogue of policies and their parameters) and the
# one error listing every setting a dispatch policy without placement would
# ignore. Usage: test_cli_policies.sh CLUSTERSIM_BINARY SOURCE_ROOT
source "$(dirname "$0")/harness.sh" "$@"
cd "$tmp" || exit 1
cp "$src/tests/cli/bad_inputs/base.json" base.json

# ---- the catalogue as JSON -------------------------------------------------------
"$bin" policies --json >all.json 2>all.err
check "policies --json exits 0" test $? -eq 0
check "policies --json: nothing on stderr" test ! -s all.err
check "policies --json: every policy has its fields" python3 - all.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = True
for p in d["policies"]:
    for k in ("name", "kind", "description", "parameters"):
        ok &= k in p
    ok &= p["kind"] in ("placement", "dispatch", "controller") and p["description"] != ""
    for q in p["parameters"]:
        ok &= all(k in q for k in ("name", "type", "description")) and q["description"] != ""
        ok &= q["type"] == "json" or isinstance(q.get("required"), bool)
        if "default" in q:
            want = {"number": (int, float), "integer": int, "boolean": bool, "string": str,
                    "choice": str}[q["type"]]
            ok &= isinstance(q["default"], want)
            if q["type"] in ("number", "integer"):
                ok &= q.get("min", -1e308) <= q["default"] <= q.get("max", 1e308)
            if q["type"] == "choice":
                ok &= q["default"] in q["choices"]
sys.exit(0 if ok else 1)
PY

# Exactly the policies the scenario compiler knows: its "unknown policy"
# messages list the registry's names.
known() { # FIELD: the names in the "(known: ...)" of an unknown policy
  "$bin" run base.json --set "$1=nosuch" 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n' | sort
}
cat_names() { # KIND
  python3 -c "import json; [print(p['name']) for p in json.load(open('all.json'))['policies'] if p['kind'] == '$1']" | sort
}
known placement.policy >k.placement
known dispatch.policy >k.dispatch
"$bin" run base.json --set 'controller={"policy": "nosuch"}' 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n' | sort >k.controller
for kind in placement dispatch controller; do
  cat_names $kind >c.$kind
  check "the catalogue's $kind policies are the registry's" diff k.$kind c.$kind
  check "the registry lists $kind policies" test -s k.$kind
done

# ---- the defaults the docs' tables give -------------------------------------------
check "defaults (and ranges given) of Usher, MILP, iGniter, Nexus and the delays equal the docs' tables" \
  python3 - all.json "$src/docs/policies.md" "$src/docs/dispatch.md" "$src/docs/scenario.md" <<'PY'
import json, re, sys
cat = {(p["kind"], p["name"]): {q["name"]: q for q in p["parameters"]}
       for p in json.load(open(sys.argv[1]))["policies"]}
ranges = []  # (policy, name, min, max) where the docs give "In [a, b]"
def tables(path, heading_to_policy):
    """Rows `| `name` | default | ... |` of the parameter tables under the headings given."""
    policy, rows = None, []
    for line in open(path):
        if line.startswith("#"):
            policy = next((p for h, p in heading_to_policy.items() if line.startswith(h)), None)
        m = re.match(r"\s*\| `([a-z_]+)` \| ([^|]+) \|([^|]*)", line)
        if policy and m:
            rows.append((policy, m.group(1), m.group(2).strip()))
            r = re.search(r"In \[([-0-9.e]+), ([-0-9.e]+)\]", m.group(3))
            if r:
                ranges.append((policy, m.group(1), float(r.group(1)), float(r.group(2))))
    return rows
rows = tables(sys.argv[2], {"## Usher": ("placement", "usher"), "## MILP": ("placement", "milp"),
                            "## iGniter": ("placement", "igniter")})
rows += tables(sys.argv[3], {"## Nexus": ("dispatch", "nexus")})
rows += [(("dispatch", "symphony"), n, d) for _, n, d in
         tables(sys.argv[4], {"## Dispatch": ("dispatch", "symphony")})]
compared, bad = 0, []
for policy, name, doc in rows:
    q = cat[policy].get(name)
    if q is None:
        bad.append(f"{policy[1]}.{name}: in the docs, not in the catalogue")
        continue
    text = doc.split(" (")[0].strip("`")
    if text in ("true", "false"):
        want = text == "true"
    elif re.fullmatch(r"-?[0-9.]+", text):
        want = float(text)
    elif re.fullmatch(r"`?[a-z_]+`?", doc) and text != "none":
        want = text
    else:  # "4 … 128", "none", "number of GPUs", "from the network": in words
        if "default" in q and "default_text" not in q:
            bad.append(f"{policy[1]}.{name}: the docs say {doc!r}, the catalogue {q['default']!r}")
        continue
    compared += 1
    if q.get("default") != want:
        bad.append(f"{policy[1]}.{name}: the docs say {want!r}, the catalogue {q.get('default')!r}")
for policy, name, lo, hi in ranges:
    q = cat[policy][name]
    if (q.get("min"), q.get("max")) != (lo, hi):
        bad.append(f"{policy[1]}.{name}: the docs give [{lo}, {hi}], the catalogue "
                   f"[{q.get('min')}, {q.get('max')}]")
print("\n".join(bad), "\ncompared", compared, "defaults and", len(ranges), "ranges")
sys.exit(0 if not bad and compared >= 20 and ranges else 1)
PY

# ---- the listed default is the value the policy runs with ----------------------------
# A run with the field set to the catalogue's default equals the run without it
# (the engine's line holds wall time).
run_out() { "$bin" run "$@" 2>&1 | grep -v '^engine:'; }
same_with_default() { # KIND POLICY BASE_ARGS...: every parameter with a default, one at a time
  local kind=$1 policy=$2 section=$1
  shift 2
  [ "$kind" = controller ] && section=controller
  run_out "$@" >plain.out
  python3 -c "
import json
for p in json.load(open('all.json'))['policies']:
    if p['kind'] == '$kind' and p['name'] == '$policy':
        for q in p['parameters']:
            if 'default' in q:
                print(q['name'], json.dumps(q['default']))" >defaults.txt
  local n=0 name value
  while read -r name value; do
    run_out "$@" --set "$section.$name=$value" >with.out
    if ! cmp -s plain.out with.out; then
      echo "# $policy.$name=$value changes the run:"; diff plain.out with.out | head -5
      return 1
    fi
    n=$((n + 1))
  done <defaults.txt
  [ $n -gt 0 ]
}
check "dedicated: its listed defaults change nothing" same_with_default placement dedicated base.json
check "usher: its listed defaults change nothing" same_with_default placement usher base.json --set placement.policy=usher
check "router: its listed defaults change nothing" same_with_default dispatch router base.json --unset dispatch.max_wait_ms
SYM=(base.json --set 'dispatch={"policy": "symphony"}' --unset placement)
sym_defaults() { # symphony's defaults but the rate estimate's (refused with target_batch slo)
  run_out "${SYM[@]}" >plain.out
  local ok=0 kv
  for kv in gpu_choice='"lowest_id"' batch_gathering='"window"' target_batch='"slo"' \
            d_ctrl_us=100 max_batch=512; do
    python3 -c "import json,sys; q={x['name']:x for p in json.load(open('all.json'))['policies'] if p['name']=='symphony' for x in p['parameters']}; k,v='$kv'.split('=',1); sys.exit(0 if q[k]['default']==json.loads(v) else 1)" || ok=1
    run_out "${SYM[@]}" --set "dispatch.$kv" | cmp -s - plain.out || ok=1
  done
  return $ok
}
check "symphony: its listed defaults change nothing" sym_defaults
check "eager: its listed defaults change nothing" same_with_default dispatch eager base.json --set 'dispatch={"policy": "eager"}' --unset placement

# ---- one policy, and names it does not know ----------------------------------------
"$bin" policies usher >usher.txt
check "policies usher: one policy" test "$(grep -c '^[a-z].* (placement)$' usher.txt)" -eq 1
check "policies usher: its parameters with type, range and default" \
  grep -qF 'max_group_size (integer in [1, 20], optional, default 4)' usher.txt
check "policies timeout: timeout_ms is required" bash -c "'$bin' policies timeout | grep -qF 'timeout_ms (number in [0, 1000000000], required)'"
check "policies --json NAME: one policy" py "len(d['policies']) == 1 and d['policies'][0]['name'] == 'shepherd'" <("$bin" policies --json shepherd)
bad "policies: unknown name, with a suggestion" 'clustersim policies: no policy "ushr" (did you mean "usher"?)' policies ushr
bad "policies: two names" 'clustersim policies: expected at most one policy NAME' policies usher milp
"$bin" place --list >list.txt
check "place --list points to policies" grep -qF 'clustersim policies:' list.txt

# ---- settings a dispatch policy without placement would ignore: one error --------------
# dispatch.max_wait_ms (router's), placement and cluster.mps: three runs to find them one at
# a time before; now one error and the --unset options that remove them.
"$bin" run base.json --set cluster.mps=true --set dispatch.policy=symphony >three.out 2>three.err
check "three ignored settings: exit 2" test $? -eq 2
check "three ignored settings: nothing on stdout" test ! -s three.out
check "three ignored settings: one error naming them all" bash -c "
  grep -qF 'dispatch \"symphony\" would ignore 3 settings' three.err &&
  grep -qF '  dispatch: unknown field \"max_wait_ms\"' three.err &&
  grep -qF '  placement: dispatch \"symphony\" runs every model on every GPU' three.err &&
  grep -qF '  cluster.mps: dispatch \"symphony\" runs one batch at a time' three.err"
suggested=$(sed -n 's/^remove them with: //p' three.err)
check "three ignored settings: the --unset line" test "$suggested" = "--unset dispatch.max_wait_ms --unset placement --unset cluster.mps"
# shellcheck disable=SC2086 # the suggestion is split as a shell would split it, verbatim
"$bin" run base.json --set cluster.mps=true --set dispatch.policy=symphony $suggested >fixed.out 2>fixed.err
check "the suggested command line, run verbatim, succeeds" test $? -eq 0
check "the suggested command line: the symphony run" grep -q 'dispatch symphony' fixed.out

finish
