//===- CudaEmitter.cpp - CUDA C++ from chunk-level and decode IR ----------===//
//
// The prefill kernel: one thread block per (sequence, value head, value
// tile) runs the chunks of its sequence in order (the inter-chunk scan) with
// its slice of the state in shared memory. Per chunk it executes the
// `rec.chunked` body op by op: `rec.chunk.rows` becomes a loop of warps over
// rows calling the generated prologue of the row's sub-step, every other op a
// call into the tile library. Tiles live in shared memory at offsets planned
// from their live ranges.
//
//===----------------------------------------------------------------------===//

#include "Target/CudaEmitter.h"

#include "Interpreter/SpecPlan.h"
#include "Rec/Occupancy.h"
#include "Rec/OutPhase.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

using namespace mlir;
using namespace rkc::rec;

namespace rkc {
namespace {

/// What --rec-schedule decided, read back from the IR.
struct CudaSchedule {
  int64_t dk = 0, dv = 0, valueTile = 0, threads = 0, sharedBytes = 0;
  int64_t prefetch = 0; // 1: input rows are fetched to L2 ahead of loads
  int64_t scanSegments = 1; // split kernels at small B x H: see _segments
  int64_t decodeBlocks = 0; // decode's launch bound, blocks an SM (0: none)
  int64_t workspaceFloats = 0; // split kernels: floats a (chunk, value head)
  int64_t prepSharedBytes = 0; // split kernels: the prep kernel's
  int64_t prepBlocks = rec::kDefaultPrepBlocks; // split kernels: the prep's launch bound, at most
  int64_t prepValueTile = 0; // split kernels: the prep's value-side columns
  int64_t stageFloats = 0; // split kernels: a staging buffer of the scan
  int64_t stageBuffers = 2; // the float32 kernel's (16-bit outputs: two)
  int64_t workspaceHalfBytes = 0, stageHalfBytes = 0; // the same, 16-bit outputs
  int64_t workspaceHalfLeanBytes = 0; // without raw input rows (0: none)
  int64_t stateStride = 0; // floats between rows of S in shared memory
  int64_t outSharedBytes = 0;     // with an out phase: its kernel's
  int64_t outWorkspaceFloats = 0; // what crosses to it a (chunk, value head)
  bool outValueLoop =
      false; // its block a (chunk, value head), value tiles in turn
  bool bf16Products = false; // tensor-core products on bf16 operands
  bool decodeQuads = false; // decode: a thread's rows consecutive, vectors by 4
  int64_t decodeRawRows = -1;    // decode: roles of 2 to this many rows load
                                 // them first (-1: by the sub-steps, see
                                 // decodeLoadsFirst)
  int64_t elementwiseQuads = -1; // 1 / 0, or -1: by the gates (see below)

  bool read(Operation *op, std::string &error) {
    auto dict = op->getAttrOfType<DictionaryAttr>("rec.schedule");
    if (!dict) {
      error = "'" + op->getName().getStringRef().str() +
              "' has no rec.schedule: run --rec-schedule first";
      return false;
    }
    auto get = [&](StringRef key) -> int64_t {
      auto value = dyn_cast_or_null<IntegerAttr>(dict.get(key));
      return value ? value.getInt() : 0;
    };
    dk = get("dk");
    dv = get("dv");
    valueTile = get("value_tile");
    threads = get("threads");
    sharedBytes = get("shared_bytes");
    prefetch = get("prefetch");
    scanSegments = std::max<int64_t>(1, get("scan_segments"));
    decodeBlocks = get("decode_blocks");
    workspaceFloats = get("workspace_floats");
    prepSharedBytes = get("prep_shared_bytes");
    if (int64_t blocks = get("prep_blocks"))
      prepBlocks = blocks;
    prepValueTile = get("prep_value_tile");
    stageFloats = get("stage_floats");
    if (int64_t buffers = get("stage_buffers"))
      stageBuffers = buffers;
    workspaceHalfBytes = get("workspace_half_bytes");
    workspaceHalfLeanBytes = get("workspace_half_lean_bytes");
    stageHalfBytes = get("stage_half_bytes");
    stateStride = get("state_stride");
    outSharedBytes = get("out_shared_bytes");
    outWorkspaceFloats = get("out_workspace_floats");
    outValueLoop = get("out_value_loop") != 0;
    auto products = dyn_cast_or_null<StringAttr>(dict.get("products"));
    bf16Products = products && products.getValue() == "bf16";
    decodeQuads = get("decode_quads") != 0;
    if (dict.get("decode_raw_rows"))
      decodeRawRows = get("decode_raw_rows");
    if (dict.get("elementwise_quads"))
      elementwiseQuads = get("elementwise_quads");
    if (!dk || !dv || !valueTile || !threads || !sharedBytes) {
      error = "incomplete rec.schedule";
      return false;
    }
    if (!prepValueTile)
      prepValueTile = valueTile;
    if (prepValueTile % valueTile || dv % prepValueTile) {
      error = "the prep value tile must be a multiple of the value tile "
              "dividing dv";
      return false;
    }
    if (!stateStride)
      stateStride = valueTile;
    return true;
  }
};

std::string roleName(RowRole role) { return stringifyRowRole(role).str(); }

/// Prints one op as a comment line.
std::string opComment(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.skipRegions();
  op->print(os, flags);
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  return "// " + text;
}

class Emitter {
public:
  Emitter(RecurrenceOp chunked, RecurrenceOp decode)
      : chunkedRec(chunked), decodeRec(decode),
        plan(SpecPlan::build(chunked)), decodePlan(SpecPlan::build(decode)),
        name(chunked.getSymName().str()) {
    chunkedOp = cast<ChunkedOp>(chunked.getTransition());
    m = chunkedOp.getSubstepsPerToken();
    C = chunkedOp.getChunkSize();
  }

  bool run(CudaKernels &out, std::string &error) {
    if (!s.read(chunkedOp, error) ||
        !decodeSchedule.read(decodeRec.getTransition(), error))
      return false;
    if (decodeSchedule.dk != s.dk || decodeSchedule.dv != s.dv ||
        decodeSchedule.valueTile != s.valueTile ||
        decodeSchedule.threads != s.threads) {
      error = "the prefill and decode schedules differ";
      return false;
    }
    out.prefillSharedBytes = s.sharedBytes;
    out.decodeSharedBytes = decodeSchedule.sharedBytes;
    // The decode kernel's stateBase: an int64_t a warp.
    out.decodeStaticSharedBytes = decodeSchedule.threads / 32 * 8;
    out.prepSharedBytes = s.prepSharedBytes;
    out.prepValueTile = s.prepValueTile;
    out.workspaceBytesPerChunk = s.workspaceFloats * 4;
    out.workspaceHalfBytesPerChunk = s.workspaceHalfBytes;
    out.workspaceHalfLeanBytesPerChunk = s.workspaceHalfLeanBytes;
    out.stagesWorkspace = s.stageFloats > 0;
    out.stagesInTwoBuffers = out.stagesWorkspace && s.stageBuffers == 2;
    outPhase = chunkedOp->hasAttr("rec.out_phase");
    emitHeader(out.header);
    if (!emitDevice(out.device, error))
      return false;
    if (!split) // (planned, but no prep kernel runs: nothing crosses)
      out.prepSharedBytes = 0;
    if (outPhase) {
      out.outSharedBytes = s.outSharedBytes;
      out.outWorkspaceBytesPerChunk = s.outWorkspaceFloats * 4;
    }
    out.prefillTensorCoreSharedBytes =
        prefillTensorCoreBytes(); // (split known)
    emitLauncher(out.launcher, out.prefillSharedBytes,
                 out.prefillTensorCoreSharedBytes, out.decodeSharedBytes);
    emitManifest(out.manifest);
    return true;
  }

private:
  //===--------------------------------------------------------------------===//
  // Header: the C ABI
  //===--------------------------------------------------------------------===//

  std::string upper() const {
    std::string u = name;
    for (char &c : u)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  }

  void emitHeader(std::string &text) {
    llvm::raw_string_ostream os(text);
    std::string U = upper();
    os << "/* Generated by rkc from @" << name
       << ". The C ABI of its kernels.\n"
       << " *\n"
       << " * Layouts (batch-major): token inputs [B, T, H or HV, d], "
          "per-head inputs [H or HV, d],\n"
       << " * o [B, T, HV, dv]; states [N, HV, dk, dv] in float32, "
          "contiguous. */\n"
       << "#ifndef RKC_" << U << "_H\n#define RKC_" << U << "_H\n\n"
       << "#include \"rkc/runtime.h\"\n\n"
       << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
       << "#define RKC_" << U << "_DK " << s.dk << "\n"
       << "#define RKC_" << U << "_DV " << s.dv << "\n"
       << "#define RKC_" << U << "_SUBSTEP_ROWS " << plan.substepRows(plan.params)
       << " /* rows a token of <substep> inputs */\n\n";
    os << "typedef struct rkc_" << name << "_args {\n";
    for (const SpecPlan::Input &in : plan.inputs)
      os << "  rkc_tensor " << in.name << "; /* " << describeLayout(in)
         << " */\n";
    os << "  rkc_tensor o;                   /* [B, T, HV, dv], written */\n"
       << "  const float *initial_state;     /* [N, HV, dk, dv] or NULL "
          "(zeros) */\n"
       << "  float *final_state;             /* [N, HV, dk, dv] or NULL; may "
          "equal initial_state */\n"
       << "  const int64_t *cu_seqlens;      /* device [N + 1] (B = 1), or "
          "NULL */\n"
       << "  const int64_t *cu_seqlens_host; /* optional host copy, "
          "checked when given */\n"
       << "  int64_t num_seqs;               /* N, with cu_seqlens */\n"
       << "  const int32_t *state_indices;   /* device [N]: the state slot "
          "of each sequence (< 0: skip it), or NULL */\n"
       << "  float scale;                    /* 0: the spec's scale (dk^-0.5 "
          "unless it sets one) */\n"
       << "} rkc_" << name << "_args;\n\n";
    os << "/* What the kernels receive (filled by the launchers). */\n"
       << "typedef struct rkc_" << name << "_kernel_params {\n"
       << "  rkc_" << name << "_args a;\n"
       << "  int64_t batch, length, key_heads, value_heads, num_seqs;\n"
       << "  void *workspace; /* split kernels: what the prep kernel hands "
          "the scan */\n"
       << "  int rows_from_inputs; /* split kernels for 16-bit outputs: the "
          "scan stages raw input rows\n"
       << "                           from the inputs, the workspace holds "
          "none */\n"
       << "  int64_t chunk_begin, chunk_end; /* the chunks of each sequence "
          "a launch runs: [begin, end) */\n"
       << "  float *carry; /* split kernels in segments: the state between "
          "them, [N, HV, dk, dv] */\n"
       << "  int carry_in, carry_out; /* the scan starts from / ends with "
          "carry (else the args' states) */\n"
       << "  int64_t chunk_slots; /* split kernels, batch rows: workspace "
          "slots a row, reused in turn\n"
       << "                          (chunk i in slot i mod chunk_slots); 0: "
          "one a chunk */\n"
       << (outPhase ? "  void *out_workspace; /* what the scan hands the out "
                      "kernel: each chunk's entering state */\n"
                    : "")
       << "} rkc_" << name << "_kernel_params;\n\n";
    os << "/* The prefill's chunk (tokens), and the bytes a (chunk, value "
          "head) of its workspace\n * holds (--split-scan 1; 0 for one "
          "kernel): see rkc_" << name << "_fwd_workspace. */\n"
       << "#define RKC_" << U << "_CHUNK_SIZE " << C << "\n"
       << "#define RKC_" << U << "_WORKSPACE_BYTES " << s.workspaceFloats * 4
       << " /* float32 outputs */\n"
       << "#define RKC_" << U << "_WORKSPACE_BYTES_16 " << s.workspaceHalfBytes
       << " /* 16-bit outputs */\n";
    if (s.workspaceHalfLeanBytes)
      os << "#define RKC_" << U << "_WORKSPACE_BYTES_16_LEAN "
         << s.workspaceHalfLeanBytes
         << " /* 16-bit outputs, raw input rows staged from the inputs */\n";
    if (outPhase)
      os << "/* What the scan hands the out kernel a (chunk, value head) "
            "(--out-phase). */\n"
         << "#define RKC_" << U << "_OUT_WORKSPACE_BYTES "
         << s.outWorkspaceFloats * 4 << " /* float32 outputs */\n"
         << "#define RKC_" << U << "_OUT_WORKSPACE_BYTES_16 "
         << s.outWorkspaceFloats * 2 << " /* 16-bit outputs */\n";
    os << "\n";
    os << "/* Prefill: the chunked algorithm over whole sequences. */\n"
       << "rkc_status rkc_" << name << "_fwd(CUstream stream, const rkc_"
       << name << "_args *args);\n"
       << "/* Decode: the sub-steps token by token from the given states (T "
          "new tokens a sequence,\n"
       << " * usually 1), each state read and written once. */\n"
       << "rkc_status rkc_" << name << "_decode(CUstream stream, const rkc_"
       << name << "_args *args);\n"
       << "/* The device memory rkc_" << name
       << "_fwd takes on its stream for these arguments (the\n"
       << " * workspace between the prep and scan kernels of --split-scan 1, "
          "freed on the stream\n"
       << " * before it returns; 0 for one kernel), after the same "
          "validation. Where the\n"
       << " * launcher runs the chunks in segments (--scan-segments, "
          "RKC_SCAN_SEGMENTS; B x H small\n"
       << " * for the device's multiprocessors), it counts the state "
          "between them too. */\n"
       << "rkc_status rkc_" << name << "_fwd_workspace(const rkc_" << name
       << "_args *args, size_t *bytes);\n\n"
       << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  }

  //===--------------------------------------------------------------------===//
  // Prologue: one device function per (sub-step, role)
  //===--------------------------------------------------------------------===//

  int width(const SpecPlan::Expr &e) const {
    return e.side == Side::Key ? static_cast<int>(s.dk / 32)
           : e.side == Side::Value ? static_cast<int>(s.dv / 32)
                                   : 0;
  }

  /// `const int64_t row_<input> = ...;`: the offset of the input's row of
  /// token t (and sub-step row j) in the row functions.
  /// `consecutive` as emitExpr's: the decode kernel's rows; the prefill's
  /// take the head as RKC_PREFILL_HEAD_ONCE says (see inputRow).
  static std::string inputRowOffset(const SpecPlan::Input &in,
                                    bool consecutive) {
    return "  const int64_t row_" + in.name + " = " +
           (consecutive ? "inputRow" : "inputRow<RKC_PREFILL_HEAD_ONCE>") +
           "(p.a." + in.name + ", " + (in.rate == Rate::head ? "0" : "2") +
           ", " + (in.rate == Rate::head ? "0, 0" : "row, t") + ", " +
           (in.rate == Rate::substep ? "RKC_SUBSTEP_ROWS, j" : "1, 0") +
           ", hv, p.value_heads);\n";
  }

  /// Emits the code computing expr `index` (and what it needs) into `os`.
  /// `consecutive`: a lane holds consecutive elements of an input row (the
  /// decode kernel's: loadRowConsecutive, or loadRowRawConsecutive and
  /// widenPacked where its roles load first), else every 32nd (loadRow).
  /// `rawAt` (when given): the inputs were loaded already, as they are
  /// stored (rowRawInputs), at these offsets of `raw`; they are widened
  /// from there instead of loaded (widenPacked where `consecutive`).
  void emitExpr(const SpecPlan &p, int index, std::set<int> &done,
                llvm::raw_ostream &os, bool consecutive,
                const std::map<int, int> *rawAt = nullptr) {
    if (done.count(index))
      return;
    const SpecPlan::Expr &e = p.exprs[index];
    if (e.lhs >= 0)
      emitExpr(p, e.lhs, done, os, consecutive, rawAt);
    if (e.rhs >= 0)
      emitExpr(p, e.rhs, done, os, consecutive, rawAt);
    done.insert(index);
    std::string v = "e" + std::to_string(index);
    int w = width(e);
    auto at = [&](int operand) {
      const SpecPlan::Expr &o = p.exprs[operand];
      return "e" + std::to_string(operand) + (width(o) ? "[i]" : "");
    };
    auto elementwise = [&](const std::string &formula) {
      if (w)
        os << "  float " << v << "[" << w << "];\n  for (int i = 0; i < " << w
           << "; ++i)\n    " << v << "[i] = " << formula << ";\n";
      else {
        std::string f = formula;
        // Scalar results use the scalar forms of the operands.
        size_t pos;
        while ((pos = f.find("[i]")) != std::string::npos)
          f.erase(pos, 3);
        os << "  const float " << v << " = " << f << ";\n";
      }
    };
    using K = SpecPlan::ExprKind;
    switch (e.kind) {
    case K::Input: {
      const SpecPlan::Input &in = p.inputs[e.input];
      os << "  // input \"" << in.name << "\" " << describeLayout(in) << "\n";
      if (rawAt) {
        int at = rawAt->at(index);
        if (w && consecutive)
          os << "  float " << v << "[" << w << "];\n  for (int i = 0; i < " << w
             << "; ++i)\n    " << v << "[i] = widenPacked(p.a." << in.name
             << ".dtype, raw + " << at << ", i);\n";
        else if (w)
          os << "  float " << v << "[" << w << "];\n  for (int i = 0; i < " << w
             << "; ++i)\n    " << v << "[i] = widen(p.a." << in.name
             << ".dtype, raw[" << at << " + i]);\n";
        else
          os << "  const float " << v << " = widen(p.a." << in.name
             << ".dtype, raw[" << at << "]);\n";
        return;
      }
      std::string base = "row_" + in.name;
      os << inputRowOffset(in, consecutive);
      int last = (in.rate == Rate::head ? 1 : 3);
      if (w)
        // loadRowConsecutive: a decode role that widens each input as it
        // loads it (see emitRowFunction).
        os << "  float " << v << "[" << w << "];\n  "
           << (consecutive ? "loadRowConsecutive<" : "loadRow<") << w
           << ">(p.a." << in.name << ", " << base << ", p.a." << in.name
           << ".stride[" << last << "], lane, " << v << ");\n";
      else
        os << "  const float " << v << " = load(p.a." << in.name << ", "
           << base << ");\n";
      return;
    }
    case K::Constant:
      os << "  const float " << v << " = "
         << llvm::formatv("{0:e}", e.constant).str() << "f;\n";
      return;
    case K::Add:
      return elementwise(at(e.lhs) + " + " + at(e.rhs));
    case K::Sub:
      return elementwise(at(e.lhs) + " - " + at(e.rhs));
    case K::Mul:
      return elementwise(at(e.lhs) + " * " + at(e.rhs));
    case K::Neg:
      return elementwise("-" + at(e.lhs));
    case K::Exp:
      return elementwise("expf(" + at(e.lhs) + ")");
    case K::Sigmoid:
      return elementwise("1.f / (1.f + expf(-" + at(e.lhs) + "))");
    case K::Softplus:
      return elementwise("softplus(" + at(e.lhs) + ")");
    case K::LogSigmoid:
      return elementwise("-softplus(-" + at(e.lhs) + ")");
    case K::L2Norm: {
      std::string x = "e" + std::to_string(e.lhs);
      int xw = width(p.exprs[e.lhs]);
      os << "  float " << v << "[" << xw << "];\n  {\n    float ssq = 0.f;\n"
         << "    for (int i = 0; i < " << xw << "; ++i)\n      ssq += " << x
         << "[i] * " << x << "[i];\n"
         << "    const float inv = rsqrtf(rkc::tile::warpSum(ssq) + "
         << llvm::formatv("{0:e}", e.constant).str() << "f);\n"
         << "    for (int i = 0; i < " << xw << "; ++i)\n      " << v
         << "[i] = " << x << "[i] * inv;\n  }\n";
      return;
    }
    case K::Dot: {
      int xw = width(p.exprs[e.lhs]);
      os << "  float " << v << " = 0.f;\n  for (int i = 0; i < " << xw
         << "; ++i)\n    " << v << " += e" << e.lhs << "[i] * e" << e.rhs
         << "[i];\n  " << v << " = rkc::tile::warpSum(" << v << ");\n";
      return;
    }
    case K::ProjectOut: {
      int xw = width(p.exprs[e.lhs]);
      std::string x = "e" + std::to_string(e.lhs),
                  k = "e" + std::to_string(e.rhs);
      os << "  float " << v << "[" << xw << "];\n  {\n    float kx = 0.f;\n"
         << "    for (int i = 0; i < " << xw << "; ++i)\n      kx += " << k
         << "[i] * " << x << "[i];\n    kx = rkc::tile::warpSum(kx);\n"
         << "    for (int i = 0; i < " << xw << "; ++i)\n      " << v
         << "[i] = " << x << "[i] - " << k << "[i] * kx;\n  }\n";
      return;
    }
    }
  }

  /// The expr a role reads in a sub-step (-1: the sub-step lacks it).
  static int roleExpr(const SpecPlan::Substep &sub, RowRole role) {
    switch (role) {
    case RowRole::gate:
      return sub.gate;
    case RowRole::erase_along:
      return sub.eraseAlong;
    case RowRole::read:
    case RowRole::read_along:
      return sub.readAlong;
    case RowRole::strength:
      return sub.strength;
    case RowRole::key:
      return sub.key;
    case RowRole::value:
      return sub.value;
    case RowRole::write_strength:
      return sub.writeStrength;
    case RowRole::query:
      return sub.query;
    }
    return -1;
  }

  /// The raw input elements (32-bit words, as stored, before widening) a
  /// lane holds at once while a batch of a row op's rows is in flight: the
  /// prep kernel runs at 64 registers a thread (the one-kernel prefill's
  /// row ops batch the same way).
  static constexpr int kRawFloats = 32;

  /// The values a lane holds of one row of `role` (see rowValues).
  int64_t rowValueCount(Axis axis) const {
    return axis == Axis::key ? s.dk / 32 : axis == Axis::value ? s.dv / 32 : 1;
  }

  /// The device function of one row of `role` for sub-step `slot`:
  /// `..._values` computes a lane's values of it (DK / 32 of the key axis,
  /// DV / 32 of the value axis, or the one float), loads only. The kernels
  /// call it for all of a warp's rows before storing any, so that the rows'
  /// loads are in flight together. `consecutive` as emitExpr's. With
  /// `loadsFirst` (the decode kernel's rows, see decodeLoadsFirst), every
  /// input of the row is loaded as stored (loadRowRawConsecutive) before
  /// any is widened: a role that reads two inputs (a decayed read, a product of
  /// inputs) otherwise waits for the first one's round trip to memory
  /// before it issues the second's, and the barrier after the rows waits
  /// for the slowest role.
  void emitRowFunction(const SpecPlan &p, const std::string &prefix, int slot,
                       RowRole role, Axis axis, bool consecutive,
                       llvm::raw_ostream &os, bool loadsFirst = false) {
    const SpecPlan::Substep &sub = p.substeps[slot];
    std::string name =
        prefix + "_s" + std::to_string(slot) + "_" + roleName(role);
    os << "// Sub-step " << slot << ", " << roleName(role) << ".\n"
       << "__device__ __forceinline__ void " << name
       << "_values(const Params &p, int64_t row, int64_t t, int64_t hv, "
          "float *out) {\n"
       << "  const int lane = threadIdx.x % 32;\n"
       << "  const int j = " << sub.index << "; // row of <substep> inputs\n"
       << "  (void)j; (void)lane;\n";
    std::map<int, int> rawAt;
    int size = rowRawInputs(p, sub, role, axis, rawAt);
    if (!loadsFirst || !size)
      return emitRowValues(p, sub, role, axis, consecutive, nullptr, os);
    os << "  unsigned raw[" << size << "]; // the inputs as stored\n";
    emitRawLoads(p, rawAt, consecutive, os);
    emitRowValues(p, sub, role, axis, consecutive, &rawAt, os);
  }

  /// The loads of a row function's inputs as they are stored, into `raw`
  /// at rawAt's offsets, in the buffer's order (see rowRawInputs):
  /// loadRowRawConsecutive (a lane's consecutive elements, as loaded) or
  /// loadRowRaw (every 32nd) for a row, loadRaw for one element.
  void emitRawLoads(const SpecPlan &p, const std::map<int, int> &rawAt,
                    bool consecutive, llvm::raw_ostream &os) {
    std::vector<std::pair<int, int>> inputs; // (offset, expr)
    for (auto [index, at] : rawAt)
      inputs.push_back({at, index});
    llvm::sort(inputs);
    for (auto [at, index] : inputs) {
      const SpecPlan::Expr &e = p.exprs[index];
      const SpecPlan::Input &in = p.inputs[e.input];
      os << "  // input \"" << in.name << "\" " << describeLayout(in) << "\n"
         << inputRowOffset(in, consecutive);
      int last = (in.rate == Rate::head ? 1 : 3);
      if (int w = width(e))
        os << "  " << (consecutive ? "loadRowRawConsecutive<" : "loadRowRaw<")
           << w << ">(p.a." << in.name << ", row_" << in.name << ", p.a."
           << in.name << ".stride[" << last << "], lane, raw + " << at
           << ");\n";
      else
        os << "  raw[" << at << "] = loadRaw(p.a." << in.name << ", row_"
           << in.name << ");\n";
    }
  }

  /// The body of a row function after its preamble: the role's expression
  /// (its inputs loaded, or widened from `raw` at rawAt) into out, and the
  /// closing brace.
  void emitRowValues(const SpecPlan &p, const SpecPlan::Substep &sub,
                     RowRole role, Axis axis, bool consecutive,
                     const std::map<int, int> *rawAt, llvm::raw_ostream &os) {
    int expr = roleExpr(sub, role);
    int64_t count = rowValueCount(axis);
    std::set<int> done;
    emitExpr(p, expr, done, os, consecutive, rawAt);
    std::string v = "e" + std::to_string(expr);
    bool vec = width(p.exprs[expr]) != 0;
    std::string factor;
    if (axis == Axis::key) {
      if (decayedRead(sub, role)) {
        emitExpr(p, sub.gate, done, os, consecutive, rawAt);
        bool gateVec = width(p.exprs[sub.gate]) != 0;
        factor = " * __expf(e" + std::to_string(sub.gate) +
                 (gateVec ? "[i]" : "") + ")";
      }
      if (role == RowRole::query)
        factor = " * p.a.scale";
    }
    if (axis == Axis::one)
      os << "  out[0] = " << v << ";\n";
    else
      os << "  for (int i = 0; i < " << count << "; ++i)\n"
         << "    out[i] = " << v << (vec ? "[i]" : "") << factor << ";\n";
    os << "}\n\n";
  }

  /// Whether a read row carries its sub-step's decay (its values times
  /// exp(gate)).
  static bool decayedRead(const SpecPlan::Substep &sub, RowRole role) {
    return role == RowRole::read && sub.gate >= 0 && !sub.undecayedRead;
  }

  /// The inputs a row function of `role` reads, with their offsets in its
  /// raw buffer in the order its expression meets them (each input's values
  /// a lane holds: DK / 32 or DV / 32, or one); returns the buffer's size.
  int rowRawInputs(const SpecPlan &p, const SpecPlan::Substep &sub,
                   RowRole role, Axis axis, std::map<int, int> &rawAt) const {
    int size = 0;
    std::function<void(int)> visit = [&](int index) {
      if (index < 0 || rawAt.count(index))
        return;
      const SpecPlan::Expr &e = p.exprs[index];
      visit(e.lhs);
      visit(e.rhs);
      if (e.kind != SpecPlan::ExprKind::Input)
        return;
      rawAt[index] = size;
      size += std::max(width(e), 1);
    };
    visit(roleExpr(sub, role));
    if (axis == Axis::key && decayedRead(sub, role))
      visit(sub.gate);
    return size;
  }

  /// The prefill's row functions in two parts, so that a warp's rows load
  /// together: `..._raw` loads the inputs of one row as they are stored
  /// (loadRowRaw: no conversion, so no instruction waits for them), and
  /// `..._from_raw` widens them and computes the role's values. A function
  /// that converted as it loaded held every row's loads back until the
  /// previous row's had arrived: one round trip to memory a row.
  void emitRowRawFunctions(const SpecPlan &p, int slot, RowRole role, Axis axis,
                           llvm::raw_ostream &os) {
    const SpecPlan::Substep &sub = p.substeps[slot];
    std::string name =
        "prefill_s" + std::to_string(slot) + "_" + roleName(role);
    std::map<int, int> rawAt;
    int size = rowRawInputs(p, sub, role, axis, rawAt);
    os << "// Sub-step " << slot << ", " << roleName(role)
       << ": its inputs as stored (" << size << " a lane).\n"
       << "__device__ __forceinline__ void " << name
       << "_raw(const Params &p, int64_t row, int64_t t, int64_t hv, "
          "unsigned *raw) {\n"
       << "  const int lane = threadIdx.x % 32;\n"
       << "  const int j = " << sub.index << "; // row of <substep> inputs\n"
       << "  (void)j; (void)lane;\n";
    emitRawLoads(p, rawAt, /*consecutive=*/false, os);
    os << "}\n\n"
       << "// Sub-step " << slot << ", " << roleName(role)
       << ": its values from " << name << "_raw's.\n"
       << "__device__ __forceinline__ void " << name
       << "_from_raw(const Params &p, const unsigned *raw, float *out) {\n";
    emitRowValues(p, sub, role, axis, /*consecutive=*/false, &rawAt, os);
  }

  /// Stores a lane's values of a row (rowValueCount of them, `values`) to
  /// `dst`; `live` (when not empty) is a condition under which they are
  /// stored, zeros otherwise. `consecutive`: the lane holds consecutive
  /// elements (the decode kernel's rows), else every 32nd (loadRow), at
  /// `stored` of its column in the row (the tile's layout; as it is by
  /// default).
  std::string rowStore(
      Axis axis, const std::string &values, const std::string &live,
      const std::string &indent, bool consecutive = false,
      llvm::function_ref<std::string(const std::string &)> stored =
          [](const std::string &col) { return col; }) const {
    std::string x = live.empty() ? values + "[c]"
                                 : "(" + live + " ? " + values + "[c] : 0.f)";
    std::string liveArg = live.empty() ? "true" : live;
    std::string text;
    llvm::raw_string_ostream os(text);
    switch (axis) {
    case Axis::key:
      if (consecutive) {
        os << indent << "storeRow<" << rowValueCount(axis)
           << ">(dst, threadIdx.x % 32, " << values << ", " << liveArg
           << ");\n";
        break;
      }
      os << indent << "for (int c = 0; c < " << rowValueCount(axis)
         << "; ++c)\n"
         << indent << "  dst[" << stored("threadIdx.x % 32 + 32 * c")
         << "] = " << x << ";\n";
      break;
    case Axis::value:
      if (consecutive) {
        os << indent << "storeRowColumns<" << rowValueCount(axis)
           << ">(dst, threadIdx.x % 32, " << values << ", " << liveArg
           << ", v0, " << valueCols() << ");\n";
        break;
      }
      os << indent << "for (int c = 0; c < " << rowValueCount(axis)
         << "; ++c) {\n"
         << indent << "  const int64_t d = threadIdx.x % 32 + 32 * c;\n"
         << indent << "  if (d >= v0 && d < v0 + " << valueCols() << ")\n"
         << indent << "    dst[" << stored("d - v0") << "] = " << x << ";\n"
         << indent << "}\n";
      break;
    default:
      os << indent << "if (threadIdx.x % 32 == 0)\n"
         << indent << "  dst[0] = "
         << (live.empty() ? values + "[0]"
                          : "(" + live + " ? " + values + "[0] : 0.f)")
         << ";\n";
      break;
    }
    return text;
  }

  //===--------------------------------------------------------------------===//
  // Device code
  //===--------------------------------------------------------------------===//

  /// The value columns of the kernel being written: a block's value tile,
  /// or the prep kernel's loop step over the value side.
  int64_t valueColumns() const {
    return writingPrep ? s.prepValueTile : s.valueTile;
  }
  std::string valueCols() const { return writingPrep ? "PBV" : "BV"; }
  TileExtents extents() const { return {C, m, s.dk, valueColumns()}; }
  std::string rowsDescriptor(ArrayRef<int64_t> slots) const {
    std::string text = "{" + std::to_string(C * static_cast<int64_t>(
                                                    slots.empty() ? m
                                                                  : slots.size())) +
                       ", " + std::to_string(m) + ", " +
                       std::to_string(slots.empty() ? m : slots.size()) + ", {";
    for (int64_t i = 0; i < (slots.empty() ? m : (int64_t)slots.size()); ++i)
      text += (i ? ", " : "") + std::to_string(slots.empty() ? i : slots[i]);
    return text + "}}";
  }

  std::string tile(Value v) const {
    if (isa<BlockArgument>(v))
      return shadowState ? "S16" : "S";
    return "tile" + std::to_string(valueIds.lookup(v));
  }
  std::string rows(Value v) const {
    auto t = cast<TileType>(v.getType());
    return rowsDescriptor(t.getRowSlots());
  }
  std::string cols(Value v) const {
    auto t = cast<TileType>(v.getType());
    return rowsDescriptor(t.getColSlots());
  }
  int64_t ncols(Value v) const {
    return extents().cols(cast<TileType>(v.getType()));
  }
  int64_t nrows(Value v) const {
    return extents().rows(cast<TileType>(v.getType()));
  }

  /// Where an op that prints no code of its own is computed (planFusedSums),
  /// or an empty string.
  StringRef computedElsewhere(Operation *op) const {
    if (pairedFirst.contains(op))
      return "computed with the product below";
    if (sharedRightSecond.contains(op))
      return "computed with the product above (the same right operand)";
    if (folded.contains(op))
      return "computed by the product above";
    if (scaledIntoProduct.contains(op))
      return "scaled from S by the product below";
    if (addedByOutput.contains(op))
      return "added by the output below as it stores";
    if (outputByProduct.contains(op))
      return "stored to o by the product above";
    if (rowsLoadedAbove.contains(op))
      return "loaded with the rows above";
    if (negFoldedIntoInverse.contains(op))
      return "the inverse above stores it negated";
    if (negFoldedIntoScaling.contains(op))
      return "the column scaling below negates its scale";
    return "";
  }

  void emitChunkOp(Operation *op, llvm::raw_ostream &os) {
    // A swizzled staged tile (KeyStage) is read through rkc::tile::at by a
    // product's left operand alone (rec-schedule stages only such tiles
    // so); anything else would read it densely.
    for (OpOperand &use : op->getOpOperands()) {
      if (!stagedStride(use.get()) ||
          !stagedSwizzled(use.get().getDefiningOp()) ||
          (isa<ChunkMatmulOp>(op) && use.getOperandNumber() == 0))
        continue;
      unsupported = opComment(op).substr(3) +
                    "', which reads a swizzled staged tile other than as a "
                    "product's left operand";
      return;
    }
    if (StringRef where = computedElsewhere(op); !where.empty()) {
      os << "    " << opComment(op) << "\n    // (" << where << ")\n";
      return;
    }
    // (Not among computedElsewhere's: its operands are still a Gram's, as
    // the swizzled rows' planning asks.)
    if (gramAbove.contains(op)) {
      os << "    " << opComment(op)
         << "\n    // (computed with the Gram above)\n";
      return;
    }
    // A padded tile (pad-addend-rows) is stored by its product and added
    // by the products that fold its sums, which take its stride; an op
    // that would read it densely has no code here.
    auto padded = [](Value v) { return paddedStride(v) != 0; };
    // (The output indexes them by their rows.)
    if (!isa<ChunkOutputOp>(op) && llvm::any_of(op->getOperands(), padded)) {
      unsupported = opComment(op).substr(3) +
                    "', which reads a tile with padded rows (pad-addend-rows)";
      return;
    }
    os << "    " << opComment(op) << "\n";
    profiledOps.push_back(opComment(op).substr(3));
    os << "    RKC_PROFILE_BEGIN();\n";
    if (registerState && touchesState(op)) {
      // The kernels for bf16 products keep the state in registers and read
      // its bf16 shadow; the float32 ones keep it in shared memory.
      std::string tc, f32;
      llvm::raw_string_ostream t(tc), f(f32);
      shadowState = true;
      emitOpBody(op, t);
      shadowState = false;
      emitOpBody(op, f);
      os << "    if constexpr (TensorCores) {\n"
         << indentBy(tc, 2) << "    } else {\n"
         << indentBy(f32, 2) << "    }\n";
    } else {
      emitOpBody(op, os);
    }
    if (prepOpUnfenced.contains(op))
      os << unfencedComment();
    os << "    RKC_PROFILE_END(" << profiledOps.size() - 1 << ");\n";
  }

  /// The loads of a rec.chunk.rows op into registers, `values<suffix>`
  /// (R<suffix> rows a warp).
  std::string rowsLoads(ChunkRowsOp r, StringRef suffix) {
    auto t = cast<TileType>(r.getType());
    SmallVector<int64_t> slots(t.getRowSlots());
    if (slots.empty())
      for (int64_t i = 0; i < m; ++i)
        slots.push_back(i);
    int64_t n = nrows(r), period = slots.size();
    int64_t count = rowValueCount(t.getCols());
    std::string R = ("R" + suffix).str(), values = ("values" + suffix).str();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "      constexpr int " << R << " = (" << n
       << " + WARPS - 1) / WARPS; // rows a warp\n"
       << "      float " << values << "[" << R << "][" << count << "];\n";
    // Every row of one sub-step's, of an expression that reads inputs:
    // loaded as stored, `batch` rows at a time (their raw values at most
    // kRawFloats a lane), then widened.
    const SpecPlan::Substep &first = plan.substeps[slots.front()];
    std::map<int, int> rawAt;
    int size = period == 1 && roleExpr(first, r.getRole()) >= 0
                   ? rowRawInputs(plan, first, r.getRole(), t.getCols(), rawAt)
                   : 0;
    if (size) {
      int64_t rows = (n + s.threads / 32 - 1) / (s.threads / 32);
      int64_t batch =
          std::clamp<int64_t>(kRawFloats / std::max(size, 1), 1, rows);
      std::string fn = "prefill_s" + std::to_string(slots.front()) + "_" +
                       roleName(r.getRole());
      std::string raw = ("raw" + suffix).str();
      rawRowFunctions.insert({slots.front(), r.getRole(), t.getCols()});
      os << "#pragma unroll\n"
         << "      for (int r0 = 0; r0 < " << R << "; r0 += " << batch
         << ") {\n"
         << "        unsigned " << raw << "[" << batch << "][" << size << "];\n"
         << "#pragma unroll\n"
         << "        for (int r = r0; r < min(r0 + " << batch << ", " << R
         << "); ++r) {\n"
         << "          const int i = min(warp + r * WARPS, " << n - 1 << ");\n"
         << "          const int64_t t = min(t0 + i, eos - 1);\n"
         << "          " << fn << "_raw(p, row, t, hv, " << raw
         << "[r - r0]);\n"
         << "        }\n"
         << "#pragma unroll\n"
         << "        for (int r = r0; r < min(r0 + " << batch << ", " << R
         << "); ++r)\n"
         << "          " << fn << "_from_raw(p, " << raw << "[r - r0], "
         << values << "[r]);\n"
         << "      }\n";
      return text;
    }
    os << "#pragma unroll\n"
       << "      for (int r = 0; r < " << R << "; ++r) {\n"
       << "        const int i = min(warp + r * WARPS, " << n - 1 << ");\n"
       << "        const int64_t t = min(t0 + i / " << period << ", eos - 1);\n"
       << "        switch (i % " << period << ") {\n";
    for (auto [k, slot] : llvm::enumerate(slots)) {
      os << "        case " << k << ": ";
      if (roleExpr(plan.substeps[slot], r.getRole()) < 0)
        os << "for (int c = 0; c < " << count << "; ++c) " << values
           << "[r][c] = 0.f; break;\n";
      else
        os << "prefill_s" << slot << "_" << roleName(r.getRole())
           << "_values(p, row, t, hv, " << values << "[r]); break;\n";
      rowFunctions.insert({slot, r.getRole(), t.getCols()});
    }
    os << "        }\n      }\n";
    return text;
  }

  /// The stores of rowsLoads' registers into the op's tile.
  std::string rowsStores(ChunkRowsOp r, StringRef suffix) {
    auto t = cast<TileType>(r.getType());
    int64_t period = t.getRowSlots().empty() ? m : t.getRowSlots().size();
    std::string R = ("R" + suffix).str(), values = ("values" + suffix).str();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "#pragma unroll\n"
       << "      for (int r = 0; r < " << R << "; ++r) {\n"
       << "        const int i = warp + r * WARPS;\n"
       << "        if (i >= " << nrows(r) << ")\n          break;\n"
       << "        float *dst = " << tile(r.getResult()) << " + i * "
       << ncols(r) << ";\n"
       << "        const bool live = t0 + i / " << period << " < eos;\n";
    bool swizzled = swizzledRows.contains(r.getResult()),
         swizzledAsB = swizzledB.contains(r.getResult());
    if (swizzled)
      os << "        // swizzled (rkc::tile::swizzle): odd rows' halves of "
            "every 32 floats traded\n";
    else if (swizzledAsB)
      os << "        // stored as rkc::tile::swizzleB says\n";
    os << rowStore(t.getCols(), values + "[r]", "live", "        ",
                   /*consecutive=*/false, [&](const std::string &col) {
                     return swizzled ? "(" + col + ") ^ ((i & 1) << 4)"
                            : swizzledAsB
                                ? "rkc::tile::swizzleB(true, i, " + col + ")"
                                : col;
                   });
    os << "      }\n";
    return text;
  }

  /// The Grams rec-schedule put side by side (rec.gram_with_next on the
  /// first, the second the next op of the prep): the first computes both
  /// (rkc::tile::gramsTogether).
  void planGramPairs(Block &body,
                     llvm::function_ref<StringRef(Operation &)> phase) {
    gramBelow.clear();
    gramAbove.clear();
    if (emitting != "prep")
      return;
    for (Operation &op : body) {
      if (!op.hasAttr("rec.gram_with_next") || phase(op) != "prep")
        continue;
      auto second = dyn_cast_or_null<ChunkGramOp>(op.getNextNode());
      if (!isa<ChunkGramOp>(op) || !second || phase(*second) != "prep" ||
          gramAbove.contains(&op) || second->hasAttr("rec.gram_with_next") ||
          op.hasAttr("rec.to_scan") || second->hasAttr("rec.to_scan") ||
          op.hasAttr("rec.per_value_tile") ||
          second->hasAttr("rec.per_value_tile") ||
          llvm::is_contained(second->getOperands(), op.getResult(0))) {
        unsupported = opComment(&op).substr(3) +
                      "', marked rec.gram_with_next without a key-side Gram "
                      "of the prep after it that reads nothing of it (and "
                      "is paired with no other)";
        return;
      }
      gramBelow[&op] = second;
      gramAbove.insert(second);
    }
  }

  /// The prep kernel's key-side ops (and the workspace copies after them)
  /// one after another, each with what it reads and writes of shared
  /// memory: a closing barrier orders a step's accesses before the next
  /// step's, and it can go where no access since the last barrier kept
  /// conflicts with the next step's (both in one tile's floats, one of them
  /// a write): KDA's query and gate rows, the two column scalings of its
  /// erase Gram. Only steps whose code can leave it out do (row ops, the
  /// elementwise ops, copies); a step whose code runs elsewhere, a product
  /// (its code may compute a sum or a second product too), and the value
  /// loop keep every barrier around them.
  void planPrepBarriers(Block &body,
                        llvm::function_ref<StringRef(Operation &)> phase) {
    prepOpUnfenced.clear();
    prepCopyUnfenced.clear();
    if (emitting != "prep")
      return;
    struct Access {
      int64_t begin, end;
      bool write;
    };
    struct Step {
      Operation *op = nullptr;
      bool copy = false;    // the workspace copy after `op`
      bool fence = false;   // code elsewhere: barriers on both sides
      bool canOmit = false; // its code can leave the closing barrier out
      SmallVector<Access> accesses;
    };
    auto region = [&](Value v, bool write, int64_t before = 0) {
      int64_t at = prepOffsets.lookup(v);
      return Access{at - before, at + nrows(v) * ncols(v), write};
    };
    SmallVector<Step> steps;
    auto copyStep = [&](Operation &op) {
      if (!op.hasAttr("rec.to_scan") || op.hasAttr("rec.to_workspace") ||
          keptAsComputed(&op))
        return;
      Step copy;
      copy.op = &op;
      copy.copy = true;
      copy.canOmit = true;
      copy.accesses.push_back(region(op.getResult(0), /*write=*/false));
      steps.push_back(copy);
    };
    for (Operation &op : body) {
      if ((phase(op) != "prep" && phase(op) != "both") ||
          op.hasAttr("rec.per_value_tile"))
        continue;
      if (rowsLoadedAbove.contains(&op)) {
        copyStep(op); // its rows are the op above's, its copy its own
        continue;
      }
      if (isa<ChunkCumsumOp>(op) && op.hasAttr("rec.shifted_view"))
        continue; // no code: a view of the inclusive sum's tile
      if (negFoldedIntoInverse.contains(&op) ||
          negFoldedIntoScaling.contains(&op))
        continue; // no code: its neighbour negates (planNegations)
      if (gramAbove.contains(&op))
        continue; // no code: the Gram above computes it (its accesses too)
      Step step;
      step.op = &op;
      // Products fence: one may compute a sum or a second product, whose
      // tiles its own operands and result do not name.
      if (!computedElsewhere(&op).empty() || isa<ChunkMatmulOp>(op)) {
        step.fence = true;
        steps.push_back(step);
        copyStep(op);
        continue;
      }
      step.canOmit =
          isa<ChunkRowsOp, ChunkCumsumOp, ChunkScaleColsOp, ChunkScaleRowsOp,
              ChunkNegOp, ChunkDecayRowsOp, ChunkDecayToEndOp>(op) ||
          (isa<ChunkAddOp>(op) && llvm::none_of(op.getOperands(), [](Value v) {
             return isa<BlockArgument>(v);
           }));
      for (Value v : op.getOperands()) {
        // A column scaling that negates its scale reads c, not -c.
        if (auto sc = dyn_cast<ChunkScaleColsOp>(op);
            sc && v == sc.getScale() && negatedScale.count(sc))
          v = negatedScale.lookup(sc);
        if (v.getDefiningOp() && prepOffsets.count(v))
          step.accesses.push_back(region(v, /*write=*/false));
      }
      if (!op.hasAttr("rec.to_workspace"))
        for (Value r : op.getResults())
          step.accesses.push_back(
              region(r, /*write=*/true,
                     op.hasAttr("rec.zero_row_before") ? ncols(r) : 0));
      if (auto rows = dyn_cast<ChunkRowsOp>(op))
        if (ChunkRowsOp next = rowsWithNext.lookup(rows))
          step.accesses.push_back(region(next.getResult(), /*write=*/true));
      if (ChunkGramOp second = gramBelow.lookup(&op)) {
        for (Value v : second->getOperands())
          if (v.getDefiningOp() && prepOffsets.count(v))
            step.accesses.push_back(region(v, /*write=*/false));
        step.accesses.push_back(region(second.getResult(), /*write=*/true));
      }
      steps.push_back(step);
      copyStep(op);
    }
    // The last step before the value loop keeps its barrier.
    SmallVector<Access> pending; // since the last barrier
    for (size_t i = 0; i + 1 < steps.size(); ++i) {
      const Step &step = steps[i], &next = steps[i + 1];
      pending.append(step.accesses.begin(), step.accesses.end());
      bool conflict =
          step.fence || next.fence || !step.canOmit ||
          llvm::any_of(pending, [&](const Access &a) {
            return llvm::any_of(next.accesses, [&](const Access &b) {
              return (a.write || b.write) && a.begin < b.end && b.begin < a.end;
            });
          });
      if (conflict) {
        pending.clear();
        continue;
      }
      (step.copy ? prepCopyUnfenced : prepOpUnfenced).insert(step.op);
    }
  }

  /// What stands where a prep step's closing barrier was left out.
  static std::string unfencedComment() {
    return "    // (no barrier: the next op reads nothing written since the "
           "last one, nor writes what was read)\n";
  }

  /// Negations that need no pass of their own (in the prep kernel and the
  /// one-kernel prefill; the scan's have none in the example specs): a neg
  /// of an inverse that only it reads, next to it and in place, makes the
  /// inverse store -T (tile::utInverse<true>: the same work); a neg that
  /// only a column scaling reads as its scale makes that scaling negate c
  /// (tile::scaleCols<true>), where no op between them writes c's floats.
  /// Each saves a pass over its tile and a barrier.
  void planNegations(Block &body, const llvm::DenseMap<Value, int64_t> &at,
                     llvm::function_ref<StringRef(Operation &)> phase) {
    negatedInverse.clear();
    negFoldedIntoInverse.clear();
    negFoldedIntoScaling.clear();
    negatedScale.clear();
    if (emitting != "prep" && emitting != "all")
      return;
    auto here = [&](Operation &op) {
      return emitting == "all" || phase(op) == "prep" || phase(op) == "both";
    };
    auto sameRun = [&](Operation *a, Operation *b) {
      return here(*a) && here(*b) && phase(*a) == phase(*b) &&
             a->hasAttr("rec.per_value_tile") ==
                 b->hasAttr("rec.per_value_tile") &&
             computedElsewhere(a).empty() && computedElsewhere(b).empty();
    };
    auto extent = [&](Value v) { return nrows(v) * ncols(v); };
    auto plain = [&](Value v) {
      return at.count(v) && !productOperands.count(v) &&
             !v.getDefiningOp()->hasAttr("rec.to_scan") &&
             !v.getDefiningOp()->hasAttr("rec.to_workspace");
    };
    for (Operation &op : body) {
      auto n = dyn_cast<ChunkNegOp>(op);
      if (!n || !plain(n.getResult()))
        continue;
      Value x = n.getX();
      // -T from the inverse itself.
      if (auto u = x.getDefiningOp<ChunkUTInverseOp>()) {
        if (x.hasOneUse() && u->getNextNode() == n.getOperation() &&
            sameRun(u, n) && plain(x) &&
            at.lookup(x) == at.lookup(n.getResult())) {
          negatedInverse.insert(u);
          negFoldedIntoInverse.insert(n);
        }
        continue;
      }
      // c · -1 in the column scaling that reads it.
      if (!n->hasOneUse())
        continue;
      auto sc = dyn_cast<ChunkScaleColsOp>(*n->user_begin());
      if (!sc || sc.getScale() != n.getResult() ||
          sc.getMatrix() == n.getResult() || !sameRun(n, sc) ||
          !x.getDefiningOp() || !at.count(x) || productOperands.count(x))
        continue;
      // (The scaling's own result included: the plan may have put it on c,
      // which it took to be dead.)
      int64_t begin = at.lookup(x), end = begin + extent(x);
      bool clobbered = false;
      for (Operation *o = n->getNextNode(); o != sc->getNextNode();
           o = o->getNextNode()) {
        if (!here(*o))
          continue;
        // (A cumsum with rec.zero_row_before also writes the row before
        // its tile.)
        int64_t before = o->hasAttr("rec.zero_row_before") ? 1 : 0;
        for (Value r : o->getResults())
          if (at.count(r) && !o->hasAttr("rec.to_workspace") &&
              at.lookup(r) - before * ncols(r) < end &&
              begin < at.lookup(r) + extent(r))
            clobbered = true;
      }
      if (clobbered)
        continue;
      negatedScale[sc] = x;
      negFoldedIntoScaling.insert(n);
    }
  }

  /// In the prep kernel, a row op whose next op is a row op too loads both
  /// rows together (one round trip to memory, one barrier), where their
  /// registers stay few (at most 24 floats a thread): rowsWithNext maps the
  /// first to the second, rowsLoadedAbove holds the second.
  void planRowPairs(Block &body,
                    llvm::function_ref<StringRef(Operation &)> phase) {
    rowsWithNext.clear();
    rowsLoadedAbove.clear();
    if (emitting != "prep")
      return;
    const int64_t warps = s.threads / 32;
    auto floats = [&](ChunkRowsOp r) {
      auto t = cast<TileType>(r.getType());
      return (nrows(r) + warps - 1) / warps * rowValueCount(t.getCols());
    };
    for (bool perValueTile : {false, true}) {
      ChunkRowsOp previous;
      for (Operation &op : body) {
        if ((phase(op) != "prep" && phase(op) != "both") ||
            op.hasAttr("rec.per_value_tile") != perValueTile)
          continue;
        auto rows = dyn_cast<ChunkRowsOp>(op);
        if (rows && previous && !rowsLoadedAbove.contains(previous) &&
            !previous->hasAttr("rec.to_scan") &&
            floats(previous) + floats(rows) <= 24) {
          rowsWithNext[previous] = rows;
          rowsLoadedAbove.insert(rows);
          previous = nullptr;
          continue;
        }
        previous = rows;
      }
    }
  }

  /// Whether an op's code names the state slice: a product reading it (or
  /// run with one that does), or the product computing the new state.
  bool touchesState(Operation *op) const {
    auto mm = dyn_cast<ChunkMatmulOp>(op);
    if (!mm)
      return false;
    auto readsState = [](ChunkMatmulOp m) {
      return isa<BlockArgument>(m.getRhs());
    };
    if (readsState(mm))
      return true;
    if (ChunkMatmulOp second = sharedRightOf.lookup(mm); second &&
        readsState(second))
      return true;
    if (ChunkMatmulOp first = firstOfPair.lookup(mm); first &&
        readsState(first))
      return true;
    return sumOfProduct.lookup(mm) == sumIntoState && sumIntoState;
  }

  /// Whether a prep op stores its value for the scan as it computes it
  /// (tile::KeepIn, the op's last argument): an elementwise op whose whole
  /// value crosses with its key- or chunk-side columns, laid out in the
  /// workspace as in its tile. A copy after it would cost a barrier and a
  /// second pass over shared memory.
  bool keptAsComputed(Operation *op) const {
    if (emitting != "prep" || !op->hasAttr("rec.to_scan") ||
        op->hasAttr("rec.to_workspace") || lastRowOnly(op) ||
        op->getNumResults() != 1)
      return false;
    auto type = dyn_cast<TileType>(op->getResult(0).getType());
    if (!type || type.getCols() == Axis::value)
      return false;
    if (auto sum = dyn_cast<ChunkAddOp>(op))
      return !isa<BlockArgument>(sum.getLhs()) &&
             !isa<BlockArgument>(sum.getRhs());
    return isa<ChunkScaleColsOp, ChunkScaleRowsOp, ChunkNegOp, ChunkDecayRowsOp,
               ChunkDecayToEndOp>(op);
  }

  /// A Gram's arguments in `rkc::tile::gram`'s order; `full`: every one
  /// (a `GramArgs`), else the trailing swizzle and falling flags only where
  /// they are not the defaults.
  std::string gramArgs(ChunkGramOp g, bool full) {
    std::string text;
    llvm::raw_string_ostream os(text);
    std::string dl = g.getLhsDecay() ? tile(g.getLhsDecay()) : "nullptr";
    std::string dr = g.getRhsDecay() ? tile(g.getRhsDecay()) : "nullptr";
    int64_t dcols = g.getLhsDecay() ? ncols(g.getLhsDecay()) : 1;
    os << tile(g.getLhs()) << ", " << rows(g.getLhs()) << ", "
       << tile(g.getRhs()) << ", " << rows(g.getRhs()) << ", "
       << ncols(g.getLhs()) << ", " << dl << ", " << dr << ", " << dcols << ", "
       << (g.getMask() == MaskKind::strict ? "true" : "false") << ", "
       << tile(g.getResult());
    int bits = swizzledRows.contains(g.getLhs()) |
               swizzledRows.contains(g.getRhs()) << 1;
    std::string falling = fallingDecay(g);
    if (full || bits || !falling.empty())
      os << ", /*swizzled=*/" << bits;
    if (full || !falling.empty())
      os << ", " << (falling.empty() ? "false" : falling);
    return text;
  }

  /// The code of an op that prints some (emitChunkOp).
  void emitOpBody(Operation *op, llvm::raw_ostream &os) {
    // An op kept as computed also gets where: the workspace's copy.
    if (keptAsComputed(op))
      os << "    // kept for the scan, stored there as computed\n";
    // An op whose closing barrier goes says so last.
    auto result = [&]() {
      std::string out = tile(op->getResult(0));
      bool unfenced = prepOpUnfenced.contains(op);
      if (keptAsComputed(op)) {
        std::string T = crossingType(op);
        out += ",\n        rkc::tile::KeepIn<" + T + ">{reinterpret_cast<" + T +
               " *>(ws + " + workspaceAt(op) + ")}";
      } else if (unfenced && !isa<ChunkCumsumOp>(op)) {
        out += ", rkc::tile::NoKeep{}";
      }
      return unfenced ? out + ", /*barrier=*/false" : out;
    };
    // An elementwise op's result(), then its operand x's swizzle: every
    // argument before it spelled out.
    auto resultReading = [&](Value x) {
      bool outB = swizzledB.contains(op->getResult(0));
      if (!swizzledRows.contains(x) && !outB)
        return result();
      std::string out = tile(op->getResult(0));
      if (keptAsComputed(op)) {
        std::string T = crossingType(op);
        out += ",\n        rkc::tile::KeepIn<" + T + ">{reinterpret_cast<" + T +
               " *>(ws + " + workspaceAt(op) + ")}";
      } else {
        out += ", rkc::tile::NoKeep{}";
      }
      return out + ", /*barrier=*/" +
             (prepOpUnfenced.contains(op) ? "false" : "true") +
             ", /*xSwizzled=*/" +
             (swizzledRows.contains(x) ? "true" : "false") +
             (outB ? ", /*outSwizzledB=*/true" : "");
    };
    TypeSwitch<Operation *>(op)
        .Case([&](ChunkRowsOp r) {
          // Every row of the warp loaded before any is stored: a row past
          // the sequence's end is loaded at its last token and stored as
          // zeros, so that no load waits behind a branch. Rows loaded
          // together with the next op's (rowsWithNext) share one round
          // trip and one barrier.
          ChunkRowsOp next = rowsWithNext.lookup(r);
          os << "    {\n"
             << rowsLoads(r, "") << (next ? rowsLoads(next, "2") : "")
             << rowsStores(r, "") << (next ? rowsStores(next, "2") : "")
             << "    }\n";
          if (!prepOpUnfenced.contains(r))
            os << "    __syncthreads();\n";
        })
        .Case([&](ChunkCumsumOp c) {
          // In the prep kernel an exclusive sum may be the inclusive one's
          // rows a row later (rec-schedule's shifted view): nothing to
          // compute but that inclusive sum's zero row before its first.
          if (emitting == "prep" && c->hasAttr("rec.shifted_view")) {
            os << "    // (the inclusive sum's rows shifted down by one, its "
                  "zero row first)\n";
            return;
          }
          if (emitting == "prep" && c->hasAttr("rec.zero_row_before"))
            os << "    for (int c = threadIdx.x; c < " << ncols(c)
               << "; c += THREADS) // the zero row its shifted view starts "
                  "with\n      "
               << tile(c.getResult()) << "[c - " << ncols(c) << "] = 0.f;\n";
          // (Whether the sums fall, for the Grams that read them.)
          std::string falls = tile(c.getResult()) + "Falls";
          fallingSums[c.getGate()] = falls;
          os << "    [[maybe_unused]] const bool " << falls
             << " = rkc::tile::cumsum(" << tile(c.getGate()) << ", "
             << rows(c.getGate()) << ", " << ncols(c) << ", L, "
             << (c.getExclusive() ? "true" : "false") << ", " << result()
             << ");\n";
        })
        .Case([&](ChunkGramOp g) {
          if (ChunkGramOp second = gramBelow.lookup(g)) {
            // Both Grams as one step (rec-schedule's pair-grams).
            os << "    rkc::tile::gramsTogether<TensorCores, "
               << ncols(g.getLhs()) << ", " << ncols(second.getLhs())
               << ">(\n        {" << gramArgs(g, /*full=*/true)
               << "},\n        {" << gramArgs(second, /*full=*/true) << "});\n";
            return;
          }
          os << "    rkc::tile::gram<TensorCores, " << ncols(g.getLhs()) << ">("
             << gramArgs(g, /*full=*/false) << ");\n";
        })
        .Case([&](ChunkScaleColsOp sc) {
          Value scale = sc.getScale();
          bool negated = negatedScale.count(sc);
          if (negated)
            scale = negatedScale.lookup(sc);
          os << "    rkc::tile::scaleCols" << (negated ? "<true>" : "") << "("
             << tile(sc.getMatrix()) << ", " << nrows(sc.getMatrix()) << ", "
             << cols(sc.getMatrix()) << ", " << tile(scale) << ", "
             << rows(scale) << ", " << result() << ");"
             << (negated ? " // by -" + tile(scale) : "") << "\n";
        })
        .Case([&](ChunkScaleRowsOp sr) {
          os << "    rkc::tile::scaleRows(" << tile(sr.getMatrix()) << ", "
             << nrows(sr.getMatrix()) << ", " << ncols(sr.getMatrix()) << ", "
             << tile(sr.getScale()) << ", " << resultReading(sr.getMatrix())
             << ");\n";
        })
        .Case([&](ChunkNegOp n) {
          os << "    rkc::tile::neg(" << tile(n.getX()) << ", "
             << nrows(n) * ncols(n) << ", " << result() << ");\n";
        })
        .Case([&](ChunkAddOp a) {
          if (isa<BlockArgument>(a.getLhs()) || isa<BlockArgument>(a.getRhs())) {
            // S has rows SLD floats apart; the sum is dense.
            auto read = [&](Value v) {
              return isa<BlockArgument>(v) ? std::string("S[(e / BV) * SLD + e % BV]")
                                           : tile(v) + "[e]";
            };
            os << "    for (int e = threadIdx.x; e < DK * BV; e += THREADS)\n"
               << "      " << result() << "[e] = " << read(a.getLhs()) << " + "
               << read(a.getRhs()) << ";\n    __syncthreads();\n";
          } else {
            os << "    rkc::tile::add(" << tile(a.getLhs()) << ", "
               << tile(a.getRhs()) << ", " << nrows(a) * ncols(a) << ", "
               << result() << ");\n";
          }
        })
        .Case([&](ChunkUTInverseOp u) {
          bool negated = negatedInverse.contains(u);
          os << "    rkc::tile::utInverse" << (negated ? "<true>" : "") << "("
             << tile(u.getMatrix()) << ", " << nrows(u) << ", " << result()
             << ");" << (negated ? " // -T, for the neg below" : "") << "\n";
        })
        .Case([&](ChunkDecayRowsOp d) {
          os << "    rkc::tile::decayRows(" << tile(d.getX()) << ", "
             << rows(d.getX()) << ", " << ncols(d) << ", " << tile(d.getDecay())
             << ", " << ncols(d.getDecay()) << ", " << resultReading(d.getX())
             << ");\n";
        })
        .Case([&](ChunkDecayToEndOp d) {
          os << "    rkc::tile::decayToEnd(" << tile(d.getX()) << ", "
             << rows(d.getX()) << ", " << ncols(d) << ", "
             << tile(d.getDecay()) << ", " << ncols(d.getDecay()) << ", L, "
             << result() << ");\n";
        })
        .Case([&](ChunkDecayStateOp d) {
          os << "    rkc::tile::decayState(" << tile(d.getState()) << ", "
             << nrows(d) << ", " << ncols(d) << ", " << tile(d.getDecay())
             << ", " << ncols(d.getDecay()) << ", L, " << result();
          if (isa<BlockArgument>(d.getState()))
            os << ", SLD";
          os << ");\n";
        })
        .Case([&](ChunkMatmulOp mm) {
          bool t = mm.getTransposeLhs();
          int64_t inner = t ? nrows(mm.getLhs()) : ncols(mm.getLhs());
          ChunkAddOp sum = sumOfProduct.lookup(mm);
          std::string out = productOut(mm.getResult()), addend;
          if (ChunkMatmulOp first = firstOfPair.lookup(mm)) {
            emitProductPair(first, mm, sum, os);
            return;
          }
          if (ChunkMatmulOp second = sharedRightOf.lookup(mm)) {
            emitSharedRight(mm, second, os);
            return;
          }
          ChunkDecayStateOp decay = decayedAddend.lookup(mm);
          if (shadowState && sum && sum == sumIntoState) {
            os << "    // S = A B + S"
               << (decay ? " decayed over the chunk" : "")
               << ", the chunk's new state, in registers; then its shadow\n"
               << "    rkc::tile::updateStateOne<" << inner << ">(sreg, "
               << tile(mm.getLhs()) << ", " << tile(mm.getRhs()) << ", "
               << rowStride(mm.getLhs()) << ", " << rowStride(mm.getRhs())
               << ", DK, " << rowDecay(decay) << ", S16, SLD"
               << (lastUpdateUnfenced ? ", /*barrier=*/false" : "") << ");\n";
            if (lastUpdateUnfenced)
              os << "    // (no barrier: the next chunk starts with one)\n";
            return;
          }
          if (sum) {
            out = sum == sumIntoState ? "S" : productOut(sum.getResult());
            addend = decay ? "S" : tile(otherAddend(sum, mm.getResult()));
            os << "    // with the sum below: " << said(out) << " = A B + " << addend
               << (decay ? " decayed over the chunk" : "")
               << (sum == sumIntoState ? ", the chunk's new state" : "")
               << "\n";
          }
          // A staged left operand's row stride (KLD for a swizzled one).
          int64_t stagedLda = stagedStride(mm.getLhs());
          std::string lda = stagedLda ? rowStride(mm.getLhs()) : "0";
          // The call up to its output argument, and the arguments after
          // lda that end with a swizzled B's flag (planSwizzledRows).
          std::string call = "    rkc::tile::matmul<TensorCores, " +
                             std::to_string(inner) + ">(" +
                             tile(mm.getLhs()) + ", " + tile(mm.getRhs()) +
                             ", " + std::to_string(nrows(mm)) + ", " +
                             std::to_string(inner) + ", " +
                             std::to_string(ncols(mm)) + ", " +
                             (t ? "true" : "false") + ", ";
          bool bSwizzled = swizzledB.contains(mm.getRhs());
          auto swizzledTail = [&](StringRef ldo) {
            return (", 0, static_cast<const float *>(nullptr), " + ldo +
                    ", rkc::tile::RowDecay{}, 0, /*barrier=*/true, "
                    "/*bSwizzled=*/" +
                    (bSwizzled ? "true" : "false"))
                .str();
          };
          if (emitting == "prep" && mm->hasAttr("rec.to_workspace")) {
            // Only the scan reads it: stored into the workspace as computed.
            bool valueCols = cast<TileType>(mm.getType()).getCols() == Axis::value;
            std::string T = crossingType(mm);
            std::string ldo = valueCols ? "DV" : "0";
            os << "    // kept for the scan, stored there by the product\n"
               << call << "reinterpret_cast<" << T << " *>(ws + "
               << workspaceAt(mm) << ")" << (valueCols ? " + v0" : "") << ", "
               << lda
               << (bSwizzled ? swizzledTail(ldo)
                             : ", 0, static_cast<const float *>(nullptr), " +
                                   ldo)
               << ");\n";
            return;
          }
          bool outB = swizzledB.contains(mm.getResult());
          if (emitting == "prep" && (bSwizzled || outB)) {
            // Every argument spelled out: a swizzled B, or an output
            // stored as one.
            os << call
               << (outB ? "rkc::tile::SwizzledB{" + out + ", " +
                              std::to_string(ncols(mm)) + "}"
                        : out)
               << ", " << lda << swizzledTail("0") << ");"
               << (outB ? " // stored as rkc::tile::swizzleB says" : "")
               << "\n";
            return;
          }
          os << call << out;
          bool rhsIsState = isa<BlockArgument>(mm.getRhs());
          Value outValue = sum ? sum.getResult() : mm.getResult();
          Value addendValue = sum ? otherAddend(sum, mm.getResult()) : Value();
          if (paddedValueRows(outValue) || paddedValueRows(mm.getLhs()) ||
              paddedValueRows(mm.getRhs()) || paddedStride(outValue) ||
              paddedStride(addendValue)) {
            // Every stride spelled out: padded rows among them.
            bool stateRows = sum && (decay || isa<BlockArgument>(addendValue));
            os << ", " << rowStride(mm.getLhs()) << ", "
               << rowStride(mm.getRhs()) << ", "
               << (sum ? addend : "static_cast<const float *>(nullptr)") << ", "
               << (sum == sumIntoState && sum ? "SLD" : rowStride(outValue))
               << ", " << rowDecay(decay) << ", "
               << (stateRows ? "SLD"
                             : std::to_string(paddedStride(addendValue)))
               << (sum && !stateRows && sum != sumIntoState &&
                           noBarrier.contains(mm)
                       ? ", /*barrier=*/false"
                       : "");
          } else if (sum) {
            os << ", " << lda << ", " << (rhsIsState ? "SLD" : "0") << ", "
               << addend;
            if (decay || isa<BlockArgument>(otherAddend(sum, mm.getResult())))
              os << ", " << (sum == sumIntoState ? "SLD" : "0") << ", "
                 << rowDecay(decay) << ", SLD";
            else if (sum == sumIntoState)
              os << ", SLD";
            else if (noBarrier.contains(mm))
              os << ", 0, rkc::tile::RowDecay{}, 0, /*barrier=*/false";
          } else if (rhsIsState) {
            os << ", " << lda << ", SLD";
          } else if (stagedLda) {
            os << ", " << lda;
          }
          os << ");\n";
          if (noBarrier.contains(mm))
            os << "    // (no barrier: the state update next reads nothing "
                  "this wrote, nor writes what it read)\n";
        })
        .Case([&](ChunkOutputOp out) {
          auto t = cast<TileType>(out.getOutput().getType());
          size_t ns = t.getRowSlots().empty() ? m : t.getRowSlots().size();
          // Element e of a tile, rows padded (pad-addend-rows) or dense.
          auto at = [&](Value v) {
            int64_t stride = paddedStride(v);
            if (!stride)
              return tile(v) + "[e]";
            std::string n = std::to_string(ncols(v));
            return tile(v) + "[(e / " + n + ") * " + std::to_string(stride) +
                   " + e % " + n + "]";
          };
          std::string value = at(out.getOutput());
          if (ChunkAddOp sum = sumOfOutput.lookup(out))
            value = "rkc::tile::toFloat(" + at(sum.getLhs()) +
                    ") + rkc::tile::toFloat(" + at(sum.getRhs()) + ")";
          os << "    for (int e = threadIdx.x; e < " << nrows(out.getOutput())
             << " * BV; e += THREADS) {\n"
             << "      const int64_t t = t0 + (e / BV) / " << ns << ";\n"
             << "      if (t < eos)\n"
             << "        store(p.a.o, row * p.a.o.stride[0] + t * "
                "p.a.o.stride[1] + hv * p.a.o.stride[2] + (v0 + e % BV) * "
                "p.a.o.stride[3], "
             << value
             << ");\n    }\n    __syncthreads(); // the next op may reuse "
                "this tile's space\n";
        })
        .Case([&](ChunkYieldOp y) {
          os << "    for (int e = threadIdx.x; e < DK * BV; e += THREADS)\n"
             << "      S[(e / BV) * SLD + e % BV] = " << tile(y.getState()[0])
             << "[e];\n"
             << "    __syncthreads();\n";
        })
        .Default([&](Operation *other) {
          unsupported = other->getName().getStringRef().str();
        });
  }

  /// `second`'s sum, out = A1 B1 + A2 B2 + x, where x is what `first`'s
  /// folded sum adds (planFusedSums' pairs): one matmulPair.
  void emitProductPair(ChunkMatmulOp first, ChunkMatmulOp second,
                       ChunkAddOp sum, llvm::raw_ostream &os) {
    bool t = second.getTransposeLhs();
    ChunkAddOp firstSum = sumOfProduct.lookup(first);
    Value x = otherAddend(firstSum, first.getResult());
    ChunkDecayStateOp decay = decayedAddend.lookup(first);
    std::string out = sum == sumIntoState ? "S" : productOut(sum.getResult());
    std::string addend = decay ? "S" : tile(x);
    auto inner = [&](ChunkMatmulOp mm) {
      return t ? nrows(mm.getLhs()) : ncols(mm.getLhs());
    };
    auto operands = [&](ChunkMatmulOp mm) {
      return tile(mm.getLhs()) + ", " + tile(mm.getRhs()) + ", " +
             rowStride(mm.getLhs()) + ", " + rowStride(mm.getRhs());
    };
    if (shadowState && sum == sumIntoState) {
      os << "    // with the sums below: S = A1 B1 + A2 B2 + S"
         << (decay ? " decayed over the chunk" : "")
         << ", the chunk's new state, in registers; then its shadow\n"
         << "    rkc::tile::updateStatePair<" << inner(first) << ", "
         << inner(second) << ">(sreg, " << operands(first) << ", "
         << operands(second) << ", DK, " << rowDecay(decay) << ", S16, SLD"
         << (lastUpdateUnfenced ? ", /*barrier=*/false" : "") << ");\n";
      if (lastUpdateUnfenced)
        os << "    // (no barrier: the next chunk starts with one)\n";
      return;
    }
    os << "    // with the sums below: " << said(out) << " = A1 B1 + A2 B2 + "
       << addend << (decay ? " decayed over the chunk" : "")
       << (sum == sumIntoState ? ", the chunk's new state" : "") << "\n"
       << "    rkc::tile::matmulPair<TensorCores, " << inner(first) << ", "
       << inner(second) << ">(" << operands(first) << ", " << operands(second)
       << ", " << nrows(second) << ", " << ncols(second) << ", "
       << (t ? "true" : "false") << ", " << out << ", "
       << (sum == sumIntoState ? "SLD" : rowStride(sum.getResult())) << ", "
       << addend;
    // The addend's rows: S's, a padded tile's (pad-addend-rows), or dense.
    bool stateRows = decay || isa<BlockArgument>(x);
    int64_t addendStride = stateRows ? 0 : paddedStride(x);
    if (stateRows)
      os << ", " << rowDecay(decay) << ", SLD";
    else if (addendStride)
      os << ", rkc::tile::RowDecay{}, " << addendStride;
    if (noBarrier.contains(second))
      os << (stateRows || addendStride ? "" : ", rkc::tile::RowDecay{}, 0")
         << ", /*barrier=*/false);\n"
         << "    // (no barrier: the state update next reads nothing this "
            "wrote, nor writes what it read)\n";
    else
      os << ");\n";
  }

  /// The RowDecay argument of a state update: the folded decay_state's, or
  /// none.
  std::string rowDecay(ChunkDecayStateOp decay) const {
    if (!decay)
      return "rkc::tile::RowDecay{}";
    return "rkc::tile::RowDecay{" + tile(decay.getDecay()) + ", " +
           std::to_string(ncols(decay.getDecay())) + ", L}";
  }

  /// Whether the scan's kernel for bf16 products keeps the state in
  /// registers (tile::RegisterState): a staged scan whose warps are DK / 16
  /// or two or four times that (each 16-row block of the slice split among
  /// as many warps by columns, at least 8 each), value tiles of at most 32
  /// columns, and a state S that only products
  /// read (as their right operand, through the bf16 shadow) and that one
  /// product updates, S ← (decayed) S + Aᵀ B (+ Aᵀ B), stored into S.
  bool planRegisterState(Block &body) const {
    if (emitting != "scan" || !s.stageFloats || !s.bf16Products || s.dk % 16 ||
        s.threads % (32 * (s.dk / 16)) || s.valueTile > 32 || !sumIntoState)
      return false;
    int64_t splits = s.threads / 32 / (s.dk / 16);
    if ((splits != 1 && splits != 2 && splits != 4) ||
        s.valueTile % (8 * splits))
      return false;
    Operation *update = nullptr;
    for (auto [product, sum] : sumOfProduct)
      if (sum == sumIntoState)
        update = product;
    auto mm = dyn_cast_or_null<ChunkMatmulOp>(update);
    if (!mm || !mm.getTransposeLhs())
      return false;
    // The update's products run on bf16 tensor cores whole (updateState has
    // no fallback): inner extents (the chunk's rows) of whole 16-row steps.
    ChunkMatmulOp first = firstOfPair.lookup(mm);
    for (ChunkMatmulOp product : {mm, first})
      if (product && nrows(product.getLhs()) % 16)
        return false;
    // The sum's state addend: S, or S decayed (folded into the product).
    ChunkMatmulOp addsState = first ? first : mm;
    Value x = otherAddend(sumOfProduct.lookup(addsState), addsState.getResult());
    bool stateAddend = isa<BlockArgument>(x) || decayedAddend.count(addsState);
    if (!stateAddend)
      return false;
    Value state = body.getArgument(0);
    return llvm::all_of(state.getUsers(), [&](Operation *user) {
      if (auto product = dyn_cast<ChunkMatmulOp>(user))
        return product.getRhs() == state && product.getLhs() != state &&
               !product.getTransposeLhs();
      // Only the update's own sums and decay read S otherwise.
      if (isa<ChunkDecayStateOp>(user))
        return decayedAddend.lookup(addsState) == user;
      if (isa<ChunkAddOp>(user))
        return user == sumIntoState ||
               user == sumOfProduct.lookup(addsState).getOperation();
      return false;
    });
  }

  /// Barriers a chunk can do without (the tile library ends every op with
  /// one). After a pair of products that stores the output straight to o
  /// (OutputRows), when the next op is the state update: the pair writes no
  /// shared memory and reads no S, the update writes only S (or its shadow)
  /// and reads nothing the pair wrote. After the update in registers, when
  /// it is the chunk's last op of a staged scan: the next chunk starts with
  /// a barrier, and the kernel's end reads the registers.
  void planBarriers(Block &body,
                    llvm::function_ref<StringRef(Operation &)> phase) {
    noBarrier.clear();
    lastUpdateUnfenced = false;
    if (emitting == "prep" || !sumIntoState)
      return;
    // (As bodyText prints them: an unstaged scan reads prep values back
    // where their ops stand.)
    auto printed = [&](Operation &op) {
      bool here = emitting == "all" || phase(op) == "scan" ||
                  phase(op) == "both" ||
                  (op.hasAttr("rec.to_scan") && !s.stageFloats);
      return here && computedElsewhere(&op).empty();
    };
    auto nextPrinted = [&](Operation *op) -> Operation * {
      for (op = op->getNextNode(); op; op = op->getNextNode())
        if (printed(*op))
          return op;
      return nullptr;
    };
    Operation *update = nullptr;
    for (auto [product, sum] : sumOfProduct)
      if (sum == sumIntoState)
        update = product;
    Value state = body.getArgument(0);
    // An output product (of its own, or the second of a pair) needs none
    // when neither it nor its pair's first reads S and the addend is
    // neither S nor S decayed.
    for (auto [product, sum] : sumOfProduct) {
      if (pairedFirst.contains(product) ||
          !outputRows.contains(sum.getResult()) ||
          nextPrinted(product) != update)
        continue;
      ChunkMatmulOp pairFirst = firstOfPair.lookup(product);
      Operation *first = pairFirst ? pairFirst.getOperation() : product;
      bool readsState = llvm::is_contained(product->getOperands(), state) ||
                        llvm::is_contained(first->getOperands(), state);
      Value x = otherAddend(sumOfProduct.lookup(first), first->getResult(0));
      if (!readsState && !isa<BlockArgument>(x) && !decayedAddend.count(first))
        noBarrier.insert(product);
    }
    lastUpdateUnfenced = registerState && update && s.stageFloats &&
                         emitting == "scan" && !nextPrinted(update);
  }

  /// Whether a prep value keeps all its rows or its last one only.
  static bool lastRowOnly(Operation *op) {
    auto toScan = op->getAttrOfType<StringAttr>("rec.to_scan");
    return toScan && toScan.getValue() == "last_row";
  }

  /// Copies a value between its tile and the workspace of its chunk (`ws`,
  /// the value at rec.workspace_offset): value-side tiles by the columns of
  /// the value tile at v0 of the full-width row, others whole.
  void emitWorkspaceCopy(Operation *op, bool store, llvm::raw_ostream &os) {
    Value v = op->getResult(0);
    auto type = cast<TileType>(v.getType());
    int64_t rows = nrows(v), cols = ncols(v);
    std::string t = tile(v), T = crossingType(op);
    os << "    { // " << (store ? "kept for the scan" : "from the prep kernel")
       << ": " << t << " (" << T << ")\n"
       << "      " << T << " *const w = reinterpret_cast<" << T << " *>(ws + "
       << workspaceAt(op) << ");\n";
    std::string at, here;
    int64_t count = rows * cols;
    // Element `e` of the tile as it is stored.
    auto stored = [&](const std::string &e, const std::string &rowLength) {
      return t + "[" +
             (swizzledB.contains(v)
                  ? "rkc::tile::swizzledBAt(true, " + e + ", " + rowLength + ")"
                  : e) +
             "]";
    };
    if (type.getCols() == Axis::value) {
      at = "w[(e / " + valueCols() + ") * DV + v0 + e % " + valueCols() + "]";
      here = stored("e", valueCols());
    } else {
      int64_t first = lastRowOnly(op) ? (rows - 1) * cols : 0;
      count = lastRowOnly(op) ? cols : rows * cols;
      at = "w[e]";
      here = stored(std::to_string(first) + " + e", std::to_string(cols));
    }
    // The out kernel reads a whole tile, laid out dense, 16 bytes at a time
    // where its place in the workspace allows (copyTile).
    if (!store && emitting == "out" && !swizzledB.contains(v) &&
        !lastRowOnly(op) && workspaceAligned(op)) {
      bool value = type.getCols() == Axis::value;
      std::string width = value ? valueCols() : std::to_string(cols);
      os << "      copyTile<" << width << ">(w"
         << (value ? " + v0, DV" : ", " + width) << ", " << t << ", " << width
         << ", " << rows << ");\n    }\n"
         << "    __syncthreads();\n";
      return;
    }
    // Raw input rows the scan stages from the input itself need no copy
    // there (rec.raw_input).
    if (store && op->hasAttr("rec.raw_input"))
      os << "      if (!(TensorCores && p.rows_from_inputs))\n  ";
    os << "      for (int e = threadIdx.x; e < " << count
       << "; e += THREADS)\n        "
       << (store ? at + " = rkc::tile::fromFloat<" + T + ">(" + here + ")"
                 : here + " = rkc::tile::toFloat(" + at + ")")
       << ";\n    }\n";
    if (store && prepCopyUnfenced.contains(op))
      os << unfencedComment();
    else
      os << "    __syncthreads();\n";
  }

  /// The element type of a crossing value in the workspace and the staging
  /// buffers: bf16 in the kernels for 16-bit outputs where rec-schedule
  /// marked it rec.half, float32 otherwise.
  static std::string crossingType(Operation *op) {
    return op->hasAttr("rec.half") ? "Crossing<TensorCores>" : "float";
  }
  /// Whether its place in a (chunk, value head)'s workspace starts on 16
  /// bytes in both kernels (whose slots are whole 16-byte pieces).
  bool workspaceAligned(Operation *op) const {
    auto half = op->getAttrOfType<IntegerAttr>("rec.workspace_half_offset");
    auto full = op->getAttrOfType<IntegerAttr>("rec.workspace_offset");
    return half && full && half.getInt() % 16 == 0 && full.getInt() % 4 == 0 &&
           s.workspaceFloats % 4 == 0 && s.workspaceHalfBytes % 16 == 0 &&
           s.workspaceHalfLeanBytes % 16 == 0;
  }
  /// Its byte offset in a (chunk, value head)'s workspace, by kernel.
  static std::string workspaceAt(Operation *op) {
    return "(TensorCores ? " +
           std::to_string(op->getAttrOfType<IntegerAttr>(
                                "rec.workspace_half_offset")
                              .getInt()) +
           " : " +
           std::to_string(
               op->getAttrOfType<IntegerAttr>("rec.workspace_offset").getInt() *
               4) +
           ")";
  }
  /// The cast of `address` (bytes or floats of shared memory) to a tile's
  /// pointer `type`: where the tile is known to start at a multiple of 16
  /// bytes, one that says so. The generic pointer's alignment is otherwise
  /// unknown to the compiler, and the products' test of it (matrixRows) then
  /// keeps a path without ldmatrix at every product: ~10% of the scan
  /// kernel's code, never run. (Said in the kernel's own expression: through
  /// an inline function that takes the pointer, nvcc drops it.)
  static std::string pointerCast(const std::string &type,
                                 const std::string &address, bool aligned) {
    if (aligned)
      return "static_cast<" + type + ">(__builtin_assume_aligned(" + address +
             ", 16))";
    return "reinterpret_cast<" + type + ">(" + address + ")";
  }
  /// STAGE_AT: where the float32 plan puts the scan's staging buffers, in
  /// floats (after its tiles).
  int64_t stageAtFloats() const {
    return s.sharedBytes / 4 - s.stageBuffers * s.stageFloats;
  }
  /// Whether a staged value starts 16-byte aligned in both kernels (dynamic
  /// shared memory does): STAGE_AT, a buffer's size and the value's offset
  /// (stageAt's two), in each kernel's layout, multiples of 16 bytes.
  bool stagedAligned(Operation *op) const {
    int64_t at = stageAtFloats();
    return at % 4 == 0 && s.stageFloats % 4 == 0 &&
           s.stageHalfBytes % 16 == 0 &&
           op->getAttrOfType<IntegerAttr>("rec.stage_half_offset").getInt() %
                   16 ==
               0 &&
           op->getAttrOfType<IntegerAttr>("rec.stage_offset").getInt() % 4 == 0;
  }
  /// Its byte offset in a staging buffer, by kernel.
  static std::string stageAt(Operation *op) {
    return "(TensorCores ? " +
           std::to_string(
               op->getAttrOfType<IntegerAttr>("rec.stage_half_offset").getInt()) +
           " : " +
           std::to_string(
               op->getAttrOfType<IntegerAttr>("rec.stage_offset").getInt() * 4) +
           ")";
  }

  /// When the scan stages the workspace (rec-schedule's stage_floats): the
  /// staging buffers' place and size, and `stageChunk`, which starts the
  /// cp.async copies of a chunk's workspace (`ws`) into a buffer, each
  /// crossing value at its rec.stage_offset (value-side tiles by the value
  /// tile's columns).
  /// The row stride of a value the scan stages padded (0: dense).
  int64_t stagedStride(Value v) const {
    Operation *def = v.getDefiningOp();
    if (!def || emitting != "scan" || !s.stageFloats)
      return 0;
    auto stride = def->getAttrOfType<IntegerAttr>("rec.stage_stride");
    return stride ? stride.getInt() : 0;
  }

  /// The row stride, in floats, that rec-schedule's pad-addend-rows gave a
  /// scan product's float32 tile that only sums read (rec.smem_stride; 0:
  /// dense). Products store it and fused sums add it with that stride,
  /// the output indexes it by its rows; emitChunkOp refuses any other
  /// reader.
  static int64_t paddedStride(Value v) {
    Operation *def = v ? v.getDefiningOp() : nullptr;
    auto stride =
        def ? def->getAttrOfType<IntegerAttr>("rec.smem_stride") : nullptr;
    return stride ? stride.getInt() : 0;
  }

  /// The prefill kernel for 16-bit outputs' shared memory: its tiles (the
  /// float32 plan's, which its 16-bit tiles fit inside) and, when the scan
  /// stages, its two buffers in their 16-bit layout, not the float32
  /// kernel's (half or less the bytes), right after the last tile it uses
  /// (tensorCoreStageAt): two blocks an SM where the float32 plan allows
  /// one.
  int64_t prefillTensorCoreBytes() const {
    if (!split || !s.stageFloats || !s.stageHalfBytes)
      return s.sharedBytes;
    int64_t at = tensorCoreStageAt ? tensorCoreStageAt : stageAtFloats();
    return at * 4 + 2 * s.stageHalfBytes;
  }

  /// Where the scan of the kernel for 16-bit outputs starts its staging
  /// buffers, in floats: after the state (its bf16 shadow where the state
  /// is in registers) and the tiles the scan declares (`declared`: their
  /// offsets in the float32 plan, each taken at its float32 size with its
  /// rows padded, which its 16-bit form fits inside). The float32 plan
  /// also has room for the tiles the products fuse away (the state
  /// update's product, which goes to registers or straight into S); the
  /// kernel for 16-bit outputs, whose buffers are half the size, gains a
  /// second block an SM from leaving that room out (GDN: 124 160 B →
  /// 96 512 B). 128-byte aligned; never after STAGE_AT.
  int64_t stageAtAfter(ArrayRef<Value> declared) const {
    int64_t stateFloats = s.dk * s.stateStride;
    int64_t end = registerState ? stateFloats / 2 : stateFloats;
    for (Value v : declared) {
      int64_t stride = std::max(paddedStride(v), ncols(v) + 8);
      end = std::max(end, offsetsOf("scan").lookup(v) + nrows(v) * stride);
    }
    end = (end + 31) / 32 * 32;
    return std::min(end, stageAtFloats());
  }

  /// Whether the scan stages `op`'s value swizzled in the kernels for
  /// 16-bit outputs (KeyStage, KLD): a key-side tile that products alone
  /// read as their left operand (rec.stage_stride, 8 more than its columns)
  /// kept in 16 bits (rec.half), its rows a power-of-two count of 16-byte
  /// pieces (rkc::tile::swizzledCol). Others keep the padded rows.
  static bool stagedSwizzled(Operation *op) {
    auto stride =
        op ? op->getAttrOfType<IntegerAttr>("rec.stage_stride") : nullptr;
    if (!stride || !op->hasAttr("rec.half"))
      return false;
    int64_t cols = stride.getInt() - 8;
    return cols >= 8 && cols % 8 == 0 && llvm::isPowerOf2_64(cols / 8);
  }
  /// A staged value's element type in the scan: KeyStage where swizzled.
  static std::string stagedType(Operation *op) {
    return stagedSwizzled(op) ? "KeyStage<TensorCores>" : crossingType(op);
  }
  /// A staged padded tile's row stride, as the code spells it: KLD where
  /// swizzled (dense in the kernels for 16-bit outputs).
  static std::string stagedLd(Operation *op) {
    int64_t stride =
        op->getAttrOfType<IntegerAttr>("rec.stage_stride").getInt();
    return stagedSwizzled(op)
               ? "KLD<TensorCores, " + std::to_string(stride - 8) + ">"
               : std::to_string(stride);
  }

  /// Whether rec-schedule staged `op`'s value rows VLD<TensorCores>
  /// elements apart (rec.stage_half_stride).
  static bool stagedPadded(Operation *op) {
    return op && op->hasAttr("rec.stage_half_stride");
  }

  /// Whether a value-side tile of the scan keeps its rows VLD<TensorCores>
  /// elements apart (BV + 8 in the kernels for 16-bit outputs, where it is
  /// 16-bit): one staged so (rec.stage_half_stride), or one the products
  /// store in 16 bits for products alone to read (an Operand tile, within
  /// the float tile's space). The eight rows an ldmatrix reads then fall in
  /// distinct banks.
  bool paddedValueRows(Value v) const {
    if (emitting != "scan" ||
        cast<TileType>(v.getType()).getCols() != Axis::value)
      return false;
    if (productOperands.contains(v))
      return s.bf16Products && s.valueTile % 8 == 0;
    return s.stageFloats && stagedPadded(v.getDefiningOp());
  }

  /// A tile's row stride as the scan's products take it ("0": dense): the
  /// state slice's (SLD), a staged key-side tile's, or padded value rows'.
  std::string rowStride(Value v) const {
    if (isa<BlockArgument>(v))
      return "SLD";
    if (stagedStride(v))
      return stagedLd(v.getDefiningOp());
    if (int64_t stride = paddedStride(v))
      return std::to_string(stride);
    return paddedValueRows(v) ? "VLD<TensorCores>" : "0";
  }

  std::string stageFunction(Block &body) const {
    if (!split || !s.stageFloats)
      return "";
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "constexpr int STAGE_FLOATS = " << s.stageFloats
       << ", STAGE_AT = " << stageAtFloats()
       << (s.stageBuffers == 2 ? "; // the scan's two staging buffers\n"
                               : "; // the scan's staging buffers\n");
    if (s.stageBuffers != 2)
      os << "// (One in the float32 kernel, whose two do not fit; the kernel "
            "for 16-bit\n// outputs has room for two of its own.)\n"
         << "template <bool TensorCores> constexpr bool kTwoStages = "
            "TensorCores;\n";
    os
       << "constexpr int STAGE_HALF_BYTES = " << s.stageHalfBytes
       << "; // a buffer's bytes in the kernels for 16-bit outputs\n\n"
       << "template <bool TensorCores>\n"
       << "__device__ __forceinline__ void stageChunk(unsigned char *stage, "
          "unsigned char *ws, int64_t v0,\n"
       << "                                           const Params &p, "
          "int64_t row, int64_t t0,\n"
       << "                                           int64_t eos, int64_t hv) "
          "{\n"
       << "  (void)v0, (void)p, (void)row, (void)t0, (void)eos, (void)hv;\n";
    for (Operation &op : body) {
      if (!op.hasAttr("rec.to_scan") || !op.hasAttr("rec.stage_offset"))
        continue;
      Value v = op.getResult(0);
      int64_t rows = nrows(v), cols = ncols(v);
      std::string T = stagedType(&op);
      bool valueCols = cast<TileType>(v.getType()).getCols() == Axis::value;
      auto stride = op.getAttrOfType<IntegerAttr>("rec.stage_stride");
      os << "  { // " << tile(v) << ": " << v.getType() << " (" << T << ")\n"
         << "    [[maybe_unused]] constexpr int P = 16 / sizeof(" << T
         << "); // elements a 16-byte piece\n"
         << "    " << T << " *const to = reinterpret_cast<" << T
         << " *>(stage + " << stageAt(&op) << ");\n";
      std::string indent = "    ";
      if (auto input = op.getAttrOfType<StringAttr>("rec.raw_input")) {
        emitRawRowsStage(op, input.getValue(), os);
        os << "    } else {\n";
        indent = "      ";
      }
      os << indent << "const " << crossingType(&op)
         << " *const from = reinterpret_cast<const " << crossingType(&op)
         << " *>(ws + " << workspaceAt(&op) << ");\n";
      // (stageRows: every extent a compile-time constant, the passes of
      // the block's threads unrolled.)
      if (valueCols)
        os << indent << "rkc::tile::stageRows<" << rows << ", BV, "
           << (stagedPadded(&op) ? "VLD<TensorCores>" : "BV")
           << ", DV>(to, from + v0);"
           << (stagedPadded(&op) ? " // rows VLD elements apart" : "") << "\n";
      else if (stride)
        os << indent << "rkc::tile::stageRows<" << rows << ", " << cols << ", "
           << stagedLd(&op) << ", " << cols << ">(to, from); // "
           << (stagedSwizzled(&op) ? "swizzled rows (KeyStage) or rows "
                                   : "rows ")
           << stride.getInt() << " elements apart\n";
      else
        os << indent << "rkc::tile::stageRows<("
           << (lastRowOnly(&op) ? cols : rows * cols)
           << " + P - 1) / P, P, P, P>(to, from); // one run\n";
      if (op.hasAttr("rec.raw_input"))
        os << "    }\n";
      os << "  }\n";
    }
    os << "}\n\n";
    return text;
  }

  /// The staging of a tile of raw input rows (rec.raw_input) straight from
  /// the input, where the launcher found its layout fit (p.rows_from_inputs,
  /// kernels for 16-bit outputs): 16-byte pieces of each row by cp.async,
  /// zeros for rows past the sequence (as the prep kernel would have
  /// stored). Opens the branch the workspace copy's `else` closes.
  void emitRawRowsStage(Operation &op, StringRef input,
                        llvm::raw_ostream &os) const {
    Value v = op.getResult(0);
    auto type = cast<TileType>(v.getType());
    bool valueCols = type.getCols() == Axis::value;
    int64_t rows = nrows(v);
    std::string width = valueCols ? "BV" : std::to_string(ncols(v));
    auto stride = op.getAttrOfType<IntegerAttr>("rec.stage_stride");
    std::string ld = stride              ? stagedLd(&op)
                     : stagedPadded(&op) ? "VLD<TensorCores>"
                                         : width;
    // The tile's sub-step slots (all of a token's when it keeps every one)
    // and, for each, the row of the input within its token.
    SmallVector<int64_t> slots(type.getRowSlots());
    if (slots.empty())
      for (int64_t k = 0; k < m; ++k)
        slots.push_back(k);
    const SpecPlan::Input *in = nullptr;
    for (const SpecPlan::Input &i : plan.inputs)
      if (i.name == input)
        in = &i;
    bool substepRows = in && in->rate == Rate::substep;
    std::string perToken = substepRows ? "RKC_SUBSTEP_ROWS" : "1";
    // (A token's input has one row, whichever slot reads it.)
    auto rowOf = [&](int64_t slot) {
      return substepRows ? plan.substeps[slot].index : 0;
    };
    std::string x = "p.a." + input.str();
    os << "    if (TensorCores && p.rows_from_inputs) { // input \"" << input
       << "\" as it is\n"
       << "      const __nv_bfloat16 *const x = static_cast<const "
          "__nv_bfloat16 *>("
       << x << ".data);\n"
       << "      constexpr int N = " << rows << " * " << width
       << ", STEP = THREADS * P;\n"
       << "#pragma unroll\n"
       << "      for (int k = 0; k < (N + STEP - 1) / STEP; ++k) {\n"
       << "        const int e = threadIdx.x * P + k * STEP;\n"
       << "        if (N % STEP && e >= N)\n"
       << "          break;\n"
       << "        const int i = e / " << width << ", c = e % " << width
       << ";\n"
       << "        const int64_t t = t0 + i / " << slots.size() << ";\n"
       << "        " << stagedType(&op) << " *const dst = "
       << (stagedSwizzled(&op) ? "rkc::tile::at(to, " + ld + ", i, c)"
                               : "to + i * " + ld + " + c")
       << ";\n";
    if (slots.size() == 1) {
      os << "        const int j = " << rowOf(slots[0])
         << "; // the slot's row of the token\n";
    } else {
      os << "        int j = 0; // the slot's row of the token\n"
         << "        switch (i % " << slots.size() << ") {\n";
      for (auto [k, slot] : llvm::enumerate(slots))
        os << "        case " << k << ": j = " << rowOf(slot)
           << "; break;\n";
      os << "        }\n";
    }
    os << "        if (t < eos)\n"
       << "          rkc::tile::copyAsync16(dst, x + inputRow(" << x
       << ", 2, row, t, " << perToken << ", j, hv, p.value_heads)"
       << (valueCols ? " + v0" : "") << " + c);\n"
       << "        else\n"
       << "          *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, "
          "0);\n"
       << "      }\n";
  }

  /// Prefetches into L2 the input rows of the chunk starting at token
  /// `first` (an expression), in a block after `guard` ("if (...) " or "").
  std::string prefetchChunk(StringRef first, StringRef guard) const {
    std::string text;
    llvm::raw_string_ostream os(text);
    StringRef indent = "    ";
    os << indent << guard << "{\n"
       << indent << "  const int64_t next = " << first
       << ", tokens = eos - next < C ? eos - next : C;\n";
    for (const SpecPlan::Input &in : plan.inputs) {
      if (in.rate == Rate::head)
        continue;
      std::string width = in.side == Side::Key     ? "DK"
                          : in.side == Side::Value ? "DV"
                                                   : "1";
      os << indent << "  prefetchRows(p.a." << in.name
         << ", row, next, tokens, "
         << (in.rate == Rate::substep ? "RKC_SUBSTEP_ROWS" : "1")
         << ", hv, p.value_heads, " << width << ");\n";
    }
    os << indent << "}\n";
    return text;
  }

  /// Whether the scan being written skips `op`: a prep op of a scan that
  /// stages, whose value is in the staging buffer.
  bool stagedPrepOp(Operation *op,
                    llvm::function_ref<StringRef(Operation &)> phase) const {
    return op && emitting == "scan" && s.stageFloats && phase(*op) == "prep";
  }

  /// Whether the scan being written reads `v` from its staging buffer:
  /// there from the chunk's start, in a place no scan tile shares.
  bool stagedPrepValue(Value v,
                       llvm::function_ref<StringRef(Operation &)> phase) const {
    return stagedPrepOp(v.getDefiningOp(), phase);
  }

  /// Whether `a` and `b` share floats in this kernel's plan (`at`). A value
  /// without a place there (the state S, a staged prep value, a value of
  /// the other kernel) shares none with a tile.
  bool overlap(Value a, Value b, const llvm::DenseMap<Value, int64_t> &at,
               llvm::function_ref<StringRef(Operation &)> phase) const {
    auto span = [&](Value v) -> std::optional<std::pair<int64_t, int64_t>> {
      if (isa<BlockArgument>(v) || !at.count(v) || stagedPrepValue(v, phase))
        return std::nullopt;
      int64_t begin = at.lookup(v);
      int64_t stride = paddedStride(v);
      return std::make_pair(
          begin,
          begin + (stride ? nrows(v) * stride
                          : extents().elements(cast<TileType>(v.getType()))));
    };
    auto x = span(a), y = span(b);
    return x && y && x->first < y->second && y->first < x->second;
  }

  /// Whether an op between `from` and `to` (both excluded) has its result
  /// placed over `v`'s tile in this kernel's plan (`at`): a read of v moved
  /// from `from` to `to` would then find another tile there. (The planner
  /// frees a tile after its last reader as the IR stands; a fold that reads
  /// it later must check.)
  bool overwrittenBetween(Value v, Operation *from, Operation *to,
                          const llvm::DenseMap<Value, int64_t> &at,
                          llvm::function_ref<StringRef(Operation &)> phase) const {
    for (Operation *op = from->getNextNode(); op && op != to;
         op = op->getNextNode())
      for (Value r : op->getResults())
        if (overlap(v, r, at, phase))
          return true;
    return false;
  }

  /// The addend of `sum` other than `v`.
  static Value otherAddend(ChunkAddOp sum, Value v) {
    return sum.getLhs() == v ? sum.getRhs() : sum.getLhs();
  }

  /// Which sums `add(x, matmul(a, b))` the product computes itself, adding
  /// x as it stores (no pass over the sum and no barrier of its own): the
  /// product's only reader is the sum, printed in the same kernel and loop;
  /// x was computed before the product; and the sum lives where the product
  /// or x does (the planner's in-place sums), so that it overlaps neither a
  /// nor b. A folded sum that only the chunk's yield reads is stored into S
  /// itself when nothing after the product reads S (the yield's copy goes).
  void planFusedSums(Block &body, const llvm::DenseMap<Value, int64_t> &at,
                     llvm::function_ref<StringRef(Operation &)> phase) {
    sumOfProduct.clear();
    folded.clear();
    scaledIntoProduct.clear();
    addedByOutput.clear();
    sumIntoState = nullptr;
    for (Operation &op : body) {
      auto mm = dyn_cast<ChunkMatmulOp>(op);
      if (!mm || !mm->hasOneUse())
        continue;
      auto sum = dyn_cast<ChunkAddOp>(*mm->user_begin());
      if (!sum || phase(*sum) != phase(op) ||
          sum->hasAttr("rec.per_value_tile") !=
              op.hasAttr("rec.per_value_tile") ||
          sum->hasAttr("rec.to_scan") || op.hasAttr("rec.to_scan"))
        continue;
      Value x = otherAddend(sum, mm.getResult());
      if (x == mm.getResult())
        continue;
      // A staged prep value is there from the chunk's start, and so is the
      // state S (the addend read with rows SLD apart).
      bool staged = stagedPrepValue(x, phase), ofState = isa<BlockArgument>(x);
      if (!staged && !ofState && !x.getDefiningOp()->isBeforeInBlock(&op))
        continue;
      auto where = [&](Value v) { return at.lookup(v); };
      if (!at.count(sum.getResult()) ||
          (where(sum.getResult()) != where(mm.getResult()) &&
           (staged || !at.count(x) || where(sum.getResult()) != where(x))))
        continue;
      sumOfProduct[&op] = sum;
      folded.insert(sum);
      // Straight into S: the sum's only reader is the yield, and every
      // reader of S comes before the product.
      Value state = body.getArgument(0);
      if (sum->hasOneUse() && isa<ChunkYieldOp>(*sum->user_begin()) &&
          llvm::all_of(state.getUsers(), [&](Operation *user) {
            // (The sum itself may add S, element by element in place.)
            return user == sum.getOperation() || user->isBeforeInBlock(&op);
          })) {
        sumIntoState = sum;
        folded.insert(*sum->user_begin());
      }
    }
    // A sum that only the output reads, right before it, is added as the
    // output stores (no pass, tile or barrier of its own; its addends are
    // read where the sum stood, before anything reuses their space).
    sumOfOutput.clear();
    for (Operation &op : body) {
      auto out = dyn_cast<ChunkOutputOp>(op);
      auto sum = out ? out.getOutput().getDefiningOp<ChunkAddOp>() : nullptr;
      if (!sum || sum->getNextNode() != &op || !sum->hasOneUse() ||
          folded.contains(sum) ||
          phase(*sum) != phase(op) || sum->hasAttr("rec.to_scan") ||
          sum->hasAttr("rec.per_value_tile") !=
              op.hasAttr("rec.per_value_tile"))
        continue;
      sumOfOutput[&op] = sum;
      addedByOutput.insert(sum);
    }
    // A folded sum's addend that is the state decayed over the chunk
    // (decay_state of S, read only there) is scaled by the product as it
    // stores, from S itself: no pass, no tile and no barrier of its own.
    // S must still hold the entering state then: the sum stored into S (if
    // any) is this one or comes later.
    decayedAddend.clear();
    Operation *intoState = nullptr;
    for (auto [product, sum] : sumOfProduct)
      if (sum == sumIntoState)
        intoState = product;
    for (auto [product, sum] : sumOfProduct) {
      Value x = otherAddend(sum, product->getResult(0));
      auto decay = x.getDefiningOp<ChunkDecayStateOp>();
      if (!decay || !decay->hasOneUse() ||
          !isa<BlockArgument>(decay.getState()) ||
          phase(*decay) != phase(*product) ||
          (intoState && intoState != product &&
           intoState->isBeforeInBlock(product)) ||
          overwrittenBetween(decay.getDecay(), decay, product, at, phase))
        continue;
      decayedAddend[product] = decay;
      scaledIntoProduct.insert(decay);
    }
    // Two products in a row whose folded sums chain (the second adds the
    // first's sum, its only reader) are one pass: out = A1 B1 + A2 B2 + x
    // (matmulPair), the first's sum never stored.
    firstOfPair.clear();
    pairedFirst.clear();
    for (auto [product, sum] : sumOfProduct) {
      auto second = cast<ChunkMatmulOp>(product);
      Value x = otherAddend(sum, second.getResult());
      // Ops a staged scan does not print (stagedPrepOp) may stand between
      // them.
      auto next = [&](Operation *op) {
        do
          op = op->getNextNode();
        while (stagedPrepOp(op, phase));
        return op;
      };
      auto prev = [&](Operation *op) {
        do
          op = op->getPrevNode();
        while (stagedPrepOp(op, phase));
        return op;
      };
      auto firstSum = x.getDefiningOp<ChunkAddOp>();
      if (!firstSum || !firstSum->hasOneUse() || next(firstSum) != product)
        continue;
      auto first = dyn_cast_or_null<ChunkMatmulOp>(prev(firstSum));
      if (!first || sumOfProduct.lookup(first) != firstSum ||
          first.getTransposeLhs() != second.getTransposeLhs() ||
          first.getType() != second.getType() ||
          (sumIntoState && sumOfProduct.lookup(first) == sumIntoState))
        continue;
      firstOfPair[product] = first;
      pairedFirst.insert(first);
      pairedFirst.insert(firstSum);
    }
    planSharedRight(body, at, phase);
    // The output of a product (or of a sum its product computes), read by
    // the output alone, is stored to o by the product as it computes it
    // (OutputRows): no tile, no pass and no barrier of its own.
    outputRows.clear();
    outputByProduct.clear();
    for (Operation &op : body) {
      auto out = dyn_cast<ChunkOutputOp>(op);
      if (!out || !out.getOutput().hasOneUse())
        continue;
      Value x = out.getOutput();
      Operation *def = x.getDefiningOp();
      bool byProduct =
          def && ((isa<ChunkAddOp>(def) && folded.contains(def) &&
                   def != sumIntoState) ||
                  (isa<ChunkMatmulOp>(def) && !sumOfProduct.count(def) &&
                   !pairedFirst.contains(def)));
      // (Not an output of another kernel's: its value has no place in this
      // kernel's plan.)
      if (!byProduct || phase(*def) != phase(op) || !at.count(x) ||
          def->hasAttr("rec.to_scan") ||
          def->hasAttr("rec.per_value_tile") !=
              op.hasAttr("rec.per_value_tile"))
        continue;
      outputRows.insert(x);
      outputByProduct.insert(&op);
      auto t = cast<TileType>(x.getType());
      outputRowsPerToken = t.getRowSlots().empty() ? m : t.getRowSlots().size();
    }
  }

  /// How a comment names a product's destination (`out`, as productOut
  /// gives it).
  static std::string said(StringRef out) {
    return out.starts_with("OutputRows") ? "o's rows" : out.str();
  }

  /// Where a product stores `v`: o itself through OutputRows when the
  /// output alone reads it (planFusedSums), else v's tile.
  std::string productOut(Value v) {
    return outputRows.contains(v) ? "OutputRows{p, t0, eos, oBase, oPairs}"
                                  : tile(v);
  }

  /// Two products of one right operand in a row (a delta factor's W S and
  /// Q S, both of the entering state) run as one pass (matmulSharedRight):
  /// one barrier, not two, and twice the row blocks for the warps to share.
  /// No barrier parts them, so neither output may share floats with an
  /// operand of either, nor with the other output.
  void planSharedRight(Block &body, const llvm::DenseMap<Value, int64_t> &at,
                       llvm::function_ref<StringRef(Operation &)> phase) {
    sharedRightOf.clear();
    sharedRightSecond.clear();
    if (emitting == "prep")
      return;
    auto alone = [&](ChunkMatmulOp mm) {
      ChunkAddOp sum = sumOfProduct.lookup(mm);
      int64_t inner = ncols(mm.getLhs());
      return !mm.getTransposeLhs() && phase(*mm) != "prep" &&
             !firstOfPair.count(mm) && !pairedFirst.contains(mm) &&
             !decayedAddend.count(mm) && !sharedRightSecond.contains(mm) &&
             !mm->hasAttr("rec.per_value_tile") && inner % 16 == 0 &&
             (!sum || sum != sumIntoState) &&
             // (matmulSharedRight's addends are dense)
             (!sum || !paddedStride(otherAddend(sum, mm.getResult())));
    };
    auto output = [&](ChunkMatmulOp mm) {
      ChunkAddOp sum = sumOfProduct.lookup(mm);
      return sum ? sum.getResult() : mm.getResult();
    };
    auto operands = [&](ChunkMatmulOp mm) {
      SmallVector<Value, 3> read = {mm.getLhs(), mm.getRhs()};
      if (ChunkAddOp sum = sumOfProduct.lookup(mm))
        read.push_back(otherAddend(sum, mm.getResult()));
      return read;
    };
    auto apart = [&](Value a, Value b) { return !overlap(a, b, at, phase); };
    for (Operation &op : body) {
      auto first = dyn_cast<ChunkMatmulOp>(op);
      if (!first || !alone(first))
        continue;
      ChunkAddOp firstSum = sumOfProduct.lookup(first);
      Operation *next = first->getNextNode();
      while (next && (stagedPrepOp(next, phase) || next == firstSum))
        next = next->getNextNode();
      auto second = dyn_cast_or_null<ChunkMatmulOp>(next);
      if (!second || !alone(second) || second.getRhs() != first.getRhs() ||
          ncols(second) != ncols(first) ||
          ncols(second.getLhs()) != ncols(first.getLhs()) ||
          llvm::is_contained(operands(second), first.getResult()) ||
          llvm::is_contained(operands(second), output(first)))
        continue;
      Value out1 = output(first), out2 = output(second);
      bool disjoint = apart(out1, out2);
      for (Value in : llvm::concat<Value>(operands(first), operands(second)))
        disjoint &= apart(out1, in) && apart(out2, in);
      if (!disjoint)
        continue;
      sharedRightOf[first] = second;
      sharedRightSecond.insert(second);
    }
  }

  /// `first` and `second` as matmulSharedRight (planSharedRight).
  void emitSharedRight(ChunkMatmulOp first, ChunkMatmulOp second,
                       llvm::raw_ostream &os) {
    auto part = [&](ChunkMatmulOp mm) {
      ChunkAddOp sum = sumOfProduct.lookup(mm);
      Value out = sum ? sum.getResult() : mm.getResult();
      return tile(mm.getLhs()) + ", " + rowStride(mm.getLhs()) + ", " +
             std::to_string(nrows(mm)) + ", " + productOut(out) + ", " +
             rowStride(out) + ", " +
             (sum ? tile(otherAddend(sum, mm.getResult()))
                  : "static_cast<const float *>(nullptr)");
    };
    auto sums = [&](ChunkMatmulOp mm) {
      ChunkAddOp sum = sumOfProduct.lookup(mm);
      std::string out =
          said(productOut(sum ? sum.getResult() : mm.getResult()));
      return sum ? out + " = A B + " + tile(otherAddend(sum, mm.getResult()))
                 : out + " = A B";
    };
    os << "    // with the product below, of the same right operand B: "
       << sums(first) << ", " << sums(second) << "\n"
       << "    rkc::tile::matmulSharedRight<TensorCores, "
       << ncols(first.getLhs()) << ">(" << part(first) << ", " << part(second)
       << ", " << tile(first.getRhs()) << ", " << rowStride(first.getRhs())
       << ", " << ncols(first) << ");\n";
  }

  /// The prep kernel's row tiles stored swizzled (`rkc::tile::swizzle`):
  /// those the Grams read in quads, whose dense rows (a multiple of 32
  /// floats apart) put two rows of a load's phase in the same banks. Only
  /// where every reader takes them so: a Gram (as either side, not as a
  /// decay), decay_rows and scale_rows (as the tile they scale), each run
  /// as its own op in the prep kernel; nothing the scan reads. Not for a
  /// Gram with a decay per channel: it reads its decay tile (dense) at the
  /// rows' offsets, which a swizzle of the rows alone splits into two
  /// address streams; measured on the H200 at (1, 8192, 32): GDN 1.030x,
  /// Comba 1.029x, DeltaProduct 1.009x, but KDA, GDN-2, QED and EDA
  /// 0.975-0.980x with it (NOTES.md, v23).
  void planSwizzledRows(Block &body,
                        llvm::function_ref<StringRef(Operation &)> phase) {
    swizzledRows.clear();
    swizzledB.clear();
    if (emitting != "prep")
      return;
    for (Operation &op : body) {
      auto rowsOp = dyn_cast<ChunkRowsOp>(op);
      if (!rowsOp || phase(op) != "prep" || op.hasAttr("rec.to_scan") ||
          op.hasAttr("rec.per_value_tile") ||
          cast<TileType>(rowsOp.getType()).getCols() != Axis::key ||
          ncols(rowsOp) % 32 || nrows(rowsOp) % 4)
        continue;
      Value v = rowsOp.getResult();
      bool readersTakeIt =
          !v.use_empty() && llvm::all_of(v.getUses(), [&](OpOperand &use) {
            Operation *user = use.getOwner();
            if (phase(*user) != "prep" || !computedElsewhere(user).empty())
              return false;
            if (auto g = dyn_cast<ChunkGramOp>(user))
              return use.get() != g.getLhsDecay() &&
                     use.get() != g.getRhsDecay() &&
                     (!g.getLhsDecay() || ncols(g.getLhsDecay()) == 1);
            if (auto d = dyn_cast<ChunkDecayRowsOp>(user))
              return use.get() == d.getX() && use.get() != d.getDecay();
            if (auto sr = dyn_cast<ChunkScaleRowsOp>(user))
              return use.get() == sr.getMatrix() && use.get() != sr.getScale();
            return false;
          });
      // (Only the Grams gain: rows that none reads stay dense.)
      if (readersTakeIt && llvm::any_of(v.getUsers(), [](Operation *user) {
            return isa<ChunkGramOp>(user);
          }))
        swizzledRows.insert(v);
    }
    // Right operands: input rows, a decay_rows' or a plain product's result
    // that only products of the prep read, as B, in their quads form (a
    // float A whose rows are a multiple of 32 floats, not transposed, the
    // inner extent a multiple of 16). Rows may also cross to the scan: the
    // prep's copy into the workspace reads them as stored.
    auto plainProduct = [&](ChunkMatmulOp mm) {
      return !sumOfProduct.count(mm) && !firstOfPair.count(mm) &&
             !pairedFirst.contains(mm) && !sharedRightOf.count(mm) &&
             !outputRows.contains(mm.getResult()) &&
             !mm->hasAttr("rec.to_workspace");
    };
    for (Operation &op : body) {
      bool rows = isa<ChunkRowsOp>(op);
      if (phase(op) != "prep" || op.getNumResults() != 1 ||
          (op.hasAttr("rec.to_scan") && !rows) ||
          !computedElsewhere(&op).empty())
        continue;
      Value v = op.getResult(0);
      auto mm = dyn_cast<ChunkMatmulOp>(op);
      if (!(rows || isa<ChunkDecayRowsOp>(op) || (mm && plainProduct(mm))) ||
          ncols(v) % 32 || nrows(v) % 16)
        continue;
      bool toScan = op.hasAttr("rec.to_scan");
      bool onlyRight =
          !v.use_empty() && llvm::all_of(v.getUses(), [&](OpOperand &use) {
            // (The scan reads its own staged copy.)
            if (toScan && phase(*use.getOwner()) == "scan")
              return true;
            auto reader = dyn_cast<ChunkMatmulOp>(use.getOwner());
            if (!reader || phase(*reader) != "prep" ||
                !computedElsewhere(reader).empty() ||
                firstOfPair.count(reader) || pairedFirst.contains(reader) ||
                sumOfProduct.count(reader) || reader.getTransposeLhs() ||
                use.get() != reader.getRhs() || reader.getLhs() == v)
              return false;
            int64_t inner = ncols(reader.getLhs());
            return inner % 32 == 0 && !stagedStride(reader.getLhs());
          });
      if (onlyRight)
        swizzledB.insert(v);
    }
  }

  /// The scan's tiles that only bf16 products read (every reader a product
  /// of the scan whose inner extent is a multiple of 16, which rounds its
  /// operands to bf16 anyway): their writer stores them in 16 bits
  /// (`rkc::tile::Operand`), so that the readers load them by ldmatrix at
  /// half the bytes, with the same result. Not a sum stored where its float
  /// addend lives: the 16-bit stores would overwrite addends other threads
  /// have yet to read.
  void planProductOperands(Block &body, const llvm::DenseMap<Value, int64_t> &at,
                           llvm::function_ref<StringRef(Operation &)> phase) {
    productOperands.clear();
    if (emitting != "scan")
      return;
    auto onlyProducts = [&](Value v) {
      return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *u) {
        auto mm = dyn_cast<ChunkMatmulOp>(u);
        if (!mm || phase(*u) != "scan")
          return false;
        int64_t inner = mm.getTransposeLhs() ? nrows(mm.getLhs())
                                             : ncols(mm.getLhs());
        return inner % 16 == 0;
      });
    };
    for (Operation &op : body) {
      auto mm = dyn_cast<ChunkMatmulOp>(op);
      if (!mm || phase(op) != "scan")
        continue;
      ChunkAddOp sum = sumOfProduct.lookup(&op);
      if (!sum) {
        if (onlyProducts(mm.getResult()))
          productOperands.insert(mm.getResult());
        continue;
      }
      if (sum == sumIntoState || !onlyProducts(sum.getResult()))
        continue;
      Value x = otherAddend(sum, mm.getResult());
      if (stagedPrepValue(x, phase) || at.lookup(x) != at.lookup(sum.getResult()))
        productOperands.insert(sum.getResult());
    }
  }

  /// The flag that a per-channel Gram's decay tiles fall along the rows
  /// (both sums of gates this kernel summed, their cumsums' results), or ""
  /// where that is not known here or the decay is a scalar one (whose
  /// weights are exact exponentials, no factoring to bound).
  std::string fallingDecay(ChunkGramOp g) {
    if (!g.getLhsDecay() || ncols(g.getLhsDecay()) == 1)
      return "";
    auto flag = [&](Value decay) -> std::string {
      auto sum = decay.getDefiningOp<ChunkCumsumOp>();
      return sum ? fallingSums.lookup(sum.getGate()) : "";
    };
    std::string l = flag(g.getLhsDecay()), r = flag(g.getRhsDecay());
    if (l.empty() || r.empty())
      return "";
    return l == r ? l : l + " && " + r;
  }

  /// The ops of one kernel: "all" (the chunks in order), "scan" (the chunks
  /// in order, prep values read from the workspace where the prep op
  /// stood, so that their live ranges stay those rec-schedule planned) or
  /// "prep" (one chunk, the values the scan reads written to it).
  std::string bodyText(Block &body, StringRef which) {
    emitting = which.str();
    fallingSums.clear();
    std::string text;
    llvm::raw_string_ostream ks(text);
    auto phase = [](Operation &op) {
      auto attr = op.getAttrOfType<StringAttr>("rec.phase");
      return attr ? attr.getValue() : StringRef("");
    };
    planFusedSums(body, offsetsOf(which), phase);
    planProductOperands(body, offsets, phase);
    planNegations(body, offsetsOf(which), phase);
    registerState =
        (which == "scan" || which == "all") && planRegisterState(body);
    if (which == "scan" || which == "all")
      stateInRegisters = registerState;
    planBarriers(body, phase);
    planRowPairs(body, phase);
    planGramPairs(body, phase);
    planPrepBarriers(body, phase);
    planSwizzledRows(body, phase);
    SmallVector<Value> declared; // the tiles named below
    // The tiles this kernel computes or receives (not a product's whose sum
    // it computes, nor a sum stored straight into S, nor a decay_state its
    // product scales from S, nor a sum the output adds: nothing names
    // those).
    for (Operation &op : body) {
      bool here =
          (which == "all" && phase(op) != "out") || phase(op) == "both" ||
          phase(op) == which ||
          (which == "out" &&
           (op.hasAttr("rec.scan_to_out") || op.hasAttr("rec.to_out"))) ||
          (which == "scan" && op.hasAttr("rec.to_scan") && !s.stageFloats);
      if (sumOfProduct.count(&op) || &op == sumIntoState ||
          scaledIntoProduct.contains(&op) || addedByOutput.contains(&op) ||
          pairedFirst.contains(&op) || negFoldedIntoScaling.contains(&op) ||
          llvm::any_of(op.getResults(),
                       [&](Value r) { return outputRows.contains(r); }))
        continue;
      for (Value r : op.getResults()) {
        if (!here || (which == "prep" && op.hasAttr("rec.to_workspace")))
          continue;
        declared.push_back(r);
        int64_t offset = offsetsOf(which).lookup(r);
        if (productOperands.count(r))
          ks << "  rkc::tile::Operand<TensorCores> *const " << tile(r) << " = "
             << pointerCast("rkc::tile::Operand<TensorCores> *",
                            "smem + " + std::to_string(offset), offset % 4 == 0)
             << "; // " << r.getType() << ", only bf16 products read it"
             << (paddedValueRows(r) ? ", rows VLD apart" : "") << "\n";
        else
          ks << "  float *const " << tile(r) << " = smem + " << offset
             << "; // " << r.getType() << "\n";
      }
    }
    if (which == "prep") {
      // The key-side ops once, then the value-side ones for each value
      // tile (rec-schedule planned shared memory in that order).
      ks << "  {\n    unsigned char *const ws = chunkWorkspace<TensorCores>(p, "
            "seq, t0, hv);\n";
      // The chunk's own input rows into L2 at once: the row ops then wait
      // on L2 one after another, not on HBM.
      if (s.prefetch)
        ks << prefetchChunk("t0", "");
      ks << "    int64_t v0 = 0;\n";
      for (bool perValueTile : {false, true}) {
        if (perValueTile)
          ks << "  for (v0 = 0; v0 < DV; v0 += PBV) {\n";
        for (Operation &op : body) {
          if ((phase(op) != "prep" && phase(op) != "both") ||
              op.hasAttr("rec.per_value_tile") != perValueTile)
            continue;
          emitChunkOp(&op, ks);
          if (op.hasAttr("rec.to_scan") && !op.hasAttr("rec.to_workspace") &&
              !keptAsComputed(&op))
            emitWorkspaceCopy(&op, /*store=*/true, ks);
        }
        if (perValueTile)
          ks << "  }\n";
      }
      ks << "  }\n";
      return text;
    }
    if (which == "out") {
      // One chunk: its entering state from where the scan stored it, then
      // the ops the output needs, from their own row loads. With a value
      // loop, the key side once and then, for each value tile, its slice
      // of the state and the value side.
      const std::string loadState =
          "    copyTile<BV>(entering + v0, DV, S, SLD, DK);\n"
          "    __syncthreads();\n";
      ks << "  {\n"
         << "    const Crossing<TensorCores> *const entering = "
            "outWorkspace<TensorCores>(p, seq, t0, hv);\n";
      if (!s.outValueLoop)
        ks << loadState;
      // A received value is read right before its first reader, where the
      // plan (rec.out_smem_offset, outKernelOrder) has it live from.
      if (split)
        ks << "    unsigned char *const ws = chunkWorkspace<TensorCores>(p, "
              "seq, t0, hv);\n";
      // With --prefetch, the chunk's input rows into L2 at once (as the
      // prep's): its row loads then wait on L2 one after another, not on
      // HBM.
      if (s.prefetch)
        ks << prefetchChunk("t0", "");
      size_t loopBegin = SIZE_MAX;
      SmallVector<Operation *> order = s.outValueLoop
                                           ? outKernelLoopOrder(body, loopBegin)
                                           : outKernelOrder(body);
      for (auto [i, received] : llvm::enumerate(order)) {
        Operation &op = *received;
        if (i == loopBegin)
          // (The barrier: the last tile's readers are done with S and the
          // value side's tiles.)
          ks << "  for (int64_t v0 = 0; v0 < DV; v0 += BV) {\n"
             << "    __syncthreads();\n"
             << loadState << (outputRows.empty() ? "" : outputBase());
        if (op.hasAttr("rec.to_out")) {
          emitWorkspaceCopy(&op, /*store=*/false, ks);
        } else if (op.hasAttr("rec.scan_to_out")) {
          Value v = op.getResult(0);
          ks << "    // from the scan: " << tile(v) << "\n"
             << "    for (int e = threadIdx.x; e < " << nrows(v)
             << " * BV; e += THREADS)\n"
             << "      " << tile(v) << "[e] = rkc::tile::toFloat(entering["
             << outWorkspaceAt(&op) << " + (e / BV) * DV + v0 + e % BV]);\n"
             << "    __syncthreads();\n";
        } else if (phase(op) == "out" || phase(op) == "both") {
          emitChunkOp(&op, ks);
        }
      }
      if (loopBegin < order.size())
        ks << "  }\n";
      ks << "  }\n";
      return text;
    }
    if (which == "scan" && s.stageFloats) {
      // Chunk n's workspace is in stage n % 2 when the chunk starts; the
      // next chunk's arrives in the other one while this chunk runs.
      std::string at = "STAGE_AT";
      if (split && s.stageHalfBytes) {
        tensorCoreStageAt = stageAtAfter(declared);
        if (tensorCoreStageAt != stageAtFloats()) {
          at = "(TensorCores ? " + std::to_string(tensorCoreStageAt) +
               " : STAGE_AT)";
          ks << "  // (The kernel for 16-bit outputs: its buffers right "
                "after the state and the tiles above.)\n";
        }
      }
      ks << "  unsigned char *const stages = reinterpret_cast<unsigned char "
            "*>(smem + "
         << at << ");\n"
         << "  constexpr int STAGE_BYTES = TensorCores ? STAGE_HALF_BYTES : "
            "STAGE_FLOATS * 4;\n"
         << "  // The next chunk's workspace: this one's plus a chunk slot of "
            "every value head\n"
         << "  // (chunkWorkspace's slot grows by one a chunk, for batch rows "
            "and packed sequences).\n"
         << "  unsigned char *wsNext = chunkWorkspace<TensorCores>(p, seq, "
            "tBegin, hv);\n"
         << "  const int64_t wsStep = chunkWorkspace<TensorCores>(p, seq, "
            "tBegin + C, hv) - wsNext;\n"
         << "  if (tBegin < tEnd)\n"
         << "    stageChunk<TensorCores>(stages, wsNext, v0, p, row, tBegin, "
            "eos, hv);\n"
         << "  rkc::tile::copyAsyncCommit();\n"
         // Two chunks a pass: each copy of the body knows its stage (n % 2
         // folds), so the products' shared-memory addresses are constant
         // offsets rather than recomputed a chunk.
         << "#pragma unroll 2\n"
         << "  for (int64_t t0 = tBegin, n = 0; t0 < tEnd; t0 += C, ++n) {\n"
         << (s.stageBuffers == 2
                 ? "    unsigned char *const stage = stages + (n % 2) * "
                   "STAGE_BYTES;\n"
                 : "    unsigned char *const stage = stages + "
                   "(kTwoStages<TensorCores> ? (n % 2) * STAGE_BYTES : 0);\n")
         << "    rkc::tile::copyAsyncWait<0>();\n"
         << "    __syncthreads();\n"
         << (s.stageBuffers == 2 ? "    if (t0 + C < tEnd)\n"
                                 : "    if (kTwoStages<TensorCores> && t0 + C "
                                   "< tEnd)\n")
         << "      stageChunk<TensorCores>(stages + ((n + 1) % 2) * "
            "STAGE_BYTES, "
            "wsNext += wsStep, v0,\n"
         << "                              p, row, t0 + C, eos, hv);\n"
         << "    rkc::tile::copyAsyncCommit();\n";
      for (Operation &op : body) {
        if (phase(op) != "prep" || !op.hasAttr("rec.to_scan"))
          continue;
        Value v = op.getResult(0);
        std::string T = stagedType(&op);
        // A last-row value is staged alone: its pointer sits so that the
        // row is where the ops read it (row rows - 1).
        int64_t first = lastRowOnly(&op) ? (nrows(v) - 1) * ncols(v) : 0;
        ks << "    const " << T << " *const " << tile(v) << " = "
           << pointerCast("const " + T + " *", "stage + " + stageAt(&op),
                          !first && stagedAligned(&op));
        if (first)
          ks << " - " << first;
        ks << "; // " << v.getType() << "\n";
      }
    } else {
      ks << "  for (int64_t t0 = tBegin; t0 < tEnd; t0 += C) {\n";
      if (which == "scan")
        ks << "    unsigned char *const ws = chunkWorkspace<TensorCores>(p, seq, "
              "t0, hv);\n";
    }
    // The next chunk's input rows are fetched into L2 while this chunk
    // runs: the row loads of rec.chunk.rows then wait on L2, not on HBM.
    // (A scan that loads no rows, keep-rows, has nothing to fetch.)
    bool loadsRows = llvm::any_of(body, [&](Operation &op) {
      return isa<ChunkRowsOp>(op) && (which == "all" || phase(op) != "prep");
    });
    if (s.prefetch && loadsRows)
      ks << prefetchChunk("t0 + C", "if (t0 + C < tEnd) ");
    if (outPhase) {
      // Read before any op of the chunk writes S. Every warp copies rows
      // of other warps, and the chunk's first op may be the update itself
      // (linear attention with its rows staged), which writes S (or, in the
      // kernel for bf16 products that keeps S in registers, the bf16
      // shadow copied here) with no barrier before: so one after the copy.
      ks << "    { // the chunk's entering state, which the out kernel "
            "starts from\n"
         << "      Crossing<TensorCores> *const to = "
            "outWorkspace<TensorCores>(p, seq, t0, hv) + v0;\n";
      if (registerState)
        ks << "      if constexpr (TensorCores)\n"
           << "        copyTile<BV>(S16, SLD, to, DV, DK);\n"
           << "      else\n"
           << "        copyTile<BV>(S, SLD, to, DV, DK);\n";
      else
        ks << "      copyTile<BV>(S, SLD, to, DV, DK);\n";
      ks << "    }\n"
         << "    __syncthreads(); // the copy is done before S changes\n";
    }
    for (Operation &op : body) {
      if (phase(op) == "out")
        continue; // the out kernel's
      if (which == "scan" && phase(op) == "prep") {
        if (op.hasAttr("rec.to_scan") && !s.stageFloats)
          emitWorkspaceCopy(&op, /*store=*/false, ks);
        continue;
      }
      emitChunkOp(&op, ks);
      if (op.hasAttr("rec.scan_to_out"))
        emitOutCopy(&op, ks);
    }
    if (which == "scan" && s.stageFloats && s.stageBuffers == 1)
      // One buffer: the next chunk's copies start once every thread is
      // done with this chunk's.
      ks << "    if constexpr (!kTwoStages<TensorCores>) {\n"
         << "      __syncthreads();\n"
         << "      if (t0 + C < tEnd)\n"
         << "        stageChunk<TensorCores>(stages, wsNext += wsStep, v0, p, "
            "row, t0 + C, eos, hv);\n"
         << "      rkc::tile::copyAsyncCommit();\n"
         << "    }\n";
    ks << "  }\n";
    return text;
  }

  /// Puts the prep kernel's ops first, in the order rec-schedule planned
  /// its shared memory in, where that is not the body's (rec.prep_order: an
  /// unstaged scan keeps the chunk algorithm's order); the others after
  /// them as they stand. The prep ops read only prep ops, so every value is
  /// still defined before its uses.
  static void putInPrepOrder(Block &body) {
    SmallVector<Operation *> ordered, rest;
    for (Operation &op : body)
      (op.hasAttr("rec.prep_order") ? ordered : rest).push_back(&op);
    if (ordered.empty())
      return;
    llvm::stable_sort(ordered, [](Operation *a, Operation *b) {
      return a->getAttrOfType<IntegerAttr>("rec.prep_order").getInt() <
             b->getAttrOfType<IntegerAttr>("rec.prep_order").getInt();
    });
    for (Operation *op : ordered)
      op->moveBefore(&body, body.end());
    for (Operation *op : rest)
      op->moveBefore(&body, body.end());
  }

  bool emitDevice(std::string &text, std::string &error) {
    Block &body = chunkedOp.getBody().front();
    if (outPhase && llvm::any_of(body, [](Operation &op) {
          auto type = op.getNumResults()
                          ? dyn_cast<TileType>(op.getResult(0).getType())
                          : TileType();
          auto toScan = op.getAttrOfType<StringAttr>("rec.to_scan");
          return (op.hasAttr("rec.to_out") &&
                  (!toScan || toScan.getValue() != "all")) ||
                 (op.hasAttr("rec.scan_to_out") &&
                  (!type || type.getRows() != Axis::chunk ||
                   type.getCols() != Axis::value));
        })) {
      // rec-schedule plans these too; the kernels do not hand them over
      // yet.
      error = "the out phase (rec-split-scan out-phase) has a kernel only "
              "where what crosses to it is the chunk's entering state, "
              "(chunk, value) tiles of the scan, and prep values the scan "
              "reads whole (rec.to_out only with rec.to_scan \"all\")";
      return false;
    }
    int id = 0;
    for (Operation &op : body)
      for (Value r : op.getResults()) {
        valueIds[r] = id++;
        // After --rec-split-scan a prep-only value has a place in the prep
        // kernel's plan alone.
        auto offset = op.getAttrOfType<IntegerAttr>("rec.smem_offset");
        auto prepOffset =
            op.getAttrOfType<IntegerAttr>("rec.prep_smem_offset");
        auto outOffset = op.getAttrOfType<IntegerAttr>("rec.out_smem_offset");
        if (!offset && !prepOffset && !outOffset) {
          error = "a chunk op has no rec.smem_offset: run --rec-schedule";
          return false;
        }
        if (offset)
          offsets[r] = offset.getInt();
        if (prepOffset)
          prepOffsets[r] = prepOffset.getInt();
        if (outOffset)
          outOffsets[r] = outOffset.getInt();
      }

    // The kernel bodies first: they decide which row functions exist.
    split = chunkedOp->hasAttr("rec.split_scan") && s.workspaceFloats > 0;
    std::string kernelText = bodyText(body, split ? "scan" : "all");
    bool scanStoresO = !outputRows.empty();
    size_t prepBegin = profiledOps.size();
    writingPrep = true;
    std::string prepText;
    if (split) {
      SmallVector<Operation *> bodyOrder =
          llvm::map_to_vector(body, [](Operation &op) { return &op; });
      putInPrepOrder(body);
      prepText = bodyText(body, "prep");
      for (Operation *op : bodyOrder)
        op->moveBefore(&body, body.end());
    }
    writingPrep = false;
    size_t outBegin = profiledOps.size();
    std::string outText;
    bool outStoresO = false;
    if (outPhase) {
      outText = bodyText(body, "out");
      outStoresO = !outputRows.empty();
    }
    if (!unsupported.empty()) {
      error = "the CUDA emitter has no code for '" + unsupported + "'";
      return false;
    }

    llvm::raw_string_ostream os(text);
    os << "// Generated by rkc from @" << name
       << ": the prefill (chunked WY/UT) and decode kernels.\n"
       << "// Compile with nvcc -gencode=arch=compute_90a,code=sm_90a; "
          "include paths: this folder and rkc's runtime/include.\n\n"
       << "#include \"" << name << ".h\"\n"
       << (s.bf16Products
               ? "// rec-schedule products = bf16: the tensor-core products "
                 "take bf16 operands\n// (m16n8k16, float32 sums).\n"
                 "#define RKC_BF16_PRODUCTS 1\n"
               : "")
       << "#define RKC_BLOCK_THREADS " << s.threads
       << " // the threads of each kernel's blocks\n"
       << elementwiseQuadsText() << "#include \"rkc/tile.cuh\"\n\n"
       << "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include "
          "<stdint.h>\n\n"
       << "namespace {\n\n"
       << "using Params = rkc_" << name << "_kernel_params;\n\n"
       << "constexpr int DK = " << s.dk << ", DV = " << s.dv
       << ", BV = " << s.valueTile << "; // value columns a block\n"
       << "[[maybe_unused]] constexpr int PBV = " << s.prepValueTile
       << "; // the prep kernel's value-side columns at a time\n"
       << "constexpr int SLD = " << s.stateStride
       << "; // floats between rows of the state slice S in shared memory\n"
       << "/// Elements between rows of a scan's 16-bit value-side tile that "
          "only products\n/// read (kernels for 16-bit outputs): 8 more than "
          "BV, so that the eight rows an\n/// ldmatrix reads fall in distinct "
          "banks.\n"
       << "template <bool TensorCores> [[maybe_unused]] constexpr int VLD = "
          "TensorCores ? BV + 8 : BV;\n"
       << "/// A staged key-side tile that products alone read as their left "
          "operand: in the\n/// kernels for 16-bit outputs, dense rows with "
          "their 16-byte pieces swizzled\n/// (rkc::tile::SwizzledBf16: the "
          "copies fill whole 128-byte lines, and the\n/// eight rows an "
          "ldmatrix reads fall in distinct banks); in the float32 kernels,\n"
          "/// rows 8 floats longer than dense.\n"
       << "template <bool TensorCores> struct KeyStageType { using type = "
          "float; };\n"
       << "template <> struct KeyStageType<true> { using type = "
          "rkc::tile::SwizzledBf16; };\n"
       << "template <bool TensorCores> using KeyStage = typename "
          "KeyStageType<TensorCores>::type;\n"
       << "template <bool TensorCores, int Cols> [[maybe_unused]] constexpr "
          "int KLD = TensorCores ? Cols : Cols + 8;\n"
       << "[[maybe_unused]] constexpr int C = " << C << ", M = " << m
       << ", L = C * M; // tokens, sub-steps a token, rows a chunk\n"
       << "constexpr int THREADS = " << s.threads << ", WARPS = THREADS / 32;\n"
       << "[[maybe_unused]] constexpr int RKC_SUBSTEP_ROWS = "
       << plan.substepRows(plan.params) << ";\n"
       << "[[maybe_unused]] constexpr int64_t WS_FLOATS = " << s.workspaceFloats
       << "; // what a (chunk, value head) hands from prep to scan\n"
       << "[[maybe_unused]] constexpr int64_t WS_HALF_BYTES = "
       << s.workspaceHalfBytes
       << "; // the same in bytes, kernels for 16-bit outputs\n"
       << "[[maybe_unused]] constexpr int64_t WS_HALF_LEAN_BYTES = "
       << (s.workspaceHalfLeanBytes ? s.workspaceHalfLeanBytes
                                    : s.workspaceHalfBytes)
       << "; // without the raw input rows (p.rows_from_inputs)\n\n"
       << "/// A crossing value kept in 16 bits (rec.half) in the kernels for "
          "16-bit outputs.\n"
       << "template <bool Half> struct CrossingType { using type = float; };\n"
       << "template <> struct CrossingType<true> { using type = "
          "__nv_bfloat16; };\n"
       << "template <bool Half> using Crossing = typename "
          "CrossingType<Half>::type;\n\n"
       << "/// The workspace of the chunk of sequence `seq` starting at token "
          "t0: batch rows\n/// have ceil(T / C) chunk slots each, or "
          "p.chunk_slots taken in turn (the launcher's\n/// ring of two "
          "segments' slots); packed sequences take slot seq + t0 / C\n/// "
          "(distinct: a later sequence starts no earlier, and one index "
          "later).\n"
       << "template <bool TensorCores>\n"
       << "[[maybe_unused]] __device__ inline unsigned char *chunkWorkspace("
          "const Params &p, int64_t seq,\n"
       << "                                                              "
          "int64_t t0, int64_t hv) {\n"
       << "  const int64_t perSeq = (p.length + C - 1) / C;\n"
       << "  const int64_t slot = p.a.cu_seqlens ? seq + t0 / C\n"
       << "                       : p.chunk_slots ? seq * p.chunk_slots + "
          "t0 / C % p.chunk_slots\n"
       << "                                       : seq * perSeq + t0 / C;\n"
       << "  return static_cast<unsigned char *>(p.workspace) + (slot * "
          "p.value_heads + hv) *\n"
       << "         (!TensorCores ? WS_FLOATS * 4 : p.rows_from_inputs ? "
          "WS_HALF_LEAN_BYTES : WS_HALF_BYTES);\n}\n\n"
       << outWorkspaceFunction()
       << R"([[maybe_unused]] __device__ inline float load(const rkc_tensor &t, int64_t offset) {
  switch (t.dtype) {
  case RKC_BF16:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(t.data)[offset]);
  case RKC_F16:
    return __half2float(static_cast<const __half *>(t.data)[offset]);
  default:
    return static_cast<const float *>(t.data)[offset];
  }
}

/// Elements lane, lane + 32, ..., lane + 32 (N - 1) of the row at `base`
/// (`stride` apart), with the dtype switched on once: the N loads of a lane
/// are in flight together, not one round trip after another.
template <int N>
__device__ __forceinline__ void loadRow(const rkc_tensor &t, int64_t base,
                                        int64_t stride, int lane, float *out) {
  switch (t.dtype) {
  case RKC_BF16: {
    const __nv_bfloat16 *x = static_cast<const __nv_bfloat16 *>(t.data) + base;
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = __bfloat162float(x[(lane + 32 * i) * stride]);
    break;
  }
  case RKC_F16: {
    const __half *x = static_cast<const __half *>(t.data) + base;
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = __half2float(x[(lane + 32 * i) * stride]);
    break;
  }
  default: {
    const float *x = static_cast<const float *>(t.data) + base;
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = x[(lane + 32 * i) * stride];
  }
  }
}

/// N elements of a row, lane, lane + 32, ..., `stride` apart from x, as
/// stored. (A path for unit strides, one address a row, measured within
/// ±1% on the H200: NOTES.md, v26.)
template <int N, typename E>
__device__ __forceinline__ void loadElements(const E *x, int64_t stride,
                                             int lane, unsigned *out) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    out[i] = x[(lane + 32 * i) * stride];
}

/// loadRow's elements as they are stored (16-bit ones zero-extended), for
/// widen to convert later: no instruction here waits for the loads, so a
/// warp's loads of several rows are in flight together.
template <int N>
[[maybe_unused]] __device__ __forceinline__ void loadRowRaw(const rkc_tensor &t, int64_t base,
                                           int64_t stride, int lane, unsigned *out) {
  if (t.dtype == RKC_F32)
    loadElements<N>(static_cast<const unsigned *>(t.data) + base, stride, lane, out);
  else
    loadElements<N>(static_cast<const unsigned short *>(t.data) + base, stride, lane,
                    out);
}

[[maybe_unused]] __device__ __forceinline__ unsigned loadRaw(const rkc_tensor &t, int64_t offset) {
  return t.dtype == RKC_F32 ? static_cast<const unsigned *>(t.data)[offset]
                            : static_cast<const unsigned short *>(t.data)[offset];
}

/// An element loadRowRaw or loadRaw read, as a float.
/// (All three conversions, then a select: no branch an element.)
[[maybe_unused]] __device__ __forceinline__ float widen(int dtype, unsigned bits) {
  const float bf16 = __uint_as_float(bits << 16),
              f16 = __half2float(__ushort_as_half(static_cast<unsigned short>(bits))),
              f32 = __uint_as_float(bits);
  return dtype == RKC_BF16 ? bf16 : dtype == RKC_F16 ? f16 : f32;
}

/// The decode kernel's rows (one token's, latency-bound) are dealt out
/// differently: a lane holds elements lane * N, ..., lane * N + N - 1, which
/// it loads as one vector where the row's layout allows (unit stride,
/// aligned) and stores to shared memory likewise (storeRow). The prep kernel
/// keeps loadRow's: the same there measured slower (KDA's prefill 0.95×,
/// its code 6% larger; why is not known).
///
/// The 2- to 16-byte piece of a row at x, loaded into 32-bit words as it is
/// (a 2-byte piece zero-extended): no instruction splits or joins what it
/// loaded, so nothing waits for it here.
template <int Size> __device__ __forceinline__ void loadWords(const void *x, unsigned *w);
template <> [[maybe_unused]] __device__ __forceinline__ void loadWords<2>(const void *x, unsigned *w) {
  w[0] = *static_cast<const unsigned short *>(x);
}
template <> [[maybe_unused]] __device__ __forceinline__ void loadWords<4>(const void *x, unsigned *w) {
  w[0] = *static_cast<const unsigned *>(x);
}
template <> [[maybe_unused]] __device__ __forceinline__ void loadWords<8>(const void *x, unsigned *w) {
  const uint2 p = *static_cast<const uint2 *>(x);
  w[0] = p.x, w[1] = p.y;
}
template <> [[maybe_unused]] __device__ __forceinline__ void loadWords<16>(const void *x, unsigned *w) {
  const uint4 p = *static_cast<const uint4 *>(x);
  w[0] = p.x, w[1] = p.y, w[2] = p.z, w[3] = p.w;
}

/// Whether N elements of type T load as whole pieces: 2 to 16 bytes, a power
/// of two, or a multiple of 16 bytes.
template <int N, typename T>
constexpr bool kVectorRow = N * sizeof(T) <= 16 ? !(N * sizeof(T) & (N * sizeof(T) - 1))
                                                 : N * sizeof(T) % 16 == 0;

/// The 2- to 16-byte pieces loadVector loads.
template <int Bytes> struct Piece;
template <> struct Piece<2> { using type = unsigned short; };
template <> struct Piece<4> { using type = unsigned; };
template <> struct Piece<8> { using type = uint2; };
template <> struct Piece<16> { using type = uint4; };

/// N consecutive elements of type T at x, where x is aligned to their size
/// (or to 16 bytes, beyond it), in pieces of that size.
template <int N, typename T>
__device__ __forceinline__ void loadVector(const T *x, T (&out)[N]) {
  constexpr int Bytes = N * (int)sizeof(T), Size = Bytes < 16 ? Bytes : 16;
  using P = typename Piece<Size>::type;
  union { P p[Bytes / Size]; T e[N]; } u;
#pragma unroll
  for (int k = 0; k < Bytes / Size; ++k)
    u.p[k] = reinterpret_cast<const P *>(x)[k];
#pragma unroll
  for (int i = 0; i < N; ++i)
    out[i] = u.e[i];
}

/// A lane's N consecutive values of the row at x (elements `stride` apart):
/// one vector load where the stride is 1 and the row aligned.
template <int N, typename T>
__device__ __forceinline__ void loadRowOf(const T *x, int64_t stride, int lane, float *out) {
  x += (int64_t)lane * N * stride;
  T e[N];
  bool loaded = false;
  if constexpr (kVectorRow<N, T>) {
    constexpr int Size = N * sizeof(T) < 16 ? N * sizeof(T) : 16;
    if (stride == 1 && !(reinterpret_cast<uintptr_t>(x) & (Size - 1))) {
      loadVector<N>(x, e);
      loaded = true;
    }
  }
  if (!loaded)
#pragma unroll
    for (int i = 0; i < N; ++i)
      e[i] = x[i * stride];
#pragma unroll
  for (int i = 0; i < N; ++i)
    out[i] = rkc::tile::toFloat(e[i]);
}

/// loadRow's values for the consecutive lanes (see loadVector), widened as
/// loaded: what a decode role calls where decodeLoadsFirst says no (the
/// dtype's load and conversion together, as measured).
template <int N>
[[maybe_unused]] __device__ __forceinline__ void loadRowConsecutive(const rkc_tensor &t, int64_t base,
                                                   int64_t stride, int lane, float *out) {
  switch (t.dtype) {
  case RKC_BF16:
    return loadRowOf<N>(static_cast<const __nv_bfloat16 *>(t.data) + base, stride, lane, out);
  case RKC_F16:
    return loadRowOf<N>(static_cast<const __half *>(t.data) + base, stride, lane, out);
  default:
    return loadRowOf<N>(static_cast<const float *>(t.data) + base, stride, lane, out);
  }
}

/// A lane's N consecutive elements of the row at x (elements `stride`
/// apart) as they are stored, in 32-bit words (16-bit elements two a word,
/// the first in the low half; a last odd one zero-extended): pieces of up
/// to 16 bytes where the stride is 1 and the row aligned to them, so that
/// nothing here waits for the loads and a role's loads of several inputs
/// are in flight together; else element by element, packing them, which
/// waits (strided rows, or rows off their alignment).
template <int N, typename T>
__device__ __forceinline__ void loadPackedOf(const T *x, int64_t stride, int lane, unsigned *out) {
  constexpr int Bytes = N * (int)sizeof(T), Words = (Bytes + 3) / 4;
  x += (int64_t)lane * N * stride;
  if constexpr (kVectorRow<N, T>) {
    constexpr int Size = Bytes < 16 ? Bytes : 16;
    if (stride == 1 && !(reinterpret_cast<uintptr_t>(x) & (Size - 1))) {
#pragma unroll
      for (int k = 0; k < Bytes / Size; ++k)
        loadWords<Size>(reinterpret_cast<const char *>(x) + k * Size, out + k * Size / 4);
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < Words; ++k)
    out[k] = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if constexpr (sizeof(T) == 4)
      out[i] = x[i * stride];
    else
      out[i / 2] |= static_cast<unsigned>(x[i * stride]) << (16 * (i % 2));
  }
}

/// loadRowRaw's elements for the consecutive lanes (see loadPackedOf), for
/// widenPacked to convert later.
template <int N>
[[maybe_unused]] __device__ __forceinline__ void loadRowRawConsecutive(const rkc_tensor &t, int64_t base,
                                                      int64_t stride, int lane, unsigned *out) {
  if (t.dtype == RKC_F32)
    loadPackedOf<N>(static_cast<const unsigned *>(t.data) + base, stride, lane, out);
  else
    loadPackedOf<N>(static_cast<const unsigned short *>(t.data) + base, stride, lane, out);
}

/// Element i of a row loadRowRawConsecutive read, as a float.
[[maybe_unused]] __device__ __forceinline__ float widenPacked(int dtype, const unsigned *raw, int i) {
  switch (dtype) {
  case RKC_BF16:
    return __uint_as_float(i % 2 ? raw[i / 2] & 0xffff0000u : raw[i / 2] << 16);
  case RKC_F16:
    return __half2float(__ushort_as_half(static_cast<unsigned short>(raw[i / 2] >> (16 * (i % 2)))));
  default:
    return __uint_as_float(raw[i]);
  }
}

/// Stores a lane's N values of a row (zeros where not `live`) to its elements
/// of the row at dst: 16-byte stores where they line up, so that a warp's
/// stores take the fewest wavefronts.
template <int N>
[[maybe_unused]] __device__ __forceinline__ void storeRow(float *dst, int lane, const float *v,
                                         bool live) {
  float *const at = dst + lane * N;
  if (N % 4 == 0 && !(reinterpret_cast<uintptr_t>(at) & 15)) {
#pragma unroll
    for (int c = 0; c < N; c += 4)
      *reinterpret_cast<float4 *>(at + c) = live ? make_float4(v[c], v[c + 1], v[c + 2], v[c + 3])
                                                 : make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
#pragma unroll
    for (int c = 0; c < N; ++c)
      at[c] = live ? v[c] : 0.f;
  }
}

/// The same for the columns [v0, v0 + width) of a value row, stored from dst[0]
/// on: a lane's values are whole 4-element groups, each inside or outside.
template <int N>
[[maybe_unused]] __device__ __forceinline__ void storeRowColumns(float *dst, int lane, const float *v,
                                                bool live, int64_t v0, int width) {
  const int64_t first = (int64_t)lane * N;
  if (N % 4 == 0 && !(v0 % 4) && !(width % 4) &&
      !(reinterpret_cast<uintptr_t>(dst) & 15)) {
#pragma unroll
    for (int c = 0; c < N; c += 4)
      if (first + c >= v0 && first + c < v0 + width)
        *reinterpret_cast<float4 *>(dst + first + c - v0) =
            live ? make_float4(v[c], v[c + 1], v[c + 2], v[c + 3]) : make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
#pragma unroll
    for (int c = 0; c < N; ++c)
      if (first + c >= v0 && first + c < v0 + width)
        dst[first + c - v0] = live ? v[c] : 0.f;
  }
}

__device__ inline void store(const rkc_tensor &t, int64_t offset, float x) {
  switch (t.dtype) {
  case RKC_BF16:
    static_cast<__nv_bfloat16 *>(const_cast<void *>(t.data))[offset] = __float2bfloat16(x);
    break;
  case RKC_F16:
    static_cast<__half *>(const_cast<void *>(t.data))[offset] = __float2half(x);
    break;
  default:
    static_cast<float *>(const_cast<void *>(t.data))[offset] = x;
  }
}

/// The input head of value head hv under GVA: HV / heads value heads share
/// one. In 32 bits (HV is a grid dimension, at most 65535), and out of line:
/// every row of every input inlined its division before (9-12% of a prep
/// kernel's SASS, which is bound by instruction fetch in QED), where GVA,
/// the only caller, is rare. Measured at (1, 8192, 32): dplr 1.042x, gdn2
/// 1.026x, qed 1.021x, eda 1.012x, the rest 0.992-1.012x; decode
/// 0.993-1.002x.
__device__ __noinline__ int groupHead(unsigned hv, unsigned HV, unsigned heads) {
  return hv / (HV / heads);
}

/// groupHead's answer, or hv where the input has HV heads, in one call
/// that the compiler knows reads nothing: the calls of one input's rows
/// (the same arguments) merge into one (RKC_PREFILL_HEAD_ONCE).
__device__ __noinline__ __attribute__((const)) int inputHead(unsigned hv, unsigned HV,
                                                             unsigned heads) {
  return heads == HV ? hv : hv / (HV / heads);
}

/// The offset of an input's row: token inputs [B, T*rows, heads, d] (row j
/// of token t is t*rows + j), per-head inputs [heads, d]. Under GVA an
/// input with fewer heads than HV is shared by a group of value heads.
/// With HeadOnce, the head comes from inputHead and its term before the
/// token's: what is the same for every row of a block is computed once.
template <bool HeadOnce = false>
__device__ inline int64_t inputRow(const rkc_tensor &x, int headDim,
                                   int64_t b, int64_t t, int64_t rows,
                                   int64_t j, int64_t hv, int64_t HV) {
  const int heads = static_cast<int>(x.shape[headDim]);
  if constexpr (HeadOnce) {
    const int64_t h = inputHead(hv, HV, heads);
    if (headDim == 0)
      return h * x.stride[0];
    return b * x.stride[0] + h * x.stride[2] + (t * rows + j) * x.stride[1];
  }
  const int64_t h = heads == HV ? hv : groupHead(hv, HV, heads);
  if (headDim == 0)
    return h * x.stride[0];
  return b * x.stride[0] + (t * rows + j) * x.stride[1] + h * x.stride[2];
}

/// Prefetches into L2 the rows of tokens [t0, t0 + tokens) of a per-token
/// input (`width` elements a row, contiguous).
[[maybe_unused]] __device__ inline void prefetchRows(const rkc_tensor &x, int64_t b,
                                    int64_t t0, int64_t tokens, int64_t rows,
                                    int64_t hv, int64_t HV, int width) {
  if (x.stride[x.rank - 1] != 1 && width > 1)
    return;
  const int size = x.dtype == RKC_F32 ? 4 : 2;
  const int lines = (width * size + 127) / 128;
  for (int64_t e = threadIdx.x; e < tokens * rows * lines; e += blockDim.x) {
    const int64_t r = e / lines;
    const char *at = static_cast<const char *>(x.data) +
                     inputRow(x, 2, b, t0 + r / rows, rows, r % rows, hv, HV) * size +
                     (e % lines) * 128;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
  }
}

)";
    if (outPhase)
      os << copyTileFunction();
    os << stageFunction(body);
    if (outputRowsPerToken)
      os << "/// A chunk's output rows as a product stores them (the sink of "
            "its stores): row i\n/// of the tile is token t0 + i / "
         << outputRowsPerToken << "; rows past the sequence are not stored.\n"
         << "struct OutputRows {\n"
         << "  const Params &p;\n"
         << "  int64_t t0, eos;\n"
         << "  int64_t base; // o's element (t, v0 + j) is at base + t * "
            "stride[1] + j * stride[3]\n"
         << "  bool pairs;   // two columns a 4-byte store (pairsFit)\n"
         << "  /// Whether o is bf16 with unit column stride and even strides "
            "otherwise (so\n  /// that every even column is 4-byte aligned): "
            "the usual layout.\n"
         << "  static __device__ bool pairsFit(const Params &p) {\n"
         << "    return p.a.o.dtype == RKC_BF16 && p.a.o.stride[3] == 1 && "
            "p.a.o.stride[0] % 2 == 0 &&\n"
         << "           p.a.o.stride[1] % 2 == 0 && p.a.o.stride[2] % 2 == 0 "
            "&&\n"
         << "           reinterpret_cast<uintptr_t>(p.a.o.data) % 4 == 0;\n"
         << "  }\n"
         << "  __device__ void operator()(int i, int j, float x) const {\n"
         << "    const int64_t t = t0 + i / " << outputRowsPerToken << ";\n"
         << "    if (t < eos)\n"
         << "      store(p.a.o, base + t * p.a.o.stride[1] + j * "
            "p.a.o.stride[3], x);\n"
         << "  }\n"
         << "  /// Elements (i, j) and (i, j + 1), j even.\n"
         << "  __device__ void operator()(int i, int j, float x0, float x1) "
            "const {\n"
         << "    const int64_t t = t0 + i / " << outputRowsPerToken << ";\n"
         << "    if (t >= eos)\n      return;\n"
         << "    const int64_t at = base + t * p.a.o.stride[1] + j * "
            "p.a.o.stride[3];\n"
         << "    if (pairs) {\n"
         << "      *reinterpret_cast<uint32_t *>(static_cast<__nv_bfloat16 "
            "*>(const_cast<void *>(p.a.o.data)) + at) =\n"
         << "          rkc::tile::bf16x2(x0, x1);\n"
         << "    } else {\n"
         << "      store(p.a.o, at, x0);\n"
         << "      store(p.a.o, at + p.a.o.stride[3], x1);\n"
         << "    }\n"
         << "  }\n};\n\n";
    bool softplus = false;
    for (const SpecPlan::Expr &e : plan.exprs)
      softplus |= e.kind == SpecPlan::ExprKind::Softplus ||
                  e.kind == SpecPlan::ExprKind::LogSigmoid;
    if (softplus)
      os << "__device__ inline float softplus(float x) {\n"
            "  return fmaxf(x, 0.f) + log1pf(expf(-fabsf(x)));\n}\n\n";
    // Row functions of the prefill kernel, then of the decode kernel.
    for (auto &[slot, role, axis] : rowFunctions)
      emitRowFunction(plan, "prefill", slot, static_cast<RowRole>(role),
                      static_cast<Axis>(axis), /*consecutive=*/false, os);
    for (auto &[slot, role, axis] : rawRowFunctions)
      emitRowRawFunctions(plan, slot, role, axis, os);
    emitDecodeRowFunctions(os);
    os << "} // namespace\n\n";

    // With -DRKC_PROFILE_OPS the block (0, 0, 0) prints the cycles each
    // chunk op took, summed over its chunks.
    os << "#ifdef RKC_PROFILE_OPS\n"
       << "#include <stdio.h>\n"
       << "#define RKC_PROFILE_BEGIN() profileStart = clock64()\n"
       << "#define RKC_PROFILE_END(op) if (threadIdx.x == 0) profile[op] += "
          "clock64() - profileStart\n"
       << "#else\n#define RKC_PROFILE_BEGIN() (void)0\n"
       << "#define RKC_PROFILE_END(op) (void)0\n#endif\n\n";
    os << "// One block per (value tile, value head, sequence); the chunks "
          "of the\n// sequence run in order, carrying the state slice "
          "S (DK x BV) in shared memory"
       << (stateInRegisters ? "\n// (in registers in the kernel for bf16 "
                              "products, below)"
                            : "")
       << ".\n"
       << "// TensorCores: the chunk products on "
       << (s.bf16Products ? "bf16" : "TF32")
       << " tensor cores (the kernel for 16-bit\n// outputs); otherwise "
          "float32 CUDA cores.\n"
       << "template <bool TensorCores>\n"
       << "__device__ __forceinline__ void prefill(const Params &p) {\n"
       << "  extern __shared__ float4 prefillSmem[];\n"
       << "  float *const smem = reinterpret_cast<float *>(prefillSmem);\n"
       << "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n"
       << "  (void)warp, (void)lane;\n"
       << "  const int64_t v0 = blockIdx.x * BV, hv = blockIdx.y, seq = "
          "blockIdx.z;\n"
       << kernelPreamble()
       << "  // The chunks this launch runs (all, or a segment's: "
          "p.chunk_begin, p.chunk_end),\n"
       << "  // and the states it starts from and ends with: the arguments' "
          "(by state slot)\n"
       << "  // or, between segments, the launcher's carry (by sequence).\n"
       << "  const int64_t tBegin = bos + p.chunk_begin * C < eos ? bos + "
          "p.chunk_begin * C : eos;\n"
       << "  const int64_t tEnd = (eos - bos + C - 1) / C <= p.chunk_end ? eos "
          ": bos + p.chunk_end * C;\n"
       << "  const float *const entering = p.carry_in ? p.carry : "
          "p.a.initial_state;\n"
       << "  float *const leaving = p.carry_out ? p.carry : p.a.final_state;\n"
       << "  const int64_t enteringRow = ((p.carry_in ? seq : slot) * "
          "p.value_heads + hv) * DK;\n"
       << "  const int64_t leavingRow = ((p.carry_out ? seq : slot) * "
          "p.value_heads + hv) * DK;\n"
       << "  float *const S = smem; // the state slice, DK x BV, rows SLD floats apart\n";
    if (scanStoresO)
      os << outputBase();
    std::string sharedInit =
        "  for (int e = threadIdx.x; e < DK * BV; e += THREADS)\n"
        "    S[(e / BV) * SLD + e % BV] = entering ? entering[(enteringRow + "
        "e / BV) * DV + v0 + e % BV] : 0.f;\n"
        "  __syncthreads();\n";
    if (stateInRegisters)
      os << "  // The kernel for bf16 products keeps the slice in registers, "
            "each 16-row block\n"
            "  // of it split by columns among SPLITS warps, and its bf16 "
            "shadow, which products\n"
            "  // read, where S would be.\n"
         << "  constexpr int SPLITS = THREADS / 32 / (DK / 16);\n"
         << "  [[maybe_unused]] rkc::tile::RegisterState<BV / 8 / SPLITS, "
            "SPLITS> sreg;\n"
         << "  [[maybe_unused]] __nv_bfloat16 *const S16 = "
            "reinterpret_cast<__nv_bfloat16 *>(smem);\n"
         << "  if constexpr (TensorCores) {\n"
         << "#pragma unroll\n"
         << "    for (int nb = 0; nb < sreg.kColumnBlocks; ++nb)\n"
         << "#pragma unroll\n"
         << "      for (int q = 0; q < 4; ++q)\n"
         << "        sreg.acc[nb][q] = entering ? entering[(enteringRow +\n"
         << "            sreg.row(q)) * DV + v0 + sreg.col(nb, q)] : 0.f;\n"
         << "    rkc::tile::storeShadow(sreg, S16, SLD);\n"
         << "  } else {\n"
         << indentBy(sharedInit, 2) << "  }\n";
    else
      os << sharedInit;
    os << "#ifdef RKC_PROFILE_OPS\n"
       << "  long long profile[" << profiledOps.size()
       << "] = {}, profileStart = 0;\n"
       << "#endif\n"
       << kernelText << profilePrinter("rkc-profile", 0, prepBegin)
       << kernelEpilogue() << "}\n\n";
    // The scan's launch bound: the blocks an SM its shared memory allows,
    // at most as many as leave 128 registers a thread (2 of 256 threads, 1
    // of 512), so that ptxas does not trade registers (and spill) for an
    // occupancy that shared memory rules out: KDA's scan spilled at 64
    // registers under a bare bound, where one block an SM fits.
    os << "// The prefill kernels' registers: as many blocks an SM as their "
          "shared memory allows,\n// at most as many as leave 128 registers a "
          "thread.\n"
       << blocksMacro("RKC_PREFILL_BLOCKS", s.sharedBytes, 2, 128)
       << blocksMacro("RKC_PREFILL_TC_BLOCKS", prefillTensorCoreBytes(), 2, 128)
       << kernelPair("prefill", "RKC_PREFILL_BLOCKS", "RKC_PREFILL_TC_BLOCKS");
    if (split) {
      os << "// The prep kernel (--rec-split-scan): one block per (chunk, "
            "value head, sequence)\n// runs the state-free ops of its chunk "
            "(the value-side ones for each value tile)\n// and writes what the "
            "scan reads to the workspace; the scan is the prefill\n// kernel "
            "above.\n"
         << "template <bool TensorCores>\n"
         << "__device__ __forceinline__ void prep(const Params &p) {\n"
         << "  extern __shared__ float4 prepSmem[];\n"
         << "  float *const smem = reinterpret_cast<float *>(prepSmem);\n"
         << "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n"
         << "  (void)warp, (void)lane;\n"
         << "  // x: the launch's chunks (p.chunk_begin on) one after another, "
            "the value heads\n  // of each in turn.\n"
         << "  // (In 32 bits: the value heads are a grid dimension, and a "
            "64-bit division\n  // is a long routine.)\n"
         << "  const unsigned heads = static_cast<unsigned>(p.value_heads);\n"
         << "  const int64_t hv = blockIdx.x % heads, seq = blockIdx.z;\n"
         << kernelPreamble()
         << "  const int64_t t0 = bos + (p.chunk_begin + (int64_t)(blockIdx.x "
            "/ "
            "heads)) * C;\n"
         << "  if (t0 >= eos)\n    return;\n"
         << "#ifdef RKC_PROFILE_OPS\n"
         << "  long long profile[" << profiledOps.size()
         << "] = {}, profileStart = 0;\n  (void)profile;\n"
         << "#endif\n"
         << prepText << profilePrinter("rkc-profile-prep", prepBegin, outBegin)
         << "}\n\n";
      // Blocks an SM the prep's shared memory allows (1 KB of an SM's
      // reserved a block), at most rec-schedule's prep-blocks (default 4):
      // the prep kernel waits on latency, which more blocks hide, so its
      // registers must not be what holds fewer blocks. An SM's shared
      // memory depends on the architecture. At most as many as leave 64
      // registers a thread: 3 blocks of 512 threads would leave 42, and
      // spills (KDA's prep at 256 threads takes 79 registers for 3 blocks,
      // 64 for 4 with 12 bytes of spills: 1.02x, GDN-2 1.07x; NOTES.md).
      os << "// The prep kernel's registers leave room for as many blocks an "
            "SM as its shared\n// memory does (at least 64 registers a "
            "thread).\n"
         << blocksMacro("RKC_PREP_BLOCKS", s.prepSharedBytes, s.prepBlocks, 64)
         << kernelPair("prep", "RKC_PREP_BLOCKS");
    }
    if (outPhase) {
      os << (s.outValueLoop
                 ? "// The out kernel (--out-phase, --out-value-loop): one "
                   "block per (chunk, value\n// head) x sequence, every chunk "
                   "at once after the scan, computes the chunk's\n// output "
                   "from its entering state (outWorkspace) and its own rows: "
                   "what no\n// value tile changes once, then the value side "
                   "for each value tile.\n"
                 : "// The out kernel (--out-phase): one block per (chunk, "
                   "value head) x value tile x\n// sequence, every chunk at "
                   "once after the scan, computes the chunk's output\n// from "
                   "its entering state (outWorkspace) and its own rows.\n")
         << "template <bool TensorCores>\n"
         << "__device__ __forceinline__ void out(const Params &p) {\n"
         << "  extern __shared__ float4 outSmem[];\n"
         << "  float *const smem = reinterpret_cast<float *>(outSmem);\n"
         << "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n"
         << "  (void)warp, (void)lane;\n"
         << "  // x: the chunks one after another, the value heads of each in "
            "turn (as the prep's).\n"
         << "  const unsigned heads = static_cast<unsigned>(p.value_heads);\n"
         << (s.outValueLoop
                 ? "  const int64_t hv = blockIdx.x % heads, seq = "
                   "blockIdx.z;\n"
                 : "  const int64_t hv = blockIdx.x % heads, v0 = blockIdx.y "
                   "* BV, seq = blockIdx.z;\n")
         << kernelPreamble()
         << "  const int64_t t0 = bos + (p.chunk_begin + (int64_t)(blockIdx.x "
            "/ "
            "heads)) * C;\n"
         << "  if (t0 >= eos)\n    return;\n"
         << "  float *const S = smem; // the entering state's slice, DK x BV, "
            "rows SLD floats apart\n"
         << (outStoresO && !s.outValueLoop ? outputBase() : "")
         << "#ifdef RKC_PROFILE_OPS\n"
         << "  long long profile[" << profiledOps.size()
         << "] = {}, profileStart = 0;\n  (void)profile;\n"
         << "#endif\n"
         << outText
         << profilePrinter("rkc-profile-out", outBegin, profiledOps.size())
         << "}\n\n"
         << "// The out kernel's registers leave room for as many blocks an SM "
            "as its shared\n// memory does (at least 64 registers a thread).\n"
         << blocksMacro("RKC_OUT_BLOCKS", s.outSharedBytes, 4, 64)
         << kernelPair("out", "RKC_OUT_BLOCKS");
    }
    emitDecodeKernel(os);
    return true;
  }

  /// With an out phase: the copy of a tile between memory and shared memory
  /// (the entering state, what the out kernel reads of the workspace) by
  /// 16-byte pieces of the narrower element type, not element by element
  /// (measured: the out kernel's element-at-a-time copies and their index
  /// arithmetic were most of its instructions, NOTES.md v30c).
  static std::string copyTileFunction() {
    return R"(/// Rows x Cols elements from `from` (rows fromStride elements apart) to `to`
/// (rows toStride apart), converted, 16 bytes of the narrower type a thread
/// at a time: Cols, both strides and both rows' starts whole such pieces.
template <int Cols, typename From, typename To>
__device__ __forceinline__ void copyTile(const From *from, int64_t fromStride, To *to,
                                         int64_t toStride, int rows) {
  constexpr int N = 16 / (int)(sizeof(From) < sizeof(To) ? sizeof(From) : sizeof(To));
  static_assert(Cols % N == 0, "a row is whole 16-byte pieces");
  for (int e = threadIdx.x * N; e < rows * Cols; e += THREADS * N) {
    const int r = e / Cols, c = e % Cols;
    From x[N];
    loadVector<N>(from + r * fromStride + c, x);
    union { To e[N]; uint4 p[N * sizeof(To) / 16]; } y;
#pragma unroll
    for (int j = 0; j < N; ++j)
      y.e[j] = rkc::tile::fromFloat<To>(rkc::tile::toFloat(x[j]));
#pragma unroll
    for (int k = 0; k < (int)(N * sizeof(To) / 16); ++k)
      reinterpret_cast<uint4 *>(to + r * toStride + c)[k] = y.p[k];
  }
}

)";
  }

  /// With an out phase, where a (chunk, value head) of what crosses to it
  /// lies: a chunk slot each, as chunkWorkspace's without a ring.
  std::string outWorkspaceFunction() const {
    if (!outPhase)
      return "";
    return "/// What the scan hands the out kernel for the chunk of sequence "
           "`seq` starting at\n/// token t0 (its entering state, DK x DV): "
           "a chunk slot each, as chunkWorkspace's\n/// (the out phase runs "
           "in no segments, so without a ring).\n"
           "constexpr int64_t OUT_WS_FLOATS = " +
           std::to_string(s.outWorkspaceFloats) +
           ";\n"
           "template <bool TensorCores>\n"
           "__device__ inline Crossing<TensorCores> *outWorkspace(const "
           "Params &p, int64_t seq,\n"
           "                                                     int64_t t0, "
           "int64_t hv) {\n"
           "  const int64_t perSeq = (p.length + C - 1) / C;\n"
           "  const int64_t slot = p.a.cu_seqlens ? seq + t0 / C : seq * "
           "perSeq + t0 / C;\n"
           "  return static_cast<Crossing<TensorCores> *>(p.out_workspace) + "
           "(slot * p.value_heads + hv) * OUT_WS_FLOATS;\n}\n\n";
  }

  /// The element of the out workspace where `op`'s value starts
  /// (rec.out_workspace_offset).
  static std::string outWorkspaceAt(Operation *op) {
    auto at = op->getAttrOfType<IntegerAttr>("rec.out_workspace_offset");
    return std::to_string(at ? at.getInt() : 0);
  }

  /// The scan's copy of a value the out kernel reads (rec.scan_to_out),
  /// a (chunk, value) tile, to the out workspace, all dv columns of a
  /// (chunk, value head) (this block's value tile of them).
  void emitOutCopy(Operation *op, llvm::raw_ostream &os) {
    Value v = op->getResult(0);
    if (pairedFirst.contains(op) || outputRows.contains(v) ||
        productOperands.count(v) || paddedStride(v) || !offsets.count(v)) {
      unsupported = opComment(op).substr(3) +
                    "', which the out phase reads, kept where no float32 "
                    "tile of its own holds it";
      return;
    }
    os << "    { // for the out kernel: " << tile(v) << "\n"
       << "      Crossing<TensorCores> *const to = "
          "outWorkspace<TensorCores>(p, seq, t0, hv) + "
       << outWorkspaceAt(op) << ";\n"
       << "      for (int e = threadIdx.x; e < " << nrows(v)
       << " * BV; e += THREADS)\n"
       << "        to[(e / BV) * DV + v0 + e % BV] = "
          "rkc::tile::fromFloat<Crossing<TensorCores>>("
       << tile(v) << "[e]);\n"
       << "    }\n"
       << "    __syncthreads(); // the next op may reuse its space\n";
  }

  /// Where a kernel's products store o's rows (OutputRows).
  static std::string outputBase() {
    return "  // Where the products store o's rows (OutputRows): this block's "
           "columns of o\n  // from oBase, two a store where the layout "
           "allows.\n"
           "  const int64_t oBase = row * p.a.o.stride[0] + hv * "
           "p.a.o.stride[2] + v0 * p.a.o.stride[3];\n"
           "  const bool oPairs = OutputRows::pairsFit(p);\n";
  }

  /// Shared-memory offsets of the kernel `which` (bodyText's) plans.
  const llvm::DenseMap<Value, int64_t> &offsetsOf(StringRef which) const {
    return which == "prep"  ? prepOffsets
           : which == "out" ? outOffsets
                            : offsets;
  }

  /// `#define name` (unless defined) to the blocks an SM whose shared memory
  /// holds blocks of `bytes` (1 KB of an SM's reserved a block), from 1 to
  /// `cap` and to as many as leave `registers` a thread: 228 KB an SM on
  /// sm_90, 164 KB on sm_80 and sm_87, 100 KB on the others.
  std::string blocksMacro(StringRef name, int64_t bytes, int64_t cap,
                          int64_t registers) const {
    auto blocks = [&](int64_t smBytes) {
      return std::max<int64_t>(
          1, rec::blocksAnSM(bytes, smBytes, cap, registers, s.threads));
    };
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "#ifndef " << name << "\n"
       << "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
       << "#define " << name << " " << blocks(233472) << "\n"
       << "#elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870\n"
       << "#define " << name << " " << blocks(167936) << "\n"
       << "#else\n#define " << name << " " << blocks(102400) << "\n"
       << "#endif\n#endif\n";
    return text;
  }

  /// The kernel's two entry points (float32 and tensor-core products)
  /// calling `body`, launch-bounded by the blocks `macro` names.
  std::string kernelPair(StringRef body, StringRef macro,
                         StringRef tcMacro = "") const {
    std::string text;
    for (auto [suffix, tc] : {std::pair{"", "false"}, {"_tc", "true"}})
      text +=
          ("extern \"C\" __global__ void __launch_bounds__(THREADS, " +
           (StringRef(suffix).empty() || tcMacro.empty() ? macro : tcMacro) +
           ")\nrkc_" + name + "_" + body + "_kernel" + suffix +
           "(const Params p) {\n  " + body + "<" + tc + ">(p);\n}\n\n")
              .str();
    return text;
  }

  /// With -DRKC_PROFILE_OPS, block (0, 0, 0) prints the cycles of each op
  /// of the kernel ([begin, end) of profiledOps) as `label index cycles op`,
  /// summed over the chunks it ran.
  std::string profilePrinter(StringRef label, size_t begin, size_t end) const {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "#ifdef RKC_PROFILE_OPS\n"
       << "  if (threadIdx.x == 0 && blockIdx.x == 0 && blockIdx.y == 0 && "
          "blockIdx.z == 0) {\n";
    for (size_t i = begin; i < end; ++i) {
      const std::string &op = profiledOps[i];
      std::string escaped;
      for (char ch : op) {
        if (ch == '"' || ch == '\\')
          escaped += '\\';
        escaped += ch == '%' ? std::string("%%") : std::string(1, ch);
      }
      os << "    if (profile[" << i << "])\n      printf(\"" << label
         << " %d %lld " << escaped << "\\n\", " << i << ", profile[" << i
         << "]);\n";
    }
    os << "  }\n#endif\n";
    return text;
  }

  std::string kernelPreamble() const {
    return "  // The sequence: a batch row, or a span of cu_seqlens "
           "(invalid spans run empty).\n"
           "  int64_t row = seq, bos = 0, eos = p.length;\n"
           "  if (p.a.cu_seqlens) {\n"
           "    row = 0;\n"
           "    bos = p.a.cu_seqlens[seq];\n"
           "    eos = p.a.cu_seqlens[seq + 1];\n"
           "    if (bos < 0 || eos > p.length || eos < bos)\n"
           "      eos = bos = 0;\n"
           "  }\n"
           "  const int64_t slot = p.a.state_indices ? "
           "p.a.state_indices[seq] : seq;\n"
           "  if (slot < 0) // a padding entry of a decode batch\n"
           "    return;\n";
  }

  std::string kernelEpilogue() const {
    std::string shared =
        "  if (leaving)\n"
        "    for (int e = threadIdx.x; e < DK * BV; e += THREADS)\n"
        "      leaving[(leavingRow + e / BV) * DV + v0 + e % BV] = S[(e / BV) "
        "* SLD + e % BV];\n";
    if (!stateInRegisters)
      return shared;
    return "  if constexpr (TensorCores) {\n"
           "    if (leaving)\n"
           "#pragma unroll\n"
           "      for (int nb = 0; nb < sreg.kColumnBlocks; ++nb)\n"
           "#pragma unroll\n"
           "        for (int q = 0; q < 4; ++q)\n"
           "          leaving[(leavingRow + sreg.row(q)) * DV + v0 + "
           "sreg.col(nb, q)] =\n"
           "              sreg.acc[nb][q];\n"
           "  } else {\n" +
           indentBy(shared, 2) + "  }\n";
  }

  /// `text` with every line indented `n` more spaces.
  static std::string indentBy(StringRef text, int n) {
    std::string out;
    SmallVector<StringRef> lines;
    text.split(lines, '\n', -1, false);
    for (StringRef line : lines)
      out += std::string(n, ' ') + line.str() + "\n";
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Decode
  //===--------------------------------------------------------------------===//

  /// A decode row load: sub-step `slot`'s `role` row, stored to `dsts`.
  struct RoleLoad {
    size_t slot;
    RowRole role;
    std::vector<std::string> dsts;
  };

  /// The decode kernel's row loads, the sub-steps' roles in order: roles with
  /// the same values (DeltaNet's k erases along, reads and writes; β is both
  /// strengths) load once and store to each place.
  std::vector<RoleLoad> decodeLoads() const {
    std::vector<RoleLoad> loads;
    std::map<std::tuple<int64_t, int, std::string>, size_t> loaded;
    for (size_t slot = 0; slot < decodePlan.substeps.size(); ++slot) {
      const SpecPlan::Substep &sub = decodePlan.substeps[slot];
      std::string n = std::to_string(slot);
      for (auto [r, dst] : {std::pair{RowRole::gate, "gate" + n},
                            {RowRole::erase_along, "along" + n},
                            {RowRole::read, "at" + n},
                            {RowRole::strength, "strengths" + n},
                            {RowRole::key, "key" + n},
                            {RowRole::value, "value" + n},
                            {RowRole::write_strength, "strengths" + n + " + 1"},
                            {RowRole::query, "query" + n}}) {
        int expr = roleExpr(sub, r);
        if (expr < 0)
          continue;
        // What a role's row function does to its expression beyond loading
        // it (see emitRowFunction), and the axis its values are stored
        // along: the same row, expression and transform are the same
        // values, stored the same way.
        std::string transform = decodeAxis(r) == Axis::key     ? "key"
                                : decodeAxis(r) == Axis::value ? "value"
                                                               : "one";
        if (r == RowRole::gate)
          transform = "gate";
        else if (r == RowRole::query)
          transform = "query";
        else if (r == RowRole::read && sub.gate >= 0 && !sub.undecayedRead)
          transform = "read decayed by " + std::to_string(sub.gate);
        auto [at, fresh] = loaded.try_emplace(
            std::tuple{int64_t(sub.index), expr, transform}, loads.size());
        if (fresh)
          loads.push_back({slot, r, {dst}});
        else
          loads[at->second].dsts.push_back(dst);
      }
    }
    return loads;
  }

  /// The row functions the decode kernel calls (one a distinct load).
  void emitDecodeRowFunctions(llvm::raw_ostream &os) {
    std::vector<RoleLoad> loads = decodeLoads();
    SmallVector<int64_t> rows = llvm::map_to_vector(
        loads, [&](const RoleLoad &load) { return decodeRoleRows(load); });
    bool atMostTwo = llvm::all_of(rows, [](int64_t n) { return n <= 2; });
    for (auto [load, n] : llvm::zip_equal(loads, rows))
      emitRowFunction(decodePlan, "decode", load.slot, load.role,
                      decodeAxis(load.role), /*consecutive=*/true, os,
                      decodeLoadsFirst(n, atMostTwo));
  }

  /// The input rows (vectors, not scalars) a decode role reads.
  int64_t decodeRoleRows(const RoleLoad &load) const {
    std::map<int, int> rawAt;
    rowRawInputs(decodePlan, decodePlan.substeps[load.slot], load.role,
                 decodeAxis(load.role), rawAt);
    return llvm::count_if(rawAt, [&](const auto &input) {
      return width(decodePlan.exprs[input.first]) > 0;
    });
  }

  /// Whether a decode row role of `rows` input rows loads them all before
  /// widening any (else each as its expression reaches it, widened as
  /// loaded); `atMostTwo`: no role of the kernel reads more than two. With
  /// `--decode-raw-rows N`, roles of two to N rows. By default, where a
  /// token has one sub-step: every role if none reads more than two rows,
  /// else the roles of two rows. Measured at (64, 32) and (256, 16), dk =
  /// dv = 128, against widening as loaded: GDN-2 (a read and a value role
  /// of two rows each) 1.05-1.07x; QED's value role (w, v) 1.016-1.022x,
  /// but with its one-row roles too 0.95-0.96x and with its read role of
  /// four rows 0.81-0.83x; EDA's two-row read role (two sub-steps) 0.956x.
  /// Under the decode kernel's 48 registers, rows held together spill.
  bool decodeLoadsFirst(int64_t rows, bool atMostTwo) const {
    if (decodeSchedule.decodeRawRows >= 0)
      return rows >= 2 && rows <= decodeSchedule.decodeRawRows;
    return decodePlan.substeps.size() == 1 && (rows == 2 || atMostTwo);
  }

  /// The axis of a decode row vector: value, one float (the strengths) or
  /// key.
  static Axis decodeAxis(RowRole role) {
    if (role == RowRole::value)
      return Axis::value;
    if (role == RowRole::strength || role == RowRole::write_strength)
      return Axis::one;
    return Axis::key;
  }

  /// A launcher helper of the split kernels' chunks returning int64_t: its
  /// head (params p, then `extra`) and the chunks a sequence of p's length.
  std::string chunkFunctionHead(StringRef suffix, StringRef extra) const {
    std::string chunk = std::to_string(C);
    return ("static int64_t rkc_" + name + "_" + suffix + "(const rkc_" + name +
            "_kernel_params *p" + extra +
            ") {\n  const int64_t perSeq = (p->length + " + chunk + " - 1) / " +
            chunk + ";\n")
        .str();
  }

  /// The generated code's RKC_ELEMENTWISE_QUADS (rkc/tile.cuh): as
  /// rec-schedule's elementwise-quads says, by default (-1) elementwise ops
  /// four elements at a time unless a sub-step with a per-channel gate reads
  /// the state before its decay (an exclusive sum: DPLR). Measured on the
  /// H200 at (1, 8192, 32) and (4, 4096, 16) against one at a time: GDN
  /// 1.05x, Comba 1.06x, DeltaProduct 1.05-1.06x, DeltaNet 1.02x (v11); with
  /// per-channel gates, once the Grams bounded their exponents from two
  /// rows and took 16 columns a warp (v26), EDA 1.07x, KDA 1.05x, GDN-2
  /// 1.04x, QED 1.03x, but DPLR 0.92x (QED had lost 0.83x before, v20).
  std::string elementwiseQuadsText() const {
    bool undecayedChannel = llvm::any_of(plan.substeps, [&](const auto &sub) {
      return channelGate(plan, sub) && sub.undecayedRead;
    });
    bool on =
        s.elementwiseQuads >= 0 ? s.elementwiseQuads == 1 : !undecayedChannel;
    std::string why =
        s.elementwiseQuads >= 0 ? "--elementwise-quads"
        : undecayedChannel
            ? "not with a per-channel gate and a read before its decay"
            : "the default";
    return "#ifndef RKC_ELEMENTWISE_QUADS // elementwise ops four elements at "
           "a time: " +
           why + "\n#define RKC_ELEMENTWISE_QUADS " + (on ? "1" : "0") +
           "\n#endif\n" + prefillHeadOnceText();
  }

  /// The generated code's RKC_PREFILL_HEAD_ONCE (see inputRow): the prep's
  /// row loads take an input's head by one call the compiler merges across
  /// rows where every gate is a scalar and a sub-step erases; else a branch
  /// a row. Measured on the H200 at (1, 8192, 32): GDN 1.02x, Comba 1.02x,
  /// DeltaNet 1.015x, DeltaProduct 1.01x with it, but linear attention
  /// 0.86x, QED 0.96x, GDN-2 0.99x (NOTES.md, v26).
  std::string prefillHeadOnceText() const {
    bool scalarGates = llvm::none_of(
        plan.substeps, [&](const auto &sub) { return channelGate(plan, sub); });
    bool erases = llvm::any_of(
        plan.substeps, [](const auto &sub) { return sub.eraseAlong >= 0; });
    bool on = scalarGates && erases;
    return std::string("#ifndef RKC_PREFILL_HEAD_ONCE // the prefill's rows: "
                       "an input's head by one merged call (1), or a branch "
                       "a row (0): ") +
           (on            ? "every gate a scalar, and a sub-step erases"
            : scalarGates ? "no sub-step erases"
                          : "not with per-channel gates") +
           "\n#define RKC_PREFILL_HEAD_ONCE " + (on ? "1" : "0") + "\n#endif\n";
  }

  /// Whether a sub-step's gate is per key channel (else a scalar).
  static bool channelGate(const SpecPlan &p, const SpecPlan::Substep &sub) {
    return sub.gate >= 0 && p.exprs[sub.gate].side == Side::Key;
  }

  void emitDecodeKernel(llvm::raw_ostream &os) {
    // The state slice lives in registers: thread (group, c) holds column c
    // of the value tile at rows group + GROUPS * i, or with decode quads at
    // rows group * ROWS + i, so that a warp's loads and stores of S are
    // whole 128-byte rows (a warp's lanes hold consecutive columns of one
    // row, or of one row for each of its groups). With
    // quads the key-axis vectors a thread applies to its rows load four
    // rows at a time (16-byte shared loads, a warp's all one broadcast):
    // fewer shared loads, which limit a token of several sub-steps, for a
    // few more registers (rec-schedule's decode_quads). Shared memory (sized by
    // rec-schedule) holds every sub-step's row vectors, all loaded before
    // the token's first sub-step (one barrier), and two buffers of partial
    // sums that the reductions over the key axis (bᵀS, qᵀS) take in turn,
    // one barrier each.
    const bool quads = decodeSchedule.decodeQuads;
    const std::string row = quads ? "group * ROWS + i" : "group + GROUPS * i";
    os << "// Decode: one block per (value tile, value head, sequence); per "
          "new token, the\n// sub-steps of rec.decode in order, the state "
          "slice read and written once and\n// kept in registers in "
          "between.\n"
       << "constexpr int GROUPS = THREADS / BV, ROWS = (DK + GROUPS - 1) / "
          "GROUPS;\n"
       << "static_assert(THREADS % BV == 0, \"threads must be a multiple of "
          "the value tile\");\n"
       << "/// Whether row d of the key axis is one of the state's: always "
          "where the threads'\n/// rows fill DK, which folds the test away "
          "(the compiler cannot know that\n/// threadIdx.x < THREADS).\n"
       << "__device__ __forceinline__ bool inState(int d) {\n"
          "  return ROWS * GROUPS == DK || d < DK;\n}\n"
       << "/// threadIdx.x, read again where the last stores use it: ptxas "
          "keeps the first\n/// read's values in registers to the end and, "
          "under the decode kernel's\n/// registers, spills them.\n"
       << "__device__ __forceinline__ int threadAgain() {\n"
          "  int t;\n"
          "  asm volatile(\"mov.u32 %0, %%tid.x;\" : \"=r\"(t));\n"
          "  return t;\n}\n"
       << "// A sub-step's vectors in shared memory: gate (its exponential), "
          "erase_along,\n// read, key, query (DK each), value (BV), strength "
          "and write strength"
       << (quads ? "; a\n// multiple of four floats, so that every vector "
                   "starts 16-byte aligned.\n"
                   "constexpr int VECTORS = (5 * DK + BV + 2 + 3) / 4 * 4;\n"
                 : ".\nconstexpr int VECTORS = 5 * DK + BV + 2;\n\n");
    if (quads)
      os << "// A thread's rows of S are ROWS consecutive ones from group * "
            "ROWS: the key-axis\n// vectors that meet them load 16 bytes at a "
            "time (QUAD = 4, one shared load\n// for four rows) where the rows "
            "come in whole fours that fill DK; else one\n// at a time.\n"
         << "constexpr int QUAD = ROWS % 4 == 0 && ROWS * GROUPS == DK ? 4 : "
            "1;\n\n"
         << "/// Rows j .. j + QUAD - 1 of the thread's rows of the key-axis "
            "vector `w` (0 past DK).\n"
         << "__device__ __forceinline__ void rowsOf(const float *w, int group, "
            "int j, float (&out)[QUAD]) {\n"
         << "  const int d = group * ROWS + j;\n"
         << "  if constexpr (QUAD == 4) {\n"
         << "    const float4 x = *reinterpret_cast<const float4 *>(w + d);\n"
         << "    out[0] = x.x, out[1] = x.y, out[2] = x.z, out[3] = x.w;\n"
         << "  } else {\n"
         << "    out[0] = inState(d) ? w[d] : 0.f;\n"
         << "  }\n}\n\n";
    os << "/// Σ_d w[d] S[d, c] over the block: each thread's rows, then the "
          "groups' partial\n/// sums, which every thread adds itself. "
          "`partial` (GROUPS x BV) alternates between\n/// two buffers from "
          "one sum to the next, so one barrier suffices: a thread writes\n"
          "/// a buffer again only after the next sum's barrier, which every "
          "thread reaches\n/// after reading this one.\n"
       << "__device__ inline float columnSum(const float (&s)[ROWS], const "
          "float *w, float *partial,\n"
       << "                                 int group, int c) {\n"
       << "  float part = 0.f;\n"
       << "#pragma unroll\n"
       << (quads ? "  for (int j = 0; j < ROWS; j += QUAD) {\n"
                   "    float x[QUAD];\n"
                   "    rowsOf(w, group, j, x);\n"
                   "#pragma unroll\n"
                   "    for (int e = 0; e < QUAD; ++e)\n"
                   "      part += x[e] * s[j + e];\n  }\n"
                 : "  for (int i = 0; i < ROWS; ++i) {\n"
                   "    const int d = group + GROUPS * i;\n"
                   "    if (inState(d))\n      part += w[d] * s[i];\n  }\n")
       << "  partial[group * BV + c] = part;\n  __syncthreads();\n"
       << "  float sum = 0.f;\n"
       << "#pragma unroll\n"
       << "  for (int gr = 0; gr < GROUPS; ++gr)\n"
       << "    sum += partial[gr * BV + c];\n"
       << "  return sum;\n}\n\n"
       << "// Decode's speed is the state slices in flight: its registers "
          "leave room for\n// RKC_DECODE_BLOCKS blocks an SM (rkc compile "
          "--decode-blocks; 0: ptxas chooses).\n"
       << "#ifndef RKC_DECODE_BLOCKS\n#define RKC_DECODE_BLOCKS "
       << s.decodeBlocks << "\n#endif\n"
       << "#if RKC_DECODE_BLOCKS > 0\n"
          "#define RKC_DECODE_BOUNDS __launch_bounds__(THREADS, "
          "RKC_DECODE_BLOCKS)\n#else\n"
          "#define RKC_DECODE_BOUNDS __launch_bounds__(THREADS)\n#endif\n"
       << "// With -DRKC_PROFILE_DECODE, every 1024th block prints for each "
          "warp the cycles of\n// its last token: its row loads (to its "
          "last store of them), its wait at the\n// barrier after them, and "
          "the sums and updates after that (rkc-profile-decode).\n"
       << "#ifdef RKC_PROFILE_DECODE\n"
          "#define RKC_DECODE_STAMP(k) stamp[k] = clock64()\n#else\n"
          "#define RKC_DECODE_STAMP(k) (void)0\n#endif\n"
       << "extern \"C\" __global__ void RKC_DECODE_BOUNDS\nrkc_" << name
       << "_decode_kernel(const Params p) {\n"
       << "  extern __shared__ float4 smem4[];\n"
       << "  float *const smem = reinterpret_cast<float *>(smem4);\n"
       << "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n"
       << "  const int64_t v0 = blockIdx.x * BV, hv = blockIdx.y, seq = "
          "blockIdx.z;\n"
       << kernelPreamble()
       << "  const int c = threadIdx.x % BV, group = threadIdx.x / BV;\n"
       << "  (void)lane;\n"
       << "  float *const partials = smem; // two buffers of GROUPS x BV\n"
       << "  unsigned sums = 0; // reductions so far: which buffer is next\n"
       << "#ifdef RKC_PROFILE_DECODE\n  long long stamp[4] = {};\n#endif\n"
       << "  const int64_t base = ((slot * p.value_heads + hv) * DK) * DV + "
          "v0 + c;\n"
       // Measured on EDA at (64, 32): held across the tokens, `base` was
       // what ptxas spilled, and its reload before the final stores waited
       // on L2 (6% of the kernel's stall samples).
       << "  // The block's offset of the final state, kept in shared memory "
          "rather than in\n  // registers held across the tokens: the "
          "registers are the kernel's limit.\n"
       << "  __shared__ int64_t stateBase[THREADS / 32];\n"
       << "  if (lane == 0)\n    stateBase[warp] = base - c;\n"
       << "  __syncwarp();\n"
       << "  float s[ROWS];\n"
       << "#pragma unroll\n"
       << "  for (int i = 0; i < ROWS; ++i) {\n"
       << "    const int d = " << row << ";\n"
       << "    s[i] = p.a.initial_state && inState(d) ? p.a.initial_state[base "
          "+ "
          "d * DV] : 0.f;\n  }\n";
    for (size_t slot = 0; slot < decodePlan.substeps.size(); ++slot) {
      std::string n = std::to_string(slot);
      os << "  float *const gate" << n << " = smem + 2 * THREADS + " << n
         << " * VECTORS, *const along" << n << " = gate" << n
         << " + DK, *const at" << n << " = along" << n << " + DK;\n"
         << "  float *const key" << n << " = at" << n << " + DK, *const query"
         << n << " = key" << n << " + DK, *const value" << n << " = query"
         << n << " + DK;\n"
         << "  float *const strengths" << n << " = value" << n << " + BV;\n";
    }
    // Measured on EDA and DeltaProduct: ptxas hoisted every role's row
    // offset but for the token out of the loop and, at the kernel's 48
    // registers, spilled some; their reloads wait on L2.
    os << "  for (int64_t t = bos; t < eos; ++t) {\n"
       << "    RKC_DECODE_STAMP(0);\n"
       << "    // Opaque copies of the sequence's row and head: the roles' row "
          "offsets are\n    // computed where they load, not held in registers "
          "across the tokens.\n"
       << "    int64_t rowT = row, hvT = hv;\n"
       << "    asm volatile(\"\" : \"+l\"(rowT), \"+l\"(hvT));\n"
       << "    // Every sub-step's row vectors: the roles dealt to the warps "
          "in "
          "turn, a warp's\n    // rows all loaded before it stores any.\n";
    // The roles in order, dealt to the warps in turn; a warp with several
    // loads all of its rows before storing any (one round trip, not one a
    // role).
    std::vector<RoleLoad> loads = decodeLoads();
    size_t warps = std::max<int64_t>(1, s.threads / 32);
    for (size_t w = 0; w < std::min(warps, loads.size()); ++w) {
      os << "    if (warp == " << w << ") {\n";
      for (size_t i = w; i < loads.size(); i += warps)
        os << "      float r" << i << "["
           << rowValueCount(decodeAxis(loads[i].role)) << "];\n      decode_s"
           << loads[i].slot << "_" << roleName(loads[i].role)
           << "_values(p, rowT, t, hvT, r" << i << ");\n";
      for (size_t i = w; i < loads.size(); i += warps) {
        Axis axis = decodeAxis(loads[i].role);
        std::string r = "r" + std::to_string(i);
        // The gate's exponential once a token, not once a state element.
        if (loads[i].role == RowRole::gate)
          os << "      for (int c = 0; c < " << rowValueCount(axis)
             << "; ++c)\n        " << r << "[c] = __expf(" << r << "[c]);\n";
        for (const std::string &dst : loads[i].dsts)
          os << "      {\n        float *const dst = " << dst << ";\n"
             << rowStore(axis, r, "", "        ", /*consecutive=*/true)
             << "      }\n";
      }
      os << "    }\n";
    }
    os << "    RKC_DECODE_STAMP(1);\n    __syncthreads();\n"
       << "    RKC_DECODE_STAMP(2);\n";
    auto sum = [&](const std::string &w) {
      return "columnSum(s, " + w +
             ", partials + (sums++ & 1u) * THREADS, group, c)";
    };
    for (size_t slot = 0; slot < decodePlan.substeps.size(); ++slot) {
      const SpecPlan::Substep &sub = decodePlan.substeps[slot];
      bool channel = channelGate(decodePlan, sub);
      std::string n = std::to_string(slot);
      os << "    // Sub-step " << slot << ": S ← Diag(exp g) S - α x (bᵀS) "
            "+ κ k vᵀ\n";
      if (sub.eraseAlong >= 0)
        os << "    const float u" << n << " = " << sum("at" + n) << ";\n";
      if (quads) {
        // The key-axis vectors this sub-step applies, QUAD rows at a time.
        SmallVector<std::pair<std::string, std::string>> rows;
        if (sub.gate >= 0 && channel)
          rows.push_back({"gate", "gate" + n});
        if (sub.eraseAlong >= 0)
          rows.push_back({"along", "along" + n});
        if (sub.key >= 0)
          rows.push_back({"key", "key" + n});
        os << "#pragma unroll\n"
           << "    for (int j = 0; j < ROWS; j += QUAD) {\n";
        for (auto &[local, vector] : rows)
          os << "      float " << local << "[QUAD];\n"
             << "      rowsOf(" << vector << ", group, j, " << local << ");\n";
        os << "#pragma unroll\n"
           << "      for (int e = 0; e < QUAD; ++e) {\n";
      } else {
        os << "#pragma unroll\n"
           << "    for (int i = 0; i < ROWS; ++i) {\n"
           << "      const int d = inState(group + GROUPS * i) ? group + GROUPS * "
              "i : 0;\n";
      }
      // Row i, or row e of the quad from j; the vectors' values there.
      const std::string at = quads ? "        s[j + e]" : "      s[i]";
      auto of = [&](const std::string &local, const std::string &vector) {
        return quads ? local + "[e]" : vector + n + "[d]";
      };
      if (sub.gate >= 0)
        os << at << " *= "
           << (channel ? of("gate", "gate") : "gate" + n + "[0]") << ";\n";
      if (sub.eraseAlong >= 0)
        os << at << " -= strengths" << n << "[0] * " << of("along", "along")
           << " * u" << n << ";\n";
      if (sub.key >= 0)
        os << at << " += strengths" << n << "[1] * " << of("key", "key")
           << " * value" << n << "[c];\n";
      os << (quads ? "      }\n    }\n" : "    }\n");
      if (sub.query >= 0)
        os << "    {\n      const float o = " << sum("query" + n) << ";\n"
           << "      if (group == 0) {\n"
           << "        int64_t rowO = row, hvO = hv; // opaque, as rowT\n"
           << "        asm volatile(\"\" : \"+l\"(rowO), \"+l\"(hvO));\n"
           << "        store(p.a.o, rowO * p.a.o.stride[0] + t * "
              "p.a.o.stride[1] + hvO * p.a.o.stride[2] + (v0 + threadAgain() "
              "% BV) * p.a.o.stride[3], o);\n      }\n    }\n";
    }
    // The next token's row loads overwrite the vectors read above; after
    // the last token no thread waits for the others.
    os << "    RKC_DECODE_STAMP(3);\n    if (t + 1 < eos)\n      "
          "__syncthreads();\n  }\n"
       << "#ifdef RKC_PROFILE_DECODE\n"
       << "  const long long block = blockIdx.x + gridDim.x * (blockIdx.y + "
          "(long long)gridDim.y * blockIdx.z);\n"
       << "  if (block % 1024 == 0 && lane == 0 && stamp[0])\n"
       << "    printf(\"rkc-profile-decode block %lld warp %d loads %lld "
          "barrier %lld sums %lld\\n\", block, warp,\n"
       << "           stamp[1] - stamp[0], stamp[2] - stamp[1], stamp[3] - "
          "stamp[2]);\n#endif\n"
       << "  if (p.a.final_state) {\n"
       << "    const int tid = threadAgain(), c = tid % BV, group = tid / BV;\n"
       << "#pragma unroll\n"
       << "    for (int i = 0; i < ROWS; ++i) {\n"
       << "      const int d = " << row << ";\n"
       << "      if (inState(d))\n"
       << "        p.a.final_state[stateBase[tid / 32] + c + d * DV] = s[i];\n"
       << "    }\n  }\n"
       << "}\n";
  }

  //===--------------------------------------------------------------------===//
  // Host launchers
  //===--------------------------------------------------------------------===//

  void emitLauncher(std::string &text, int64_t prefillBytes,
                    int64_t prefillTensorCoreBytes, int64_t decodeBytes) {
    llvm::raw_string_ostream os(text);
    double defaultScale = plan.scale ? *plan.scale : 1.0 / std::sqrt(double(s.dk));
    if (split && s.workspaceHalfLeanBytes)
      os << "/* Whether the scan may stage a tensor's rows from it by 16-byte "
            "copies: bf16\n * elements, a unit last stride, rows 16-byte "
            "aligned. */\n"
         << "#ifndef RKC_ROWS_BY_16_BYTES /* once where tuned launchers "
            "are included together */\n"
         << "#define RKC_ROWS_BY_16_BYTES\n"
         << "static int rkc_rows_by_16_bytes(const rkc_tensor *x) {\n"
         << "  if (x->dtype != RKC_BF16 || x->rank < 1 || "
            "x->stride[x->rank - 1] != 1 ||\n"
         << "      ((uintptr_t)x->data & 15))\n    return 0;\n"
         << "  for (int32_t d = 0; d + 1 < x->rank; ++d)\n"
         << "    if (x->stride[d] % 8)\n      return 0;\n"
         << "  return 1;\n}\n#endif\n\n";
    os << "/* Validates the arguments and derives the sizes the kernels "
          "take. */\n"
       << "static rkc_status rkc_" << name << "_prepare(const rkc_" << name
       << "_args *a, rkc_" << name << "_kernel_params *p) {\n"
       << "  if (!a)\n    return rkc_fail(RKC_ERROR_NULL_POINTER, \"@" << name
       << ": args is a null pointer\");\n"
       << "  const uint32_t floats = (1u << RKC_F32) | (1u << RKC_BF16) | "
          "(1u << RKC_F16);\n"
       << "  rkc_status status;\n"
       << "  p->a = *a;\n";
    // B and T from the first per-token input; heads from all.
    const SpecPlan::Input *first = nullptr;
    for (const SpecPlan::Input &in : plan.inputs)
      if (in.rate != Rate::head && !first)
        first = &in;
    int64_t rowsPerToken = plan.substepRows(plan.params);
    os << "  const int64_t B = a->" << first->name << ".shape[0];\n"
       << "  const int64_t T = a->" << first->name << ".shape[1]"
       << (first->rate == Rate::substep
               ? " / " + std::to_string(rowsPerToken)
               : std::string())
       << ";\n"
       << "  int64_t H = INT64_MAX, HV = 0;\n";
    for (const SpecPlan::Input &in : plan.inputs) {
      int headDim = in.rate == Rate::head ? 0 : 2;
      os << "  if (a->" << in.name << ".rank > " << headDim << ") {\n"
         << "    H = a->" << in.name << ".shape[" << headDim << "] < H ? a->"
         << in.name << ".shape[" << headDim << "] : H;\n"
         << "    HV = a->" << in.name << ".shape[" << headDim << "] > HV ? a->"
         << in.name << ".shape[" << headDim << "] : HV;\n  }\n";
    }
    os << "  if (H < 1 || HV % H)\n"
       << "    return rkc_fail(RKC_ERROR_SHAPE, \"@" << name
       << ": head counts %lld and %lld do not form a GVA group\", (long "
          "long)H, (long long)HV);\n";
    for (const SpecPlan::Input &in : plan.inputs) {
      int headDim = in.rate == Rate::head ? 0 : 2;
      int rank = (in.rate == Rate::head ? 1 : 3) + (in.side != Side::Scalar);
      std::string dim = in.side == Side::Key     ? std::to_string(s.dk)
                        : in.side == Side::Value ? std::to_string(s.dv)
                                                 : "";
      std::string shape;
      if (in.rate != Rate::head)
        shape += "B, " + std::string(in.rate == Rate::substep
                                         ? "T * " + std::to_string(rowsPerToken)
                                         : "T") +
                 ", ";
      shape += "a->" + in.name + ".shape[" + std::to_string(headDim) + "]";
      if (!dim.empty())
        shape += ", " + dim;
      os << "  {\n    const int64_t shape[] = {" << shape << "};\n"
         << "    if ((status = rkc_check_tensor(\"" << in.name << "\", &a->"
         << in.name << ", " << rank << ", shape, floats)))\n"
         << "      return status;\n"
         << "    if (a->" << in.name << ".shape[" << headDim << "] != H && a->"
         << in.name << ".shape[" << headDim << "] != HV)\n"
         << "      return rkc_fail(RKC_ERROR_SHAPE, \"" << in.name
         << " has %lld heads; expected H = %lld or HV = %lld\", (long "
            "long)a->"
         << in.name << ".shape[" << headDim
         << "], (long long)H, (long long)HV);\n  }\n";
    }
    os << "  {\n    const int64_t shape[] = {B, T, HV, " << s.dv << "};\n"
       << "    if ((status = rkc_check_tensor(\"o\", &a->o, 4, shape, "
          "floats)) || (status = rkc_check_writable(\"o\", &a->o)))\n"
          "      return status;\n  }\n"
       << "  int64_t N = B;\n"
       << "  if (a->cu_seqlens) {\n"
       << "    if (B != 1)\n      return rkc_fail(RKC_ERROR_CU_SEQLENS, "
          "\"cu_seqlens packs sequences into one batch row, but B = %lld\", "
          "(long long)B);\n"
       << "    if (a->num_seqs < 1)\n      return "
          "rkc_fail(RKC_ERROR_CU_SEQLENS, \"num_seqs must be at least 1 with "
          "cu_seqlens, got %lld\", (long long)a->num_seqs);\n"
       << "    if (a->cu_seqlens_host && (status = "
          "rkc_check_cu_seqlens(a->cu_seqlens_host, a->num_seqs, T)))\n"
       << "      return status;\n"
       << "    N = a->num_seqs;\n  }\n"
       << "  if ((uintptr_t)a->initial_state % 4 || (uintptr_t)a->final_state "
          "% 4)\n"
       << "    return rkc_fail(RKC_ERROR_ALIGNMENT, \"states must be "
          "4-byte aligned\");\n"
       << "  if (!(a->scale >= 0) || a->scale > 3.4e38f)\n    return "
          "rkc_fail(RKC_ERROR_SHAPE, \"scale must be positive and finite, got "
          "%g\", (double)a->scale);\n"
       << "  if (N > 65535 || HV > 65535)\n    return "
          "rkc_fail(RKC_ERROR_SHAPE, \"at most 65535 sequences and value "
          "heads a call, got %lld and %lld\", (long long)N, (long long)HV);\n"
       << "  if (a->scale == 0)\n    p->a.scale = "
       << llvm::formatv("{0:e}", defaultScale).str() << "f;\n"
       << "  p->batch = B;\n  p->length = T;\n  p->key_heads = H;\n"
       << "  p->value_heads = HV;\n  p->num_seqs = N;\n"
       << "  p->workspace = NULL;\n"
       << "  p->chunk_begin = 0;\n  p->chunk_end = INT64_MAX;\n"
       << "  p->carry = NULL;\n  p->carry_in = p->carry_out = 0;\n"
       << "  p->chunk_slots = 0;\n"
       << (outPhase ? "  p->out_workspace = NULL;\n" : "");
    // The scan of the kernels for 16-bit outputs stages raw input rows
    // (rec.raw_input) from the inputs where each one's layout allows
    // 16-byte copies: bf16 like the workspace would hold them, a unit last
    // stride, 16-byte aligned rows.
    std::set<std::string> rawInputs;
    if (split && s.workspaceHalfLeanBytes)
      for (Operation &op : chunkedOp.getBody().front())
        if (auto input = op.getAttrOfType<StringAttr>("rec.raw_input"))
          rawInputs.insert(input.str());
    os << "  p->rows_from_inputs = ";
    if (rawInputs.empty())
      os << "0";
    else
      os << "a->o.dtype != RKC_F32";
    for (const std::string &input : rawInputs)
      os << " &&\n      rkc_rows_by_16_bytes(&a->" << input << ")";
    os << ";\n"
       << "  return RKC_SUCCESS;\n}\n\n";
    // The split kernels' workspace: a (chunk slot, value head) each. Batch
    // rows have ceil(T / C) slots; packed sequences take num_seqs + ceil(T /
    // C) in all (chunkWorkspace in the kernels).
    // With chunk_slots (rkc_NAME_chunk_slots) a batch row has that many.
    os << "static size_t rkc_" << name << "_workspace_bytes(const rkc_" << name
       << "_kernel_params *p) {\n";
    if (split)
      os << "  const int64_t perSeq = (p->length + " << C << " - 1) / " << C
         << ";\n"
         << "  const int64_t slots = p->a.cu_seqlens ? p->num_seqs + perSeq\n"
         << "                        : p->batch * (p->chunk_slots ? "
            "p->chunk_slots : perSeq);\n"
         << "  return perSeq == 0 ? 0 : (size_t)slots * p->value_heads *\n"
         << "         (p->a.o.dtype == RKC_F32 ? RKC_" << upper()
         << "_WORKSPACE_BYTES : "
         << (s.workspaceHalfLeanBytes ? "p->rows_from_inputs ? RKC_" + upper() +
                                            "_WORKSPACE_BYTES_16_LEAN : "
                                      : std::string())
         << "RKC_" << upper() << "_WORKSPACE_BYTES_16);\n}\n\n";
    else
      os << "  (void)p;\n  return 0;\n}\n\n";
    if (outPhase)
      os << "/* What the scan hands the out kernel: a (chunk slot, value "
            "head) each, slots as the\n * split kernels' workspace has them "
            "without a ring. */\n"
         << "static size_t rkc_" << name << "_out_workspace_bytes(const rkc_"
         << name << "_kernel_params *p) {\n"
         << "  const int64_t perSeq = (p->length + " << C << " - 1) / " << C
         << ";\n"
         << "  const int64_t slots = p->a.cu_seqlens ? p->num_seqs + perSeq : "
            "p->batch * perSeq;\n"
         << "  return perSeq == 0 ? 0 : (size_t)slots * p->value_heads *\n"
         << "         (p->a.o.dtype == RKC_F32 ? RKC_" << upper()
         << "_OUT_WORKSPACE_BYTES : RKC_" << upper()
         << "_OUT_WORKSPACE_BYTES_16);\n}\n\n";
    if (split) {
      // At small B x H the scan's blocks leave SMs idle through its chunk
      // after chunk walk; the chunks then run in segments, the prep of one
      // beside the scan of the one before, ordered by events only (no
      // kernel waits on another, so nothing can hang if they do not run at
      // the same time).
      os << "/* The segments the prefill runs each sequence's chunks in: "
            "where the scan's blocks\n"
            " * leave half the multiprocessors free, --scan-segments (or "
            "RKC_SCAN_SEGMENTS, 1 for\n"
            " * none), the prep of one beside the scan of the one before on "
            "a second stream\n"
            " * (*side); else 1. */\n"
         << chunkFunctionHead("segments", ", CUstream stream, CUstream *side")
         << "  int64_t wanted = " << s.scanSegments << ";\n"
         << "  const char *env = getenv(\"RKC_SCAN_SEGMENTS\");\n"
         << "  if (env && *env) {\n"
         << "    char *end;\n"
         << "    const long long value = strtoll(env, &end, 10);\n"
         << "    if (!*end && value >= 1)\n      wanted = value < 64 ? value : "
            "64;\n  }\n"
         << "  int multiprocessors = 0;\n"
         << "  if (wanted < 2 || perSeq < 2 ||\n"
         << "      rkc_side_stream(stream, side, &multiprocessors) != "
            "RKC_SUCCESS ||\n"
         << "      2ull * " << s.dv / s.valueTile
         << " * p->value_heads * p->num_seqs > (unsigned long long)"
            "multiprocessors)\n"
         << "    return 1;\n"
         << "  const int64_t n = wanted < perSeq ? wanted : perSeq;\n"
         << "  const int64_t per = (perSeq + n - 1) / n;\n"
         << "  return (perSeq + per - 1) / per; /* none empty */\n}\n\n"
         << "/* Workspace slots a batch row with three segments or more: two "
            "segments' chunks,\n"
            " * taken in turn (the prep of segment k + 1 runs after the scan "
            "of k - 1, whose\n"
            " * slots it reuses, and beside the scan of k); else, or with "
            "RKC_WORKSPACE_RING=0,\n"
            " * 0: a slot a chunk. */\n"
         << chunkFunctionHead("chunk_slots", ", int64_t segments")
         << "  const int64_t per = (perSeq + segments - 1) / segments;\n"
         << "  const char *env = getenv(\"RKC_WORKSPACE_RING\");\n"
         << "  if ((env && env[0] == '0' && !env[1]) || p->a.cu_seqlens || "
            "segments < 3)\n"
         << "    return 0;\n"
         << "  return 2 * per < perSeq ? 2 * per : 0;\n}\n\n"
         << "/* The state between segments: [N, HV, dk, dv] floats, after "
            "the workspace. */\n"
         << "static size_t rkc_" << name << "_carry_bytes(const rkc_" << name
         << "_kernel_params *p, int64_t segments) {\n"
         << "  return segments > 1 ? (size_t)p->num_seqs * p->value_heads * "
         << s.dk * s.dv * 4 << " : 0;\n}\n\n";
    }
    os << "rkc_status rkc_" << name << "_fwd_workspace(const rkc_" << name
       << "_args *args, size_t *bytes) {\n"
       << "  if (!bytes)\n    return rkc_fail(RKC_ERROR_NULL_POINTER, \"@"
       << name << ": bytes is a null pointer\");\n"
       << "  *bytes = 0;\n"
       << "  rkc_" << name << "_kernel_params params;\n"
       << "  const rkc_status status = rkc_" << name
       << "_prepare(args, &params);\n"
       << "  if (status)\n    return status;\n"
       << "  *bytes = rkc_" << name << "_workspace_bytes(&params)"
       << (outPhase ? " + rkc_" + name + "_out_workspace_bytes(&params)" : "")
       << ";\n";
    if (split)
      os << "  CUstream side = NULL;\n"
         << "  if (*bytes) { /* as a call on the legacy default stream would "
            "take it */\n"
         << "    const int64_t segments = rkc_" << name
         << "_segments(&params, NULL, &side);\n"
         << "    params.chunk_slots = rkc_" << name
         << "_chunk_slots(&params, segments);\n"
         << "    *bytes = rkc_" << name << "_workspace_bytes(&params) + rkc_"
         << name << "_carry_bytes(&params, segments)"
         << (outPhase ? " + rkc_" + name + "_out_workspace_bytes(&params)" : "")
         << ";\n  }\n";
    os << "  return RKC_SUCCESS;\n}\n\n";
    for (auto [kind, kernel, bytes] :
         {std::tuple{"fwd", "prefill_kernel", prefillBytes},
          std::tuple{"decode", "decode_kernel", decodeBytes}}) {
      os << "rkc_status rkc_" << name << "_" << kind
         << "(CUstream stream, const rkc_" << name << "_args *args) {\n"
         << "  rkc_" << name << "_kernel_params params;\n"
         << "  rkc_status status = rkc_" << name
         << "_prepare(args, &params);\n"
         << "  if (status)\n    return status;\n"
         << "  const unsigned grid[3] = {" << s.dv / s.valueTile
         << ", (unsigned)params.value_heads, (unsigned)params.num_seqs};\n"
         << "  const unsigned block[3] = {" << s.threads << ", 1, 1};\n";
      std::string kernelName = "\"rkc_" + name + "_" + kernel + "\"";
      bool fwd = std::string(kind) == "fwd";
      // The prefill kernel for 16-bit outputs may need another amount of
      // shared memory than the float32 one (prefillTensorCoreBytes: less
      // with two buffers each, more where the float32 kernel has one).
      std::string smem = std::to_string(bytes);
      if (fwd && prefillTensorCoreBytes != bytes)
        smem = "(params.a.o.dtype == RKC_F32 ? " + smem + " : " +
               std::to_string(prefillTensorCoreBytes) + ")";
      if (fwd)
        // 16-bit outputs: the chunk products on TF32 tensor cores (MATH.md's
        // bf16 tolerance); float32 outputs keep float32 products.
        kernelName = "params.a.o.dtype == RKC_F32 ? " + kernelName +
                     " : \"rkc_" + name + "_" + kernel + "_tc\"";
      // The out kernel after a scan, over its chunks (`chunks` from
      // `launched.chunk_begin` on) at once, indented by `indent`.
      std::string outName = "params.a.o.dtype == RKC_F32 ? \"rkc_" + name +
                            "_out_kernel\" : \"rkc_" + name +
                            "_out_kernel_tc\"";
      auto outLaunch = [&](StringRef chunks, StringRef launched,
                           StringRef indent) {
        return (indent +
                "/* x: the chunks one after another, the value heads of "
                "each in turn. */\n" +
                indent + "const unsigned outGrid[3] = {(unsigned)(" + chunks +
                " * params.value_heads), " +
                std::to_string(s.outValueLoop ? 1 : s.dv / s.valueTile) +
                ", (unsigned)params.num_seqs};\n" + indent + "if (!status)\n" +
                indent + "  status = rkc_launch(&rkc_" + name + "_module, " +
                outName + ", outGrid, block, " +
                std::to_string(s.outSharedBytes) + ", stream, &" + launched +
                ", sizeof " + launched + ");\n")
            .str();
      };
      if (fwd && outPhase && !split) {
        // The scan, then the out kernel over every chunk at once; what
        // crosses between them is stream-ordered memory (as the split
        // kernels' workspace).
        std::string module = "&rkc_" + name + "_module";
        os << "  const int64_t perSeq = (params.length + " << C << " - 1) / "
           << C << ";\n"
           << "  if (perSeq == 0 || !rkc_" << name << "_module.image)\n"
           << "    return rkc_launch(" << module << ", " << kernelName
           << ", grid, block, " << smem
           << ", stream, &params, sizeof params);\n"
           << "  if ((uint64_t)perSeq * (uint64_t)params.value_heads > "
              "0x7fffffffu)\n"
           << "    return rkc_fail(RKC_ERROR_SHAPE, \"@" << name
           << ": %lld chunks of %lld value heads are more out blocks than "
              "a grid row holds\",\n"
           << "                    (long long)perSeq, (long long)"
              "params.value_heads);\n"
           << "  if ((status = rkc_stream_alloc(&params.out_workspace, rkc_"
           << name << "_out_workspace_bytes(&params), stream)))\n"
           << "    return status;\n"
           << "  status = rkc_launch(" << module << ", " << kernelName
           << ", grid, block, " << smem
           << ", stream, &params, sizeof "
              "params);\n"
           << outLaunch("perSeq", "params", "  ")
           << "  const rkc_status freed = "
              "rkc_stream_free(params.out_workspace, "
              "stream);\n"
           << "  return status ? status : freed;\n}\n\n";
        continue;
      }
      if (fwd && split) {
        // The prep kernel over every chunk at once, then the scan; the
        // workspace between them is stream-ordered memory. Without tokens,
        // or without kernels (a launcher built without a fatbin: its calls
        // return RKC_ERROR_NO_KERNELS), the scan's launch answers alone,
        // before any allocation touches the driver.
        std::string module = "&rkc_" + name + "_module";
        std::string prepName = "params.a.o.dtype == RKC_F32 ? \"rkc_" + name +
                               "_prep_kernel\" : \"rkc_" + name +
                               "_prep_kernel_tc\"";
        auto launch = [&](StringRef kernelExpr, StringRef gridName,
                          StringRef smem, StringRef streamName,
                          StringRef paramsName) {
          return ("rkc_launch(" + module + ", " + kernelExpr + ", " + gridName +
                  ", block, " + smem + ", " + streamName + ", &" + paramsName +
                  ", sizeof " + paramsName + ")")
              .str();
        };
        std::string P = "rkc_" + name + "_kernel_params";
        os << "  const int64_t perSeq = (params.length + " << C << " - 1) / "
           << C << ";\n"
           << "  if (perSeq == 0 || !rkc_" << name << "_module.image)\n"
           << "    return "
           << launch(kernelName, "grid", smem, "stream", "params") << ";\n"
           << "  if ((uint64_t)perSeq * (uint64_t)params.value_heads > "
              "0x7fffffffu)\n"
           << "    return rkc_fail(RKC_ERROR_SHAPE, \"@" << name
           << ": %lld chunks of %lld value heads are more prep blocks than "
              "a grid row holds\",\n"
           << "                    (long long)perSeq, (long long)"
              "params.value_heads);\n"
           << "  CUstream side = NULL;\n"
           << "  const int64_t segments = rkc_" << name
           << "_segments(&params, stream, &side);\n"
           << "  const int64_t per = (perSeq + segments - 1) / segments; /* "
              "chunks a segment */\n"
           << "  params.chunk_slots = rkc_" << name
           << "_chunk_slots(&params, segments);\n"
           << "  const size_t workspace = rkc_" << name
           << "_workspace_bytes(&params);\n"
           << "  if ((status = rkc_stream_alloc((void **)&params.workspace, "
              "workspace + rkc_"
           << name << "_carry_bytes(&params, segments)"
           << (outPhase ? " + rkc_" + name + "_out_workspace_bytes(&params)"
                        : "")
           << ", stream)))\n"
           << "    return status;\n"
           << "  if (segments > 1)\n"
           << "    params.carry = (float *)((unsigned char *)params.workspace "
              "+ workspace);\n"
           << (outPhase ? "  /* What the scan hands the out kernel, after "
                          "the carry. */\n"
                          "  params.out_workspace = (unsigned char "
                          "*)params.workspace + workspace + rkc_" +
                              name + "_carry_bytes(&params, segments);\n"
                        : "")
           << "  /* x: a segment's chunks one after another, the value heads "
              "of each in turn. */\n"
           << "  const unsigned prepGrid[3] = {(unsigned)(per * "
              "params.value_heads), 1, (unsigned)params.num_seqs};\n"
           << "  " << P << " prep = params;\n"
           << "  status = "
           << launch(prepName, "prepGrid", std::to_string(s.prepSharedBytes),
                     "stream", "prep")
           << ";\n"
           << "  for (int64_t k = 0; k < segments && !status; ++k) {\n"
           << "    " << P << " scan = params;\n"
           << "    scan.chunk_begin = k * per;\n"
           << "    scan.chunk_end = k + 1 < segments ? (k + 1) * per : "
              "INT64_MAX;\n"
           << "    scan.carry_in = k > 0;\n"
           << "    scan.carry_out = k + 1 < segments;\n"
           << "    /* The next segment's prep on the side stream after what "
              "the stream holds so\n"
           << "     * far, not after this scan: the two may run at once. */\n"
           << "    const int fork = k + 1 < segments;\n"
           << "    if (fork && (status = rkc_stream_wait(side, stream)))\n"
           << "      break;\n"
           << "    status = "
           << launch(kernelName, "grid", smem, "stream", "scan") << ";\n"
           << (outPhase ? "    /* This segment's outputs, before the prep of "
                          "segment k + 2 (forked after\n"
                          "     * what the stream then holds) reuses its "
                          "workspace slots. */\n" +
                              outLaunch("per", "scan", "    ")
                        : "")
           << "    if (fork) {\n"
           << "      prep.chunk_begin = (k + 1) * per;\n"
           << "      if (!status)\n"
           << "        status = "
           << launch(prepName, "prepGrid", std::to_string(s.prepSharedBytes),
                     "side", "prep")
           << ";\n"
           << "      const rkc_status joined = rkc_stream_wait(stream, side);\n"
           << "      if (joined) /* the workspace is freed on the stream: "
              "the prep must be done */\n"
           << "        rkc_stream_synchronize(side);\n"
           << "      status = status ? status : joined;\n"
           << "    }\n"
           << "  }\n"
           << "  const rkc_status freed = rkc_stream_free(params.workspace, "
              "stream);\n"
           << "  return status ? status : freed;\n}\n\n";
        continue;
      }
      os << "  return rkc_launch(&rkc_" << name << "_module, " << kernelName
         << ", grid, block, " << smem
         << ", stream, &params, sizeof params);\n}\n\n";
    }
  }

  /// A JSON description of the generated ABI, for bindings (ctypes, torch).
  void emitManifest(std::string &text) {
    llvm::raw_string_ostream os(text);
    auto sideName = [](Side side) {
      return side == Side::Key ? "key" : side == Side::Value ? "value"
                                                             : "scalar";
    };
    os << "{\n  \"name\": \"" << name << "\",\n  \"dk\": " << s.dk
       << ",\n  \"dv\": " << s.dv << ",\n  \"substep_rows\": "
       << plan.substepRows(plan.params) << ",\n  \"chunk_size\": " << C
       << ",\n  \"prefill\": \"rkc_" << name << "_fwd\",\n"
       << "  \"decode\": \"rkc_" << name << "_decode\",\n"
       << "  \"prefill_workspace\": \"rkc_" << name << "_fwd_workspace\",\n"
       << "  \"inputs\": [";
    for (auto [i, in] : llvm::enumerate(plan.inputs))
      os << (i ? "," : "") << "\n    {\"name\": \"" << in.name
         << "\", \"side\": \"" << sideName(in.side) << "\", \"rate\": \""
         << stringifyRate(in.rate) << "\", \"layout\": \""
         << describeLayout(in) << "\"}";
    os << "\n  ]\n}\n";
  }

  RecurrenceOp chunkedRec, decodeRec;
  ChunkedOp chunkedOp;
  CudaSchedule s;
  CudaSchedule decodeSchedule; // rec.decode's: its own layout choices
  SpecPlan plan, decodePlan;
  std::string name;
  int64_t m = 1, C = 1;
  llvm::DenseMap<Value, int64_t> offsets, prepOffsets, outOffsets;
  llvm::DenseMap<Value, int> valueIds;
  std::set<std::tuple<int64_t, RowRole, Axis>> rowFunctions;
  /// The prefill's row functions in two parts (emitRowRawFunctions).
  std::set<std::tuple<int64_t, RowRole, Axis>> rawRowFunctions;
  std::vector<std::string> profiledOps; // chunk ops, in kernel order
  bool split = false; // prep and scan kernels (--rec-split-scan)
  bool outPhase = false; // an out kernel after the scan (rec.out_phase)
  std::string emitting; // the kernel bodyText is writing: all, prep or scan
  bool writingPrep = false; // the prep kernel's body (its value columns: PBV)
  std::string unsupported; // a chunk op the emitter cannot print
  // Sums folded into the product before them (planFusedSums), per kernel:
  // the product -> its sum, and the sums (and yields) not printed at all.
  llvm::DenseMap<Operation *, ChunkAddOp> sumOfProduct;
  llvm::DenseSet<Operation *> folded;
  // Scan tiles stored as 16-bit product operands (planProductOperands).
  llvm::DenseSet<Value> productOperands;
  // Prep row tiles stored swizzled, and prep tiles only products read as B
  // stored as rkc::tile::swizzleB says (planSwizzledRows).
  llvm::DenseSet<Value> swizzledRows, swizzledB;
  // The gates whose sums the kernel being emitted has computed, each to the
  // flag that says they fall (rkc::tile::cumsum's result).
  llvm::DenseMap<Value, std::string> fallingSums;
  // decay_state ops a product's sum scales from S (planFusedSums), by product.
  llvm::DenseMap<Operation *, ChunkDecayStateOp> decayedAddend;
  llvm::DenseSet<Operation *> scaledIntoProduct;
  // Sums the output adds as it stores (planFusedSums), by output op.
  llvm::DenseMap<Operation *, ChunkAddOp> sumOfOutput;
  llvm::DenseSet<Operation *> addedByOutput;
  // Products computed with the next one (planFusedSums), by the second;
  // the first products and their sums, which print nothing.
  llvm::DenseMap<Operation *, ChunkMatmulOp> firstOfPair;
  llvm::DenseSet<Operation *> pairedFirst;
  /// Products run together with the next one of the same right operand
  /// (planSharedRight), and those next ones.
  llvm::DenseMap<Operation *, ChunkMatmulOp> sharedRightOf;
  llvm::DenseSet<Operation *> sharedRightSecond;
  /// Values a product stores straight to o, their output ops, and the
  /// output tile's rows a token (OutputRows).
  /// The scan's kernel for bf16 products keeps the state in registers
  /// (planRegisterState); while its code is written, the state's name in a
  /// product is its bf16 shadow S16.
  bool registerState = false;
  // The scan's staging buffers in the kernel for 16-bit outputs, in floats
  // (stageAtAfter; 0: not yet emitted, STAGE_AT).
  int64_t tensorCoreStageAt = 0;
  mutable bool shadowState = false;
  bool stateInRegisters = false; // the prefill kernel's (its init and end)
  /// Products whose closing barrier is left out, and whether the register
  /// state's update is (planBarriers).
  llvm::DenseSet<Operation *> noBarrier;
  /// Row ops of the prep kernel loaded with the next one (planRowPairs).
  llvm::DenseMap<Operation *, ChunkRowsOp> rowsWithNext;
  llvm::DenseSet<Operation *> rowsLoadedAbove;
  /// Key-side prep ops, and prep ops' workspace copies, whose closing
  /// barrier is left out (planPrepBarriers).
  llvm::DenseSet<Operation *> prepOpUnfenced, prepCopyUnfenced;
  /// Grams computed together (planGramPairs): each pair's second Gram by
  /// its first, and the second Grams.
  llvm::DenseMap<Operation *, ChunkGramOp> gramBelow;
  llvm::DenseSet<Operation *> gramAbove;
  /// Negations folded into their neighbours (planNegations): inverses that
  /// store -T, column scalings by -c (the map gives c), and the negs
  /// themselves.
  llvm::DenseSet<Operation *> negatedInverse, negFoldedIntoInverse,
      negFoldedIntoScaling;
  llvm::DenseMap<Operation *, Value> negatedScale;
  bool lastUpdateUnfenced = false;
  llvm::DenseSet<Value> outputRows;
  llvm::DenseSet<Operation *> outputByProduct;
  int64_t outputRowsPerToken = 0; // 0: no product stores to o
  Operation *sumIntoState = nullptr; // a folded sum written straight to S
};

} // namespace

bool emitCudaKernels(RecurrenceOp chunked, RecurrenceOp decode,
                     CudaKernels &kernels, std::string &error) {
  if (!isa<ChunkedOp>(chunked.getTransition()) ||
      !isa<DecodeOp>(decode.getTransition())) {
    error = "emitCudaKernels needs --rec-lower-chunked and "
            "--rec-lower-decode forms";
    return false;
  }
  return Emitter(chunked, decode).run(kernels, error);
}

} // namespace rkc
