#!/usr/bin/env bash
# A/B of two rkc builds, the routine check before a kernel change is merged:
# check.py --quick on the new build (every spec, f32 and bf16, against the
# float64 interpreter), then compare.py of both on every prefill spec at
# two of PERF.md's shapes, and EDA with its tuning database.
#
#   bash test/gpu/ab.sh BASE_RKC NEW_RKC
#   bash test/gpu/ab.sh .devbin/rkc-main '.devbin/rkc-main --pad-addend-rows 0'
#
# Either side may be an rkc followed by `rkc compile` options (one word,
# quoted): the same binary with and without an option is an A/B too.
# Summaries read base / new: above 1 is the new build faster. Needs a GPU,
# nvcc and PyTorch (not flash-linear-attention: that is bench/benchmark.py).
set -uo pipefail
cd "$(dirname "$0")/../.."
if (($# != 2)); then
  echo "usage: bash test/gpu/ab.sh BASE_RKC NEW_RKC ('RKC --option value' too)" >&2
  exit 2
fi
base=$1 new=$2
for side in "$base" "$new"; do
  read -r rkc _ <<<"$side"
  [[ -x $rkc ]] || { echo "ab.sh: $rkc is no executable rkc" >&2; exit 2; }
done
read -r newRkc newOptions <<<"$new"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
start=$(date +%s)
python3 test/gpu/check.py --rkc "$newRkc" --quick --compile-args "${newOptions:-}" 2>&1 | tail -2
status=${PIPESTATUS[0]}
echo "check.py: $(($(date +%s) - start)) s"
specs=linear_attention,deltanet,gdn,kda,gdn2,qed,eda,deltaproduct,comba,dplr
for shape in 1,8192,32 4,4096,16; do
  python3 test/gpu/compare.py --spec "$specs" --shape "$shape" \
    --variant "base=$base" --variant "new=$new" 2>&1 | sed -n '/^Summary/,$p'
done
python3 test/gpu/compare.py --spec eda --shape 1,8192,32 \
  --variant "base=$base --tuning bench/tuning/eda.jsonl" \
  --variant "new=$new --tuning bench/tuning/eda.jsonl" 2>&1 | sed -n '/^Summary/,$p'
echo "ab.sh: $(($(date +%s) - start)) s"
exit "$status"
