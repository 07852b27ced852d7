#!/usr/bin/env bash
# rkc compile --tuning on EDA with a database written here (keyed as rkc
# tune keys its rows). Without kernels, the tuned launcher and the runtime
# compile as C with cc, and a C program checks which variant each shape
# bucket runs (a launcher built without a fatbin fails naming the kernel of
# the variant it chose). Where nvcc is, the tuned folder is also built with
# fatbins, into a shared library as rkc_torch builds it, and through
# rkc_add_kernels(... TUNING). Exits 77 (ctest: not run) without cc.
set -euo pipefail
rkc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") source=$2 work=$3
command -v cc >/dev/null || { echo "cc not found: not run"; exit 77; }
spec=$source/examples/specs/eda.mlir
inputs=$source/test/tools/Inputs
rm -rf "$work"
mkdir -p "$work"

# The database: the template keyed with this rkc's spec hash, version and
# default chunk size.
"$rkc" tune "$spec" --shape B=1,T=64,H=1 --db "$work/none.jsonl" --dry-run \
    --gpu TestGPU --arch sm_90a |
  sed -n -e 's/^  key .*spec_hash=\([0-9a-f]*\) .*rkc_version=\([^ ]*\) .*/s|@HASH@|\1|g;s|@VERSION@|\2|g/p' \
         -e 's/^  default   chunk \([0-9]*\),.*/s|@CHUNK@|\1|g/p' > "$work/db.sed"
sed -f "$work/db.sed" "$inputs/tuning.jsonl.in" > "$work/tuning.jsonl"
chunk=$(sed -n 's/.*@CHUNK@|\([0-9]*\)|.*/\1/p' "$work/db.sed")
default=eda__c${chunk}_v32_t256_p0_s1_f0_b0 winner=eda__c8_v64_t128_p1_s1_f0_b0

# 1. No kernels: the launcher as C, and the dispatch at run time.
out=$work/nofatbin
"$rkc" compile "$spec" -o "$out" --tuning "$work/tuning.jsonl" --no-fatbin
cc -std=c11 -Wall -Werror -c "$out/eda_launch.c" -I "$out" -o "$work/launch.o"
cc -std=c11 -Wall -Werror -c "$out/rkc/runtime.c" -I "$out" -o "$work/runtime.o"
cc -std=c11 -Wall -Werror "$inputs/tuned-dispatch.c" "$work/launch.o" \
   "$work/runtime.o" -I "$out" -o "$work/dispatch" -ldl -lpthread
expect() { # expected-variant B T H HV [N]
  local variant=$1
  shift
  local answer
  answer=$("$work/dispatch" "$@")
  # 10: RKC_ERROR_NO_KERNELS, the arguments having passed validation.
  if ! grep -q "^fwd 10: rkc_${variant}_" <<<"$answer" ||
     ! grep -q "^decode 10: rkc_${default}_" <<<"$answer"; then
    echo "shape $*: expected fwd to run $variant and decode $default, got:"
    echo "$answer"
    exit 1
  fi
}
expect $winner 1 8192 32 32      # bh=32,t=8192
expect $winner 1 5000 32 32      # T rounds up to 8192
expect $winner 2 8192 8 16       # 2 sequences x 16 value heads
expect $winner 1 16384 16 16 2   # 2 packed sequences of 8192 tokens on average
expect $default 4 2048 16 16     # bh=64,t=2048: the default was fastest
expect $default 1 100 2 2        # not tuned
expect $default 1 8192 64 64     # bh=64,t=8192: not tuned
echo "dispatch: ok"

# 2. With kernels, where nvcc is.
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "nvcc not found: kernels not built"; exit 0; }
out=$work/tuned
"$rkc" compile "$spec" -o "$out" --tuning "$work/tuning.jsonl" --nvcc "$nvcc"
for variant in $default $winner; do
  grep -q -a sm_90a "$out/$variant.fatbin" || { echo "no sm_90a code in $variant.fatbin"; exit 1; }
done
cc -std=c11 -Wall -Werror -c "$out/eda_launch.c" -I "$out" -o "$work/tuned-launch.o"
# As rkc_torch builds it: the launcher and the runtime, nothing else.
"$nvcc" -shared -Xcompiler -fPIC -O2 -o "$out/libeda.so" "$out/eda_launch.c" \
  "$out/rkc/runtime.c" -I "$out" -ldl -lpthread
for symbol in rkc_eda_fwd rkc_eda_decode rkc_last_error; do
  nm -D "$out/libeda.so" | grep -q " T $symbol\$" || { echo "libeda.so lacks $symbol"; exit 1; }
done
echo "kernels: ok"

# 3. rkc_add_kernels(... TUNING), where CMake is.
command -v cmake >/dev/null || { echo "cmake not found: rkc_add_kernels not tried"; exit 0; }
project=$work/consumer
mkdir -p "$project"
cat > "$project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(tuned_consumer LANGUAGES C)
set(RKC_EXECUTABLE "$rkc")
include("$source/cmake/package/rkcKernels.cmake")
# The runtime from the sources, as the installed package provides it.
add_library(runtime_from_source STATIC "$source/runtime/lib/runtime.c")
set_target_properties(runtime_from_source PROPERTIES C_STANDARD 11)
target_include_directories(runtime_from_source PUBLIC "$source/runtime/include")
target_link_libraries(runtime_from_source PUBLIC \${CMAKE_DL_LIBS} pthread)
add_library(rkc::runtime ALIAS runtime_from_source)
rkc_add_kernels(eda_tuned SPECS "$spec" TUNING "$work/tuning.jsonl")
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE eda_tuned)
CMAKE
cat > "$project/main.c" <<'C'
#include "eda.h"
/* No GPU needed: a null args pointer is refused before any launch. */
int main(void) { return rkc_eda_fwd(0, 0) == RKC_ERROR_NULL_POINTER ? 0 : 1; }
C
cmake -S "$project" -B "$project/build" \
  -DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")" > "$work/consumer.log"
cmake --build "$project/build" >> "$work/consumer.log"
"$project/build/consumer"
ls "$project/build/rkc/eda_tuned/eda/$winner.fatbin" > /dev/null
echo "rkc_add_kernels TUNING: ok"
