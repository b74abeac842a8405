#!/usr/bin/env bash
# Installs libclustersim into a fresh prefix and uses it as a researcher's own
# program would: only through pkg-config and the installed headers and data.
# Builds and runs the installed copies (share/doc/clustersim/examples) of
# examples/library_example.c and the two external policies of
# docs/extending.md (examples/extending/*.c), whose checks compare them with
# the built-in policies; checks the .pc file and the shared library's soname.
# Usage: tools/check-install.sh [BUILD_DIR] (default build-install, reused).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-install}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
meson setup "$build" --prefix="$prefix" --buildtype=debugoptimized --wipe >/dev/null 2>&1 ||
  meson setup "$build" --prefix="$prefix" --buildtype=debugoptimized >/dev/null
ninja -C "$build" install >/dev/null

pc=$(find "$prefix" -name clustersim.pc | head -n 1)
[ -n "$pc" ] || { echo "check-install: no clustersim.pc installed" >&2; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
[ "$(pkg-config --variable=prefix clustersim)" = "$prefix" ] ||
  { echo "check-install: clustersim.pc names prefix $(pkg-config --variable=prefix clustersim), not $prefix" >&2; exit 1; }
libdir=$(pkg-config --variable=libdir clustersim)
soname=$(objdump -p "$libdir/libclustersim.so" | awk '/SONAME/ {print $2}')
[ -e "$libdir/$soname" ] ||
  { echo "check-install: the soname $soname is not installed in $libdir" >&2; exit 1; }
profile=$prefix/share/clustersim/profiles/v100_thesis.json
[ -f "$profile" ] || { echo "check-install: $profile not installed" >&2; exit 1; }

out=$(mktemp -d -p "$prefix")
# The installed copies of the examples, not the source tree's: they must be
# there, and they are what a researcher starts from.
examples=$prefix/share/doc/clustersim/examples
for rel in library_example.c extending/first_fit.c extending/jsq.c extending/least_queue.c; do
  src=$examples/$rel
  [ -f "$src" ] || { echo "check-install: $src not installed" >&2; exit 1; }
  cmp -s "$src" "examples/$rel" || { echo "check-install: $src differs from examples/$rel" >&2; exit 1; }
  name=$(basename "$src" .c)
  # Only what pkg-config says: no path into the source or build tree.
  cc -std=c11 -Wall -Wextra -Werror "$src" $(pkg-config --cflags --libs clustersim) -lm \
    -o "$out/$name"
  LD_LIBRARY_PATH=$libdir "$out/$name" "$profile" >"$out/$name.log" 2>&1 ||
    { cat "$out/$name.log"; echo "check-install: $name failed" >&2; exit 1; }
  echo "installed library: $name built with pkg-config and run: ok"
done
"$prefix/bin/clustersim" --version >/dev/null
# A plug-in (docs/extending.md, "Plug-ins"): first_fit.c's policy built as a
# shared object from the installed headers alone, loaded by the installed
# clustersim, gives the total goodput its own program printed above.
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -DCS_EXAMPLE_PLUGIN \
  examples/extending/first_fit.c $(pkg-config --cflags clustersim) -o "$out/first_fit.so"
cat >"$out/ff.json" <<JSON
{"seed": 11, "profiles": ["$profile"], "network": {"curve": "gcp_n1_standard_16"},
 "cluster": {"gpus": 4, "gpu_type": "v100", "mps": true}, "dispatch": {"max_wait_ms": 20},
 "placement": {"policy": "first-fit-creq", "slo_fraction": 0.25},
 "clients": [
  {"model": "resnet50", "rate": 800, "slo_ms": 200, "duration_s": 10, "warmup_s": 1},
  {"model": "alexnet", "rate": 1500, "slo_ms": 100, "duration_s": 10, "warmup_s": 1},
  {"model": "vgg19", "rate": 300, "slo_ms": 200, "duration_s": 10, "warmup_s": 1},
  {"model": "inception_v3", "rate": 400, "slo_ms": 200, "duration_s": 10, "warmup_s": 1}]}
JSON
"$prefix/bin/clustersim" --plugin "$out/first_fit.so" run "$out/ff.json" >"$out/plugin.log" 2>&1 ||
  { cat "$out/plugin.log"; echo "check-install: clustersim --plugin first_fit.so failed" >&2; exit 1; }
want=$(awk '$1 == "total" { print $3 }' "$out/first_fit.log")
got=$(awk '$1 == "total" { print $5 }' "$out/plugin.log")
[ -n "$want" ] && [ "$got" = "$want" ] ||
  { echo "check-install: the plug-in's total goodput is \"$got\", its program printed \"$want\"" >&2; exit 1; }
echo "installed library: first_fit.so built with pkg-config -shared -fPIC, loaded by clustersim: ok"
# An LLM replica scheduler as a plug-in (docs/llm.md, "A replica scheduler
# of your own"): the installed copy of llm_vllm.c, built from the installed
# headers alone, gives the installed clustersim's built-in vLLM results.
llm_src=$examples/extending/llm_vllm.c
[ -f "$llm_src" ] && cmp -s "$llm_src" examples/extending/llm_vllm.c ||
  { echo "check-install: $llm_src missing or differs from examples/extending/llm_vllm.c" >&2; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -DCS_EXAMPLE_PLUGIN "$llm_src" \
  $(pkg-config --cflags clustersim) -o "$out/llm_vllm.so"
for pol in vllm vllm_example; do
  cat >"$out/llm_$pol.json" <<JSON
{"format": "clustersim-llm-run", "version": 1, "model": "meta-llama/Llama-2-7b-hf",
 "device": "a100", "node": "a100_pairwise_nvlink", "replicas": 2, "router": "lor",
 "scheduler": {"policy": "$pol", "num_blocks": 200},
 "requests": {"synthetic": {"n": 60, "qps": 30, "arrival": "poisson",
   "prompt_tokens": {"uniform": [256, 1024]}, "output_tokens": {"uniform": [64, 256]}, "seed": 3}}}
JSON
done
"$prefix/bin/clustersim" llm run "$out/llm_vllm.json" -o "$out/llm_b" >"$out/llm_b.log" 2>&1 &&
  "$prefix/bin/clustersim" --plugin "$out/llm_vllm.so" llm run "$out/llm_vllm_example.json" \
    -o "$out/llm_p" >"$out/llm_p.log" 2>&1 ||
  { cat "$out/llm_b.log" "$out/llm_p.log"; echo "check-install: llm run with llm_vllm.so failed" >&2; exit 1; }
cmp -s "$out/llm_b/requests.csv" "$out/llm_p/requests.csv" ||
  { echo "check-install: llm_vllm.so's requests.csv differs from the built-in vllm's" >&2; exit 1; }
echo "installed library: llm_vllm.so built with pkg-config -shared -fPIC, equal to the built-in vllm: ok"
# The Python package (docs/python.md): installed beside the library, it runs
# on the installed library (not the build's) and gives the installed
# program's summary byte for byte.
init=$(find "$prefix" -path '*/clustersim/__init__.py' | head -n 1)
[ -n "$init" ] || { echo "check-install: the Python package is not installed" >&2; exit 1; }
pydir=$(dirname "$(dirname "$init")")
cat >"$out/q.json" <<JSON
{"seed": 5, "profiles": ["$profile"], "cluster": {"gpus": 2, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "rate": 300, "slo_ms": 200, "duration_s": 10},
             {"model": "alexnet", "rate": 500, "slo_ms": 100, "duration_s": 10}]}
JSON
"$prefix/bin/clustersim" run "$out/q.json" --json >"$out/q.cli.json" 2>/dev/null
PYTHONPATH=$pydir python3 - "$prefix" "$out/q.json" "$out/q.cli.json" <<'PY' ||
import sys
import clustersim
prefix, scenario, cli_json = sys.argv[1:]
assert clustersim.library_path.startswith(prefix + "/"), clustersim.library_path
assert clustersim.__file__.startswith(prefix + "/"), clustersim.__file__
with clustersim.load(scenario) as sc:
    assert sc.run().to_json() == open(cli_json).read(), "summary differs from the program's"
PY
  { echo "check-install: the installed Python package does not run on the installed library" >&2; exit 1; }
echo "installed Python package: imported from $pydir, on $libdir/$soname: ok"
echo "installed library: prefix, soname $soname, headers, data and pkg-config all usable"
