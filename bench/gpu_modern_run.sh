#!/usr/bin/env bash
# Issue 48's device run (bench/README.md, "bench_gpu_modern.py"): the CUDA tests, then the ModernBERT
# table, then (with time left) BERT with max-autotune. Run on the GPU machine from the repo root,
# with data/gpu_bench/uk and .whl (transformers' wheel) carried; results go to $OUT.
#   bash bench/gpu_modern_run.sh [tests|modern|bert]...   (default: tests modern)
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site || exit 1
fi
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
for part in "${@:-tests modern}"; do
  for p in $part; do
    case $p in
      tests)
        timeout 150 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_cuda.py -k "${TESTS_K:-within or segments or never_waits or padded_logits}" 2>&1 | tee "$OUT/cuda_tests.txt" | tail -25 ;;
      modern)
        timeout 330 python3 bench/bench_gpu_modern.py --data data/gpu_bench/uk --budget-min "${MODERN_MIN:-4}" \
          ${MODERN_ARGS:-} --out "$OUT/modern.md" 2> "$OUT/modern.err"; tail -5 "$OUT/modern.err" ;;
      bert)
        timeout 330 python3 bench/bench_gpu.py --data data/gpu_bench/uk --precisions bf16 --models large \
          --variants ours+compile+unpad ours+autotune+unpad --budget-min "${BERT_MIN:-4}" \
          --out "$OUT/bert.md" 2> "$OUT/bert.err"; tail -5 "$OUT/bert.err" ;;
    esac
  done
done
