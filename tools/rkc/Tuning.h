//===- Tuning.h - Schedule space, tuning database, winners ------*- C++ -*-===//
//
// What `rkc tune` searches and records and `rkc compile --tuning` reads back,
// free of MLIR and of the GPU so that it is tested on any machine:
//
//   - the schedule space: one Knob a schedule option of `rkc compile`;
//   - shapes and their buckets (what the generated dispatcher switches on);
//   - the database: JSON lines, one a (schedule, shape bucket) measurement;
//   - the winners: per bucket, the fastest schedule that passed the check;
//   - the dispatcher: NAME_launch.c of a tuned compile.
//
//===----------------------------------------------------------------------===//

#ifndef RKC_TOOLS_RKC_TUNING_H
#define RKC_TOOLS_RKC_TUNING_H

#include "CompileRequest.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rkc::tuning {

using cli::CompileRequest;

/// The version of rkc that database rows record.
const char *rkcVersion();

//===----------------------------------------------------------------------===//
// The schedule space
//===----------------------------------------------------------------------===//

/// One schedule option. Adding a knob to the search is a CompileRequest field
/// (set by `rkc compile`'s option) and one entry in scheduleKnobs().
struct Knob {
  const char *key;    // in the database: "chunk_size"
  const char *option; // the `rkc compile` option: "chunk-size"
  const char *label;  // in messages: "chunk"
  const char *tag;    // in variant symbols: "c" (eda__c16_v32_t256_p0_s0)
  std::vector<int64_t> values; // searched, in this order
  int64_t CompileRequest::*field;
  /// Whether `value` can be compiled for `request` (dk, dv); null: always.
  bool (*valid)(int64_t value, const CompileRequest &request) = nullptr;
};

/// The knobs, in the order schedules list their values.
const std::vector<Knob> &scheduleKnobs();

/// A point of the schedule space: one value a knob.
struct Schedule {
  std::vector<int64_t> values;

  /// The schedule `request` asks for (a chunk size of 0 stays 0: auto).
  static Schedule of(const CompileRequest &request);
  void applyTo(CompileRequest &request) const;
  int64_t get(llvm::StringRef key) const;
  /// "chunk 16, value-tile 32, threads 256, prefetch 0, split-scan 0".
  std::string describe() const;
  /// "c16_v32_t256_p0_s0", the suffix of a variant's symbol.
  std::string tag() const;
  llvm::json::Object toJSON() const;
  std::map<std::string, int64_t> toMap() const;
  /// The schedule a database row names, or nullopt when its keys are not
  /// this rkc's knobs (a row written by another version).
  static std::optional<Schedule>
  fromMap(const std::map<std::string, int64_t> &map);

  bool operator==(const Schedule &other) const {
    return values == other.values;
  }
  bool operator!=(const Schedule &other) const { return !(*this == other); }
  bool operator<(const Schedule &other) const { return values < other.values; }
};

/// Every schedule whose knob values are valid for `base` (dk, dv), the first
/// knob varying slowest.
std::vector<Schedule> enumerateSchedules(const CompileRequest &base);

/// `all` reordered: `first` at the front (added if absent), then by how many
/// knobs differ from it, then in enumeration order, so that a budgeted run
/// tries the default's neighbours first.
std::vector<Schedule> orderCandidates(const Schedule &first,
                                      const std::vector<Schedule> &all);

/// "chunk-size {64, 32, 16, 8} x value-tile {16, 32, 64, 128} x threads
/// {128, 256, 512} x prefetch {0, 1} x split-scan {0, 1}".
std::string describeSpace();

//===----------------------------------------------------------------------===//
// Shapes and buckets
//===----------------------------------------------------------------------===//

/// A problem `rkc tune` times: B sequences of T tokens, H key heads, HV value
/// heads.
struct TuneShape {
  int64_t batch = 1, length = 0, keyHeads = 0, valueHeads = 0;
  int64_t dk = 128, dv = 128;

  /// "B=1,T=8192,H=32,HV=32".
  std::string describe() const;
};

/// Parses "B=1,T=8192,H=32[,HV=64]" (keys case-insensitive; B defaults to 1,
/// HV to H). Returns false with `error` on a bad entry.
bool parseTuneShape(llvm::StringRef text, TuneShape &shape,
                    std::string &error);

/// The smallest power of two >= x (1 for x <= 1).
int64_t pow2Ceil(int64_t x);

/// A shape bucket: "bh=P,t=Q" with P the number of (sequence, value head)
/// pairs, N·HV, and Q the tokens a sequence (T, or T / N for packed
/// sequences), each rounded up to a power of two. The prefill kernel runs
/// one block per (sequence, value head, value tile) over a sequence's
/// chunks, so these two numbers decide which schedule is fastest.
std::string bucketName(int64_t sequences, int64_t valueHeads, int64_t tokens);
std::string bucketOf(const TuneShape &shape);
/// Reads back a bucket name; false if `text` is not one.
bool parseBucket(llvm::StringRef text, int64_t &bh, int64_t &t);

//===----------------------------------------------------------------------===//
// The database
//===----------------------------------------------------------------------===//

/// One line of the database: a schedule at a shape bucket, with its outcome.
struct Row {
  std::string spec, specHash, bucket, dtype = "bf16", gpu, arch, rkcVersion;
  /// A hash of the generated sources; empty when none were generated (a
  /// schedule the lowering rejects) or the row does not say.
  std::string codeHash;
  TuneShape shape;
  std::map<std::string, int64_t> schedule;
  bool isDefault = false;
  std::string status; // "ok", "failed" or "pruned"
  std::string error;  // failed, pruned: why
  double medianMs = 0, p20Ms = 0, p80Ms = 0; // ok
  std::string time;   // ISO 8601, UTC
  /// Other fields (registers, reference errors, repetitions), kept as read.
  llvm::json::Object extra;
  unsigned line = 0; // 1-based, in the file it was read from

  /// One line of JSON, without the newline.
  std::string toJSONLine() const;
};

/// Parses one database line.
bool parseRow(llvm::StringRef text, Row &row, std::string &error);

/// Reads `path`: one JSON object a line, blank lines skipped. A missing file
/// is an empty database. On an error returns false with "PATH:LINE: why".
bool readDatabase(llvm::StringRef path, std::vector<Row> &rows,
                  std::string &error);

/// Appends `row` to `path` (one line) and flushes it, so that an interrupted
/// run keeps what it measured.
bool appendRow(llvm::StringRef path, const Row &row, std::string &error);

/// Whether `existing` records the measurement `planned` describes: the same
/// spec hash, dk, dv, bucket, dtype, GPU, architecture, rkc version and
/// schedule, and the same generated code when `existing` records a code
/// hash. The newest such row of `rows` (the last one), or null.
const Row *findMeasurement(llvm::ArrayRef<Row> rows, const Row &planned);

/// The configuration a row was measured under: one spec at (dk, dv) in one
/// dtype on one GPU model and architecture by one rkc version.
struct Group {
  std::string spec, specHash, dtype, gpu, arch, rkcVersion;
  int64_t dk = 0, dv = 0;

  static Group of(const Row &row);
  bool contains(const Row &row) const;
  bool operator<(const Group &other) const;
  /// "@eda, spec 0123abcd, dk 128, dv 128, bf16, NVIDIA H200 (sm_90a),
  /// rkc 0.1.0".
  std::string describe() const;
};

/// What one bucket of one group measured.
struct BucketResult {
  std::string bucket;
  const Row *best = nullptr;        // the fastest ok row, if any
  const Row *defaultRow = nullptr;  // the default schedule's row, if any
  int ok = 0, failed = 0, pruned = 0; // schedules, by their newest row
};

/// Per bucket (sorted by bh, then t), the newest row of each schedule
/// decides; `rows` are of one group, oldest first.
std::vector<BucketResult> bucketResults(llvm::ArrayRef<Row> rows);

/// The winners table of every group in `rows`, as markdown.
std::string winnersMarkdown(llvm::ArrayRef<Row> rows, llvm::StringRef source);

/// The current time as ISO 8601 in UTC ("2026-11-30T12:34:56Z").
std::string isoTimeNow();

//===----------------------------------------------------------------------===//
// The dispatcher of a tuned compile
//===----------------------------------------------------------------------===//

/// What the dispatcher reads from a spec's arguments to find the bucket.
struct DispatchSpec {
  std::string name;
  /// Every input of the args struct and the dimension holding its heads
  /// (2 for per-token inputs [B, T, H, d], 0 for per-head ones [H, d]).
  std::vector<std::pair<std::string, int>> inputs;
  /// The first per-token input: B is its dimension 0, T its dimension 1
  /// divided by rowsPerToken (the sub-step rows of `<substep>` inputs).
  std::string tokenInput;
  int64_t rowsPerToken = 1;
};

/// One compiled variant of a tuned compile.
struct DispatchVariant {
  std::string symbol;   // eda__c16_v64_t256_p0_s1
  /// "chunk 16, value-tile 64, threads 256, prefetch 0, split-scan 1".
  std::string schedule;
  bool isDefault = false;
  /// Buckets routed here, each with a comment ("1.234 ms, default 2.0 ms").
  std::vector<std::pair<std::string, std::string>> buckets;
};

/// The C source of NAME_launch.c for a tuned compile: it includes NAME.h
/// (the public ABI) and every variant's launcher (SYMBOL_launch.inc), and
/// defines rkc_NAME_fwd, which runs the variant of the arguments' bucket
/// (the default one for buckets not tuned), and rkc_NAME_decode, which runs
/// the default variant (tuning times prefill only). `source` names the
/// database in the file's comment.
std::string dispatcherSource(const DispatchSpec &spec,
                             llvm::ArrayRef<DispatchVariant> variants,
                             llvm::StringRef source);

} // namespace rkc::tuning

#endif // RKC_TOOLS_RKC_TUNING_H
