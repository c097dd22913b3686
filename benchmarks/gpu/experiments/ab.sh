#!/usr/bin/env bash
# One GPU-machine call that measures experiment patches against main (see README.md here):
#   A  main as checked out: build (kilnexec, kiln_cuda, cuda_tests), the gtest filter $TESTS, run.py's $ROWS;
#   B  $PATCHES applied (space-separated paths), incremental rebuild, $ROWS again;
#   C  (if $ENV_C is set, e.g. KILN_RESIDUAL_TO_NORM=1) the B build with that variable exported, $ROWS again.
# Needs .deps (gpu-deps.sh and its .debs; ../../shared/docs/GPU.md) carried along. Logs and reports under $OUT;
# the table printed last. The working tree is left patched on the GPU machine's copy only.
set -u
T0=$SECONDS
ROWS=${ROWS:-bert_base_b1,vit_b_16_b1}
TESTS=${TESTS:-CudaGemmEpilogueBench.*:CudaAttentionBench.VitBatch1}
OUT=${OUT:-/tmp/ab_out}; mkdir -p "$OUT"
source .deps/gpu-deps.sh install .deps/debs >/dev/null
build() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=ON >> "$OUT/build.log" 2>&1 &&
    ninja -C build-gpu kilnexec kiln_cuda cuda_tests >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  echo "built at $((SECONDS - T0)) s"
}
bench() {  # $1: label
  timeout 200 python3 benchmarks/gpu/run.py --kilnexec=build-gpu/tools/kilnexec/kilnexec --rows="$ROWS" \
    --skip-compile --skip-nograph --budget-s=180 --out="/tmp/ab_$1/r.md" > "$OUT/run_$1.log" 2>&1
  cp "/tmp/ab_$1/r.md" "$OUT/run_$1.md" 2>/dev/null
  echo "run $1 done at $((SECONDS - T0)) s"
}
build
timeout 120 build-gpu/src/backends/cuda/cuda_tests --gtest_filter="$TESTS" > "$OUT/tests_A.log" 2>&1
echo "tests A rc=$?"
bench A
for p in ${PATCHES:-}; do git apply "$p" || { echo "patch $p does not apply"; exit 1; }; done
if [ -n "${PATCHES:-}" ]; then
  build
  timeout 120 build-gpu/src/backends/cuda/cuda_tests --gtest_filter="$TESTS" > "$OUT/tests_B.log" 2>&1
  echo "tests B rc=$?"
  bench B
fi
if [ -n "${ENV_C:-}" ]; then
  (export "${ENV_C?}"; bench C)
fi
echo "== bench lines (A, then B)"
grep -h "\[ bench" "$OUT"/tests_*.log 2>/dev/null | head -40
echo "== Kiln ms (graph, loaded plan) / (building process) per run"
for r in A B C; do
  [ -f "$OUT/run_$r.md" ] && grep -E "^\| [A-Za-z]" "$OUT/run_$r.md" | grep -v "^| Model" | awk -F'|' -v r=$r '{print r": "$2"b"$3":"$4"/"$5}'
done
echo "done at $((SECONDS - T0)) s"
