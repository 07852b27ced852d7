//===- CudaBackend.cpp - rkc run --backend cuda ---------------------------===//
//
// Compiles the spec for the inputs' dk and dv (or reuses the compilation in
// the cache, keyed by a hash of the spec and the options), builds its
// launcher into a shared library with nvcc, loads it, and runs the prefill
// kernel on device 0 through the runtime's driver calls.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DeviceArgs.h"

#include "Interpreter/SpecPlan.h"
#include "rkc/runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <dlfcn.h>

using namespace llvm;

namespace rkc::cli {

bool runCudaBackend(rec::RecurrenceOp spec, const TensorMap &inputs,
                    const RunOptions &options, TensorMap &outputs,
                    std::string &error, raw_ostream &log) {
  SpecPlan plan = SpecPlan::build(spec);
  ProblemShape shape;
  if (!bindProblem(plan, inputs, options, shape, error))
    return false;

  // The cache: one compilation a spec text, size and parameter set.
  std::string text;
  raw_string_ostream os(text);
  spec->print(os);
  os << "dk=" << shape.dk << " dv=" << shape.dv;
  for (auto &[name, value] : shape.params)
    os << " " << name << "=" << value;
  os << " rkc " << RKC_VERSION;
  SmallString<128> cache;
  if (const char *dir = getenv("RKC_CACHE_DIR"))
    cache = dir;
  else if (const char *home = getenv("HOME"))
    sys::path::append(cache, home, ".cache", "rkc");
  else
    cache = "/tmp/rkc-cache";
  std::string name = plan.name;
  sys::path::append(cache, name + "-" + utohexstr(xxh3_64bits(text)));
  std::string folder = cache.str().str();
  std::string library = folder + "/lib" + name + ".so";
  if (!sys::fs::exists(library)) {
    CompileRequest request;
    request.outDir = folder;
    request.dk = shape.dk;
    request.dv = shape.dv;
    for (auto &[param, value] : shape.params)
      request.params.push_back(param + "=" + std::to_string(value));
    std::string nvcc = findNvcc("");
    if (nvcc.empty()) {
      error = "--backend cuda needs nvcc (set CUDA_HOME or PATH)";
      return false;
    }
    request.nvcc = nvcc;
    if (compileSpec(spec, request, log)) {
      error = "compiling @" + name + " for the GPU failed";
      return false;
    }
    std::string partial = library + ".partial";
    SmallVector<std::string> argv = {
        nvcc, "-shared", "-Xcompiler", "-fPIC", "-O2", "-o", partial,
        folder + "/" + name + "_launch.c", folder + "/rkc/runtime.c", "-I",
        folder, "-ldl", "-lpthread"};
    SmallVector<StringRef> refs(argv.begin(), argv.end());
    std::string message;
    if (sys::ExecuteAndWait(nvcc, refs, std::nullopt, {}, 0, 0, &message) ||
        sys::fs::rename(partial, library)) {
      error = "building " + library + " failed " + message;
      return false;
    }
  } else {
    log << "  cache     " << folder << "\n";
  }

  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = std::string("cannot load ") + library + ": " + dlerror();
    return false;
  }
  using Entry = int (*)(CUstream, const void *);
  using LastError = const char *(*)();
  auto fwd = reinterpret_cast<Entry>(
      dlsym(handle, ("rkc_" + name + "_fwd").c_str()));
  auto lastError = reinterpret_cast<LastError>(dlsym(handle, "rkc_last_error"));
  if (!fwd || !lastError) {
    error = library + " lacks rkc_" + name + "_fwd";
    return false;
  }

  if (rkc_device_open(0)) {
    error = rkc_last_error();
    return false;
  }
  DeviceBuffers buffers;
  // The args struct: the inputs' descriptors in spec order, then o, then
  // the tail.
  ArgsBlock args(plan.inputs.size());
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    if (!uploadTensor(inputs.at(plan.inputs[i].name), buffers, args.input(i),
                      error))
      return false;
  std::vector<int64_t> oShape = {shape.batch, shape.length, shape.valueHeads,
                                 shape.dv};
  int64_t oCount = shape.batch * shape.length * shape.valueHeads * shape.dv;
  int64_t stateCount =
      shape.numSequences() * shape.valueHeads * shape.dk * shape.dv;
  void *o, *finalState;
  if (!buffers.alloc(&o, oCount * 4, error) ||
      !buffers.alloc(&finalState, stateCount * 4, error))
    return false;
  args.o() = rkc_contiguous(o, RKC_F32, 4, oShape.data());
  ArgsTail *tail = &args.tail();
  tail->finalState = static_cast<float *>(finalState);
  tail->scale = static_cast<float>(shape.scale);
  if (auto it = inputs.find("initial_state"); it != inputs.end()) {
    std::vector<float> values(it->second.values.begin(),
                              it->second.values.end());
    void *device;
    if (!buffers.alloc(&device, values.size() * 4, error) ||
        rkc_device_upload(device, values.data(), values.size() * 4))
      return error.empty() ? (error = rkc_last_error(), false) : false;
    tail->initialState = static_cast<const float *>(device);
  }
  std::vector<int64_t> cuHost;
  if (auto it = inputs.find("cu_seqlens"); it != inputs.end()) {
    cuHost.assign(it->second.values.begin(), it->second.values.end());
    void *device;
    if (!buffers.alloc(&device, cuHost.size() * 8, error) ||
        rkc_device_upload(device, cuHost.data(), cuHost.size() * 8))
      return error.empty() ? (error = rkc_last_error(), false) : false;
    tail->cuSeqlens = static_cast<const int64_t *>(device);
    tail->cuSeqlensHost = cuHost.data();
    tail->numSeqs = static_cast<int64_t>(cuHost.size()) - 1;
  }

  if (int status = fwd(nullptr, args.data())) {
    error = "rkc_" + name + "_fwd failed (" + std::to_string(status) +
            "): " + lastError();
    return false;
  }
  std::vector<float> oHost(oCount), stateHost(stateCount);
  if (rkc_device_synchronize() ||
      rkc_device_download(oHost.data(), o, oCount * 4) ||
      rkc_device_download(stateHost.data(), finalState, stateCount * 4)) {
    error = rkc_last_error();
    return false;
  }
  outputs.clear();
  HostTensor oTensor(oShape, DType::F32), finalTensor(
      {shape.numSequences(), shape.valueHeads, shape.dk, shape.dv},
      DType::F32);
  oTensor.values.assign(oHost.begin(), oHost.end());
  finalTensor.values.assign(stateHost.begin(), stateHost.end());
  outputs["o"] = std::move(oTensor);
  outputs["final_state"] = std::move(finalTensor);
  return true;
}

} // namespace rkc::cli
