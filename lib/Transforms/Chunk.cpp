//===- Chunk.cpp - Sub-steps to the chunked WY/UT algorithm ---------------===//
//
// Builds the per-chunk body of MATH.md's chunk algorithm from the sub-step
// table, specialised on its structure tags. Rows of a chunk are indexed by
// (token, slot) for m sub-steps (slots) a token; a tile keeps only the slots
// that have the role it holds, which is how erase-only and unread sub-steps
// drop out of the value products and the output.
//
//===----------------------------------------------------------------------===//

#include "Interleaved.h"
#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"

namespace rkc::rec {
#define GEN_PASS_DEF_RECCHUNK
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

class ChunkBodyBuilder {
public:
  ChunkBodyBuilder(MutableArrayRef<SubstepOp> table, OpBuilder &b, Location loc,
                   Value state)
      : table(table), b(b), loc(loc), state(state),
        m(static_cast<int64_t>(table.size())) {}

  void build() {
    SmallVector<int64_t> gateSlots, rank1Slots, writeSlots, readSlots;
    bool channel = false;
    for (int64_t slot = 0; slot < m; ++slot) {
      SubstepOp s = table[slot];
      if (s.getGate()) {
        gateSlots.push_back(slot);
        channel |= s.getDecay() == DecayKind::channel;
      }
      if (s.getEraseAlong())
        rank1Slots.push_back(slot);
      if (s.getKey())
        writeSlots.push_back(slot);
      if (s.getQuery())
        readSlots.push_back(slot);
    }
    Axis gateAxis = channel ? Axis::key : Axis::one;
    // Symmetric factors that write along their erase direction share one
    // Gram product: A_bk = M diag(κ) where A_ba = M diag(-α).
    bool shareGram = !rank1Slots.empty();
    for (int64_t w : writeSlots)
      shareGram &= table[w].getKey() == table[w].getEraseAlong();
    // Delta factors, (I - β k kᵀ) S + β k vᵀ on every rank-1 slot and only
    // there: the write is along the erase direction with the erase's
    // strength, so the state's erase term -(β k)ᵀ U is the write term's
    // tile times -U. The WY vectors then carry the sign (U' = -U, from -T⁻¹),
    // the output reads U' through +α, and S_L = e^{G_L} S₀ + Kᵀ U' + Kᵀ V
    // needs no tile of -α x of its own.
    bool delta = shareGram && rank1Slots == writeSlots &&
                 llvm::all_of(writeSlots, [&](int64_t w) {
                   return table[w].getStrength() ==
                          table[w].getWriteStrength();
                 });

    // The read vectors meet the state through e^{G_{t-1}}. Where each
    // carries its own sub-step's decay (b = e^{g_t} ⊙ y, every rank-1
    // factor that acts after the decay) e^{G_{t-1}} ⊙ b = e^{G_t} ⊙ y: the
    // rows are y as it is (the erase rows themselves where y = x), decayed
    // by the inclusive sum, and the exclusive sum is not needed.
    bool readsAlong = llvm::none_of(rank1Slots, [&](int64_t s) {
      return table[s].getUndecayedRead();
    });
    bool readsErased = llvm::all_of(rank1Slots, [&](int64_t s) {
      return table[s].getReadAlong() == table[s].getEraseAlong();
    });

    // Gates: G_t (inclusive), and G_{t-1} (exclusive) for undecayed reads.
    Value G, Gread;
    if (!gateSlots.empty()) {
      Value g = rows(RowRole::gate, gateSlots, gateAxis);
      G = Gread = op<ChunkCumsumOp>(tile(Axis::chunk, {}, gateAxis), g, false);
      if (!readsAlong)
        Gread = op<ChunkCumsumOp>(tile(Axis::chunk, {}, gateAxis), g, true);
    }

    // The WY vectors: U = T⁻¹ ((B ⊙ e^{G_{t-1}}) S₀ + A_bk V), B the read
    // rows b (or y, decayed by G_t as above).
    // (A delta factor's key and write strength are its erase direction and
    // strength: their rows are loaded once.)
    Value X, alpha, negAlpha, kappa, K, V, U, Mbx;
    if (delta) {
      alpha = rows(RowRole::strength, rank1Slots, Axis::one);
      X = rows(RowRole::erase_along, rank1Slots, Axis::key);
    }
    // Writes of strength 1 (rec.constant 1.0, as linear attention's) need
    // no scaling: K is the key rows themselves (a tile of input rows as
    // they are, which the scan can stage from the input).
    bool unitWrites = !delta && !shareGram &&
                      llvm::all_of(writeSlots, [&](int64_t w) {
                        Value kappa = table[w].getWriteStrength();
                        auto one =
                            kappa ? kappa.getDefiningOp<ConstantOp>() : nullptr;
                        return one && one.getValue().convertToDouble() == 1.0;
                      });
    if (!writeSlots.empty()) {
      if (!unitWrites)
        kappa = delta ? alpha
                      : rows(RowRole::write_strength, writeSlots, Axis::one);
      V = rows(RowRole::value, writeSlots, Axis::value);
      K = unitWrites
              ? rows(RowRole::key, writeSlots, Axis::key)
              : op<ChunkScaleRowsOp>(
                    tile(Axis::chunk, writeSlots, Axis::key),
                    delta ? X : rows(RowRole::key, writeSlots, Axis::key),
                    kappa);
    }
    if (!rank1Slots.empty()) {
      if (!X)
        X = rows(RowRole::erase_along, rank1Slots, Axis::key);
      Value B = !readsAlong   ? rows(RowRole::read, rank1Slots, Axis::key)
                : readsErased ? X
                              : rows(RowRole::read_along, rank1Slots, Axis::key);
      negAlpha = op<ChunkNegOp>(
          tile(Axis::chunk, rank1Slots, Axis::one),
          alpha ? alpha : rows(RowRole::strength, rank1Slots, Axis::one));
      Mbx = gram(B, X, Gread, G, MaskKind::strict);
      Value Aba = op<ChunkScaleColsOp>(
          tile(Axis::chunk, rank1Slots, Axis::chunk, rank1Slots), Mbx,
          negAlpha);
      Value Tinv = op<ChunkUTInverseOp>(Aba.getType(), Aba);
      if (delta)
        Tinv = op<ChunkNegOp>(Tinv.getType(), Tinv);
      Value Bd = Gread ? op<ChunkDecayRowsOp>(B.getType(), B, Gread) : B;
      Value W = op<ChunkMatmulOp>(B.getType(), Tinv, Bd, false);
      U = op<ChunkMatmulOp>(tile(Axis::chunk, rank1Slots, Axis::value), W,
                            state, false);
      if (V) {
        Type abkType = tile(Axis::chunk, rank1Slots, Axis::chunk, writeSlots);
        Value Abk = shareGram
                        ? op<ChunkScaleColsOp>(abkType, Mbx, kappa)
                        : gram(B, K, Gread, G, MaskKind::strict);
        Value AV = op<ChunkMatmulOp>(U.getType(), Abk, V, false);
        Value U0 = op<ChunkMatmulOp>(U.getType(), Tinv, AV, false);
        U = op<ChunkAddOp>(U.getType(), U, U0);
      }
    }

    // The output on the reading rows: O = (Q ⊙ e^{G_t}) S₀ + A_qa U + A_qk V.
    Value Q = rows(RowRole::query, readSlots, Axis::key);
    Value Qd = G ? op<ChunkDecayRowsOp>(Q.getType(), Q, G) : Q;
    Type outType = tile(Axis::chunk, readSlots, Axis::value);
    Value O = op<ChunkMatmulOp>(outType, Qd, state, false);
    Value Mqx, Aqa;
    if (X) {
      Mqx = gram(Q, X, G, G, MaskKind::lower);
      Aqa = op<ChunkScaleColsOp>(
          tile(Axis::chunk, readSlots, Axis::chunk, rank1Slots), Mqx,
          delta ? alpha : negAlpha);
      O = op<ChunkAddOp>(outType, O,
                         op<ChunkMatmulOp>(outType, Aqa, U, false));
    }
    if (V) {
      Type aqkType = tile(Axis::chunk, readSlots, Axis::chunk, writeSlots);
      // (A delta factor's A_qk is A_qa, now that A_qa weighs by +α.)
      Value Aqk = delta       ? Aqa
                  : shareGram ? op<ChunkScaleColsOp>(aqkType, Mqx, kappa)
                              : gram(Q, K, G, G, MaskKind::lower);
      O = op<ChunkAddOp>(outType, O,
                         op<ChunkMatmulOp>(outType, Aqk, V, false));
    }
    ChunkOutputOp::create(b, loc, O);

    // The state leaving the chunk:
    // S_L = e^{G_L} S₀ + (A ⊙ e^{G_L - G})ᵀ U + (K ⊙ e^{G_L - G})ᵀ V.
    Type stateType = state.getType();
    Value S = G ? op<ChunkDecayStateOp>(stateType, state, G) : state;
    Value Ke;
    if (V)
      Ke = G ? op<ChunkDecayToEndOp>(K.getType(), K, G) : K;
    if (X) {
      Value Ae = Ke;
      if (!delta) {
        Value A = op<ChunkScaleRowsOp>(X.getType(), X, negAlpha);
        Ae = G ? op<ChunkDecayToEndOp>(A.getType(), A, G) : A;
      }
      S = op<ChunkAddOp>(stateType, S,
                         op<ChunkMatmulOp>(stateType, Ae, U, true));
    }
    if (V)
      S = op<ChunkAddOp>(stateType, S,
                         op<ChunkMatmulOp>(stateType, Ke, V, true));
    ChunkYieldOp::create(b, loc, ValueRange{S});
  }

private:
  /// Slots that are all m of them print as a plain `chunk`.
  SmallVector<int64_t> normalized(ArrayRef<int64_t> slots) {
    if (static_cast<int64_t>(slots.size()) == m)
      return {};
    return SmallVector<int64_t>(slots);
  }
  Type tile(Axis rows, ArrayRef<int64_t> rowSlots, Axis cols,
            ArrayRef<int64_t> colSlots = {}) {
    return TileType::get(b.getContext(), rows, normalized(rowSlots), cols,
                         normalized(colSlots));
  }
  template <typename OpTy, typename... Args>
  Value op(Type type, Args &&...args) {
    return OpTy::create(b, loc, type, std::forward<Args>(args)...);
  }
  Value rows(RowRole role, ArrayRef<int64_t> slots, Axis cols) {
    return op<ChunkRowsOp>(tile(Axis::chunk, slots, cols), role);
  }
  Value gram(Value lhs, Value rhs, Value lhsDecay, Value rhsDecay,
             MaskKind mask) {
    auto l = cast<TileType>(lhs.getType()), r = cast<TileType>(rhs.getType());
    Type type = TileType::get(b.getContext(), Axis::chunk, l.getRowSlots(),
                              Axis::chunk, r.getRowSlots());
    return ChunkGramOp::create(b, loc, type, lhs, rhs, lhsDecay, rhsDecay,
                               mask);
  }

  MutableArrayRef<SubstepOp> table;
  OpBuilder &b;
  Location loc;
  Value state;
  int64_t m;
};

struct RecChunkPass : rkc::rec::impl::RecChunkBase<RecChunkPass> {
  using RecChunkBase::RecChunkBase;

  void runOnOperation() override {
    if (chunkSize < 1) {
      getOperation().emitError()
          << "rec-chunk: chunk-size must be a positive number of tokens, got "
          << static_cast<int64_t>(chunkSize);
      return signalPassFailure();
    }
    auto lower = [&](InterleavedOp interleaved) {
      auto table = llvm::to_vector(
          interleaved.getBody().front().getOps<SubstepOp>());
      OpBuilder builder(interleaved);
      auto chunked = ChunkedOp::create(builder, interleaved.getLoc(),
                                       chunkSize,
                                       static_cast<int64_t>(table.size()));
      // The table moves as it is; the body spells out the algorithm.
      Block &tableBlock = chunked.getSubsteps().front();
      for (SubstepOp s : table)
        s->moveBefore(&tableBlock, tableBlock.end());
      Block &body = chunked.getBody().front();
      builder.setInsertionPointToStart(&body);
      auto moved = llvm::to_vector(tableBlock.getOps<SubstepOp>());
      ChunkBodyBuilder(moved, builder, interleaved.getLoc(),
                       body.getArgument(0))
          .build();
      interleaved.erase();
    };
    if (failed(forEachInterleaved(getOperation(), "rec-chunk", lower)))
      signalPassFailure();
  }
};

} // namespace
