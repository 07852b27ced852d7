//===- RunCommandTest.cpp - `rkc run` end to end --------------------------===//
//
// Runs the rkc binary on safetensors files and compares what it writes with
// the independent oracle; checks that bad inputs give an error and exit 1.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TestSupport.h"

#include "Support/SafeTensors.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace rkc;
using namespace rkc::test;

namespace {

class RunCommand : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/rkc-run-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  std::string path(const std::string &name) const { return dir + "/" + name; }

  /// Runs `rkc ARGS`, keeping stdout+stderr in `output`; returns the exit code.
  int rkc(const std::string &args) {
    std::string log = path("log.txt");
    std::string cmd = std::string(RKC_TOOLS_DIR) + "/rkc " + args + " > '" +
                      log + "' 2>&1";
    int status = std::system(cmd.c_str());
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    output = text.str();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  void write(const std::string &name, const TensorMap &tensors) {
    std::string error;
    ASSERT_TRUE(writeSafeTensors(path(name), tensors, error)) << error;
  }

  TensorMap read(const std::string &name) {
    TensorMap tensors;
    std::string error;
    EXPECT_TRUE(readSafeTensors(path(name), tensors, error)) << error;
    return tensors;
  }

  std::string dir, output;
};

/// Rounds every tensor to `dtype`, as a file of that dtype stores it.
TensorMap storedAs(TensorMap tensors, DType dtype) {
  for (auto &[name, t] : tensors) {
    t.dtype = dtype;
    for (double &x : t.values)
      x = roundToDType(x, dtype);
  }
  return tensors;
}

TEST_F(RunCommand, EveryExampleSpecMatchesTheOracle) {
  for (const char *spec : kExampleSpecs) {
    for (auto [dk, dv] : {std::pair{8, 5}, std::pair{5, 8}}) {
      SCOPED_TRACE(std::string(spec) + " dk=" + std::to_string(dk) +
                   " dv=" + std::to_string(dv));
      TensorMap inputs = storedAs(
          reference::randomInputs(spec, 2, 11, 3, dk, dv, 77), DType::F32);
      write("in.safetensors", inputs);
      ASSERT_EQ(rkc("run " + examplePath(spec) + " --inputs " +
                    path("in.safetensors") + " --out " +
                    path("out.safetensors") + " --backend interp"),
                0)
          << output;
      TensorMap out = read("out.safetensors");
      EXPECT_EQ(out["o"].dtype, DType::F64);
      expectClose(out, reference::run(spec, inputs), 1e-10, spec);
    }
  }
}

TEST_F(RunCommand, ChunkedAndDecodeBackendsMatchTheInterpreter) {
  for (const char *spec : kExampleSpecs) {
    SCOPED_TRACE(spec);
    TensorMap inputs = storedAs(
        reference::randomInputs(spec, 2, 100, 3, 8, 5, 13), DType::F32);
    write("in.safetensors", inputs);
    auto runWith = [&](const std::string &flags) {
      EXPECT_EQ(rkc("run " + examplePath(spec) + " --inputs " +
                    path("in.safetensors") + " --out " +
                    path("out.safetensors") + " " + flags),
                0)
          << output;
      return read("out.safetensors");
    };
    TensorMap want = runWith("--backend interp");
    for (const char *flags : {"--backend chunked --chunk-size 16",
                              "--backend chunked --chunk-size 64",
                              "--backend chunked --chunk-size 16 --split-scan",
                              "--backend chunked --chunk-size 16 "
                              "--state-transfer",
                              "--backend decode"})
      expectClose(runWith(flags), want, 1e-10, std::string(spec) + " " + flags);
  }
}

TEST_F(RunCommand, ReducedPrecisionInputsAndOutputs) {
  TensorMap inputs =
      storedAs(reference::randomInputs("kda", 1, 9, 2, 8, 8, 5), DType::BF16);
  inputs["initial_state"] = storedAs({{"s", inputs["initial_state"]}},
                                     DType::F32)["s"];
  write("in.safetensors", inputs);
  ASSERT_EQ(rkc("run " + examplePath("kda") + " --inputs " +
                path("in.safetensors") + " --out " + path("out.safetensors") +
                " --out-dtype f32"),
            0)
      << output;
  TensorMap out = read("out.safetensors");
  EXPECT_EQ(out["o"].dtype, DType::F32);
  // The float64 result on the exact bf16 values, rounded once to float32.
  expectClose(out, reference::run("kda", inputs), 1e-6, "kda bf16 in, f32 out");
}

TEST_F(RunCommand, ParameterAndScaleOverrides) {
  TensorMap inputs = reference::randomInputs("deltaproduct", 2, 5, 3, 4, 6, 9,
                                             true, /*n=*/3);
  write("in.safetensors", inputs);
  ASSERT_EQ(rkc("run " + examplePath("deltaproduct") + " --inputs " +
                path("in.safetensors") + " --out " + path("out.safetensors") +
                " --param n=3 --scale 0.7"),
            0)
      << output;
  reference::Options options;
  options.n = 3;
  options.scale = 0.7;
  expectClose(read("out.safetensors"),
              reference::run("deltaproduct", inputs, options), 1e-10,
              "deltaproduct n=3 scale=0.7");
}

TEST_F(RunCommand, RandomInputsAreSavedAndReproducible) {
  ASSERT_EQ(rkc("run --random B=1,T=20,H=2,dk=8,dv=4 --seed 5 --save-inputs " +
                path("in.safetensors") + " --out " + path("out.safetensors")),
            0)
      << output;
  EXPECT_THAT(output, ::testing::HasSubstr("@eda from embedded eda.mlir"));
  TensorMap inputs = read("in.safetensors");
  ASSERT_TRUE(inputs.count("gamma"));
  for (double g : inputs["g"].values) { // log-space gates in [-5, 0]
    EXPECT_LE(g, 0.0);
    EXPECT_GE(g, -5.0);
  }
  expectClose(read("out.safetensors"), reference::run("eda", inputs), 1e-10,
              "eda random");
}

TEST_F(RunCommand, BadInputsGiveOneClearError) {
  TensorMap inputs = reference::randomInputs("gdn", 1, 4, 2, 4, 4, 1);
  TensorMap missing = inputs;
  missing.erase("beta");
  write("missing.safetensors", missing);
  EXPECT_EQ(rkc("run " + examplePath("gdn") + " --inputs " +
                path("missing.safetensors")),
            1);
  EXPECT_THAT(output, ::testing::HasSubstr(
                          "error: missing input 'beta': expected a scalar "
                          "tensor of shape [B, T, H]"));

  std::ofstream(path("garbage.safetensors")) << "not a safetensors file";
  EXPECT_EQ(rkc("run " + examplePath("gdn") + " --inputs " +
                path("garbage.safetensors")),
            1);
  EXPECT_THAT(output, ::testing::HasSubstr("garbage.safetensors"));

  EXPECT_EQ(rkc("run " + path("nonexistent.mlir")), 1);
  EXPECT_THAT(output, ::testing::HasSubstr("cannot read spec"));

  EXPECT_EQ(rkc("run --backend gpu"), 1);
  EXPECT_THAT(output, ::testing::HasSubstr("unknown backend 'gpu' (available: "
                                           "interp, chunked, decode, cuda)"));

  EXPECT_EQ(rkc("run --backend chunked --chunk-size 0"), 1);
  EXPECT_THAT(output, ::testing::HasSubstr("positive number of tokens"));

  EXPECT_EQ(rkc("run --param n"), 1);
  EXPECT_THAT(output, ::testing::HasSubstr("--param expects name=integer"));
}

TEST_F(RunCommand, MalformedSpecGetsALocatedDiagnostic) {
  std::ofstream(path("bad.mlir"))
      << "rec.recurrence @bad {\n"
         "  %q = rec.input \"q\" : !rec.key\n"
         "  %v = rec.input \"v\" : !rec.value\n"
         "  %x = rec.add %q, %v : !rec.key, !rec.value\n"
         "  rec.step {\n"
         "    rec.write %q, %v : !rec.key, !rec.value\n"
         "    rec.read %q : !rec.key\n"
         "  }\n"
         "}\n";
  EXPECT_EQ(rkc("run " + path("bad.mlir")), 1);
  EXPECT_THAT(output, ::testing::HasSubstr("bad.mlir:4:"));
  EXPECT_THAT(output, ::testing::HasSubstr("dimension mismatch"));
}

} // namespace
