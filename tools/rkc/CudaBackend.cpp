//===- CudaBackend.cpp - rkc run --backend cuda ---------------------------===//
//
// Compiles the spec for the inputs' dk and dv (or reuses the compilation in
// the cache, keyed by a hash of the spec and the options), builds its
// launcher into a shared library with nvcc, loads it, and runs the prefill
// kernel on device 0 through the runtime's driver calls.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

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
namespace {

/// The args struct of a generated header: one rkc_tensor per input, then o,
/// then these fields (the same member sequence, so the same layout).
struct ArgsTail {
  const float *initialState;
  float *finalState;
  const int64_t *cuSeqlens;
  const int64_t *cuSeqlensHost;
  int64_t numSeqs;
  const int32_t *stateIndices;
  float scale;
};

/// Device buffers freed when the run ends.
struct DeviceBuffers {
  std::vector<void *> pointers;
  ~DeviceBuffers() {
    for (void *p : pointers)
      rkc_device_free(p);
  }
  bool alloc(void **p, size_t bytes, std::string &error) {
    if (rkc_device_alloc(p, bytes)) {
      error = rkc_last_error();
      return false;
    }
    pointers.push_back(*p);
    return true;
  }
};

/// float64 host values as bytes of `dtype` (F32, BF16 or F16).
std::vector<uint16_t> halfBits(const HostTensor &t) {
  std::vector<uint16_t> bits(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    float f = static_cast<float>(roundToDType(t[i], t.dtype));
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (t.dtype == DType::BF16) {
      bits[i] = static_cast<uint16_t>(u >> 16); // exact: already rounded
    } else { // F16 from a value already representable in F16
      uint32_t sign = (u >> 16) & 0x8000u;
      int exponent = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
      uint32_t mantissa = u & 0x7fffffu;
      if (f == 0.f)
        bits[i] = static_cast<uint16_t>(sign);
      else if (exponent <= 0) // subnormal
        bits[i] = static_cast<uint16_t>(
            sign | ((mantissa | 0x800000u) >> (14 - exponent)));
      else if (exponent >= 31)
        bits[i] = static_cast<uint16_t>(sign | 0x7c00u);
      else
        bits[i] = static_cast<uint16_t>(sign | (exponent << 10) |
                                        (mantissa >> 13));
    }
  }
  return bits;
}

} // namespace

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
  size_t count = plan.inputs.size() + 1;
  std::vector<unsigned char> args(count * sizeof(rkc_tensor) +
                                  sizeof(ArgsTail));
  auto *descriptors = reinterpret_cast<rkc_tensor *>(args.data());
  auto *tail =
      reinterpret_cast<ArgsTail *>(args.data() + count * sizeof(rkc_tensor));
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const HostTensor &t = inputs.at(plan.inputs[i].name);
    rkc_dtype dtype = t.dtype == DType::BF16  ? RKC_BF16
                      : t.dtype == DType::F16 ? RKC_F16
                                              : RKC_F32;
    size_t bytes = t.numel() * (dtype == RKC_F32 ? 4 : 2);
    void *device;
    if (!buffers.alloc(&device, bytes, error))
      return false;
    rkc_status status;
    if (dtype == RKC_F32) {
      std::vector<float> values(t.values.begin(), t.values.end());
      status = rkc_device_upload(device, values.data(), bytes);
    } else {
      std::vector<uint16_t> bits = halfBits(t);
      status = rkc_device_upload(device, bits.data(), bytes);
    }
    if (status) {
      error = rkc_last_error();
      return false;
    }
    descriptors[i] = rkc_contiguous(device, dtype,
                                    static_cast<int32_t>(t.rank()),
                                    t.shape.data());
  }
  std::vector<int64_t> oShape = {shape.batch, shape.length, shape.valueHeads,
                                 shape.dv};
  int64_t oCount = shape.batch * shape.length * shape.valueHeads * shape.dv;
  int64_t stateCount =
      shape.numSequences() * shape.valueHeads * shape.dk * shape.dv;
  void *o, *finalState;
  if (!buffers.alloc(&o, oCount * 4, error) ||
      !buffers.alloc(&finalState, stateCount * 4, error))
    return false;
  descriptors[count - 1] = rkc_contiguous(o, RKC_F32, 4, oShape.data());
  std::memset(tail, 0, sizeof *tail);
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
