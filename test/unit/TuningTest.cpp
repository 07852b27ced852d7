//===- TuningTest.cpp - Schedule space, tuning database, dispatcher -------===//
//
// What `rkc tune` and `rkc compile --tuning` share, without a GPU: the
// schedule space and its order, shapes and buckets, database rows (their
// round trip, located errors, the resume key), the winners, and the source
// of the tuned dispatcher.
//
//===----------------------------------------------------------------------===//

#include "Tuning.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <functional>
#include <set>

using namespace rkc::tuning;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

Schedule schedule(int64_t chunk, int64_t valueTile, int64_t threads,
                  int64_t prefetch, int64_t splitScan,
                  int64_t factorProducts = 0, int64_t prepBlocks = 0) {
  return Schedule{{chunk, valueTile, threads, prefetch, splitScan,
                   factorProducts, prepBlocks}};
}

/// A complete ok row of a configuration "TestGPU", sm_90a, rkc 0.1.0.
Row row(const Schedule &s, const std::string &bucket, double ms,
        const std::string &status = "ok") {
  Row r;
  r.spec = "eda";
  r.specHash = "0123456789abcdef";
  r.shape.batch = 1;
  r.shape.length = 8192;
  r.shape.keyHeads = r.shape.valueHeads = 32;
  r.bucket = bucket;
  r.gpu = "TestGPU";
  r.arch = "sm_90a";
  r.rkcVersion = "0.1.0";
  r.schedule = s.toMap();
  r.status = status;
  if (status == "ok")
    r.medianMs = r.p20Ms = r.p80Ms = ms;
  else
    r.error = "why";
  r.time = "2026-11-30T10:00:00Z";
  return r;
}

/// A file of `text` that goes away with the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &text) {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("tuning", "jsonl", p));
    path = p.str().str();
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
  }
  ~TempFile() { llvm::sys::fs::remove(path); }
};

TEST(ScheduleSpace, KnobsAndEnumeration) {
  std::vector<std::string> keys;
  for (const Knob &k : scheduleKnobs())
    keys.push_back(k.key);
  EXPECT_THAT(keys,
              ::testing::ElementsAre("chunk_size", "value_tile", "threads",
                                     "prefetch", "split_scan",
                                     "factor_products", "prep_blocks"));
  CompileRequest request;
  EXPECT_EQ(enumerateSchedules(request).size(), 768u); // dv = 128
  request.dv = 64;
  std::vector<Schedule> all = enumerateSchedules(request);
  EXPECT_EQ(all.size(), 576u); // value tile 128 does not divide 64
  for (const Schedule &s : all)
    EXPECT_EQ(64 % s.get("value_tile"), 0);
  // Prefetch and split-scan are valid whatever dv: half the schedules
  // prefetch, half split, a quarter both.
  auto count = [&](int64_t prefetch, int64_t splitScan) {
    return llvm::count_if(all, [&](const Schedule &s) {
      return (prefetch < 0 || s.get("prefetch") == prefetch) &&
             (splitScan < 0 || s.get("split_scan") == splitScan);
    });
  };
  EXPECT_EQ(count(1, -1), 288);
  EXPECT_EQ(count(-1, 1), 288);
  EXPECT_EQ(count(1, 1), 144);
  request.dv = 96;
  EXPECT_EQ(enumerateSchedules(request).size(), 384u); // value tiles 16, 32
  // The first knob varies slowest, the last (prep-blocks) fastest.
  EXPECT_EQ(all.front(), schedule(64, 16, 128, 0, 0, 0, 0));
  EXPECT_EQ(all[1], schedule(64, 16, 128, 0, 0, 0, 3));
  EXPECT_EQ(all[2], schedule(64, 16, 128, 0, 0, 1, 0));
  EXPECT_EQ(all[4], schedule(64, 16, 128, 0, 1, 0, 0));
  EXPECT_EQ(all[8], schedule(64, 16, 128, 1, 0, 0, 0));
  EXPECT_EQ(all[16], schedule(64, 16, 256, 0, 0, 0, 0));
  EXPECT_EQ(all.back(), schedule(8, 64, 512, 1, 1, 1, 3));
  std::set<Schedule> distinct(all.begin(), all.end());
  EXPECT_EQ(distinct.size(), all.size());
}

TEST(ScheduleSpace, RequestRoundTripAndNames) {
  CompileRequest request;
  Schedule s = Schedule::of(request);
  // chunk 0: auto; no prefetch, prep and scan kernels (split-scan 1).
  EXPECT_EQ(s, schedule(0, 32, 256, 0, 1));
  // 0 is "auto" for the chunk size, which does not search 0, and a value
  // for prefetch and split-scan, which do.
  EXPECT_EQ(s.describe(), "chunk auto, value-tile 32, threads 256, "
                          "prefetch 0, split-scan 1, factor-products 0, "
                          "prep-blocks 0");
  EXPECT_EQ(s.tag(), "c0_v32_t256_p0_s1_f0_b0");
  Schedule t = schedule(16, 64, 128, 0, 1);
  t.applyTo(request);
  EXPECT_EQ(request.chunkSize, 16);
  EXPECT_EQ(request.valueTile, 64);
  EXPECT_EQ(request.threads, 128);
  EXPECT_EQ(request.prefetch, 0);
  EXPECT_EQ(request.splitScan, 1);
  EXPECT_EQ(Schedule::of(request), t);
  EXPECT_EQ(t.get("prefetch"), 0);
  EXPECT_EQ(t.get("split_scan"), 1);
  EXPECT_EQ(t.tag(), "c16_v64_t128_p0_s1_f0_b0");
  EXPECT_EQ(t.describe(), "chunk 16, value-tile 64, threads 128, prefetch 0, "
                          "split-scan 1, factor-products 0, prep-blocks 0");
  EXPECT_EQ(t.toMap(),
            (std::map<std::string, int64_t>{{"chunk_size", 16},
                                            {"value_tile", 64},
                                            {"threads", 128},
                                            {"prefetch", 0},
                                            {"split_scan", 1},
                                            {"factor_products", 0},
                                            {"prep_blocks", 0}}));
  llvm::json::Object object = t.toJSON();
  ASSERT_TRUE(object.getInteger("split_scan"));
  EXPECT_EQ(*object.getInteger("split_scan"), 1);
  ASSERT_TRUE(object.getInteger("prefetch"));
  EXPECT_EQ(*object.getInteger("prefetch"), 0);
  // And the other way round: each knob sets its own field.
  Schedule u = schedule(8, 32, 512, 1, 0, 1);
  u.applyTo(request);
  EXPECT_EQ(request.prefetch, 1);
  EXPECT_EQ(request.splitScan, 0);
  EXPECT_EQ(request.factorProducts, 1);
  EXPECT_EQ(Schedule::of(request), u);
  EXPECT_EQ(u.tag(), "c8_v32_t512_p1_s0_f1_b0");
  EXPECT_EQ(Schedule::fromMap(t.toMap()), t);
  std::map<std::string, int64_t> more = t.toMap();
  more["tensor_cores"] = 1; // a knob of another version
  EXPECT_FALSE(Schedule::fromMap(more));
  std::map<std::string, int64_t> fewer = t.toMap();
  fewer.erase("threads");
  EXPECT_FALSE(Schedule::fromMap(fewer));
  EXPECT_THAT(describeSpace(),
              HasSubstr("chunk-size {64, 32, 16, 8} x value-tile {16, 32, "
                        "64, 128} x threads {128, 256, 512} x prefetch {0, "
                        "1} x split-scan {0, 1} x factor-products {0, 1} x "
                        "prep-blocks {0, 3}"));
}

TEST(ScheduleSpace, DefaultFirstThenNeighbours) {
  CompileRequest request;
  std::vector<Schedule> all = enumerateSchedules(request);
  Schedule first = schedule(16, 32, 256, 0, 0);
  std::vector<Schedule> ordered = orderCandidates(first, all);
  ASSERT_EQ(ordered.size(), all.size());
  EXPECT_EQ(ordered.front(), first);
  auto distance = [&](const Schedule &s) {
    int d = 0;
    for (size_t i = 0; i < s.values.size(); ++i)
      d += s.values[i] != first.values[i];
    return d;
  };
  for (size_t i = 2; i < ordered.size(); ++i)
    EXPECT_LE(distance(ordered[i - 1]), distance(ordered[i]));
  // The 12 neighbours (3 other chunk sizes, 3 value tiles, 2 thread counts,
  // prefetch on, split-scan on, factored products, at most 3 prep blocks)
  // come next, in enumeration order.
  for (size_t i = 1; i <= 12; ++i)
    EXPECT_EQ(distance(ordered[i]), 1) << i;
  EXPECT_EQ(distance(ordered[13]), 2);
  EXPECT_EQ(ordered[1], schedule(64, 32, 256, 0, 0));
  EXPECT_EQ(ordered[5], schedule(16, 32, 256, 0, 0, 0, 3));
  EXPECT_EQ(ordered[6], schedule(16, 32, 256, 0, 0, 1));
  EXPECT_EQ(ordered[7], schedule(16, 32, 256, 0, 1));
  EXPECT_EQ(ordered[8], schedule(16, 32, 256, 1, 0));
  EXPECT_EQ(ordered[12], schedule(8, 32, 256, 0, 0));
  // A default outside the space is still the first candidate.
  std::vector<Schedule> withOutsider =
      orderCandidates(schedule(16, 32, 96, 0, 0), all);
  EXPECT_EQ(withOutsider.size(), all.size() + 1);
  EXPECT_EQ(withOutsider.front(), schedule(16, 32, 96, 0, 0));
}

TEST(Shapes, Parse) {
  TuneShape shape;
  std::string error;
  ASSERT_TRUE(parseTuneShape("B=2,T=100,H=4", shape, error)) << error;
  EXPECT_EQ(shape.batch, 2);
  EXPECT_EQ(shape.length, 100);
  EXPECT_EQ(shape.keyHeads, 4);
  EXPECT_EQ(shape.valueHeads, 4);
  EXPECT_EQ(shape.describe(), "B=2,T=100,H=4,HV=4");
  TuneShape lower;
  ASSERT_TRUE(parseTuneShape("t=8,h=2,hv=6", lower, error)) << error;
  EXPECT_EQ(lower.batch, 1);
  EXPECT_EQ(lower.valueHeads, 6);

  auto bad = [&](const char *text) {
    TuneShape s;
    std::string why;
    EXPECT_FALSE(parseTuneShape(text, s, why)) << text;
    return why;
  };
  EXPECT_EQ(bad("B=1,X=2,T=3,H=1"),
            "unknown key 'X' (expected B, T, H, HV)");
  EXPECT_EQ(bad("T=8"), "T and H are required, e.g. B=1,T=8192,H=32");
  EXPECT_EQ(bad("T=8,H=4,HV=6"), "HV = 6 is not a multiple of H = 4");
  EXPECT_EQ(bad("T=-8,H=4"), "'T' must be a positive integer, got '-8'");
  EXPECT_EQ(bad("T=8,H=4,T=9"), "'T' is given twice");
  EXPECT_EQ(bad("T8,H=4"), "expected KEY=VALUE, got 'T8'");
}

TEST(Shapes, Buckets) {
  EXPECT_EQ(pow2Ceil(0), 1);
  EXPECT_EQ(pow2Ceil(1), 1);
  EXPECT_EQ(pow2Ceil(5), 8);
  EXPECT_EQ(pow2Ceil(8), 8);
  EXPECT_EQ(pow2Ceil(8193), 16384);
  EXPECT_EQ(bucketName(1, 32, 8192), "bh=32,t=8192");
  EXPECT_EQ(bucketName(1, 32, 5000), "bh=32,t=8192");
  EXPECT_EQ(bucketName(3, 10, 1), "bh=32,t=1");
  TuneShape shape;
  shape.batch = 4;
  shape.length = 2048;
  shape.keyHeads = 8;
  shape.valueHeads = 16;
  EXPECT_EQ(bucketOf(shape), "bh=64,t=2048");
  int64_t bh = 0, t = 0;
  EXPECT_TRUE(parseBucket("bh=64,t=2048", bh, t));
  EXPECT_EQ(bh, 64);
  EXPECT_EQ(t, 2048);
  for (const char *bad : {"bh=64", "t=2,bh=1", "bh=0,t=4", "bh=1,t=2,", ""})
    EXPECT_FALSE(parseBucket(bad, bh, t)) << bad;
}

TEST(Database, RowRoundTrip) {
  Row r = row(schedule(16, 64, 256, 1, 1), "bh=32,t=8192", 1.2345);
  r.p20Ms = 1.2;
  r.p80Ms = 1.3;
  r.codeHash = "00ff00ff00ff00ff";
  r.isDefault = true;
  r.extra["registers"] = 96;
  r.extra["check_o"] = 0.0012345678;
  std::string line = r.toJSONLine();
  EXPECT_THAT(line, Not(HasSubstr("\n")));
  // Numbers as written, not the JSON printer's 17 digits.
  EXPECT_THAT(line, HasSubstr("\"median_ms\":1.2345,"));
  EXPECT_THAT(line, HasSubstr("\"check_o\":0.00123457"));
  EXPECT_THAT(line, HasSubstr("\"spec\":\"eda\",\"spec_hash\":"));
  // Every knob, keys sorted.
  EXPECT_THAT(line, HasSubstr("\"schedule\":{\"chunk_size\":16,"
                              "\"factor_products\":0,"
                              "\"prefetch\":1,\"prep_blocks\":0,"
                              "\"split_scan\":1,"
                              "\"threads\":256,\"value_tile\":64}"));
  Row back;
  std::string error;
  ASSERT_TRUE(parseRow(line, back, error)) << error;
  EXPECT_EQ(back.spec, r.spec);
  EXPECT_EQ(back.specHash, r.specHash);
  EXPECT_EQ(back.bucket, r.bucket);
  EXPECT_EQ(back.dtype, "bf16");
  EXPECT_EQ(back.gpu, r.gpu);
  EXPECT_EQ(back.arch, r.arch);
  EXPECT_EQ(back.rkcVersion, r.rkcVersion);
  EXPECT_EQ(back.codeHash, r.codeHash);
  EXPECT_EQ(back.schedule, r.schedule);
  EXPECT_TRUE(back.isDefault);
  EXPECT_EQ(back.status, "ok");
  EXPECT_DOUBLE_EQ(back.medianMs, 1.2345);
  EXPECT_DOUBLE_EQ(back.p20Ms, 1.2);
  EXPECT_DOUBLE_EQ(back.p80Ms, 1.3);
  EXPECT_EQ(back.shape.describe(), r.shape.describe());
  EXPECT_EQ(back.shape.dk, 128);
  EXPECT_EQ(back.time, r.time);
  ASSERT_TRUE(back.extra.getInteger("registers"));
  EXPECT_EQ(*back.extra.getInteger("registers"), 96);
  EXPECT_EQ(back.toJSONLine(), line);

  Row failed = row(schedule(8, 16, 128, 0, 0), "bh=2,t=64", 0, "failed");
  failed.error = "differs from the float64 interpreter";
  std::string failedLine = failed.toJSONLine();
  EXPECT_THAT(failedLine, Not(HasSubstr("median_ms")));
  ASSERT_TRUE(parseRow(failedLine, back, error)) << error;
  EXPECT_EQ(back.error, failed.error);
}

TEST(Database, RowErrors) {
  std::string good =
      row(schedule(16, 32, 256, 0, 0), "bh=2,t=64", 1).toJSONLine();
  auto error = [&](const std::string &text) {
    Row r;
    std::string why;
    EXPECT_FALSE(parseRow(text, r, why)) << text;
    return why;
  };
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  EXPECT_THAT(error("{\"spec\":"), HasSubstr("not JSON"));
  EXPECT_EQ(error("[1, 2]"), "expected a JSON object");
  EXPECT_EQ(error(replace("\"bucket\":", "\"bucket_\":")),
            "missing \"bucket\"");
  EXPECT_EQ(error(replace("\"status\":\"ok\"", "\"status\":\"great\"")),
            "\"status\" must be \"ok\", \"failed\" or \"pruned\", got "
            "\"great\"");
  EXPECT_EQ(error(replace("\"threads\":256", "\"threads\":\"256\"")),
            "\"schedule.threads\" must be an integer");
  EXPECT_EQ(error(replace("\"median_ms\":", "\"median\":")),
            "missing \"median_ms\"");
  EXPECT_EQ(error(replace("\"bh=2,t=64\"", "\"big\"")),
            "\"bucket\" must read bh=N,t=N, got \"big\"");
  EXPECT_EQ(error(replace("\"dk\":128", "\"dk\":1.5")),
            "\"shape.dk\" must be an integer");
  EXPECT_EQ(error(replace("\"gpu\":\"TestGPU\"", "\"gpu\":3")),
            "\"gpu\" must be a string");
}

TEST(Database, ReadAppendAndLocatedErrors) {
  std::string a = row(schedule(16, 32, 256, 0, 0), "bh=2,t=64", 1).toJSONLine();
  std::string b = row(schedule(8, 32, 256, 1, 1), "bh=2,t=64", 2).toJSONLine();
  TempFile file(a + "\n\n  \n" + b + "\n");
  std::vector<Row> rows;
  std::string error;
  ASSERT_TRUE(readDatabase(file.path, rows, error)) << error;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].line, 1u);
  EXPECT_EQ(rows[1].line, 4u);

  Row c = row(schedule(8, 64, 128, 0, 0), "bh=4,t=64", 3);
  ASSERT_TRUE(appendRow(file.path, c, error)) << error;
  ASSERT_TRUE(readDatabase(file.path, rows, error)) << error;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].bucket, "bh=4,t=64");

  TempFile bad(a + "\n" + b + "\n{\"spec\": 1,\n");
  EXPECT_FALSE(readDatabase(bad.path, rows, error));
  EXPECT_THAT(error, HasSubstr(bad.path + ":3: not JSON"));

  EXPECT_TRUE(readDatabase(file.path + ".missing", rows, error));
  EXPECT_TRUE(rows.empty());
}

TEST(Database, RowWithoutANewerKnob) {
  // A row written before the prefetch knob existed, or before the split-scan
  // or factor-products knob: its schedule lacks the key, and it reads as what
  // it was measured with, 0 (off), though `rkc compile`'s split-scan default
  // is now 1.
  EXPECT_EQ(CompileRequest().prefetch, 0);
  EXPECT_EQ(CompileRequest().splitScan, 1);
  const Schedule off = schedule(16, 32, 256, 0, 0);
  for (auto [key, on] : std::vector<std::pair<std::string, Schedule>>{
           {"prefetch", schedule(16, 32, 256, 1, 0)},
           {"split_scan", schedule(16, 32, 256, 0, 1)},
           {"factor_products", schedule(16, 32, 256, 0, 0, 1)},
           {"prep_blocks", schedule(16, 32, 256, 0, 0, 0, 3)}}) {
    SCOPED_TRACE(key);
    Row r0 = row(off, "bh=32,t=8192", 5);
    std::string line = r0.toJSONLine();
    std::string field = "\"" + key + "\":0,";
    std::string without = line;
    size_t at = without.find(field);
    ASSERT_NE(at, std::string::npos) << line;
    without.erase(at, field.size());
    ASSERT_THAT(without, Not(HasSubstr(key)));
    Row old;
    std::string error;
    ASSERT_TRUE(parseRow(without, old, error)) << error;
    EXPECT_EQ(old.schedule, r0.schedule);
    EXPECT_EQ(old.schedule.at(key), 0);
    EXPECT_EQ(Schedule::fromMap(old.schedule), off);
    // Written back, it names every knob.
    EXPECT_EQ(old.toJSONLine(), line);

    // The resume key: the old row is the measurement with the knob at 0, not
    // the one with it at 1.
    std::vector<Row> rows = {old};
    EXPECT_EQ(findMeasurement(rows, r0), &rows[0]);
    Row r1 = row(on, "bh=32,t=8192", 0);
    EXPECT_EQ(findMeasurement(rows, r1), nullptr);

    // The winners: the old row and a newer row with the knob at 0 are one
    // schedule, the newer deciding; a row with it at 1 is another.
    Row newer = row(off, "bh=32,t=8192", 0, "failed");
    rows = {old, newer, row(on, "bh=32,t=8192", 7)};
    std::vector<BucketResult> results = bucketResults(rows);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].ok, 1);
    EXPECT_EQ(results[0].failed, 1);
    EXPECT_EQ(results[0].best, &rows[2]);

    // Through a file, as both commands read it.
    TempFile file(without + "\n");
    ASSERT_TRUE(readDatabase(file.path, rows, error)) << error;
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(Schedule::fromMap(rows[0].schedule), off);

    // A knob's bad value is still an error.
    std::string bad = line;
    bad.replace(bad.find("\"" + key + "\":0"), key.size() + 4,
                "\"" + key + "\":\"on\"");
    EXPECT_FALSE(parseRow(bad, old, error));
    EXPECT_EQ(error, "\"schedule." + key + "\" must be an integer");
  }

  // A row as the rkc before split-scan wrote it keeps its prefetch value; a
  // row older still lacks all three keys.
  Row p1 = row(schedule(8, 64, 128, 1, 0), "bh=32,t=8192", 5);
  std::string line = p1.toJSONLine();
  std::string beforeSplit = line;
  const std::string splitScan0 = "\"split_scan\":0,";
  beforeSplit.erase(beforeSplit.find(splitScan0), splitScan0.size());
  const std::string factor0 = "\"factor_products\":0,";
  beforeSplit.erase(beforeSplit.find(factor0), factor0.size());
  const std::string blocks0 = "\"prep_blocks\":0,";
  beforeSplit.erase(beforeSplit.find(blocks0), blocks0.size());
  ASSERT_THAT(beforeSplit, HasSubstr("\"prefetch\":1,\"threads\":128"));
  Row old;
  std::string error;
  ASSERT_TRUE(parseRow(beforeSplit, old, error)) << error;
  EXPECT_EQ(Schedule::fromMap(old.schedule), schedule(8, 64, 128, 1, 0));
  EXPECT_EQ(old.toJSONLine(), line);
  std::string beforeBoth = row(off, "bh=32,t=8192", 5).toJSONLine();
  for (const char *field :
       {"\"prefetch\":0,", "\"split_scan\":0,", "\"factor_products\":0,",
        "\"prep_blocks\":0,"})
    beforeBoth.erase(beforeBoth.find(field), std::string(field).size());
  ASSERT_THAT(beforeBoth, HasSubstr("\"schedule\":{\"chunk_size\":16,"
                                    "\"threads\":256,\"value_tile\":32}"));
  ASSERT_TRUE(parseRow(beforeBoth, old, error)) << error;
  EXPECT_EQ(Schedule::fromMap(old.schedule), off);

  // A key this rkc has no knob for is still another version's schedule,
  // whatever the missing knobs.
  std::string other = beforeBoth;
  other.replace(other.find("\"threads\":256"), 13,
                "\"tensor_cores\":1,\"threads\":256");
  ASSERT_TRUE(parseRow(other, old, error)) << error;
  EXPECT_EQ(old.schedule.at("tensor_cores"), 1);
  EXPECT_EQ(old.schedule.at("prefetch"), 0);
  EXPECT_EQ(old.schedule.at("split_scan"), 0);
  EXPECT_FALSE(Schedule::fromMap(old.schedule));
}

TEST(Database, ResumeKey) {
  Schedule s = schedule(16, 32, 256, 0, 0);
  Row planned = row(s, "bh=32,t=8192", 0);
  planned.codeHash = "aaaaaaaaaaaaaaaa";
  std::vector<Row> rows = {row(s, "bh=32,t=8192", 5)};
  // A row without a code hash counts whatever the code.
  EXPECT_EQ(findMeasurement(rows, planned), &rows[0]);
  rows[0].codeHash = "bbbbbbbbbbbbbbbb";
  EXPECT_EQ(findMeasurement(rows, planned), nullptr);
  rows[0].codeHash = planned.codeHash;
  EXPECT_EQ(findMeasurement(rows, planned), &rows[0]);
  for (auto change : std::vector<std::function<void(Row &)>>{
           [](Row &r) { r.gpu = "OtherGPU"; },
           [](Row &r) { r.arch = "sm_80"; },
           [](Row &r) { r.rkcVersion = "0.2.0"; },
           [](Row &r) { r.specHash = "ffffffffffffffff"; },
           [](Row &r) { r.bucket = "bh=64,t=8192"; },
           [](Row &r) { r.dtype = "f16"; },
           [](Row &r) { r.shape.dk = 64; },
           [](Row &r) { r.schedule["threads"] = 512; },
           [](Row &r) { r.schedule["prefetch"] = 1; },
           [](Row &r) { r.schedule["split_scan"] = 1; }}) {
    std::vector<Row> other = rows;
    change(other[0]);
    EXPECT_EQ(findMeasurement(other, planned), nullptr);
  }
  // The newest row wins.
  rows.push_back(row(s, "bh=32,t=8192", 0, "failed"));
  EXPECT_EQ(findMeasurement(rows, planned), &rows[1]);
}

TEST(Winners, PerBucket) {
  Schedule d = schedule(16, 32, 256, 0, 0),
           fast = schedule(8, 64, 128, 1, 1),
           flaky = schedule(8, 32, 256, 0, 0),
           big = schedule(64, 32, 256, 0, 0),
           prefetching = schedule(16, 32, 256, 1, 0),
           splitting = schedule(16, 32, 256, 0, 1);
  std::vector<Row> rows = {
      row(d, "bh=32,t=8192", 50), row(fast, "bh=32,t=8192", 40),
      row(flaky, "bh=32,t=8192", 10),
      // Measured again: now it fails, and its old time no longer counts.
      row(flaky, "bh=32,t=8192", 0, "failed"),
      row(big, "bh=32,t=8192", 0, "pruned"), row(d, "bh=4,t=128", 2),
      row(fast, "bh=4,t=128", 3),
      // The default with prefetch on, or with split kernels: other
      // schedules, not the default's newer rows.
      row(prefetching, "bh=32,t=8192", 45),
      row(splitting, "bh=32,t=8192", 47)};
  rows[0].isDefault = rows[5].isDefault = true;
  std::vector<BucketResult> results = bucketResults(rows);
  ASSERT_EQ(results.size(), 2u);
  // Sorted by bh, then t.
  EXPECT_EQ(results[0].bucket, "bh=4,t=128");
  EXPECT_EQ(results[0].best, &rows[5]);
  EXPECT_EQ(results[0].defaultRow, &rows[5]);
  EXPECT_EQ(results[1].bucket, "bh=32,t=8192");
  EXPECT_EQ(results[1].best, &rows[1]);
  EXPECT_EQ(results[1].defaultRow, &rows[0]);
  EXPECT_EQ(results[1].ok, 4);
  EXPECT_EQ(results[1].failed, 1);
  EXPECT_EQ(results[1].pruned, 1);

  Row otherGpu = row(fast, "bh=32,t=8192", 30);
  otherGpu.gpu = "OtherGPU";
  rows.push_back(otherGpu);
  std::string table = winnersMarkdown(rows, "tuning.jsonl");
  EXPECT_THAT(table, HasSubstr("from `tuning.jsonl`"));
  EXPECT_THAT(table, HasSubstr("## @eda, spec 0123456789abcdef, dk 128, dv "
                               "128, bf16, TestGPU (sm_90a), rkc 0.1.0"));
  EXPECT_THAT(
      table,
      HasSubstr(
          "| bh=32,t=8192 | B=1,T=8192,H=32,HV=32 | "
          "chunk 16, value-tile 32, threads 256, "
          "prefetch 0, split-scan 0, factor-products 0, prep-blocks 0 | 50.000 | chunk 8, "
          "value-tile 64, threads 128, prefetch 1, "
          "split-scan 1, factor-products 0, prep-blocks 0 | 40.000 (40.000-40.000) | "
          "1.25x | 4 / 1 / 1 |"));
  EXPECT_THAT(
      table,
      HasSubstr(
          "| bh=4,t=128 | B=1,T=8192,H=32,HV=32 | chunk "
          "16, value-tile 32, threads 256, prefetch 0, "
          "split-scan 0, factor-products 0, prep-blocks 0 | 2.000 | chunk 16, value-tile "
          "32, threads 256, prefetch 0, split-scan 0, "
          "factor-products 0, prep-blocks 0 "
          "(the default) | 2.000 (2.000-2.000) | 1.00x "
          "| 2 / 0 / 0 |"));
  // Another GPU, another section, with no default measured.
  EXPECT_THAT(table, HasSubstr("OtherGPU (sm_90a)"));
  EXPECT_THAT(
      table,
      HasSubstr("| - | - | chunk 8, value-tile 64, threads "
                "128, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0 | 30.000 "
                "(30.000-30.000) | - | 1 / 0 / 0 |"));
}

TEST(Dispatcher, Source) {
  DispatchSpec spec;
  spec.name = "deltaproduct";
  spec.inputs = {{"q", 2}, {"k", 2}, {"v", 2}, {"beta", 2}, {"w", 0}};
  spec.tokenInput = "q";
  spec.rowsPerToken = 1;
  DispatchVariant d, a, b;
  d.symbol = "deltaproduct__c16_v32_t256_p0_s0";
  d.schedule = "chunk 16, value-tile 32, threads 256, prefetch 0, split-scan 0";
  d.isDefault = true;
  d.buckets = {{"bh=8,t=64", "1.000 ms"}};
  a.symbol = "deltaproduct__c8_v64_t128_p1_s1";
  a.schedule = "chunk 8, value-tile 64, threads 128, prefetch 1, split-scan 1";
  a.buckets = {{"bh=64,t=8192", "2.000 ms, default 3.000 ms"},
               {"bh=32,t=8192", "1.500 ms"}};
  b.symbol = "deltaproduct__c32_v16_t512_p0_s0";
  b.schedule = "chunk 32, value-tile 16, threads 512, prefetch 0, split-scan 0";
  b.buckets = {{"bh=32,t=1024", "0.500 ms"}};
  std::string text = dispatcherSource(spec, {d, a, b}, "db.jsonl");
  EXPECT_THAT(text, HasSubstr("#include \"deltaproduct.h\""));
  EXPECT_THAT(text, HasSubstr("#include \"deltaproduct__c8_v64_t128_p1_s1_"
                              "launch.inc\""));
  // Routes in bucket order, each to its variant's index.
  size_t r1 = text.find("if (bh == 32 && t == 1024)\n    return 2;");
  size_t r2 = text.find("if (bh == 32 && t == 8192)\n    return 1;");
  size_t r3 = text.find("if (bh == 64 && t == 8192)\n    return 1;");
  ASSERT_NE(r1, std::string::npos);
  ASSERT_NE(r2, std::string::npos);
  ASSERT_NE(r3, std::string::npos);
  EXPECT_LT(r1, r2);
  EXPECT_LT(r2, r3);
  // The default's buckets need no route.
  EXPECT_THAT(text, Not(HasSubstr("bh == 8 &&")));
  EXPECT_THAT(text, HasSubstr("if (a->w.rank > 0 && a->w.shape[0] > HV)"));
  EXPECT_THAT(text, HasSubstr("case 1:\n    return "
                              "rkc_deltaproduct__c8_v64_t128_p1_s1_run_fwd("
                              "stream, args);"));
  EXPECT_THAT(text, HasSubstr("case 2:\n    return "
                              "rkc_deltaproduct__c32_v16_t512_p0_s0_run_fwd("
                              "stream, args);\n  default:\n    return "
                              "rkc_deltaproduct__c16_v32_t256_p0_s0_run_fwd"));
  EXPECT_THAT(text, HasSubstr("return rkc_deltaproduct__c16_v32_t256_p0_s0_"
                              "run_decode(stream, args);"));
  EXPECT_THAT(text, HasSubstr("const int64_t T = a->q.shape[1];"));
  EXPECT_THAT(text, Not(HasSubstr("(void)bh;")));

  // <substep> rows a token divide dimension 1; no routes still compiles
  // cleanly (-Wunused-variable).
  spec.rowsPerToken = 3;
  d.buckets.clear();
  text = dispatcherSource(spec, {d}, "db.jsonl");
  EXPECT_THAT(text, HasSubstr("const int64_t T = a->q.shape[1] / 3;"));
  EXPECT_THAT(text, HasSubstr("(void)bh;\n  (void)t;"));
}

} // namespace
