//===- Occupancy.h - Blocks an SM, as the kernels' launch bounds ask -------===//
//
// One rule for rec-schedule (which judges prep orders by it) and the CUDA
// emitter (which writes it into the launch bounds).
//
//===----------------------------------------------------------------------===//

#ifndef RKC_DIALECT_REC_OCCUPANCY_H
#define RKC_DIALECT_REC_OCCUPANCY_H

#include <algorithm>
#include <cstdint>

namespace rkc::rec {

/// The prep kernel's blocks an SM at most where rec-schedule's prep-blocks
/// is 0.
constexpr int64_t kDefaultPrepBlocks = 4;

/// The blocks an SM of `smBytes` shared memory holds of blocks of `bytes`
/// (1 KB of an SM's reserved a block), at most `cap` and as many as leave
/// `registers` a thread to blocks of `threads` (0 where none fits).
inline int64_t blocksAnSM(int64_t bytes, int64_t smBytes, int64_t cap,
                          int64_t registers, int64_t threads) {
  cap = std::max<int64_t>(1, std::min(cap, 65536 / registers / threads));
  return std::min(cap, smBytes / (bytes + 1024));
}

} // namespace rkc::rec

#endif // RKC_DIALECT_REC_OCCUPANCY_H
