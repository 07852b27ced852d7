//===- rkc.cpp - The RKC command line -------------------------------------===//
//
//   rkc run SPEC --inputs IN.safetensors --out OUT.safetensors [--backend ...]
//   rkc compile SPEC -o DIR [--tuning DB]
//   rkc tune SPEC --shape B=1,T=8192,H=32 --db DB
//   rkc bench   (to come)
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Tuning.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
// Subcommands that later versions implement; they say so when called.
cl::SubCommand benchCommand("bench", "Benchmark a spec's kernels (not yet "
                                     "available in this version)");
cl::OptionCategory pendingCategory("arguments");
cl::list<std::string> pendingArgs(cl::cat(pendingCategory), cl::Positional,
                                  cl::sub(benchCommand),
                                  cl::desc("<arguments>"));
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // Only RKC's own options appear in --help, not those of linked libraries.
  cl::HideUnrelatedOptions({&rkc::cli::runCategory,
                            &rkc::cli::compileCategory,
                            &rkc::cli::tuneCategory, &pendingCategory});
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "rkc " << rkc::tuning::rkcVersion() << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "RKC, the recurrent kernel compiler\n\n"
      "  rkc run [SPEC] [--inputs IN.safetensors | --random SHAPE] "
      "[--out OUT.safetensors]\n"
      "      run a recurrence spec on the CPU in float64\n"
      "  rkc compile SPEC -o DIR [--dk 128 --dv 128] [--arch sm_90a] "
      "[--tuning DB]\n"
      "      compile a spec to CUDA kernels, a C header and a launcher\n"
      "  rkc tune SPEC --shape B=1,T=8192,H=32 [--shape ...] --db DB "
      "[--jobs N] [--budget N]\n"
      "      time a spec's schedules on the GPU; record the fastest per "
      "shape bucket\n\n"
      "Use 'rkc SUBCOMMAND --help' for a subcommand's options.\n");

  if (rkc::cli::runCommand)
    return rkc::cli::runRun();
  if (rkc::cli::compileCommand)
    return rkc::cli::runCompile();
  if (rkc::cli::tuneCommand)
    return rkc::cli::runTune();
  for (cl::SubCommand *pending : {&benchCommand})
    if (*pending) {
      errs() << "rkc " << pending->getName()
             << ": not available in this version of rkc yet; the "
                "side-by-side benchmark against flash-linear-attention is "
                "bench/benchmark.py (bench/README.md), and 'rkc tune' times "
                "a spec's schedules\n";
      return 2;
    }
  errs() << "rkc: no subcommand given; see 'rkc --help'\n";
  return 2;
}
