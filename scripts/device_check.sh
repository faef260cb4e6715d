#!/bin/bash
# The GPU check, for a session lent a device machine (it runs there, in the repository root):
#   1. one `repair` printed in full (the table shows a cpu and a cuda row);
#   2. the CUDA-marked tests, then the runtime tests with a GPU visible (verify compares cpu and cuda
#      by default when CUDA is present);
#   3. `repair` over development reports, one bench/realworld.py per set, every row (with the tool's
#      last line) kept in $OUT/repair_dev.json.
# The machine has torch (CUDA), typer, rich and pytest; carry the rest as wheels in .whl/ (ignored):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl libcst==1.9.0 pygls==2.1.1 lsprotocol==2025.0.0 cattrs==26.2.1 typer==0.27.3 pathspec==1.1.1
#   then: run(command="bash scripts/device_check.sh", carry=[".whl"]).
# Knobs: SKIP_TESTS=1, CUDA_TESTS (files), SUITE_S (0: skip the runtime tests) / REPAIR_S (seconds), SETS ("set24 set23 ..."), P (sets at a time),
# RJ (cases at a time per set). Measured at stop 49 on an H200 (16 cores): one repair 18 s; the 38
# CUDA-marked tests 76 s; 15 repairs at a time with one intra-op thread each ~100 s for 9 small sets;
# 18 at a time with torch's default threads finished nothing in 300 s (keep OMP_NUM_THREADS=1).
set -u
PY=${PY:-python3}
OUT=${OUT:-/tmp/devout}; mkdir -p "$OUT"
SUITE_S=${SUITE_S:-100}; REPAIR_S=${REPAIR_S:-200}; J=${J:-15}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1} PYTHONUNBUFFERED=1
if [ -d .whl ] && [ -z "${LOCAL:-}" ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
fi
mkdir -p /tmp/bin; printf '#!/bin/sh\nexec %s -m codemod "$@"\n' "$PY" > /tmp/bin/inplacefix; chmod +x /tmp/bin/inplacefix
export PATH=/tmp/bin:$PATH
nvidia-smi -L 2>&1 | head -2
$PY -c "import importlib.metadata as m, torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'libcst', m.version('libcst'))"
echo "== one repair, printed"
cp "$(ls bench/realworld/set24/2401_*.py | grep -v '\.ref\.py$')" /tmp/one.py
T0=$(date +%s); timeout 90 inplacefix repair /tmp/one.py::compute 2>&1 | tail -"${ONE_TAIL:-25}"; echo "one repair: $(( $(date +%s) - T0 )) s"
if [ -z "${SKIP_TESTS:-}" ]; then
  echo "== cuda-marked tests"
  timeout 120 $PY -m pytest -q -m cuda -p no:cacheprovider -rA ${CUDA_TESTS:-tests/test_verify.py tests/test_verify_soundness.py tests/test_verify_device_not_run.py tests/test_dropout_draws.py} > "$OUT/cuda_tests.log" 2>&1
  tail -3 "$OUT/cuda_tests.log"
  if [ "$SUITE_S" -gt 0 ]; then
  echo "== runtime tests, GPU visible"
  timeout "$SUITE_S" $PY -m pytest -v -n "$J" --dist loadfile -p no:cacheprovider -rfE ${SUITE_ARGS:-tests/test_verify*.py tests/test_repair*.py tests/test_locate.py tests/test_view_repair.py tests/test_step_recompute.py tests/test_fixtures_runtime.py tests/test_leaf_repair.py tests/test_script_repair*.py} > "$OUT/suite.log" 2>&1
  echo "suite rc $? (124: cut at ${SUITE_S} s); passed $(grep -c ' PASSED ' "$OUT/suite.log")"
  grep -E "(FAILED|ERROR) " "$OUT/suite.log" | cut -c1-220 | head -40
  fi
fi
echo "== repair over development reports (one process per set)"
rm -rf /tmp/rw; mkdir -p /tmp/rw
sets=${SETS:-"set24 set23 set22 set13 set12 set11 set10 set9 set19 set18 set20 set21 set25 set8 set16 set17 set26 set6 set7 set15 set2 set14 set5 set4 set3 set1"}
printf '%s\n' $sets | timeout "$REPAIR_S" xargs -P "${P:-5}" -I{} sh -c "$PY bench/realworld.py -j ${RJ:-3} --timeout 200 --verbose --sets {} --json /tmp/rw/{}.json > /tmp/rw/{}.log 2>&1"
echo "repair rc $? (124: cut at ${REPAIR_S} s)"
$PY - "$OUT/repair_dev.json" <<'PYEOF'
import glob, json, sys, collections
rows = [r for f in sorted(glob.glob("/tmp/rw/*.json")) for r in json.load(open(f))]
json.dump(rows, open(sys.argv[1], "w"), indent=1)
fx = [r for r in rows if r["fixable"]]
print("sets done", len({r["set"] for r in rows}), "fixable", len(fx), collections.Counter(r["status"] for r in fx))
for r in rows:
    if r["status"] not in ("FIXED", "AS_COMPUTED", "RECOMPUTED"):
        print(r["status"], r["set"], r["case"][:60], (r.get("why") or "")[:220])
PYEOF
