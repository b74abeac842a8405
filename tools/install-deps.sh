#!/usr/bin/env bash
# Installs the Debian 12 packages clustersim needs to build and test, if any
# is missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail
# gnuplot-nox and a font render the figures (svg, pngcairo); parallel runs
# sweep shards (docs/experiments.md); OpenBLAS is the cpu replay backend's
# arithmetic (docs/replay.md); CBC is the MILP placement's optional second
# solver (docs/policies.md; the build works without it). libltdl-dev holds
# the last static archive GLPK's needs, so that the clustersim program links
# GSL and GLPK statically (meson_options.txt: cli_static_deps). libglib2.0-dev
# also provides GModule (gmodule-no-export-2.0), which loads plug-ins. pytest runs
# the Python package's tests; pandas gives its DataFrames (docs/python.md);
# matplotlib, nbconvert and ipykernel run examples/python's notebook; tqdm draws
# the progress bar of a sweep from Python.
pkgs=(build-essential meson ninja-build pkg-config libglib2.0-dev libgsl-dev libcjson-dev
      libglpk-dev libltdl-dev libcmocka-dev python3 gnuplot-nox fonts-dejavu-core parallel
      libopenblas-dev coinor-libcbc-dev python3-pytest python3-pandas python3-matplotlib
      jupyter-nbconvert python3-ipykernel python3-tqdm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
