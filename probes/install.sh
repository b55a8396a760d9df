#!/usr/bin/env bash
# install.sh installs the probes' dependencies (npm ci, go mod download, the
# Python venv at build/probes/py-venv from probes/py/requirements.lock) and
# records how long each step took and how much it put on disk in
# probes/results/install.json.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
t0=$(date +%s.%N)
(cd js && npm ci --no-audit --no-fund --loglevel=error)
t1=$(date +%s.%N)
# download the modules the probes' packages need (what go mod download would fetch for them)
(cd go && GOFLAGS=-mod=mod go list -deps ./... >/dev/null)
t2=$(date +%s.%N)
(cd go && GOFLAGS=-mod=mod go build -o /dev/null ./cmd/probes)
t3=$(date +%s.%N)
# the Python probes' venv (relative to the repository root), every package pinned by the lock
venv=../build/probes/py-venv
py_fresh="a new venv"; [ -x "$venv/bin/python" ] && py_fresh="the venv already there (pip checked the lock)"
python3 -m venv "$venv"
"$venv/bin/pip" install --disable-pip-version-check --no-input -q -r py/requirements.lock
t4=$(date +%s.%N)
py_size=$(du -sh "$venv" | cut -f1)
py_pkgs=$(grep -c '==' py/requirements.lock)
py_ver=$("$venv/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
js_size=$(du -sh js/node_modules | cut -f1)
js_pkgs=$(find js/node_modules -name package.json -path '*/node_modules/*/package.json' -not -path '*/node_modules/*/node_modules/*/*/package.json' | wc -l)
root=$(cd .. && pwd)
go_dirs=$(cd go && GOFLAGS=-mod=mod go list -deps -f '{{with .Module}}{{.Dir}}{{end}}' ./... | sort -u | grep -v '^$' | grep -v "^$root")
go_mods=$(echo "$go_dirs" | wc -l)
go_size=$(echo "$go_dirs" | xargs du -sc 2>/dev/null | tail -1 | awk '{printf "%.0fM", $1/1024}')
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
cat > results/install.json <<JSON
{"steps": [
  {"step": "npm ci (probes/js)", "seconds": $(secs "$t0" "$t1"), "size": "node_modules ${js_size}, ${js_pkgs} package.json files"},
  {"step": "go module download (probes/go: modules its packages need)", "seconds": $(secs "$t1" "$t2"), "size": "${go_mods} modules, ${go_size} of module sources"},
  {"step": "go build ./cmd/probes", "seconds": $(secs "$t2" "$t3"), "size": "-"},
  {"step": "python3 -m venv + pip install -r probes/py/requirements.lock (build/probes/py-venv)", "seconds": $(secs "$t3" "$t4"), "size": "venv ${py_size}, ${py_pkgs} pinned packages, Python ${py_ver}; ${py_fresh}"}
]}
JSON
echo "probes install: npm ci $(secs "$t0" "$t1")s (node_modules ${js_size}), go modules $(secs "$t1" "$t2")s (${go_mods} modules, ${go_size}), go build $(secs "$t2" "$t3")s, python venv $(secs "$t3" "$t4")s (${py_size}, ${py_pkgs} packages)"
