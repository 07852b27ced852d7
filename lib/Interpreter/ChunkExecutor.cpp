//===- ChunkExecutor.cpp - float64 executor of chunk-level IR -------------===//

#include "Interpreter/ChunkExecutor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace rkc::rec;

namespace rkc {
namespace {

/// A dense tile; chunk axes remember which rows of the chunk (sub-step row
/// r = token · m + slot) each of their indices is.
struct Tile {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> rowIndex, colIndex;
  std::vector<double> a;
  double &at(int64_t i, int64_t j) { return a[i * cols + j]; }
  double at(int64_t i, int64_t j) const { return a[i * cols + j]; }
};

/// Per sub-step row of the current chunk, every role's vector.
struct RowVectors {
  std::vector<double> gate, eraseAlong, read, readAlong, key, value, query;
  double strength = 0, writeStrength = 0;
};

/// x as the GPU keeps a float32 value in bf16: to float32, then to the
/// nearest bf16 (ties to even).
double roundToBf16(double x) {
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) // not inf or nan
    bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

class ChunkRunner {
public:
  ChunkRunner(ChunkedOp chunked, const SpecPlan &plan,
              const ProblemShape &shape, int64_t segments,
              ChunkRounding rounding)
      : chunked(chunked), plan(plan), shape(shape), segments(segments),
        rounding(rounding),
        m(static_cast<int64_t>(plan.substeps.size())),
        C(chunked.getChunkSize()), L(C * m) {}

  void runSequence(int64_t seq, int64_t h, DenseState &state,
                   PrologueEvaluator &prologue, HostTensor &o) {
    if (chunked->hasAttr("rec.split_scan"))
      return runSequenceSplit(seq, h, state, prologue, o);
    for (int64_t t0 = shape.seqBegin[seq]; t0 < shape.seqEnd[seq]; t0 += C) {
      loadRows(seq, t0, h, prologue);
      TileMap tiles;
      runChunk(seq, t0, h, state, o, tiles, "");
    }
  }

  /// Set when a phase of a split body reads a value it neither computes
  /// nor receives (and on other errors of the run).
  std::string error;

private:
  using TileMap = llvm::DenseMap<Value, Tile>;

  /// After --rec-split-scan: the prep ops of every chunk first, keeping
  /// what crosses (rows other than the last of a "last_row" value are NaN,
  /// so reading them shows), then the scan ops chunk after chunk.
  void runSequenceSplit(int64_t seq, int64_t h, DenseState &state,
                        PrologueEvaluator &prologue, HostTensor &o) {
    // (Segments hand over states, not each chunk's entering one.)
    if (segments > 1 && chunked->hasAttr("rec.out_phase")) {
      error = "an out phase runs from each chunk's entering state: not "
              "with a sequence in segments";
      return;
    }
    std::vector<TileMap> kept, toOut; // a chunk's: to the scan, to out
    Block &body = chunked.getBody().front();
    for (int64_t t0 = shape.seqBegin[seq]; t0 < shape.seqEnd[seq]; t0 += C) {
      loadRows(seq, t0, h, prologue);
      TileMap tiles, crossing;
      runChunk(seq, t0, h, state, o, tiles, "prep");
      if (!error.empty())
        return;
      TileMap &outgoing = toOut.emplace_back();
      // A prep value as it crosses through the workspace (marked `attr`):
      // "last_row" keeps its last row only; to the scan, rec.half rounds it
      // to bf16 (the out phase's copy stays float32, as rec-schedule's out
      // workspace holds it).
      auto handOver = [&](Operation &op, StringRef attr,
                          StringRef rows) -> std::optional<Tile> {
        auto found = op.getNumResults() ? tiles.find(op.getResult(0))
                                        : tiles.end();
        if (found == tiles.end()) {
          error = "a split chunk marks " + attr.str() + " on '" +
                  op.getName().getStringRef().str() +
                  "', which its prep phase does not compute";
          return std::nullopt;
        }
        Tile t = found->second;
        if (rows == "last_row")
          for (int64_t i = 0; i + 1 < t.rows; ++i)
            for (int64_t j = 0; j < t.cols; ++j)
              t.at(i, j) = std::nan("");
        if (attr == "rec.to_scan" && rounding.halfWorkspace &&
            op.hasAttr("rec.half"))
          for (int64_t i = 0; i < t.rows; ++i)
            for (int64_t j = 0; j < t.cols; ++j)
              t.at(i, j) = roundToBf16(t.at(i, j));
        return t;
      };
      for (Operation &op : body) {
        // What the out phase receives, whole (a value may cross to the
        // scan as its last row and to the out phase as all of it).
        if (op.hasAttr("rec.to_out")) {
          std::optional<Tile> t = handOver(op, "rec.to_out", "all");
          if (!t)
            return;
          outgoing[op.getResult(0)] = std::move(*t);
        }
        if (auto toScan = op.getAttrOfType<StringAttr>("rec.to_scan")) {
          std::optional<Tile> t =
              handOver(op, "rec.to_scan", toScan.getValue());
          if (!t)
            return;
          crossing[op.getResult(0)] = std::move(*t);
        }
      }
      kept.push_back(std::move(crossing));
    }
    if (segments > 1)
      return scanBySegments(seq, h, state, prologue, o, kept);
    bool outPhase = chunked->hasAttr("rec.out_phase");
    // With an out phase: what each chunk's out ops receive, its entering
    // state, the prep values marked rec.to_out and the scan values marked
    // rec.scan_to_out (and nothing else, so that reading more shows).
    std::vector<std::pair<int64_t, TileMap>> outs; // (t0, what it receives)
    size_t index = 0;
    for (int64_t t0 = shape.seqBegin[seq]; t0 < shape.seqEnd[seq]; t0 += C) {
      loadRows(seq, t0, h, prologue);
      TileMap received = std::move(toOut[index]);
      if (outPhase)
        received[body.getArgument(0)] = stateTile(state);
      TileMap &tiles = kept[index++];
      runChunk(seq, t0, h, state, o, tiles, "scan");
      if (!error.empty())
        return;
      if (!outPhase)
        continue;
      for (Operation &op : body)
        if (op.hasAttr("rec.scan_to_out"))
          received[op.getResult(0)] = tiles.find(op.getResult(0))->second;
      outs.emplace_back(t0, std::move(received));
    }
    // The out phase: chunks in any order (here, last to first).
    for (auto &[t0, received] : llvm::reverse(outs)) {
      loadRows(seq, t0, h, prologue);
      runChunk(seq, t0, h, state, o, received, "out");
      if (!error.empty())
        return;
    }
  }

  /// The scan of a split transfer form over `segments` runs of chunks, as
  /// blocks or devices would run it. Each segment, independently of the
  /// others, scans its chunks from a zero state (giving N_seg, what it adds)
  /// and multiplies its chunks' M (giving M_seg); one pass over the
  /// segments then gives each its entering state, S ← M_seg S + N_seg; and
  /// each segment scans again from that state for its outputs.
  void scanBySegments(int64_t seq, int64_t h, DenseState &state,
                      PrologueEvaluator &prologue, HostTensor &o,
                      std::vector<TileMap> &kept) {
    // The yield of the transfer form: add(matmul(M, S0), N).
    Block &body = chunked.getBody().front();
    Value M;
    if (auto yield = dyn_cast<ChunkYieldOp>(body.getTerminator()))
      if (auto add = yield.getState()[0].getDefiningOp<ChunkAddOp>())
        if (auto product = add.getLhs().getDefiningOp<ChunkMatmulOp>())
          if (product.getRhs() == body.getArgument(0) &&
              !product.getTransposeLhs())
            M = product.getLhs();
    if (!M || !kept.front().count(M)) {
      error = "running a sequence in segments needs the split transfer "
              "form (--rec-state-transfer, then --rec-split-scan)";
      return;
    }
    const int64_t dk = shape.dk, dv = shape.dv;
    auto product = [](const std::vector<double> &a,
                      const std::vector<double> &b, int64_t n, int64_t k,
                      int64_t m) {
      std::vector<double> out(n * m, 0.0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < m; ++j)
            out[i * m + j] += a[i * k + p] * b[p * m + j];
      return out;
    };
    const int64_t chunks = static_cast<int64_t>(kept.size());
    const int64_t parts = std::min(segments, chunks);
    auto begin = [&](int64_t k) { return k * chunks / parts; };
    // A segment's chunks scanned from `from` (a copy of each chunk's
    // handed-over values, so that the segment can be scanned twice).
    auto scan = [&](int64_t k, std::vector<double> from) {
      DenseState local = state;
      local.s = std::move(from);
      for (int64_t c = begin(k); c < begin(k + 1) && error.empty(); ++c) {
        int64_t t0 = shape.seqBegin[seq] + c * C;
        loadRows(seq, t0, h, prologue);
        TileMap tiles = kept[c];
        runChunk(seq, t0, h, local, o, tiles, "scan");
      }
      return local.s;
    };
    std::vector<double> S = state.s;
    std::vector<std::vector<double>> entering;
    for (int64_t k = 0; k < parts && error.empty(); ++k) {
      std::vector<double> segM(dk * dk, 0.0);
      for (int64_t d = 0; d < dk; ++d)
        segM[d * dk + d] = 1.0;
      for (int64_t c = begin(k); c < begin(k + 1); ++c)
        segM = product(kept[c].find(M)->second.a, segM, dk, dk, dk);
      std::vector<double> segN = scan(k, std::vector<double>(dk * dv, 0.0));
      entering.push_back(S);
      S = product(segM, S, dk, dk, dv);
      for (size_t e = 0; e < S.size(); ++e)
        S[e] += segN[e];
    }
    for (int64_t k = 0; k < parts && error.empty(); ++k)
      scan(k, entering[k]); // the outputs, from the right entering state
    state.s = S;            // the composed segments' final state
  }

  std::vector<int64_t> chunkRows(ArrayRef<int64_t> slots) const {
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < C; ++i)
      for (int64_t s = 0; s < m; ++s)
        if (slots.empty() || llvm::is_contained(slots, s))
          rows.push_back(i * m + s);
    return rows;
  }
  Tile makeTile(Type type) const {
    auto t = cast<TileType>(type);
    Tile tile;
    TileExtents extents{C, m, shape.dk, shape.dv};
    tile.rows = extents.rows(t);
    tile.cols = extents.cols(t);
    if (t.getRows() == Axis::chunk)
      tile.rowIndex = chunkRows(t.getRowSlots());
    if (t.getCols() == Axis::chunk)
      tile.colIndex = chunkRows(t.getColSlots());
    tile.a.assign(tile.rows * tile.cols, 0.0);
    return tile;
  }

  /// Evaluates the sub-step table for the chunk's tokens; rows past the end
  /// of the sequence stay neutral (g = 0, vectors 0).
  void loadRows(int64_t seq, int64_t t0, int64_t h,
                PrologueEvaluator &prologue) {
    const int64_t dk = shape.dk, dv = shape.dv;
    rowData.assign(L, RowVectors());
    for (RowVectors &r : rowData) {
      r.gate.assign(dk, 0.0);
      r.eraseAlong.assign(dk, 0.0);
      r.read.assign(dk, 0.0);
      r.readAlong.assign(dk, 0.0);
      r.key.assign(dk, 0.0);
      r.value.assign(dv, 0.0);
      r.query.assign(dk, 0.0);
    }
    int64_t row = shape.seqRow[seq];
    for (int64_t i = 0; i < C && t0 + i < shape.seqEnd[seq]; ++i) {
      prologue.evaluateToken(row, t0 + i, h);
      for (int64_t slot = 0; slot < m; ++slot) {
        const SpecPlan::Substep &s = plan.substeps[slot];
        prologue.evaluateSubstep(s.index);
        RowVectors &r = rowData[i * m + slot];
        auto copy = [&](int expr, std::vector<double> &to) {
          const double *v = prologue.value(expr);
          bool scalar = prologue.width(expr) == 1;
          for (size_t d = 0; d < to.size(); ++d)
            to[d] = scalar ? v[0] : v[d];
        };
        if (s.gate >= 0)
          copy(s.gate, r.gate);
        if (s.eraseAlong >= 0) {
          copy(s.eraseAlong, r.eraseAlong);
          copy(s.readAlong, r.read);
          r.readAlong = r.read;
          if (s.gate >= 0 && !s.undecayedRead) // b = exp(g) ⊙ y
            for (int64_t d = 0; d < dk; ++d)
              r.read[d] *= std::exp(r.gate[d]);
          r.strength = prologue.value(s.strength)[0];
        }
        if (s.key >= 0) {
          copy(s.key, r.key);
          copy(s.value, r.value);
          r.writeStrength = prologue.value(s.writeStrength)[0];
        }
        if (s.query >= 0) {
          copy(s.query, r.query);
          for (double &x : r.query)
            x *= shape.scale;
        }
      }
    }
  }

  Tile rows(ChunkRowsOp op) {
    Tile t = makeTile(op.getType());
    for (int64_t i = 0; i < t.rows; ++i) {
      const RowVectors &r = rowData[t.rowIndex[i]];
      auto fill = [&](const std::vector<double> &v) {
        for (int64_t j = 0; j < t.cols; ++j)
          t.at(i, j) = v[j];
      };
      switch (op.getRole()) {
      case RowRole::gate:
        fill(r.gate); // a scalar gate is the same on every channel
        break;
      case RowRole::erase_along:
        fill(r.eraseAlong);
        break;
      case RowRole::read:
        fill(r.read);
        break;
      case RowRole::read_along:
        fill(r.readAlong);
        break;
      case RowRole::key:
        fill(r.key);
        break;
      case RowRole::value:
        fill(r.value);
        break;
      case RowRole::query:
        fill(r.query);
        break;
      case RowRole::strength:
        t.at(i, 0) = r.strength;
        break;
      case RowRole::write_strength:
        t.at(i, 0) = r.writeStrength;
        break;
      }
    }
    return t;
  }

  Tile cumsum(ChunkCumsumOp op, const Tile &g) {
    Tile out = makeTile(op.getType());
    std::vector<double> running(out.cols, 0.0);
    size_t next = 0; // g's rows are in chunk order
    for (int64_t r = 0; r < L; ++r) {
      std::vector<double> gr(out.cols, 0.0);
      if (next < g.rowIndex.size() && g.rowIndex[next] == r) {
        for (int64_t j = 0; j < out.cols; ++j)
          gr[j] = g.at(next, j);
        ++next;
      }
      for (int64_t j = 0; j < out.cols; ++j) {
        if (!op.getExclusive())
          running[j] += gr[j];
        out.at(r, j) = running[j];
        if (op.getExclusive())
          running[j] += gr[j];
      }
    }
    return out;
  }

  /// exp(Dl[rl] - Dr[rr]) on channel d (column 0 for a per-row scalar).
  static double weight(const Tile *dl, const Tile *dr, int64_t rl, int64_t rr,
                       int64_t d) {
    if (!dl)
      return 1.0;
    int64_t j = dl->cols == 1 ? 0 : d;
    return std::exp(dl->at(rl, j) - dr->at(rr, j));
  }

  Tile gram(ChunkGramOp op, const Tile &l, const Tile &r, const Tile *dl,
            const Tile *dr) {
    Tile out = makeTile(op.getType());
    bool strict = op.getMask() == MaskKind::strict;
    for (int64_t i = 0; i < out.rows; ++i)
      for (int64_t j = 0; j < out.cols; ++j) {
        int64_t rl = out.rowIndex[i], rr = out.colIndex[j];
        if (strict ? !(rr < rl) : !(rr <= rl))
          continue; // masked before any exponential
        double sum = 0;
        for (int64_t d = 0; d < l.cols; ++d)
          sum += l.at(i, d) * r.at(j, d) * weight(dl, dr, rl, rr, d);
        out.at(i, j) = sum;
      }
    return out;
  }

  Tile scaleCols(ChunkScaleColsOp op, const Tile &mat, const Tile &c) {
    Tile out = makeTile(op.getType());
    for (int64_t j = 0; j < out.cols; ++j) {
      auto it = llvm::find(mat.colIndex, out.colIndex[j]);
      int64_t src = it - mat.colIndex.begin();
      for (int64_t i = 0; i < out.rows; ++i)
        out.at(i, j) = mat.at(i, src) * c.at(j, 0);
    }
    return out;
  }

  Tile utInverse(const Tile &A) {
    // (I - A) T = I with A strictly lower: T = I + A T, row by row.
    Tile T = A;
    std::fill(T.a.begin(), T.a.end(), 0.0);
    for (int64_t i = 0; i < T.rows; ++i) {
      T.at(i, i) = 1.0;
      for (int64_t j = 0; j < i; ++j) {
        double sum = 0;
        for (int64_t k = j; k < i; ++k)
          sum += A.at(i, k) * T.at(k, j);
        T.at(i, j) = sum;
      }
    }
    return T;
  }

  /// A product's operand as it enters the product: with
  /// rounding.bf16Products rounded to bf16 (in `copy`), else `t` itself.
  const Tile &operand(const Tile &t, Tile &copy) const {
    if (!rounding.bf16Products)
      return t;
    copy = t;
    for (double &x : copy.a)
      x = roundToBf16(x);
    return copy;
  }

  /// The state as a dk x dv tile.
  Tile stateTile(const DenseState &state) const {
    Tile s;
    s.rows = shape.dk;
    s.cols = shape.dv;
    s.a = state.s;
    return s;
  }

  Tile matmul(ChunkMatmulOp op, const Tile &x, const Tile &y) {
    Tile out = makeTile(op.getType());
    bool t = op.getTransposeLhs();
    int64_t inner = t ? x.rows : x.cols;
    for (int64_t i = 0; i < out.rows; ++i)
      for (int64_t j = 0; j < out.cols; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < inner; ++k)
          sum += (t ? x.at(k, i) : x.at(i, k)) * y.at(k, j);
        out.at(i, j) = sum;
      }
    return out;
  }

  /// Runs the body's ops (those of `phase` and "both" when a phase is
  /// given) on `tiles`, which may hold values computed before.
  void runChunk(int64_t seq, int64_t t0, int64_t h, DenseState &state,
                HostTensor &o, TileMap &tiles, StringRef phase) {
    Block &body = chunked.getBody().front();
    // The prep phase must not read the state; the out phase reads the
    // chunk's entering state, which the scan kept (already in `tiles`).
    if (phase != "prep" && !tiles.count(body.getArgument(0))) {
      tiles[body.getArgument(0)] = stateTile(state);
    }
    auto get = [&](Value v) -> const Tile & { return tiles.find(v)->second; };
    auto lastRow = [&](const Tile &G, int64_t d) {
      return G.at(L - 1, G.cols == 1 ? 0 : d);
    };
    for (Operation &op : body) {
      if (!phase.empty()) {
        auto opPhase = op.getAttrOfType<StringAttr>("rec.phase");
        StringRef name = opPhase ? opPhase.getValue() : "";
        if (name != phase && name != "both")
          continue;
        for (Value operand : op.getOperands())
          if (!tiles.count(operand)) {
            std::string text;
            llvm::raw_string_ostream os(text);
            op.print(os, OpPrintingFlags().skipRegions());
            error = "the " + phase.str() + " phase of a split chunk reads a "
                    "value it neither computes nor receives: " + text;
            return;
          }
      }
      TypeSwitch<Operation *>(&op)
          .Case([&](ChunkRowsOp r) { tiles[r] = rows(r); })
          .Case([&](ChunkCumsumOp c) { tiles[c] = cumsum(c, get(c.getGate())); })
          .Case([&](ChunkGramOp g) {
            const Tile *dl = g.getLhsDecay() ? &get(g.getLhsDecay()) : nullptr;
            const Tile *dr = g.getRhsDecay() ? &get(g.getRhsDecay()) : nullptr;
            Tile l, r;
            tiles[g] = gram(g, operand(get(g.getLhs()), l),
                            operand(get(g.getRhs()), r), dl, dr);
          })
          .Case([&](ChunkScaleColsOp s) {
            tiles[s] = scaleCols(s, get(s.getMatrix()), get(s.getScale()));
          })
          .Case([&](ChunkScaleRowsOp s) {
            Tile t = get(s.getMatrix());
            const Tile &c = get(s.getScale());
            for (int64_t i = 0; i < t.rows; ++i)
              for (int64_t j = 0; j < t.cols; ++j)
                t.at(i, j) *= c.at(i, 0);
            tiles[s] = std::move(t);
          })
          .Case([&](ChunkNegOp n) {
            Tile t = get(n.getX());
            for (double &x : t.a)
              x = -x;
            tiles[n] = std::move(t);
          })
          .Case([&](ChunkAddOp a) {
            Tile t = get(a.getLhs());
            const Tile &y = get(a.getRhs());
            for (size_t i = 0; i < t.a.size(); ++i)
              t.a[i] += y.a[i];
            tiles[a] = std::move(t);
          })
          .Case([&](ChunkUTInverseOp u) {
            tiles[u] = utInverse(get(u.getMatrix()));
          })
          .Case([&](ChunkDecayRowsOp d) {
            Tile t = get(d.getX());
            const Tile &G = get(d.getDecay());
            for (int64_t i = 0; i < t.rows; ++i)
              for (int64_t j = 0; j < t.cols; ++j)
                t.at(i, j) *=
                    std::exp(G.at(t.rowIndex[i], G.cols == 1 ? 0 : j));
            tiles[d] = std::move(t);
          })
          .Case([&](ChunkDecayToEndOp d) {
            Tile t = get(d.getX());
            const Tile &G = get(d.getDecay());
            for (int64_t i = 0; i < t.rows; ++i)
              for (int64_t j = 0; j < t.cols; ++j)
                t.at(i, j) *= std::exp(
                    lastRow(G, j) - G.at(t.rowIndex[i], G.cols == 1 ? 0 : j));
            tiles[d] = std::move(t);
          })
          .Case([&](ChunkDecayStateOp d) {
            Tile t = get(d.getState());
            const Tile &G = get(d.getDecay());
            for (int64_t i = 0; i < t.rows; ++i)
              for (int64_t j = 0; j < t.cols; ++j)
                t.at(i, j) *= std::exp(lastRow(G, i));
            tiles[d] = std::move(t);
          })
          .Case([&](ChunkIdentityOp id) {
            Tile t = makeTile(id.getType());
            for (int64_t i = 0; i < t.rows; ++i)
              t.at(i, i) = 1.0;
            tiles[id] = std::move(t);
          })
          .Case([&](ChunkMatmulOp mm) {
            Tile x, y;
            tiles[mm] = matmul(mm, operand(get(mm.getLhs()), x),
                               operand(get(mm.getRhs()), y));
          })
          .Case([&](ChunkOutputOp out) {
            const Tile &O = get(out.getOutput());
            int64_t row = shape.seqRow[seq];
            for (int64_t i = 0; i < O.rows; ++i) {
              int64_t t = t0 + O.rowIndex[i] / m;
              if (t >= shape.seqEnd[seq])
                continue; // padding
              double *dst = &o[((row * shape.length + t) * shape.valueHeads +
                                h) *
                               shape.dv];
              for (int64_t j = 0; j < O.cols; ++j)
                dst[j] = O.at(i, j);
            }
          })
          .Case([&](ChunkYieldOp y) { state.s = get(y.getState()[0]).a; });
    }
  }

  ChunkedOp chunked;
  const SpecPlan &plan;
  const ProblemShape &shape;
  const int64_t segments;
  const ChunkRounding rounding;
  const int64_t m, C, L;
  std::vector<RowVectors> rowData;
};

} // namespace

bool runChunked(RecurrenceOp recurrence, const TensorMap &inputs,
                const RunOptions &options, TensorMap &outputs,
                std::string &error, int64_t segments,
                ChunkRounding rounding) {
  auto chunked = dyn_cast<ChunkedOp>(recurrence.getTransition());
  if (!chunked) {
    error = "the chunk executor runs chunk-level IR; lower @" +
            recurrence.getSymName().str() +
            " with --rec-lower-chunked first";
    return false;
  }
  if (segments > 1 && !chunked->hasAttr("rec.split_scan")) {
    error = "running a sequence in segments needs the split transfer form "
            "(--rec-state-transfer, then --rec-split-scan)";
    return false;
  }
  SpecPlan plan = SpecPlan::build(recurrence);
  std::unique_ptr<ChunkRunner> runner;
  bool ok = runSequences(
      plan, inputs, options, outputs, error,
      [&](const ProblemShape &shape, int64_t seq, int64_t h,
          DenseState &state, PrologueEvaluator &prologue, HostTensor &o) {
        if (!runner)
          runner =
              std::make_unique<ChunkRunner>(chunked, plan, shape, segments,
                                            rounding);
        runner->runSequence(seq, h, state, prologue, o);
      });
  if (ok && runner && !runner->error.empty()) {
    error = runner->error;
    return false;
  }
  return ok;
}

} // namespace rkc
