//===- CompileRequest.h - What `rkc compile` is asked to build --*- C++ -*-===//
//
// Kept free of MLIR so that the tuning library (the schedule space, the
// database) can name the schedule fields without the compiler behind them.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_TOOLS_RKC_COMPILEREQUEST_H
#define RKC_TOOLS_RKC_COMPILEREQUEST_H

#include <cstdint>
#include <string>
#include <vector>

namespace rkc::cli {

/// What `rkc compile` is asked to build. The schedule fields (chunkSize,
/// valueTile, threads, prefetch, splitScan, factorProducts) are the knobs
/// `rkc tune` searches: see tuning::scheduleKnobs().
struct CompileRequest {
  std::string outDir, arch = "sm_90a", nvcc;
  int64_t dk = 128, dv = 128;
  int64_t chunkSize = 0; // 0: the largest of 64, 32, 16, 8 that fits
  int64_t valueTile = 32, threads = 256;
  int64_t prefetch = 0; // 1: prefetch the next chunk's input rows into L2
  // The prep kernel's value columns at a time (0: the widest that needs no
  // more shared memory than the value tile). Not a knob of `rkc tune`.
  int64_t prepValueTile = 0;
  // 1: products that share their left operand become one product of a sum
  // (--rec-factor-products; the sum is rounded to bf16 once as an operand).
  int64_t factorProducts = 0;
  // 1: row scalings moved off products' left operands
  // (--rec-sink-row-scales). Not a knob of `rkc tune` (yet).
  int64_t sinkRowScales = 0;
  // Blocks an SM the decode kernel's registers leave room for: 0 lets ptxas
  // choose, -1 as many as 48 registers a thread allow. Not a knob of
  // `rkc tune`, which times prefill.
  int64_t decodeBlocks = -1;
  // 1: decode keeps a thread's rows of the state consecutive (key-axis
  // vectors loaded four rows at a time); 0: strided rows; -1: 1 where a
  // token has two or more sub-steps. Not a knob of `rkc tune` either.
  int64_t decodeQuads = -1;
  // Decode: a row role reading from two to this many input rows loads them
  // all before widening any; 0 none; -1 the default rule (see Passes.td).
  int64_t decodeRawRows = -1;
  // Split kernels: the prep kernel's launch bound asks for as many blocks an
  // SM as its shared memory allows, at most this many (1 to 4); 0: at most 4.
  int64_t prepBlocks = 0;
  // Elementwise prep ops four elements at a time: 1 on, 0 off, -1 where
  // every gate is a scalar. Not a knob of `rkc tune` (yet).
  int64_t elementwiseQuads = -1;
  // Split kernels: 1 computes two independent Grams of the prep together
  // (rec-schedule's pair-grams), 0 not, -1 the default rule.
  int64_t pairGrams = -1;
  // Split kernels: 1 pads the rows of a scan product's float32 tile that
  // only sums read (rec-schedule's pad-addend-rows). Not a knob of `rkc
  // tune` (yet).
  int64_t padAddendRows = 1;
  // Split kernels: where the scan's blocks leave half the multiprocessors
  // free, each sequence's chunks run in this many segments, the prep of one
  // beside the scan of the one before (a second stream); 1: the prep, then
  // the scan. Not a knob of `rkc tune` (the launcher decides by the shape).
  int64_t scanSegments = 4;
  int64_t splitScan = 1; // 1: a prep kernel over all chunks, then the scan;
                         // 0: one kernel
  // 1: what only the output needs runs after the scan in a kernel of its
  // own, every chunk at once, from each chunk's entering state (rec-split-
  // scan's out-phase); 0: in the scan. Not a knob of `rkc tune` (yet).
  int64_t outPhase = 0;
  // With an out phase: 1 has its kernel take a chunk and value head a block,
  // the key side once and the value side for each value tile in turn; 0: a
  // block a value tile.
  int64_t outValueLoop = 0;
  // Split kernels: 1 has the rows the scan reads cross from the prep (the
  // scan stages them with the rest of its workspace, or from the inputs
  // themselves), 0 has the scan load them; -1: 1.
  int64_t keepRows = -1;
  // The tensor-core products of the kernels for 16-bit outputs: "tf32" or
  // "bf16" (a number format, the same for every variant of a tuned compile).
  std::string products = "bf16";
  std::vector<std::string> params; // name=value
  bool noFatbin = false;
};

} // namespace rkc::cli

#endif // RKC_TOOLS_RKC_COMPILEREQUEST_H
