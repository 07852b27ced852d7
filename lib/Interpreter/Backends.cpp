//===- Backends.cpp - Running a spec through a CPU backend ----------------===//

#include "Interpreter/Backends.h"
#include "Interpreter/ChunkExecutor.h"

#include "Rec/Passes.h"

#include "mlir/IR/Diagnostics.h"

#include <limits>

using namespace mlir;

namespace rkc {

bool runBackend(rec::RecurrenceOp spec, const BackendOptions &backend,
                const TensorMap &inputs, const RunOptions &options,
                TensorMap &outputs, std::string &error) {
  if (backend.backend == "interp")
    return interpret(SpecPlan::build(spec), inputs, options, outputs, error);
  if (backend.backend != "chunked" && backend.backend != "decode") {
    error = "unknown backend '" + backend.backend +
            "' (available: interp, chunked, decode)";
    return false;
  }
  if (backend.backend == "chunked" && backend.chunkSize < 1) {
    error = "the chunk size must be a positive number of tokens, got " +
            std::to_string(backend.chunkSize);
    return false;
  }
  if (backend.segments < 1 ||
      (backend.segments > 1 && backend.backend != "chunked")) {
    error = "segments must be a positive count, and more than one only "
            "with the chunked backend; got " +
            std::to_string(backend.segments);
    return false;
  }

  // Lower a copy, so the caller's spec stays as it was.
  MLIRContext *context = spec.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(spec.getLoc());
  module->getBody()->push_back(spec->clone());
  rec::LoweringOptions lowering;
  lowering.chunkSize = backend.chunkSize;
  lowering.stateTransfer = backend.stateTransfer || backend.segments > 1;
  lowering.splitScan = backend.splitScan || backend.segments > 1;
  lowering.keepRows = backend.keepRows;
  lowering.outPhase = backend.outPhase;
  lowering.factorProducts = backend.factorProducts;
  lowering.sinkRowScales = backend.sinkRowScales;
  for (auto &[name, value] : options.params)
    lowering.params.push_back(name + "=" + std::to_string(value));
  if (backend.halfWorkspace && (backend.backend != "chunked" ||
                                !lowering.splitScan)) {
    error = "a 16-bit workspace needs the chunked backend's split form";
    return false;
  }
  if (backend.outPhase && (backend.backend != "chunked" ||
                            !lowering.splitScan || backend.segments > 1)) {
    error = "an out phase needs the chunked backend's split form, in one "
            "segment";
    return false;
  }
  if (backend.bf16Products && backend.backend != "chunked") {
    error = "bf16 products round the chunked backend's Grams and products";
    return false;
  }
  PassManager pm(context);
  if (backend.backend == "chunked")
    rec::buildLowerChunkedPipeline(pm, lowering);
  else
    rec::buildLowerDecodePipeline(pm, lowering);
  if (backend.halfWorkspace) {
    // rec-schedule decides which crossing values are 16-bit (rec.half);
    // shared memory, which the executor does not use, limits nothing.
    rec::RecScheduleOptions schedule;
    schedule.maxSharedBytes = std::numeric_limits<int64_t>::max();
    SpecPlan plan = SpecPlan::build(spec);
    for (const SpecPlan::Input &in : plan.inputs) {
      auto found = inputs.find(in.name);
      if (found == inputs.end() || found->second.shape.empty())
        continue;
      if (in.side == rec::Side::Key)
        schedule.dk = found->second.shape.back();
      if (in.side == rec::Side::Value)
        schedule.dv = found->second.shape.back();
    }
    pm.addPass(rec::createRecSchedule(schedule));
  }
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      diagnostics += diag.str();
      return success();
    });
    if (failed(pm.run(*module))) {
      error = "lowering @" + spec.getSymName().str() + " failed: " +
              diagnostics;
      return false;
    }
  }
  auto lowered = *module->getOps<rec::RecurrenceOp>().begin();
  if (backend.backend == "chunked")
    return runChunked(lowered, inputs, options, outputs, error,
                      backend.segments,
                      {backend.halfWorkspace, backend.bf16Products});
  return runDecode(SpecPlan::build(lowered), inputs, options, outputs, error);
}

} // namespace rkc
