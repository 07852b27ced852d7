//===- Schedule.cpp - Thread blocks and shared memory for lowered IR ------===//
//
// One thread block runs one (sequence, value head, value tile): it keeps its
// dk × value-tile slice of the state in shared memory across the chunks of
// its sequence. Every tile of the chunk body gets a shared-memory offset by
// first fit over live ranges; a tile's space is reused once its last user
// has run (never by that user's own result).
//
//===----------------------------------------------------------------------===//

#include "Rec/Occupancy.h"
#include "Rec/OutPhase.h"
#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <limits>

namespace rkc::rec {
#define GEN_PASS_DEF_RECSCHEDULE
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

/// Tiles of fewer floats than this (row vectors: a chunk x one) are placed
/// apart from the others (see planOps).
constexpr int64_t kSmallTile = 512;

/// The operands whose place an elementwise op may take when it reads them
/// last: each thread reads an element and writes that element back
/// (tile::add, neg, scaleRows, decayRows, decayToEnd). A sum may take either
/// addend's; the others only their first operand's, as their second (a
/// gate, a scale) is read at other elements' indices.
SmallVector<Value, 2> mappedOperands(Operation *op) {
  if (isa<ChunkAddOp>(op))
    return llvm::to_vector<2>(op->getOperands());
  if (isa<ChunkNegOp, ChunkScaleRowsOp, ChunkDecayRowsOp, ChunkDecayToEndOp>(op))
    return {op->getOperand(0)};
  return {};
}

/// Moves each prep op, from the last up, to just before its first reader
/// where the operands that then live longer (not those read only here,
/// which move along when they are prep ops) take fewer floats than its
/// result: the result's tile then lives from where it is needed, not from
/// where the chunk algorithm first names it (KDA's β k, read only by the
/// last prep op, leaves the Gram's peak; β, a row vector, lives longer).
/// Prep ops are pure (row loads, tile arithmetic): their order is free up
/// to their operands. With `evenTrade` a move that holds operands longer by
/// as many floats as its result frees is made too (it pays where it ends an
/// overlap, e.g. when the op then takes its operand's place).
void sinkPrepOps(Block &body, llvm::function_ref<int64_t(Value)> floats,
                 bool evenTrade) {
  auto isPrep = [](Operation *op) {
    auto phase = op ? op->getAttrOfType<StringAttr>("rec.phase") : nullptr;
    return phase && phase.getValue() == "prep";
  };
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.getOperations(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops)) {
    if (!isPrep(op) || op->use_empty())
      continue;
    Operation *first = nullptr;
    for (Operation *user : op->getUsers())
      if (!first || user->isBeforeInBlock(first))
        first = user;
    if (first->getBlock() != &body || first == op->getNextNode())
      continue;
    // An operand whose last reader the op becomes lives on in the op's
    // result when the op may take its place: that costs nothing.
    int64_t longer = 0;
    bool inPlace = false;
    SmallVector<Value, 2> mapped = mappedOperands(op);
    for (Value x : op->getOperands()) {
      if (x.hasOneUse() && isPrep(x.getDefiningOp()))
        continue;
      if (llvm::any_of(x.getUsers(), [&](Operation *user) {
            return user != op && !user->isBeforeInBlock(first);
          }))
        continue;
      if (!inPlace && llvm::is_contained(mapped, x) &&
          x.getType() == op->getResult(0).getType()) {
        inPlace = true;
        continue;
      }
      longer += floats(x);
    }
    int64_t freed = floats(op->getResult(0));
    if (longer < freed || (evenTrade && longer == freed))
      op->moveBefore(first);
  }
}

/// Moves each prep op that has operands, from the first down, to just after
/// the last of their definitions: the prep ops gather ahead of the scan ops
/// that stood between them, so that sinkPrepOps may then order them among
/// themselves (KDA: the output's Gram before the decay of the query rows,
/// which then takes their place).
void hoistPrepOps(Block &body, bool keepOrder) {
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.getOperations(), [](Operation &op) { return &op; });
  // With `keepOrder`, ops gathered after the same definition keep their
  // order (an inclusive cumsum stays ahead of the exclusive one that may
  // view it); without, the later lands first (other plans).
  llvm::DenseMap<Operation *, Operation *> lastGathered;
  for (Operation *op : ops) {
    auto phase = op->getAttrOfType<StringAttr>("rec.phase");
    if (!phase || phase.getValue() != "prep" || !op->getNumOperands())
      continue;
    Operation *last = nullptr;
    for (Value x : op->getOperands())
      if (Operation *def = x.getDefiningOp())
        if (def->getBlock() == &body && (!last || last->isBeforeInBlock(def)))
          last = def;
    if (!last)
      continue;
    Operation *after = keepOrder ? lastGathered.lookup(last) : nullptr;
    if (!after)
      after = last;
    if (after != op && after->getNextNode() != op)
      op->moveAfter(after);
    lastGathered[last] = op;
  }
}

/// The phase rec-split-scan gave `op` ("" for none).
StringRef phaseOf(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>("rec.phase");
  return attr ? attr.getValue() : StringRef("");
}

/// Puts independent key-side Grams of the prep side by side, two at a
/// time: the later one, with the prep ops it needs that stand between the
/// two, moves up to just after the earlier one, which is marked
/// `rec.gram_with_next`. The emitter then deals both Grams' tasks to the
/// warps at once, with one barrier after both: a Gram of a 32-token chunk
/// has three live tasks (of four) for eight warps, so two side by side
/// take the time of one. The second Gram's result may not take the place
/// of an operand of the first (planOps keeps those alive through it).
/// Grams the scan reads (rec.to_scan) are left where they are: their copy
/// into the workspace follows each.
void pairPrepGrams(Block &body, ArrayRef<Operation *> keySide) {
  auto pairable = [](Operation *op) {
    return isa<ChunkGramOp>(op) && !op->hasAttr("rec.to_scan");
  };
  for (Operation &op : body)
    op.removeAttr("rec.gram_with_next");
  llvm::DenseSet<Operation *> key(keySide.begin(), keySide.end()), paired;
  for (Operation *first : keySide) {
    if (!pairable(first) || paired.contains(first))
      continue;
    Operation *second = nullptr;
    for (Operation *op = first->getNextNode(); op && !second;
         op = op->getNextNode())
      if (key.contains(op) && pairable(op) && !paired.contains(op))
        second = op;
    if (!second)
      break;
    // What the second needs of the ops between the two, in block order;
    // no pair if it reads the first.
    llvm::SetVector<Operation *> needed;
    bool readsFirst = false;
    std::function<void(Operation *)> need = [&](Operation *op) {
      for (Value x : op->getOperands()) {
        Operation *def = x.getDefiningOp();
        if (!def || def->getBlock() != &body || def->isBeforeInBlock(first))
          continue;
        // (Not the first, nor anything outside the key side: prep ops read
        // only prep ops, which this keeps checked.)
        if (def == first || !key.contains(def)) {
          readsFirst = true;
          return;
        }
        if (needed.insert(def))
          need(def);
      }
    };
    need(second);
    if (readsFirst)
      continue;
    SmallVector<Operation *> moves = needed.takeVector();
    llvm::sort(moves, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : moves)
      op->moveBefore(first);
    second->moveAfter(first);
    first->setAttr("rec.gram_with_next", UnitAttr::get(first->getContext()));
    paired.insert(first);
    paired.insert(second);
  }
}

/// Roots beyond this many are not tried in every order (6! orders, each
/// two ways: 1440 plans). Every order of EDA's 7 took about a second a
/// compile, and `rkc tune`'s plan of its 384 schedules 39 s instead of 0.5.
constexpr size_t kMaxRootOrders = 6;
/// Beyond kMaxRootOrders roots, the first this many are tried in every order
/// and choice, the others after them as they stand (7 roots: 210 orders);
/// for DPLR and EDA that finds the least every order finds (EDA at chunk
/// 32: 98 944 bytes, two blocks an SM, against 123 520, one), and the plan
/// of EDA's schedules takes 2.2 s.
constexpr size_t kRootPrefix = 3;

/// The ops of `keySide` that no other op of it reads.
SmallVector<Operation *> prepRoots(ArrayRef<Operation *> keySide) {
  llvm::DenseSet<Operation *> set(keySide.begin(), keySide.end());
  SmallVector<Operation *> roots;
  for (Operation *op : keySide)
    if (llvm::none_of(op->getUsers(),
                      [&](Operation *user) { return set.contains(user); }))
      roots.push_back(op);
  return roots;
}

/// The ops of `set` that define `op`'s operands, in operand order, once each.
SmallVector<Operation *> operandDefs(Operation *op,
                                     const llvm::DenseSet<Operation *> &set) {
  SmallVector<Operation *> defs;
  for (Value x : op->getOperands())
    if (Operation *def = x.getDefiningOp();
        def && set.contains(def) && !llvm::is_contained(defs, def))
      defs.push_back(def);
  return defs;
}

/// Moves the prep ops ahead of every other op of `body`: the key-side ones
/// depth first from `roots` (each root after the ops it needs, operands in
/// order or, with `sethiUllman`, the most demanding first; `floats` an
/// op's result size), then the value-side ones in their order. Prep ops read only
/// prep ops (a chunk's prep runs before its scan), so any order of them
/// that keeps definitions first is one the kernel may run; where one reads
/// another op nothing moves.
void orderPrepDepthFirst(Block &body, ArrayRef<Operation *> keySide,
                         ArrayRef<Operation *> valueSide,
                         ArrayRef<Operation *> roots, bool sethiUllman,
                         llvm::function_ref<int64_t(Operation *)> floats) {
  llvm::DenseSet<Operation *> prep(keySide.begin(), keySide.end());
  prep.insert(valueSide.begin(), valueSide.end());
  for (Operation *op : prep)
    for (Value x : op->getOperands())
      if (Operation *def = x.getDefiningOp();
          def && def->getBlock() == &body && !prep.contains(def))
        return;
  llvm::DenseSet<Operation *> key(keySide.begin(), keySide.end()), done;
  // Sethi-Ullman: the operand whose own evaluation needs the most floats
  // beyond its result first, so that fewer results wait while it runs (a
  // DAG's shared operands counted each time; the plan decides anyway).
  llvm::DenseMap<Operation *, int64_t> needs;
  std::function<int64_t(Operation *)> need;
  auto demanding = [&](Operation *a, Operation *b) {
    return need(a) - floats(a) > need(b) - floats(b);
  };
  need = [&](Operation *op) -> int64_t {
    if (auto it = needs.find(op); it != needs.end())
      return it->second;
    SmallVector<Operation *> defs = operandDefs(op, key);
    llvm::stable_sort(defs, demanding);
    int64_t held = 0, peak = floats(op);
    for (Operation *def : defs) {
      peak = std::max(peak, held + need(def));
      held += floats(def);
    }
    return needs[op] = std::max(peak, held + floats(op));
  };
  SmallVector<Operation *> order;
  std::function<void(Operation *)> visit;
  // An op whose operands are all there and which reads one of them last
  // runs at once where it frees as many floats as its result takes (an
  // exclusive cumsum: the gate rows go; a decay of rows in their place).
  llvm::DenseSet<Operation *> emitted;
  auto frees = [&](Operation *op) {
    if (done.contains(op))
      return false;
    SmallVector<Operation *> defs = operandDefs(op, key);
    if (llvm::any_of(defs,
                     [&](Operation *def) { return !emitted.contains(def); }))
      return false;
    int64_t freed = 0;
    for (Operation *def : defs)
      if (llvm::all_of(def->getUsers(), [&](Operation *user) {
            return user == op || emitted.contains(user);
          }))
        freed += floats(def);
    return freed > 0 && freed >= floats(op);
  };
  auto drain = [&] {
    for (bool again = true; again;) {
      again = false;
      for (Operation *op : keySide)
        if (frees(op)) {
          visit(op);
          again = true;
          break;
        }
    }
  };
  visit = [&](Operation *op) {
    if (!done.insert(op).second)
      return;
    SmallVector<Operation *> defs = operandDefs(op, key);
    if (sethiUllman)
      llvm::stable_sort(defs, demanding);
    for (Operation *def : defs)
      visit(def);
    order.push_back(op);
    emitted.insert(op);
    drain();
  };
  for (Operation *root : roots)
    visit(root);
  for (Operation *op : keySide) // (every one reaches a root; kept safe)
    visit(op);
  order.append(valueSide.begin(), valueSide.end());
  Operation *anchor = nullptr;
  for (Operation &op : body)
    if (!prep.contains(&op)) {
      anchor = &op;
      break;
    }
  for (Operation *op : order)
    if (anchor)
      op->moveBefore(anchor);
    else
      op->moveBefore(&body, body.end());
}

struct RecSchedulePass : rkc::rec::impl::RecScheduleBase<RecSchedulePass> {
  using RecScheduleBase::RecScheduleBase;

  /// The floats of one of the scan's two staging buffers, 0 when the
  /// crossing tiles are copied from the workspace where their ops stood.
  int64_t stagedFloats = 0;
  /// The float32 kernel's staging buffers: 2, or 1 where only the kernel
  /// for 16-bit outputs has room for two.
  int64_t stageBuffers = 2;
  /// The floats between rows of the state slice in shared memory.
  int64_t stateStride = 0;
  /// The value columns of the prep kernel's value-side tiles.
  int64_t prepCols = 0;
  /// With an out phase, its kernel's shared memory (bytes) and what
  /// crosses to it a (chunk, value head) (floats): see planOut.
  int64_t outSharedBytes = 0, outWorkspaceFloats = 0;
  /// The kernels for 16-bit outputs keep in bf16 the crossing values that
  /// only products and sums of the scan read (`rec.half`): their bytes a
  /// (chunk, value head) of workspace and a staging buffer.
  int64_t workspaceHalfBytes = 0, stageHalfBytes = 0;
  /// The 16-bit workspace without its raw input rows (0: it has none).
  int64_t workspaceHalfLeanBytes = 0;
  /// Where each crossing value starts in the 16-bit layouts (workspace and
  /// staging buffer): a multiple of this many bytes, one L2 line, so that
  /// the scan's 16-byte asynchronous copies of a tile's rows read whole
  /// lines and fill whole 128-byte rows of shared memory (a scalar gate's
  /// last row, 16 bytes, put every tile after it 16 bytes off both).
  static constexpr int64_t kHalfAlign = 128;
  static int64_t alignHalf(int64_t bytes) {
    return (bytes + kHalfAlign - 1) / kHalfAlign * kHalfAlign;
  }

  /// Marks `rec.half` on each crossing value that only products and sums of
  /// the scan read (linear uses: a bf16 rounding of the operand, as in
  /// 16-bit inputs) and that copies in 16-byte pieces of 8 elements; a
  /// gate's last row (read by decay_state through exp) stays float32.
  void markHalf(ChunkedOp chunked) {
    Builder builder(&getContext());
    TileExtents tiles = extentsOf(chunked, valueTile),
                rows = extentsOf(chunked, dv);
    for (Operation &op : chunked.getBody().front()) {
      op.removeAttr("rec.half");
      auto toScan = op.getAttrOfType<StringAttr>("rec.to_scan");
      if (!toScan || toScan.getValue() != "all")
        continue;
      auto tile = cast<TileType>(op.getResult(0).getType());
      bool linear = llvm::all_of(op.getResult(0).getUses(), [](OpOperand &use) {
        auto phase = use.getOwner()->getAttrOfType<StringAttr>("rec.phase");
        return (phase && phase.getValue() != "scan") ||
               isa<ChunkMatmulOp, ChunkAddOp>(use.getOwner());
      });
      // (Not a state-free partial sum, rec-factor-products' U + V: its own
      // rounding would come on top of the product operand's.)
      if (linear && !isa<ChunkAddOp>(op) && tiles.cols(tile) % 8 == 0 &&
          tiles.elements(tile) % 8 == 0 && rows.cols(tile) % 8 == 0)
        op.setAttr("rec.half", builder.getUnitAttr());
    }
  }

  /// The row stride, in floats, that pad-addend-rows gives `op`'s result
  /// in the split scan's plan, or 0 (dense): a product of the scan whose
  /// rows are a multiple of 32 floats and that only sums read, whose own
  /// readers are sums and the output alone (the sums take the same rows;
  /// no product reads any of them as an operand, nor the yield). The kernels
  /// for bf16 products store such a tile (a delta factor's Q S, which the
  /// output's products add as they store) a fragment at a time, eight rows
  /// of a column at once: dense rows put all eight in one bank group
  /// (8-way conflicts on the stores, 4-way on the addend's pair loads; ncu
  /// on GDN's scan, NOTES.md v24e). Rows 8 floats longer put them in
  /// distinct ones. The emitter passes the stride wherever the tile is
  /// stored or added and refuses any other reader.
  static int64_t paddedAddendRows(Operation *op, const TileExtents &extents) {
    auto phase = op->getAttrOfType<StringAttr>("rec.phase");
    if (!isa<ChunkMatmulOp>(op) || !phase || phase.getValue() != "scan")
      return 0;
    auto tile = cast<TileType>(op->getResult(0).getType());
    int64_t cols = extents.cols(tile);
    if (cols % 32 || extents.rows(tile) % 16 || op->getResult(0).use_empty() ||
        !llvm::all_of(op->getResult(0).getUsers(),
                      [](Operation *user) { return isa<ChunkAddOp>(user); }))
      return 0;
    SmallVector<Value> sums = {op->getResult(0)};
    while (!sums.empty())
      for (Operation *user : sums.pop_back_val().getUsers()) {
        if (isa<ChunkAddOp>(user))
          sums.push_back(user->getResult(0));
        else if (!isa<ChunkOutputOp>(user))
          return 0;
      }
    return cols + 8;
  }

  /// Places the results of `ops` (run in that order) in shared memory from
  /// `base` on, by first fit over live ranges, into `attr`; an op's
  /// operands count as uses only when `reads(op)`. Returns the floats used.
  /// Ops from `loopBegin` on run again for every value tile: a value
  /// defined before the loop and read in it lives to the loop's end.
  ///
  /// For the prep kernel (`prepKernel`) a product whose result only the
  /// scan reads needs no place: it is stored straight into the workspace as
  /// it is computed (rec.to_workspace). With `shiftedViews` neither does an
  /// exclusive cumsum whose gate an earlier inclusive one sums too: it is
  /// that sum's rows shifted down by one (the inclusive tile gets a zero
  /// row before it, rec.zero_row_before; the exclusive one is
  /// rec.shifted_view, its offset a row before the inclusive's; the
  /// inclusive lives as long as either).
  int64_t planOps(ArrayRef<Operation *> ops, int64_t base, StringRef attr,
                  ChunkedOp chunked, llvm::function_ref<bool(Operation *)> reads,
                  size_t loopBegin = SIZE_MAX, bool prepKernel = false,
                  bool shiftedViews = false) {
    int64_t chunk = chunked.getChunkSize(), m = chunked.getSubstepsPerToken();
    const int64_t valueCols = prepKernel ? prepCols : valueTile;
    TileExtents extents{chunk, m, dk, valueCols};
    llvm::DenseMap<Value, size_t> lastUse, index;
    for (auto [i, op] : llvm::enumerate(ops))
      for (Value r : op->getResults())
        index[r] = i;
    // (A value the loop reads from before it is read past the last op: the
    // next value tile reads it again, so no op, the last one included, may
    // take its place.)
    for (auto [i, op] : llvm::enumerate(ops))
      if (reads(op))
        for (Value operand : op->getOperands())
          lastUse[operand] = i >= loopBegin && index.count(operand) &&
                                     index[operand] < loopBegin
                                 ? ops.size()
                                 : i;
    // A Gram computed together with the next op (pairPrepGrams) reads its
    // operands and writes its result while that one writes its own.
    for (auto [i, op] : llvm::enumerate(ops))
      if (op->hasAttr("rec.gram_with_next") && i + 1 < ops.size()) {
        for (Value operand : op->getOperands())
          if (lastUse.count(operand) && lastUse[operand] == i)
            lastUse[operand] = i + 1;
        for (Value result : op->getResults())
          if (!lastUse.count(result) || lastUse[result] < i + 1)
            lastUse[result] = i + 1;
      }
    llvm::DenseMap<Value, Value> shiftedOf; // exclusive -> inclusive
    llvm::DenseSet<Value> toWorkspace;
    if (prepKernel)
      for (Operation *op : ops) {
        op->removeAttr("rec.shifted_view");
        op->removeAttr("rec.zero_row_before");
        op->removeAttr("rec.to_workspace");
        auto crossing = op->getAttrOfType<StringAttr>("rec.to_scan");
        if (isa<ChunkMatmulOp>(op) && crossing && crossing.getValue() == "all" &&
            llvm::all_of(op->getUsers(), [](Operation *user) {
              auto phase = user->getAttrOfType<StringAttr>("rec.phase");
              return phase && phase.getValue() == "scan";
            }))
          toWorkspace.insert(op->getResult(0));
      }
    if (prepKernel && shiftedViews)
      for (Operation *op : ops) {
        auto excl = dyn_cast<ChunkCumsumOp>(op);
        // (Not one the scan reads: its workspace copy stands where it does,
        // which the inclusive sum's life does not reach.)
        if (!excl || !excl.getExclusive() || excl->hasAttr("rec.to_scan"))
          continue;
        for (Operation *user : excl.getGate().getUsers()) {
          auto incl = dyn_cast<ChunkCumsumOp>(user);
          if (!incl || incl.getExclusive() || !index.count(incl) ||
              index[incl] > index[excl] || incl.getType() != excl.getType())
            continue;
          shiftedOf[excl] = incl;
          if (lastUse.count(excl))
            lastUse[incl] = std::max(lastUse.lookup(incl), lastUse[excl]);
          lastUse.erase(excl);
          break;
        }
      }
    // With pad-addend-rows, the split scan's product tiles that only sums
    // read get rows 8 floats longer than dense (paddedAddendRows).
    llvm::DenseMap<Value, int64_t> padded; // result -> row stride, floats
    if (attr == "rec.smem_offset" && padAddendRows &&
        chunked->hasAttr("rec.split_scan"))
      for (Operation *op : ops) {
        if (int64_t stride = paddedAddendRows(op, extents))
          padded[op->getResult(0)] = stride;
        // A sum of a padded tile keeps its rows (it may take its place,
        // and a product that folds it adds and stores with one stride).
        if (isa<ChunkAddOp>(op))
          for (Value operand : op->getOperands())
            if (int64_t stride = padded.lookup(operand))
              padded[op->getResult(0)] = stride;
      }
    auto floatsOf = [&](Value r) {
      auto tile = cast<TileType>(r.getType());
      if (int64_t stride = padded.lookup(r))
        return extents.rows(tile) * stride;
      return extents.elements(tile);
    };
    // The small tiles' zone (row vectors, a chunk x one) could hold all of
    // them at once: a few hundred floats.
    int64_t smallZone = 0;
    for (Operation *op : ops)
      for (Value r : op->getResults()) {
        int64_t size = floatsOf(r);
        if (size < kSmallTile)
          smallZone += (size + 3) / 4 * 4;
      }
    // Places every result over live ranges, 16-byte aligned, first fit (or
    // best fit): tiles of fewer floats than `below` from `base`, the others
    // from `base + zone`, where the small ones cannot split a gap a large
    // one could use. Returns the peak, and the small tiles' own.
    auto place = [&](int64_t below, int64_t zone,
                     llvm::DenseMap<Value, int64_t> &at, bool bestFit = false) {
      std::vector<std::pair<int64_t, int64_t>> live; // [begin, end) in floats
      llvm::DenseMap<Value, std::pair<int64_t, int64_t>> placed;
      int64_t peak = base, smallPeak = base, largeBase = base + zone;
      for (auto [i, op] : llvm::enumerate(ops)) {
        // An elementwise op may take the place of an operand it maps, read
        // last here (mappedOperands).
        Value inPlace;
        if (reads(op))
          for (Value operand : mappedOperands(op))
            if (!inPlace && lastUse.count(operand) &&
                lastUse.lookup(operand) == i &&
                // (not a sum an exclusive view reads a row behind)
                !llvm::is_contained(llvm::make_second_range(shiftedOf),
                                    operand) &&
                placed.count(operand) &&
                padded.lookup(operand) == padded.lookup(op->getResult(0)) &&
                operand.getType() == op->getResult(0).getType())
              inPlace = operand;
        for (Value result : op->getResults()) {
          auto tile = cast<TileType>(result.getType());
          int64_t size = floatsOf(result);
          if (Value incl = shiftedOf.lookup(result)) {
            placed[result] = placed[incl];
            at[result] = at[incl] - extents.cols(tile);
            continue;
          }
          if (toWorkspace.contains(result)) {
            at[result] = 0;
            continue;
          }
          // The zero row of an inclusive cumsum that an exclusive one views.
          int64_t zeroRow = llvm::is_contained(llvm::make_second_range(shiftedOf),
                                               result)
                                ? extents.cols(tile)
                                : 0;
          size += zeroRow;
          if (inPlace) {
            placed[result] = placed[inPlace];
            at[result] = placed[result].first;
            continue;
          }
          std::sort(live.begin(), live.end());
          // The gaps from the zone's start up (first fit: the lowest that
          // holds the tile; best fit: the tightest, else above them all).
          int64_t offset = size < below ? base : largeBase, fit = -1,
                  slack = std::numeric_limits<int64_t>::max();
          for (auto [begin, end] : live) {
            if (end <= offset)
              continue;
            if (offset + size <= begin) {
              if (!bestFit) {
                fit = offset;
                break;
              }
              if (begin - offset - size < slack)
                fit = offset, slack = begin - offset - size;
            }
            offset = std::max(offset, (end + 3) / 4 * 4);
          }
          if (fit >= 0)
            offset = fit;
          live.push_back({offset, offset + size});
          placed[result] = live.back();
          peak = std::max(peak, offset + size);
          if (size < below)
            smallPeak = std::max(smallPeak, offset + size);
          at[result] = offset + zeroRow;
        }
        if (reads(op))
          for (Value operand : op->getOperands())
            if (lastUse.lookup(operand) == i && lastUse.count(operand) &&
                placed.count(operand) && operand != inPlace)
              llvm::erase(live, placed[operand]);
        // A result nothing later reads (a prep value only the scan reads,
        // written out right after its op) frees its space at once.
        for (Value result : op->getResults())
          if (!lastUse.count(result) && !shiftedOf.count(result) &&
              !toWorkspace.contains(result))
            llvm::erase(live, placed[result]);
      }
      return std::pair{peak, smallPeak};
    };
    // Three ways; the one that needs least: every tile first fit from the
    // bottom; the row vectors in a zone below the others (where they cannot
    // split a gap a large tile could use); every tile smaller than the
    // largest (chunk x chunk tiles too) in a zone below, sized by their own
    // plan.
    int64_t largest = 0;
    for (Operation *op : ops)
      for (Value r : op->getResults())
        largest = std::max(largest, floatsOf(r));
    llvm::DenseMap<Value, int64_t> together, apart, midApart, probe;
    int64_t best = place(0, 0, together).first;
    llvm::DenseMap<Value, int64_t> *chosen = &together;
    if (int64_t peak = place(kSmallTile, smallZone, apart).first; peak < best)
      best = peak, chosen = &apart;
    int64_t midZone =
        place(largest, std::numeric_limits<int32_t>::max(), probe).second - base;
    if (int64_t peak = place(largest, midZone, midApart).first; peak < best)
      best = peak, chosen = &midApart;
    llvm::DenseMap<Value, int64_t> tight;
    if (int64_t peak = place(0, 0, tight, /*bestFit=*/true).first; peak < best)
      best = peak, chosen = &tight;
    llvm::DenseMap<Value, int64_t> &at = *chosen;
    Builder builder(&getContext());
    for (Operation *op : ops)
      if (op->getNumResults())
        op->setAttr(attr, builder.getI64IntegerAttr(at.lookup(op->getResult(0))));
    if (attr == "rec.smem_offset")
      for (Operation *op : ops) {
        op->removeAttr("rec.smem_stride");
        if (op->getNumResults())
          if (int64_t stride = padded.lookup(op->getResult(0)))
            op->setAttr("rec.smem_stride", builder.getI64IntegerAttr(stride));
      }
    for (auto [excl, incl] : shiftedOf) {
      excl.getDefiningOp()->setAttr("rec.shifted_view", builder.getUnitAttr());
      incl.getDefiningOp()->setAttr("rec.zero_row_before", builder.getUnitAttr());
    }
    for (Value v : toWorkspace)
      v.getDefiningOp()->setAttr("rec.to_workspace", builder.getUnitAttr());
    return best;
  }

  /// Plans the chunk body; returns the floats it needs, state slice included.
  /// After --rec-split-scan, the scan kernel's plan (rec.smem_offset: its
  /// ops, and the prep values it reads back where their ops stand) and the
  /// prep kernel's (rec.prep_smem_offset, no state slice; `prepFloats`).
  int64_t planChunkBody(ChunkedOp chunked, int64_t &prepFloats) {
    Block &body = chunked.getBody().front();
    // An order recorded by an earlier run is not this plan's.
    for (Operation &op : body) {
      op.removeAttr("rec.prep_order");
      op.removeAttr("rec.gram_with_next");
    }
    // The state slice's rows are 8 floats longer than the value tile where
    // only products (as their right operand), decay_state and sums read it:
    // the tensor-core fragment loads of S then meet no bank conflicts.
    Value state = body.getArgument(0);
    stateStride = valueTile;
    if (valueTile >= 16 &&
        llvm::all_of(state.getUses(), [](OpOperand &use) {
          Operation *user = use.getOwner();
          if (auto mm = dyn_cast<ChunkMatmulOp>(user))
            return use.getOperandNumber() == 1;
          if (auto decay = dyn_cast<ChunkDecayStateOp>(user))
            return use.get() == decay.getState() && use.get() != decay.getDecay();
          return isa<ChunkAddOp>(user);
        }))
      stateStride = valueTile + 8;
    const int64_t stateFloats = dk * stateStride;
    auto phase = phaseOf;
    prepFloats = 0;
    // The prep kernel runs the key-side ops of its chunk once, then the
    // value-side ones (those with a value axis, and what reads them) for
    // each value tile in turn: key-side work is not redone per value tile.
    SmallVector<Operation *> all, prep, scan;
    size_t loopBegin = 0;
    auto collect = [&] {
      llvm::DenseSet<Operation *> valueSide;
      SmallVector<Operation *> prepValues;
      all.clear(), prep.clear(), scan.clear();
      for (Operation &op : body) {
        all.push_back(&op);
        bool value = onValueSide(&op, valueSide);
        if (value)
          valueSide.insert(&op);
        if (phase(&op) == "prep" || phase(&op) == "both")
          (value ? prepValues : prep).push_back(&op);
        if ((phase(&op) != "prep" && phase(&op) != "out") ||
            op.hasAttr("rec.to_scan"))
          scan.push_back(&op);
      }
      Builder builder(&getContext());
      for (Operation *op : prepValues)
        op->setAttr("rec.per_value_tile", builder.getUnitAttr());
      loopBegin = prep.size();
      prep.append(prepValues.begin(), prepValues.end());
    };
    collect();
    if (!chunked->hasAttr("rec.split_scan"))
      return planOps(all, stateFloats, "rec.smem_offset", chunked,
                     [](Operation *) { return true; });
    // With and without exclusive cumsums as views (their zero row can cost
    // more than it saves); the better plan last, so that its offsets stay.
    auto planPrep = [&] {
      auto plan = [&](bool views) {
        return planOps(prep, 0, "rec.prep_smem_offset", chunked,
                       [](Operation *) { return true; }, loopBegin,
                       /*prepKernel=*/true, views);
      };
      int64_t withViews = plan(true), without = plan(false);
      return withViews < without ? plan(true) : without;
    };
    // The prep ops in the chunk algorithm's order, then sunk to their
    // readers (sinkPrepOps): the order whose plan needs less shared memory
    // (fewer floats, more prep blocks an SM). The body keeps it where the
    // scan stages what crosses; an unstaged scan keeps the chunk
    // algorithm's order and the prep kernel its own (rec.prep_order).
    SmallVector<Operation *> written = all;
    auto floats = [&](Value v) {
      return extentsOf(chunked, valueTile)
          .elements(cast<TileType>(v.getType()));
    };
    // The candidates: the ops sunk as they stand and sunk after gathering
    // (in either order), each with and without the moves that trade one
    // tile's floats for as many of another's (which pays where the move
    // ends an overlap).
    SmallVector<std::function<void()>, 6> reorders;
    for (int gather : {0, 1, 2})
      for (bool evenTrade : {false, true})
        reorders.push_back([&, gather, evenTrade] {
          if (gather)
            hoistPrepOps(body, /*keepOrder=*/gather == 2);
          sinkPrepOps(body, floats, evenTrade);
        });
    // And depth first from the key-side ops that no other key-side op reads
    // (the roots: what crosses to the scan or the value loop), in each order
    // of them: a chain whose results only cross to the scan then runs whole
    // while little else lives (KDA: the query rows, their Gram and decay
    // before the erase Gram and its inverse, which live on into the value
    // loop; 62 208 -> 54 016 bytes at chunk 32, four prep blocks an SM).
    // Taken only where it fits more prep blocks an SM: the order itself
    // costs (GDN and DeltaProduct at (1, 32768, 16), same blocks an SM:
    // 0.92x and 0.87x; NOTES.md).
    size_t depthFirstBegin = reorders.size();
    collect();
    SmallVector<Operation *> roots = prepRoots(ArrayRef(prep).take_front(loopBegin));
    // The depth-first orders from the roots in `order` (indices into
    // roots), with and without Sethi-Ullman's order of each root's operands.
    auto tryRootOrder = [&](const SmallVector<size_t> &order) {
      for (bool sethiUllman : {false, true})
        reorders.push_back([&, order, sethiUllman] {
          collect();
          SmallVector<Operation *> sorted =
              llvm::map_to_vector(order, [&](size_t i) { return roots[i]; });
          orderPrepDepthFirst(
              body, ArrayRef(prep).take_front(loopBegin),
              ArrayRef(prep).drop_front(loopBegin), sorted, sethiUllman,
              [&](Operation *op) { return floats(op->getResult(0)); });
        });
    };
    if (roots.size() <= kMaxRootOrders) {
      SmallVector<size_t> order(roots.size());
      std::iota(order.begin(), order.end(), 0);
      do
        tryRootOrder(order);
      while (std::next_permutation(order.begin(), order.end()));
    } else {
      // More roots than every order of them allows: every choice of the
      // first kRootPrefix of them in order, the others after them as they
      // stand. What the prefix holds is what counts (DPLR's best orders
      // begin with the query's chains, EDA's at chunk 32 with the two
      // decays to the chunk's end): DPLR at chunk 32, 74 368 bytes, three
      // prep blocks an SM, as every order finds, in 420 plans, not 10 080.
      auto prefixes = [&](auto &&self, SmallVector<size_t> &order,
                          SmallVector<bool> &taken) -> void {
        if (order.size() == kRootPrefix) {
          SmallVector<size_t> full = order;
          for (size_t r = 0; r < roots.size(); ++r)
            if (!taken[r])
              full.push_back(r);
          tryRootOrder(full);
          return;
        }
        for (size_t r = 0; r < roots.size(); ++r) {
          if (taken[r])
            continue;
          taken[r] = true, order.push_back(r);
          self(self, order, taken);
          taken[r] = false, order.pop_back();
        }
      };
      SmallVector<size_t> order;
      SmallVector<bool> taken(roots.size(), false);
      prefixes(prefixes, order, taken);
    }
    // With pair-grams, every order is planned with its Grams paired.
    auto pair = [&] {
      if (pairGrams != 1)
        return;
      collect();
      pairPrepGrams(body, ArrayRef(prep).take_front(loopBegin));
    };
    pair();
    collect();
    prepFloats = planPrep();
    SmallVector<Operation *> best = all;
    // Prep blocks an SM as the launch bound asks for them (the SM's shared
    // memory one block's limit and its reserved 1 KB; the interpreter's
    // limit, INT64_MAX, clamped).
    auto blocks = [&](int64_t floats) {
      return blocksAnSM(floats * 4, std::min<int64_t>(maxSharedBytes, 1 << 30) + 1024,
                        prepBlocks ? prepBlocks : kDefaultPrepBlocks, 64,
                        threads);
    };
    int64_t depthFirstFloats = std::numeric_limits<int64_t>::max();
    SmallVector<Operation *> depthFirstBest;
    for (auto [i, reorder] : llvm::enumerate(reorders)) {
      // The depth-first orders are taken only for more prep blocks an SM:
      // none where the others' best has as many as its launch bound allows
      // (blocks(0)).
      if (i == depthFirstBegin && blocks(prepFloats) >= blocks(0))
        break;
      for (Operation *op : written)
        op->moveBefore(&body, body.end());
      reorder();
      pair();
      collect();
      int64_t floats = planPrep();
      if (i >= depthFirstBegin) {
        if (floats < depthFirstFloats)
          depthFirstFloats = floats, depthFirstBest = all;
      } else if (floats < prepFloats) {
        prepFloats = floats;
        best = all;
      }
    }
    // Compared as they will be planned (their value columns chosen).
    auto finalFloats = [&](ArrayRef<Operation *> order) {
      for (Operation *op : order)
        op->moveBefore(&body, body.end());
      pair();
      collect();
      return choosePrepCols(planPrep);
    };
    if (!depthFirstBest.empty() &&
        blocks(finalFloats(depthFirstBest)) > blocks(finalFloats(best)))
      best = depthFirstBest;
    for (Operation *op : best)
      op->moveBefore(&body, body.end());
    pair(); // (marks this order's pairs: they stand side by side already)
    collect();
    prepFloats = choosePrepCols(planPrep);
    bool moved = all != written;
    markHalf(chunked);
    // The scan stages what crosses in two buffers (this chunk's, and the
    // next chunk's arriving by cp.async while this one runs) when they fit
    // beside its other tiles: the workspace's latency is then hidden and
    // the crossing tiles need no place of their own.
    int64_t stage = stageFloats(chunked);
    if (stage) {
      SmallVector<Operation *> own;
      for (Operation *op : scan)
        if (phase(op) != "prep")
          own.push_back(op);
      int64_t floats = planOps(own, stateFloats, "rec.smem_offset", chunked,
                               [](Operation *) { return true; });
      floats = (floats + 3) / 4 * 4;
      // (The kernel for 16-bit outputs takes its own two buffers, whose
      // 128-byte lines can outgrow the float32 ones where few values are
      // 16-bit.)
      if ((floats + 2 * stage) * 4 <= maxSharedBytes &&
          floats * 4 + 2 * stageHalfBytes <= maxSharedBytes) {
        stagedFloats = stage;
        return floats + 2 * stage;
      }
      // The kernel for 16-bit outputs stages what it only multiplies or
      // adds in bf16, half the bytes or less: where its two buffers fit
      // and one of the float32 kernel's does, the float32 kernel stages a
      // chunk at a time (its copies then wait at each chunk's start) and
      // the 16-bit one keeps two (chunk 64: GDN's 61 440 + 2 x 139 280
      // bytes do not fit; 61 440 + 139 280, and 61 440 + two of its 16-bit
      // buffers, do).
      if (stageHalfBytes && floats * 4 + 2 * stageHalfBytes <= maxSharedBytes &&
          (floats + stage) * 4 <= maxSharedBytes) {
        stagedFloats = stage;
        stageBuffers = 1;
        return floats + stage;
      }
      for (Operation *op : scan) {
        op->removeAttr("rec.stage_offset");
        op->removeAttr("rec.stage_half_offset");
        op->removeAttr("rec.stage_stride");
        op->removeAttr("rec.stage_half_stride");
      }
    }
    if (moved) {
      // An unstaged scan reads the prep values where their ops stand, so it
      // keeps the chunk algorithm's order; the prep kernel keeps the order
      // its plan above was made in (rec.prep_order, in which the emitter
      // writes it): GDN-2 at chunk 64 and value tile 64, 213 504 bytes of
      // prep in the former order, one block an SM, 115 200 in its own, two.
      Builder builder(&getContext());
      for (auto [i, op] : llvm::enumerate(prep))
        op->setAttr("rec.prep_order", builder.getI64IntegerAttr(i));
      for (Operation *op : written)
        op->moveBefore(&body, body.end());
      collect();
    }
    return planOps(scan, stateFloats, "rec.smem_offset", chunked,
                   [&](Operation *op) { return phase(op) != "prep"; });
  }

  /// With an out phase (rec-split-scan out-phase), the plan of its kernel
  /// (its ops in outKernelOrder: a received value right before its first
  /// reader),
  /// one (chunk, value head, value tile) a block, its key-side ops redone
  /// for each value tile (as fla's chunk_fwd_o does; a value loop like the
  /// prep's is left to the kernel):
  /// `rec.out_smem_offset` on its ops and on what they receive, which it
  /// reads where those ops stand (the prep's values marked rec.to_out, the
  /// scan's marked rec.scan_to_out), after the chunk's entering state
  /// (the state slice, as the scan keeps it). And what crosses to it, a
  /// chunk and value head each (`outWorkspaceFloats`, all dv columns): the
  /// entering state first (dk x dv), then each received value whole, at
  /// `rec.out_workspace_offset`, but for a prep value the scan reads whole
  /// (rec.to_scan "all"), which the out kernel reads from the scan's
  /// workspace. Returns the plan's floats (0 without an
  /// out phase).
  int64_t planOut(ChunkedOp chunked) {
    outSharedBytes = outWorkspaceFloats = 0;
    Block &body = chunked.getBody().front();
    for (Operation &op : body) {
      op.removeAttr("rec.out_smem_offset");
      op.removeAttr("rec.out_workspace_offset");
    }
    if (!chunked->hasAttr("rec.out_phase"))
      return 0;
    auto runs = [](Operation *op) { return runsInOutKernel(op); };
    size_t loopBegin = SIZE_MAX;
    SmallVector<Operation *> ops = outValueLoop
                                       ? outKernelLoopOrder(body, loopBegin)
                                       : outKernelOrder(body);
    // The value loop's ops load and store the value tile's columns of
    // what they read and write (as the prep's value loop's).
    Builder builder(&getContext());
    if (outValueLoop)
      for (Operation *op : ArrayRef(ops).drop_front(loopBegin))
        op->setAttr("rec.per_value_tile", builder.getUnitAttr());
    const int64_t stateFloats = dk * stateStride;
    int64_t floats = planOps(ops, stateFloats, "rec.out_smem_offset", chunked,
                             runs, loopBegin);
    outSharedBytes = floats * 4;
    TileExtents extents = extentsOf(chunked, dv);
    outWorkspaceFloats = dk * dv;
    for (Operation *op : ops) {
      // (A prep value the scan reads whole is read from the scan's
      // workspace, where it is already.)
      auto toScan = op->getAttrOfType<StringAttr>("rec.to_scan");
      if (runs(op) || (toScan && toScan.getValue() == "all"))
        continue;
      op->setAttr("rec.out_workspace_offset",
                  builder.getI64IntegerAttr(outWorkspaceFloats));
      int64_t size =
          extents.elements(cast<TileType>(op->getResult(0).getType()));
      outWorkspaceFloats += (size + 3) / 4 * 4; // 16-byte aligned
    }
    return floats;
  }

  /// Sets the prep kernel's value columns (`prepCols`) and returns its plan's
  /// floats, `plan` planning it: the option where given, else the widest
  /// multiple of the value tile dividing dv whose plan needs no more than
  /// the value tile's. A wider loop step means fewer passes of value row
  /// loads, each a round trip to memory with the whole block waiting, and
  /// products of more columns over the block's idle warps.
  int64_t choosePrepCols(llvm::function_ref<int64_t()> plan) {
    prepCols = valueTile;
    int64_t floats = plan();
    if (prepValueTile) {
      prepCols = prepValueTile;
      return plan();
    }
    for (int64_t cols = dv; cols > valueTile; cols -= valueTile) {
      if (dv % cols || cols % valueTile)
        continue;
      prepCols = cols;
      if (int64_t wide = plan(); wide <= floats)
        return wide;
    }
    prepCols = valueTile;
    return plan();
  }

  /// The extents of `chunked`'s tiles with `valueCols` columns on the value
  /// axis (the value tile in shared memory, dv in the workspace).
  TileExtents extentsOf(ChunkedOp chunked, int64_t valueCols) const {
    return {static_cast<int64_t>(chunked.getChunkSize()),
            static_cast<int64_t>(chunked.getSubstepsPerToken()), dk,
            valueCols};
  }

  /// The elements a crossing value (`rec.to_scan`) hands over: one row of
  /// a "last_row" value, all of any other.
  static int64_t crossingElements(Operation &op, const TileExtents &extents) {
    auto tile = cast<TileType>(op.getResult(0).getType());
    return op.getAttrOfType<StringAttr>("rec.to_scan").getValue() == "last_row"
               ? extents.cols(tile)
               : extents.elements(tile);
  }

  /// The floats of one staging buffer of the scan (`rec.stage_offset` on
  /// each crossing value): value-side tiles for the value tile's columns, a
  /// "last_row" value one row, others whole, each padded to 16 bytes. 0
  /// when a value-side tile's rows are not whole 16-byte pieces. The same buffer's layout for 16-bit outputs
  /// (`rec.stage_half_offset`, bytes; `stageHalfBytes`), where `rec.half`
  /// values take two bytes an element.
  int64_t stageFloats(ChunkedOp chunked) {
    stageHalfBytes = 0;
    Builder builder(&getContext());
    TileExtents extents = extentsOf(chunked, valueTile);
    int64_t floats = 0;
    for (Operation &op : chunked.getBody().front()) {
      auto toScan = op.getAttrOfType<StringAttr>("rec.to_scan");
      if (!toScan)
        continue;
      auto tile = cast<TileType>(op.getResult(0).getType());
      int64_t size = crossingElements(op, extents);
      // A value-side tile is copied row by row (the value tile's columns of
      // each): its rows must be whole 16-byte pieces. Any other value is one
      // contiguous run, padded to 16 bytes here as in the workspace (a
      // scalar gate's last row is one float).
      if (tile.getCols() == Axis::value && (size % 4 || extents.cols(tile) % 4))
        return 0;
      op.setAttr("rec.stage_offset", builder.getI64IntegerAttr(floats));
      // A whole key-side tile that only products read as their left
      // operand is staged with rows 8 floats longer than dense (≡ 8 mod 32
      // for dk and chunks that are multiples of 32): the tensor-core
      // fragment loads then hit eight distinct banks, not one.
      int64_t cols = extents.cols(tile);
      bool lhsOnly = toScan.getValue() == "all" && tile.getCols() != Axis::value &&
                     cols % 32 == 0 && !op.getResult(0).use_empty() &&
                     llvm::all_of(op.getResult(0).getUses(), [](OpOperand &use) {
                       auto mm = dyn_cast<ChunkMatmulOp>(use.getOwner());
                       return mm && use.getOperandNumber() == 0;
                     });
      if (lhsOnly) {
        op.setAttr("rec.stage_stride", builder.getI64IntegerAttr(cols + 8));
        size = extents.rows(tile) * (cols + 8);
      } else {
        op.removeAttr("rec.stage_stride");
      }
      floats += (size + 3) / 4 * 4; // 16-byte aligned
      op.setAttr("rec.stage_half_offset",
                 builder.getI64IntegerAttr(stageHalfBytes));
      // A 16-bit value-side tile that products alone read, as their right
      // operand, is staged for the kernels for 16-bit outputs with rows 8
      // elements longer than dense (80 bytes for 32 columns): the eight rows
      // an ldmatrix reads then fall in distinct banks, where dense rows of
      // 64 bytes put four of them in the same ones.
      bool rhsOnly =
          op.hasAttr("rec.half") && tile.getCols() == Axis::value &&
          toScan.getValue() == "all" && cols % 8 == 0 &&
          !op.getResult(0).use_empty() &&
          llvm::all_of(op.getResult(0).getUses(), [](OpOperand &use) {
            return isa<ChunkMatmulOp>(use.getOwner()) &&
                   use.getOperandNumber() == 1;
          });
      int64_t halfSize = size;
      if (rhsOnly) {
        op.setAttr("rec.stage_half_stride",
                   builder.getI64IntegerAttr(cols + 8));
        halfSize = extents.rows(tile) * (cols + 8);
      } else {
        op.removeAttr("rec.stage_half_stride");
      }
      stageHalfBytes += alignHalf(halfSize * (op.hasAttr("rec.half") ? 2 : 4));
    }
    return floats;
  }

  /// After --rec-split-scan: the workspace a (chunk, value head) keeps
  /// between the phases, in floats, each crossing value at an offset
  /// (`rec.workspace_offset`); value-side tiles for all dv columns, a
  /// "last_row" value one row. 0 for a body that is not split.
  ///
  /// Where the scan stages, a crossing tile of input rows as they are
  /// (rawInput) is marked `rec.raw_input` and placed last in the 16-bit
  /// layout: the scan of the kernels for 16-bit outputs stages it from the
  /// input itself when the input's dtype, strides and alignment allow, and
  /// the launcher then allocates the workspace without that tail
  /// (`workspaceHalfLeanBytes` a chunk and value head).
  int64_t planWorkspace(ChunkedOp chunked) {
    workspaceHalfBytes = workspaceHalfLeanBytes = 0;
    if (!chunked->hasAttr("rec.split_scan"))
      return 0;
    Builder builder(&getContext());
    TileExtents extents = extentsOf(chunked, dv);
    int64_t floats = 0;
    SmallVector<Operation *> raw;
    // For 16-bit outputs (bytes): rec.half values two bytes an element.
    auto halfBytes = [&](Operation &op) {
      return alignHalf(crossingElements(op, extents) *
                       (op.hasAttr("rec.half") ? 2 : 4));
    };
    for (Operation &op : chunked.getBody().front()) {
      op.removeAttr("rec.raw_input");
      if (!op.hasAttr("rec.to_scan"))
        continue;
      int64_t size = crossingElements(op, extents);
      op.setAttr("rec.workspace_offset", builder.getI64IntegerAttr(floats));
      floats += (size + 3) / 4 * 4; // 16-byte aligned
      if (stagedFloats && op.hasAttr("rec.half"))
        if (InputOp input = rawInput(op, chunked)) {
          op.setAttr("rec.raw_input", input.getNameAttr());
          raw.push_back(&op);
          continue;
        }
      op.setAttr("rec.workspace_half_offset",
                 builder.getI64IntegerAttr(workspaceHalfBytes));
      workspaceHalfBytes += halfBytes(op);
    }
    workspaceHalfLeanBytes = workspaceHalfBytes;
    for (Operation *op : raw) {
      op->setAttr("rec.workspace_half_offset",
                  builder.getI64IntegerAttr(workspaceHalfBytes));
      workspaceHalfBytes += halfBytes(*op);
    }
    if (raw.empty())
      workspaceHalfLeanBytes = 0;
    return floats;
  }

  /// The input whose rows a crossing tile holds unchanged, or null: a row
  /// of keys or values (roles key, value, erase_along, read_along) on every
  /// sub-step slot the tile keeps, each slot's operand that one rec.input. (A
  /// read row is decayed, a query row scaled, a strength or gate one float.)
  static InputOp rawInput(Operation &op, ChunkedOp chunked) {
    auto rows = dyn_cast<ChunkRowsOp>(op);
    if (!rows)
      return {};
    auto tile = cast<TileType>(rows.getType());
    auto table = llvm::to_vector(
        chunked.getSubsteps().front().getOps<SubstepOp>());
    InputOp input;
    for (auto [slot, step] : llvm::enumerate(table)) {
      if (!tile.getRowSlots().empty() &&
          !llvm::is_contained(tile.getRowSlots(), static_cast<int64_t>(slot)))
        continue;
      Value operand;
      switch (rows.getRole()) {
      case RowRole::key:
        operand = step.getKey();
        break;
      case RowRole::value:
        operand = step.getValue();
        break;
      case RowRole::erase_along:
        operand = step.getEraseAlong();
        break;
      case RowRole::read_along:
        operand = step.getReadAlong();
        break;
      default:
        return {};
      }
      auto in = operand ? operand.getDefiningOp<InputOp>() : InputOp();
      if (!in || (input && in != input))
        return {};
      input = in;
    }
    return input;
  }

  /// The decode kernel's launch bound in blocks an SM (0: ptxas chooses the
  /// registers). By default as many as 48 registers a thread allow: decode
  /// moves the state, and more slices in flight was worth 1.02-1.15x on
  /// the H200 for all example specs but DeltaNet (NOTES.md, v6 decode).
  int64_t resolvedDecodeBlocks() const {
    return decodeBlocks >= 0 ? decodeBlocks
                             : std::max<int64_t>(1, 65536 / 48 / threads);
  }

  DictionaryAttr schedule(int64_t sharedBytes, int64_t workspaceFloats = 0,
                          int64_t prepSharedBytes = 0,
                          StringRef state = "f32, shared memory",
                          bool quads = false, bool decodeOnly = false) {
    Builder b(&getContext());
    SmallVector<NamedAttribute> extra;
    if (quads) // decode only, named only when set
      extra.push_back(b.getNamedAttr("decode_quads", b.getI64IntegerAttr(1)));
    if (decodeOnly && decodeRawRows >= 0) // named only when set
      extra.push_back(b.getNamedAttr("decode_raw_rows",
                                     b.getI64IntegerAttr(decodeRawRows)));
    if (stagedFloats)
      extra.push_back(b.getNamedAttr("stage_floats",
                                     b.getI64IntegerAttr(stagedFloats)));
    if (workspaceHalfBytes)
      extra.push_back(b.getNamedAttr("workspace_half_bytes",
                                     b.getI64IntegerAttr(workspaceHalfBytes)));
    if (workspaceHalfLeanBytes)
      extra.push_back(
          b.getNamedAttr("workspace_half_lean_bytes",
                         b.getI64IntegerAttr(workspaceHalfLeanBytes)));
    if (stagedFloats && stageHalfBytes)
      extra.push_back(b.getNamedAttr("stage_half_bytes",
                                     b.getI64IntegerAttr(stageHalfBytes)));
    if (stagedFloats && stageBuffers != 2) // named only when not two
      extra.push_back(b.getNamedAttr("stage_buffers",
                                     b.getI64IntegerAttr(stageBuffers)));
    if (stateStride && stateStride != valueTile)
      extra.push_back(b.getNamedAttr("state_stride",
                                     b.getI64IntegerAttr(stateStride)));
    if (workspaceFloats)
      extra.push_back(b.getNamedAttr(
          "workspace_floats", b.getI64IntegerAttr(workspaceFloats)));
    if (prepSharedBytes)
      extra.push_back(b.getNamedAttr(
          "prep_shared_bytes", b.getI64IntegerAttr(prepSharedBytes)));
    if (prepSharedBytes && prepCols != valueTile)
      extra.push_back(b.getNamedAttr("prep_value_tile",
                                     b.getI64IntegerAttr(prepCols)));
    if (outSharedBytes) // the out phase's kernel
      extra.push_back(b.getNamedAttr("out_shared_bytes",
                                     b.getI64IntegerAttr(outSharedBytes)));
    if (outWorkspaceFloats)
      extra.push_back(b.getNamedAttr("out_workspace_floats",
                                     b.getI64IntegerAttr(outWorkspaceFloats)));
    if (outSharedBytes && outValueLoop)
      extra.push_back(
          b.getNamedAttr("out_value_loop", b.getI64IntegerAttr(outValueLoop)));
    if (prepBlocks) // named only when set
      extra.push_back(
          b.getNamedAttr("prep_blocks", b.getI64IntegerAttr(prepBlocks)));
    if (pairGrams >= 0) // named only when not the default
      extra.push_back(
          b.getNamedAttr("pair_grams", b.getI64IntegerAttr(pairGrams)));
    if (elementwiseQuads >= 0) // named only when not the default
      extra.push_back(b.getNamedAttr("elementwise_quads",
                                     b.getI64IntegerAttr(elementwiseQuads)));
    if (products != "tf32") // named only when not the default
      extra.push_back(
          b.getNamedAttr("products", b.getStringAttr(products.getValue())));
    return b.getDictionaryAttr(llvm::to_vector(llvm::concat<const NamedAttribute>(
        extra, ArrayRef<NamedAttribute>{
        b.getNamedAttr("dk", b.getI64IntegerAttr(dk)),
        b.getNamedAttr("dv", b.getI64IntegerAttr(dv)),
        b.getNamedAttr("value_tile", b.getI64IntegerAttr(valueTile)),
        b.getNamedAttr("threads", b.getI64IntegerAttr(threads)),
        b.getNamedAttr("prefetch", b.getI64IntegerAttr(prefetch)),
        b.getNamedAttr("scan_segments", b.getI64IntegerAttr(scanSegments)),
        b.getNamedAttr("decode_blocks", b.getI64IntegerAttr(resolvedDecodeBlocks())),
        b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(sharedBytes)),
        b.getNamedAttr("grid", b.getStringAttr("value tiles x value heads x "
                                               "sequences")),
        b.getNamedAttr("state", b.getStringAttr(state)),
    })));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError() << "rec-schedule: " << message;
      signalPassFailure();
    };
    if (dk % 32 || dv % 32 || dk < 32 || dv < 32 || dk > 256 || dv > 256)
      return fail("dk = " + Twine(dk) + " and dv = " + Twine(dv) +
                  " must be multiples of 32 from 32 to 256");
    if (valueTile < 1 || dv % valueTile)
      return fail("the value tile (" + Twine(valueTile) +
                  ") must divide dv = " + Twine(dv));
    if (threads % 32 || threads < 64 || threads > 1024)
      return fail("threads (" + Twine(threads) +
                  ") must be a multiple of 32 from 64 to 1024");
    if (threads % valueTile)
      return fail("threads (" + Twine(threads) +
                  ") must be a multiple of the value tile (" +
                  Twine(valueTile) + ")");
    if (prepValueTile < 0 ||
        (prepValueTile && (prepValueTile % valueTile || dv % prepValueTile)))
      return fail("the prep value tile (" + Twine(prepValueTile) +
                  ") must be 0 or a multiple of the value tile (" +
                  Twine(valueTile) + ") dividing dv = " + Twine(dv));
    if (prefetch != 0 && prefetch != 1)
      return fail("prefetch (" + Twine(prefetch) + ") must be 0 or 1");
    if (scanSegments < 1 || scanSegments > 64)
      return fail("scan-segments (" + Twine(scanSegments) +
                  ") must be from 1 to 64");
    if (decodeBlocks < -1 || decodeBlocks * threads > 2048)
      return fail("decode-blocks (" + Twine(decodeBlocks) +
                  ") must be -1, 0 or a number of blocks of " +
                  Twine(threads) + " threads an SM holds (2048 threads)");
    if (prepBlocks < 0 || prepBlocks > 4)
      return fail("prep-blocks (" + Twine(prepBlocks) +
                  ") must be from 0 to 4");
    if (padAddendRows < 0 || padAddendRows > 1)
      return fail("pad-addend-rows (" + Twine(padAddendRows) +
                  ") must be 0 or 1");
    if (elementwiseQuads < -1 || elementwiseQuads > 1)
      return fail("elementwise-quads (" + Twine(elementwiseQuads) +
                  ") must be -1, 0 or 1");
    if (pairGrams < -1 || pairGrams > 1)
      return fail("pair-grams (" + Twine(pairGrams) + ") must be -1, 0 or 1");
    if (outValueLoop < 0 || outValueLoop > 1)
      return fail("out-value-loop (" + Twine(outValueLoop) +
                  ") must be 0 or 1");
    if (decodeQuads < -1 || decodeQuads > 1)
      return fail("decode-quads (" + Twine(decodeQuads) +
                  ") must be -1, 0 or 1");
    if (decodeRawRows < -1 || decodeRawRows > 8)
      return fail("decode-raw-rows (" + Twine(decodeRawRows) +
                  ") must be -1 or from 0 to 8");
    if (products != "tf32" && products != "bf16")
      return fail("products must be tf32 or bf16, got '" +
                  Twine(products.getValue()) + "'");
    module.walk([&](Operation *op) {
      if (auto chunked = dyn_cast<ChunkedOp>(op)) {
        if (chunked.getSubstepsPerToken() > 8) {
          chunked.emitError() << "rec-schedule: more than 8 sub-steps a "
                                 "token";
          return signalPassFailure();
        }
        int64_t prepFloats = 0;
        stagedFloats = 0;
        stageBuffers = 2;
        prepCols = valueTile;
        int64_t bytes = planChunkBody(chunked, prepFloats) * 4;
        int64_t needed =
            std::max({bytes, prepFloats * 4, planOut(chunked) * 4});
        if (needed > maxSharedBytes) {
          bytes = needed;
          chunked.emitError()
              << "rec-schedule: the chunk body needs " << bytes
              << " bytes of shared memory (chunk of "
              << chunked.getChunkSize() << " tokens, dk = "
              << static_cast<int64_t>(dk) << ", value tile "
              << static_cast<int64_t>(valueTile) << "); the limit is "
              << static_cast<int64_t>(maxSharedBytes)
              << ": lower chunk-size or value-tile";
          return signalPassFailure();
        }
        chunked->setAttr("rec.schedule",
                         schedule(bytes, planWorkspace(chunked), prepFloats * 4));
      } else if (auto decode = dyn_cast<DecodeOp>(op)) {
        // The state slice is in registers; shared memory holds two buffers
        // of the reductions' partial sums (threads floats each) and every
        // sub-step's row vectors (five of dk, one of the value tile, two
        // scalars; with decode quads padded to four floats, each vector
        // 16-byte aligned), all loaded before the token's first sub-step:
        // see the decode kernel. Quads by default where a token has two or
        // more sub-steps: eda and deltaproduct decode 1.12-1.17x, while
        // kda and deltanet (one sub-step) lose 3% to their extra registers
        // (NOTES.md, decode quads). Besides these, the kernel declares 8
        // bytes a warp of static shared memory (the final state's offset),
        // which the launch does not pass.
        int64_t substeps = llvm::range_size(
            decode.getBody().front().getOps<SubstepOp>());
        bool quads = decodeQuads >= 0 ? decodeQuads == 1 : substeps >= 2;
        int64_t vectors = 5 * dk + valueTile + 2;
        if (quads)
          vectors = (vectors + 3) / 4 * 4;
        int64_t floats = 2 * threads + substeps * vectors;
        stagedFloats = stateStride = workspaceHalfBytes = stageHalfBytes = 0;
        outSharedBytes = outWorkspaceFloats = 0;
        decode->setAttr("rec.schedule",
                        schedule(floats * 4, 0, 0, "f32, registers", quads,
                                 /*decodeOnly=*/true));
      }
    });
  }
};

} // namespace
