//===- FactorProducts.cpp - A X + A Y as A (X + Y) in chunk bodies --------===//
//
// The chunk algorithm sums products that share their left operand: a delta
// factor's output is Q S + A_qk U' + A_qk V, its state update
// decay(S) + K̃ᵀ U' + K̃ᵀ V, where U' = U - W S. Each such pair is one product
// of a sum, A (X + Y): half the multiplications, and in the split kernels
// the scan then computes W S + (U + V), whose state-free part the prep sums
// once, so that V need not reach the scan at all.
//
// A sum here is a tree of rec.chunk.add: its terms are the leaves, reached
// through adds that only the tree reads. Products among the terms (read by
// nothing else) that share their left operand and its transposition become
// one product of the sum of their right operands; that sum's terms are
// gathered through every add (the right operands' own sums, where they are
// read elsewhere too, stay for those readers), the terms independent of the
// entering state first, so that their partial sum is one state-free value.
// Equal sums are built once. The other terms keep their order.
//
//===----------------------------------------------------------------------===//

#include "Rec/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <vector>

namespace rkc::rec {
#define GEN_PASS_DEF_RECFACTORPRODUCTS
#include "Rec/Passes.h.inc"
} // namespace rkc::rec

using namespace mlir;
using namespace rkc::rec;

namespace {

/// The leaves of the sum at `v`, in order: through adds `through` accepts.
void gatherTerms(Value v, llvm::function_ref<bool(ChunkAddOp)> through,
                 SmallVectorImpl<Value> &terms) {
  auto add = v.getDefiningOp<ChunkAddOp>();
  if (!add || !through(add)) {
    terms.push_back(v);
    return;
  }
  gatherTerms(add.getLhs(), through, terms);
  gatherTerms(add.getRhs(), through, terms);
}

class Factorer {
public:
  explicit Factorer(ChunkedOp chunked)
      : body(chunked.getBody().front()) {
    stateful.insert(body.getArgument(0));
    for (Operation &op : body)
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return stateful.contains(v); }))
        for (Value r : op.getResults())
          stateful.insert(r);
  }

  /// Factors every sum of the body; returns whether anything changed.
  bool run() {
    bool changed = false;
    SmallVector<ChunkAddOp> roots;
    for (auto add : body.getOps<ChunkAddOp>())
      if (isRoot(add))
        roots.push_back(add);
    for (ChunkAddOp root : roots)
      changed |= factor(root);
    // What the new sums replaced (dead adds and products, last first).
    for (bool erased = changed; erased;) {
      erased = false;
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
        if (isa<ChunkAddOp, ChunkMatmulOp>(op) && op.use_empty()) {
          op.erase();
          erased = true;
        }
    }
    return changed;
  }

private:
  /// A sum's root: an add that is not an inner node of another sum.
  static bool isRoot(ChunkAddOp add) {
    return !add->hasOneUse() || !isa<ChunkAddOp>(*add->user_begin());
  }

  bool factor(ChunkAddOp root) {
    SmallVector<Value> terms;
    gatherTerms(
        root.getResult(),
        [&](ChunkAddOp add) { return add == root || add->hasOneUse(); },
        terms);
    // Products read only by this sum, by (left operand, transposition).
    llvm::MapVector<std::pair<Value, unsigned>, SmallVector<ChunkMatmulOp>> groups;
    for (Value term : terms)
      if (auto mm = term.getDefiningOp<ChunkMatmulOp>())
        if (mm->hasOneUse())
          groups[{mm.getLhs(), mm.getTransposeLhs() ? 1u : 0u}].push_back(mm);
    llvm::DenseMap<Value, Value> replaced; // a group's first term -> product
    llvm::DenseSet<Value> dropped;         // the group's other terms
    OpBuilder b(root);
    for (auto &[key, products] : groups) {
      if (products.size() < 2)
        continue;
      SmallVector<Value> rhsTerms;
      for (ChunkMatmulOp mm : products)
        gatherTerms(mm.getRhs(), [](ChunkAddOp) { return true; }, rhsTerms);
      Value rhs = sumOf(rhsTerms, b, root.getLoc());
      Value product =
          ChunkMatmulOp::create(b, root.getLoc(), products[0].getType(),
                                key.first, rhs, key.second != 0);
      // (What later sums of this run read: state-dependent or not.)
      if (stateful.contains(key.first) || stateful.contains(rhs))
        stateful.insert(product);
      replaced[products[0].getResult()] = product;
      for (ChunkMatmulOp mm : llvm::drop_begin(products))
        dropped.insert(mm.getResult());
    }
    if (replaced.empty())
      return false;
    SmallVector<Value> kept;
    for (Value term : terms)
      if (!dropped.contains(term))
        kept.push_back(replaced.lookup(term) ? replaced.lookup(term) : term);
    root.getResult().replaceAllUsesWith(chain(kept, b, root.getLoc()));
    return true;
  }

  /// Σ terms, the state-free ones first (one state-free partial sum), each
  /// part in the body's order; built once for equal lists, before `b`'s
  /// insertion point.
  Value sumOf(SmallVector<Value> terms, OpBuilder &b, Location loc) {
    auto position = [&](Value v) -> int64_t {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return -1 - arg.getArgNumber();
      return std::distance(body.begin(), v.getDefiningOp()->getIterator());
    };
    llvm::stable_sort(terms, [&](Value x, Value y) {
      bool sx = stateful.contains(x), sy = stateful.contains(y);
      if (sx != sy)
        return !sx;
      return position(x) < position(y);
    });
    std::vector<const void *> key;
    for (Value term : terms)
      key.push_back(term.getAsOpaquePointer());
    if (auto it = built.find(key); it != built.end())
      return it->second;
    Value sum = chain(terms, b, loc);
    built[key] = sum;
    return sum;
  }

  /// ((t0 + t1) + t2) + ..., at `b`'s insertion point; each partial sum is
  /// state-dependent where one of its operands is.
  Value chain(ArrayRef<Value> terms, OpBuilder &b, Location loc) {
    Value sum = terms.front();
    for (Value term : llvm::drop_begin(terms)) {
      bool dependent = stateful.contains(sum) || stateful.contains(term);
      sum = ChunkAddOp::create(b, loc, sum.getType(), sum, term);
      if (dependent)
        stateful.insert(sum);
    }
    return sum;
  }

  Block &body;
  llvm::DenseSet<Value> stateful;
  std::map<std::vector<const void *>, Value> built;
};

struct RecFactorProductsPass
    : rkc::rec::impl::RecFactorProductsBase<RecFactorProductsPass> {
  void runOnOperation() override {
    getOperation().walk([](ChunkedOp chunked) {
      // A new sum can expose another pair: factor until nothing changes.
      while (Factorer(chunked).run()) {
      }
    });
  }
};

} // namespace
