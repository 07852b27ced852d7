/* Calls a tuned EDA launcher built without kernels at the shape given on the
 * command line, and prints what rkc_eda_fwd and rkc_eda_decode answer: with
 * no fatbin, each valid call fails naming the kernel its variant launches,
 * which shows the variant the shape bucket chose.
 *
 *   tuned-dispatch B T H HV [N]   (N: packed sequences in one row, B = 1) */
#include "eda.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plausible device address, never dereferenced on the host. */
static rkc_tensor fake(int32_t rank, const int64_t *shape, rkc_dtype dtype) {
  return rkc_contiguous((const void *)(uintptr_t)((uint64_t)1 << 32), dtype,
                        rank, shape);
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: %s B T H HV [N]\n", argv[0]);
    return 2;
  }
  const int64_t B = atoll(argv[1]), T = atoll(argv[2]), H = atoll(argv[3]),
                HV = atoll(argv[4]), N = argc == 6 ? atoll(argv[5]) : 0;
  const int64_t key[] = {B, T, H, RKC_EDA_DK}, gate[] = {B, T, HV, RKC_EDA_DK},
                value[] = {B, T, HV, RKC_EDA_DV}, scalar[] = {B, T, HV};
  rkc_eda_args a;
  memset(&a, 0, sizeof a);
  a.q = a.k = a.e = fake(4, key, RKC_BF16);
  a.g = fake(4, gate, RKC_F32);
  a.v = fake(4, value, RKC_BF16);
  a.beta = a.gamma = fake(3, scalar, RKC_BF16);
  a.o = fake(4, value, RKC_BF16);
  if (N) {
    a.cu_seqlens = (const int64_t *)(uintptr_t)((uint64_t)1 << 33);
    a.num_seqs = N;
  }
  rkc_status status = rkc_eda_fwd(NULL, &a);
  printf("fwd %d: %s\n", (int)status, rkc_last_error());
  status = rkc_eda_decode(NULL, &a);
  printf("decode %d: %s\n", (int)status, rkc_last_error());
  return 0;
}
