//===- Tuning.cpp - Schedule space, tuning database, winners --------------===//

#include "Tuning.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <optional>
#include <set>

using namespace llvm;

namespace rkc::tuning {

const char *rkcVersion() { return RKC_VERSION; }

//===----------------------------------------------------------------------===//
// The schedule space
//===----------------------------------------------------------------------===//

const std::vector<Knob> &scheduleKnobs() {
  // One line a knob: what `rkc compile` calls it, the values searched, and
  // the request field it sets.
  static const std::vector<Knob> knobs = {
      {"chunk_size", "chunk-size", "chunk", "c", {64, 32, 16, 8},
       &CompileRequest::chunkSize},
      {"value_tile", "value-tile", "value-tile", "v", {16, 32, 64, 128},
       &CompileRequest::valueTile,
       [](int64_t value, const CompileRequest &request) {
         return request.dv % value == 0;
       }},
      {"threads", "threads", "threads", "t", {128, 256, 512},
       &CompileRequest::threads},
      {"prefetch", "prefetch", "prefetch", "p", {0, 1},
       &CompileRequest::prefetch},
      {"split_scan", "split-scan", "split-scan", "s", {0, 1},
       &CompileRequest::splitScan},
      // Products that share a left operand as one product of a sum (more
      // workspace: the sum crosses in float32). rkc tune drops 1 for a spec
      // it does not change.
      {"factor_products", "factor-products", "factor-products", "f", {0, 1},
       &CompileRequest::factorProducts},
      // The prep kernel's blocks an SM, at most (0: at most 4, where its
      // shared memory allows; 3: at most 3, more registers a thread).
      {"prep_blocks", "prep-blocks", "prep-blocks", "b", {0, 3},
       &CompileRequest::prepBlocks},
  };
  return knobs;
}

Schedule Schedule::of(const CompileRequest &request) {
  Schedule schedule;
  for (const Knob &knob : scheduleKnobs())
    schedule.values.push_back(request.*knob.field);
  return schedule;
}

void Schedule::applyTo(CompileRequest &request) const {
  for (auto [knob, value] : llvm::zip_equal(scheduleKnobs(), values))
    request.*knob.field = value;
}

int64_t Schedule::get(StringRef key) const {
  for (auto [knob, value] : llvm::zip_equal(scheduleKnobs(), values))
    if (key == knob.key)
      return value;
  return 0;
}

std::string Schedule::describe() const {
  std::string text;
  for (auto [i, knob] : llvm::enumerate(scheduleKnobs())) {
    text += i ? ", " : "";
    text += knob.label;
    // 0 reads "auto" only for a knob that does not search 0 (chunk 0: the
    // largest that fits); prefetch 0 is "prefetch 0", off, and split-scan 0
    // "split-scan 0", one kernel.
    bool automatic = !values[i] && !llvm::is_contained(knob.values, 0);
    text += automatic ? " auto" : " " + std::to_string(values[i]);
  }
  return text;
}

std::string Schedule::tag() const {
  std::string text;
  for (auto [i, knob] : llvm::enumerate(scheduleKnobs()))
    text += (i ? "_" : "") + std::string(knob.tag) + std::to_string(values[i]);
  return text;
}

json::Object Schedule::toJSON() const {
  json::Object object;
  for (auto [knob, value] : llvm::zip_equal(scheduleKnobs(), values))
    object[knob.key] = value;
  return object;
}

std::map<std::string, int64_t> Schedule::toMap() const {
  std::map<std::string, int64_t> map;
  for (auto [knob, value] : llvm::zip_equal(scheduleKnobs(), values))
    map[knob.key] = value;
  return map;
}

std::optional<Schedule>
Schedule::fromMap(const std::map<std::string, int64_t> &map) {
  if (map.size() != scheduleKnobs().size())
    return std::nullopt;
  Schedule schedule;
  for (const Knob &knob : scheduleKnobs()) {
    auto it = map.find(knob.key);
    if (it == map.end())
      return std::nullopt;
    schedule.values.push_back(it->second);
  }
  return schedule;
}

std::vector<Schedule> enumerateSchedules(const CompileRequest &base) {
  const std::vector<Knob> &knobs = scheduleKnobs();
  std::vector<std::vector<int64_t>> choices;
  for (const Knob &knob : knobs) {
    choices.emplace_back();
    for (int64_t value : knob.values)
      if (!knob.valid || knob.valid(value, base))
        choices.back().push_back(value);
  }
  std::vector<Schedule> schedules(1);
  for (const std::vector<int64_t> &values : choices) {
    std::vector<Schedule> next;
    for (const Schedule &prefix : schedules)
      for (int64_t value : values) {
        next.push_back(prefix);
        next.back().values.push_back(value);
      }
    schedules = std::move(next);
  }
  return schedules;
}

std::vector<Schedule> orderCandidates(const Schedule &first,
                                      const std::vector<Schedule> &all) {
  auto distance = [&](const Schedule &s) {
    int d = 0;
    for (auto [a, b] : llvm::zip_equal(s.values, first.values))
      d += a != b;
    return d;
  };
  std::vector<Schedule> ordered = {first};
  for (const Schedule &s : all)
    if (s != first)
      ordered.push_back(s);
  std::stable_sort(ordered.begin() + 1, ordered.end(),
                   [&](const Schedule &a, const Schedule &b) {
                     return distance(a) < distance(b);
                   });
  return ordered;
}

std::string describeSpace() {
  std::string text;
  for (auto [i, knob] : llvm::enumerate(scheduleKnobs())) {
    text += i ? " x " : "";
    text += std::string(knob.option) + " {";
    for (auto [j, value] : llvm::enumerate(knob.values))
      text += (j ? ", " : "") + std::to_string(value);
    text += "}";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Shapes and buckets
//===----------------------------------------------------------------------===//

std::string TuneShape::describe() const {
  return formatv("B={0},T={1},H={2},HV={3}", batch, length, keyHeads,
                 valueHeads)
      .str();
}

bool parseTuneShape(StringRef text, TuneShape &shape, std::string &error) {
  std::set<std::string> seen;
  SmallVector<StringRef> items;
  text.split(items, ',');
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (!item.contains('=') || key.empty()) {
      error = "expected KEY=VALUE, got '" + item.str() + "'";
      return false;
    }
    std::string upper = key.upper();
    int64_t *field = upper == "B"    ? &shape.batch
                     : upper == "T"  ? &shape.length
                     : upper == "H"  ? &shape.keyHeads
                     : upper == "HV" ? &shape.valueHeads
                                     : nullptr;
    if (!field) {
      error = "unknown key '" + key.str() + "' (expected B, T, H, HV)";
      return false;
    }
    if (!seen.insert(upper).second) {
      error = "'" + key.str() + "' is given twice";
      return false;
    }
    long long number = 0;
    if (value.getAsInteger(10, number) || number <= 0 ||
        number > (int64_t(1) << 40)) {
      error = "'" + key.str() + "' must be a positive integer, got '" +
              value.str() + "'";
      return false;
    }
    *field = number;
  }
  if (!seen.count("T") || !seen.count("H")) {
    error = "T and H are required, e.g. B=1,T=8192,H=32";
    return false;
  }
  if (!seen.count("HV"))
    shape.valueHeads = shape.keyHeads;
  if (shape.valueHeads % shape.keyHeads) {
    error = formatv("HV = {0} is not a multiple of H = {1}",
                    shape.valueHeads, shape.keyHeads);
    return false;
  }
  return true;
}

int64_t pow2Ceil(int64_t x) {
  int64_t p = 1;
  while (p < x && p < (int64_t(1) << 62))
    p <<= 1;
  return p;
}

std::string bucketName(int64_t sequences, int64_t valueHeads,
                       int64_t tokens) {
  return formatv("bh={0},t={1}", pow2Ceil(sequences * valueHeads),
                 pow2Ceil(tokens))
      .str();
}

std::string bucketOf(const TuneShape &shape) {
  return bucketName(shape.batch, shape.valueHeads, shape.length);
}

bool parseBucket(StringRef text, int64_t &bh, int64_t &t) {
  unsigned long long a = 0, b = 0;
  if (!text.consume_front("bh=") || text.consumeInteger(10, a) ||
      !text.consume_front(",t=") || text.consumeInteger(10, b) ||
      !text.empty() || a == 0 || b == 0)
    return false;
  bh = static_cast<int64_t>(a);
  t = static_cast<int64_t>(b);
  return true;
}

//===----------------------------------------------------------------------===//
// The database
//===----------------------------------------------------------------------===//

namespace {

/// Numbers as a person would write them (the JSON printer's 17 digits turn
/// 1.2345 into 1.2344999999999999).
std::string number(double x) {
  if (!std::isfinite(x))
    return "null";
  return formatv("{0}", format("%.6g", x)).str();
}

} // namespace

std::string Row::toJSONLine() const {
  std::string text;
  raw_string_ostream os(text);
  json::OStream j(os);
  j.object([&] {
    j.attribute("spec", spec);
    j.attribute("spec_hash", specHash);
    j.attributeObject("shape", [&] {
      for (auto [key, value] :
           {std::pair{"B", shape.batch}, {"T", shape.length},
            {"H", shape.keyHeads}, {"HV", shape.valueHeads},
            {"dk", shape.dk}, {"dv", shape.dv}})
        j.attribute(key, value);
    });
    j.attribute("bucket", bucket);
    j.attribute("dtype", dtype);
    j.attribute("gpu", gpu);
    j.attribute("arch", arch);
    j.attribute("rkc_version", rkcVersion);
    if (!codeHash.empty())
      j.attribute("code_hash", codeHash);
    j.attributeObject("schedule", [&] {
      for (auto &[key, value] : schedule)
        j.attribute(key, value);
    });
    j.attribute("default", isDefault);
    j.attribute("status", status);
    if (status == "ok")
      for (auto [key, value] : {std::pair{"median_ms", medianMs},
                                {"p20_ms", p20Ms},
                                {"p80_ms", p80Ms}}) {
        j.attributeBegin(key);
        j.rawValue(number(value));
        j.attributeEnd();
      }
    if (!error.empty())
      j.attribute("error", error);
    std::vector<std::string> keys;
    for (auto &entry : extra)
      keys.push_back(entry.first.str());
    llvm::sort(keys);
    for (const std::string &key : keys) {
      const json::Value &value = *extra.get(key);
      j.attributeBegin(key);
      if (value.kind() == json::Value::Number && !value.getAsInteger())
        j.rawValue(number(*value.getAsNumber()));
      else
        j.value(value);
      j.attributeEnd();
    }
    j.attribute("time", time);
  });
  return text;
}

bool parseRow(StringRef text, Row &row, std::string &error) {
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = "not JSON: " + toString(parsed.takeError());
    return false;
  }
  json::Object *object = parsed->getAsObject();
  if (!object) {
    error = "expected a JSON object";
    return false;
  }
  // A field of `in` at `key` (named `path` in messages): absent is an error
  // only when required; `get` reads the value, empty when it has another
  // type than `kind`.
  auto field = [&](const json::Object &in, StringRef key, StringRef path,
                   bool required, StringRef kind, auto get, auto &out) {
    const json::Value *value = in.get(key);
    if (!value) {
      if (required)
        error = "missing \"" + path.str() + "\"";
      return !required;
    }
    auto got = get(*value);
    if (!got) {
      error = "\"" + path.str() + "\" must be " + kind.str();
      return false;
    }
    out = *got;
    return true;
  };
  auto string = [&](StringRef key, std::string &out, bool required) {
    return field(*object, key, key, required, "a string",
                 [](const json::Value &v) -> std::optional<std::string> {
                   if (auto s = v.getAsString())
                     return s->str();
                   return std::nullopt;
                 },
                 out);
  };
  auto integer = [&](const json::Object &in, StringRef key, StringRef path,
                     int64_t &out, bool required) {
    return field(in, key, path, required, "an integer",
                 [](const json::Value &v) { return v.getAsInteger(); }, out);
  };
  auto real = [&](StringRef key, double &out, bool required) {
    return field(*object, key, key, required, "a number",
                 [](const json::Value &v) { return v.getAsNumber(); }, out);
  };

  if (!string("spec", row.spec, false) ||
      !string("spec_hash", row.specHash, true) ||
      !string("bucket", row.bucket, true) ||
      !string("dtype", row.dtype, false) || !string("gpu", row.gpu, true) ||
      !string("arch", row.arch, true) ||
      !string("rkc_version", row.rkcVersion, true) ||
      !string("code_hash", row.codeHash, false) ||
      !string("status", row.status, true) ||
      !string("error", row.error, false) || !string("time", row.time, false))
    return false;
  int64_t bh, t;
  if (!parseBucket(row.bucket, bh, t)) {
    error = "\"bucket\" must read bh=N,t=N, got \"" + row.bucket + "\"";
    return false;
  }
  if (row.status != "ok" && row.status != "failed" && row.status != "pruned") {
    error = "\"status\" must be \"ok\", \"failed\" or \"pruned\", got \"" +
            row.status + "\"";
    return false;
  }

  const json::Object *shape = object->getObject("shape");
  if (!shape) {
    error = object->get("shape") ? "\"shape\" must be an object"
                                 : "missing \"shape\"";
    return false;
  }
  if (!integer(*shape, "dk", "shape.dk", row.shape.dk, true) ||
      !integer(*shape, "dv", "shape.dv", row.shape.dv, true) ||
      !integer(*shape, "B", "shape.B", row.shape.batch, false) ||
      !integer(*shape, "T", "shape.T", row.shape.length, false) ||
      !integer(*shape, "H", "shape.H", row.shape.keyHeads, false) ||
      !integer(*shape, "HV", "shape.HV", row.shape.valueHeads, false))
    return false;

  const json::Object *schedule = object->getObject("schedule");
  if (!schedule) {
    error = object->get("schedule") ? "\"schedule\" must be an object"
                                    : "missing \"schedule\"";
    return false;
  }
  row.schedule.clear();
  for (auto &[key, value] : *schedule) {
    if (!value.getAsInteger()) {
      error = "\"schedule." + key.str() + "\" must be an integer";
      return false;
    }
    row.schedule[key.str()] = *value.getAsInteger();
  }
  // A knob added since the row was written reads 0, off (prefetch 0,
  // split-scan 0: what the row was measured with, whatever `rkc compile`'s
  // default is now), so that older databases keep working; where the row's
  // code hash no longer matches, rkc tune measures it again and rkc compile
  // --tuning says so. Keys of knobs this rkc does not have stay, and
  // Schedule::fromMap rejects them.
  for (const Knob &knob : scheduleKnobs())
    row.schedule.try_emplace(knob.key, 0);

  if (const json::Value *value = object->get("default")) {
    if (!value->getAsBoolean()) {
      error = "\"default\" must be true or false";
      return false;
    }
    row.isDefault = *value->getAsBoolean();
  }
  bool ok = row.status == "ok";
  if (!real("median_ms", row.medianMs, ok))
    return false;
  row.p20Ms = row.p80Ms = row.medianMs;
  if (!real("p20_ms", row.p20Ms, false) || !real("p80_ms", row.p80Ms, false))
    return false;
  if (ok && !(row.medianMs > 0)) {
    error = "\"median_ms\" of an ok row must be positive";
    return false;
  }

  static const std::set<std::string> known = {
      "spec",      "spec_hash", "bucket", "dtype", "gpu",    "arch",
      "rkc_version", "code_hash", "status", "error", "time", "shape",
      "schedule",  "default",   "median_ms", "p20_ms", "p80_ms"};
  row.extra = json::Object();
  for (auto &[key, value] : *object)
    if (!known.count(key.str()))
      row.extra[key] = value;
  return true;
}

bool readDatabase(StringRef path, std::vector<Row> &rows,
                  std::string &error) {
  rows.clear();
  if (!sys::fs::exists(path))
    return true;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(path);
  if (!buffer) {
    error = path.str() + ": cannot read: " + buffer.getError().message();
    return false;
  }
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    StringRef text = line.trim();
    if (text.empty())
      continue;
    Row row;
    std::string why;
    if (!parseRow(text, row, why)) {
      error = formatv("{0}:{1}: {2}", path, i + 1, why);
      return false;
    }
    row.line = static_cast<unsigned>(i + 1);
    rows.push_back(std::move(row));
  }
  return true;
}

bool appendRow(StringRef path, const Row &row, std::string &error) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_Append | sys::fs::OF_Text);
  if (ec) {
    error = "cannot append to " + path.str() + ": " + ec.message();
    return false;
  }
  os << row.toJSONLine() << "\n";
  os.flush();
  if (os.has_error()) {
    error = "cannot append to " + path.str() + ": " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

const Row *findMeasurement(ArrayRef<Row> rows, const Row &planned) {
  for (const Row &row : llvm::reverse(rows))
    if (row.specHash == planned.specHash &&
        row.shape.dk == planned.shape.dk &&
        row.shape.dv == planned.shape.dv && row.bucket == planned.bucket &&
        row.dtype == planned.dtype && row.gpu == planned.gpu &&
        row.arch == planned.arch && row.rkcVersion == planned.rkcVersion &&
        row.schedule == planned.schedule &&
        (row.codeHash.empty() || row.codeHash == planned.codeHash))
      return &row;
  return nullptr;
}

Group Group::of(const Row &row) {
  return {row.spec, row.specHash,   row.dtype,    row.gpu,
          row.arch, row.rkcVersion, row.shape.dk, row.shape.dv};
}

bool Group::contains(const Row &row) const {
  return row.specHash == specHash && row.dtype == dtype && row.gpu == gpu &&
         row.arch == arch && row.rkcVersion == rkcVersion &&
         row.shape.dk == dk && row.shape.dv == dv;
}

bool Group::operator<(const Group &o) const {
  return std::tie(spec, specHash, dk, dv, dtype, gpu, arch, rkcVersion) <
         std::tie(o.spec, o.specHash, o.dk, o.dv, o.dtype, o.gpu, o.arch,
                  o.rkcVersion);
}

std::string Group::describe() const {
  return formatv("@{0}, spec {1}, dk {2}, dv {3}, {4}, {5} ({6}), rkc {7}",
                 spec.empty() ? std::string("?") : spec, specHash, dk, dv,
                 dtype, gpu, arch, rkcVersion)
      .str();
}

std::vector<BucketResult> bucketResults(ArrayRef<Row> rows) {
  // bucket -> schedule -> its newest row (rows are oldest first).
  std::map<std::pair<int64_t, int64_t>,
           std::pair<std::string, std::map<std::map<std::string, int64_t>,
                                           const Row *>>>
      buckets;
  std::map<std::string, const Row *> defaults; // the newest default row
  for (const Row &row : rows) {
    int64_t bh = 0, t = 0;
    parseBucket(row.bucket, bh, t);
    auto &entry = buckets[{bh, t}];
    entry.first = row.bucket;
    entry.second[row.schedule] = &row;
    if (row.isDefault)
      defaults[row.bucket] = &row;
  }
  std::vector<BucketResult> results;
  for (auto &[order, entry] : buckets) {
    BucketResult result;
    result.bucket = entry.first;
    for (auto &[schedule, row] : entry.second) {
      if (row->status == "ok") {
        ++result.ok;
        if (!result.best || row->medianMs < result.best->medianMs)
          result.best = row;
      } else if (row->status == "failed") {
        ++result.failed;
      } else {
        ++result.pruned;
      }
    }
    if (auto d = defaults.find(result.bucket); d != defaults.end())
      result.defaultRow = entry.second[d->second->schedule];
    results.push_back(result);
  }
  return results;
}

std::string winnersMarkdown(ArrayRef<Row> rows, StringRef source) {
  std::string text;
  raw_string_ostream os(text);
  os << "# Tuning winners\n\n"
     << "Written by `rkc tune` from `" << source
     << "`. Per shape bucket (bh: sequences x value heads, t: tokens a "
        "sequence, each rounded up to a power of two), the default schedule "
        "and the fastest schedule that passed the reference check: median "
        "of the timed runs (p20-p80) in ms, the L2 cache flushed before "
        "each run. ok / failed / pruned count the schedules tried.\n";
  std::map<Group, std::vector<Row>> groups;
  for (const Row &row : rows)
    groups[Group::of(row)].push_back(row);
  for (auto &[group, members] : groups) {
    os << "\n## " << group.describe() << "\n\n"
       << "| bucket | shape | default | default ms | winner | winner ms "
          "(p20-p80) | speed-up | ok / failed / pruned |\n"
       << "|---|---|---|---:|---|---:|---:|---:|\n";
    for (const BucketResult &r : bucketResults(members)) {
      auto schedule = [](const Row *row) {
        std::optional<Schedule> s = Schedule::fromMap(row->schedule);
        if (s)
          return s->describe();
        std::string text;
        for (auto &[key, value] : row->schedule)
          text += (text.empty() ? "" : ", ") + key + " " +
                  std::to_string(value);
        return text;
      };
      const Row *shapeRow = r.best ? r.best : r.defaultRow;
      os << "| " << r.bucket << " | "
         << (shapeRow ? shapeRow->shape.describe() : std::string("-"))
         << " | " << (r.defaultRow ? schedule(r.defaultRow) : "-") << " | ";
      if (!r.defaultRow)
        os << "-";
      else if (r.defaultRow->status == "ok")
        os << formatv("{0:f3}", r.defaultRow->medianMs);
      else
        os << r.defaultRow->status;
      os << " | ";
      if (r.best) {
        bool isDefault = r.defaultRow && r.best == r.defaultRow;
        os << schedule(r.best) << (isDefault ? " (the default)" : "")
           << formatv(" | {0:f3} ({1:f3}-{2:f3})", r.best->medianMs,
                      r.best->p20Ms, r.best->p80Ms);
        if (r.defaultRow && r.defaultRow->status == "ok")
          os << formatv(" | {0:f2}x", r.defaultRow->medianMs /
                                          r.best->medianMs);
        else
          os << " | -";
      } else {
        os << "none passed | - | -";
      }
      os << " | " << r.ok << " / " << r.failed << " / " << r.pruned
         << " |\n";
    }
  }
  return text;
}

std::string isoTimeNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc;
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

//===----------------------------------------------------------------------===//
// The dispatcher
//===----------------------------------------------------------------------===//

std::string dispatcherSource(const DispatchSpec &spec,
                             ArrayRef<DispatchVariant> variants,
                             StringRef source) {
  const std::string &name = spec.name;
  std::string upper = StringRef(name).upper();
  const DispatchVariant *defaultVariant = nullptr;
  for (const DispatchVariant &v : variants)
    if (v.isDefault)
      defaultVariant = &v;
  assert(defaultVariant && "a tuned compile always has the default variant");

  // Routes: bucket -> variant index, sorted by (bh, t).
  std::vector<std::tuple<int64_t, int64_t, size_t>> routes;
  for (auto [i, v] : llvm::enumerate(variants)) {
    if (v.isDefault)
      continue;
    for (auto &[bucket, note] : v.buckets) {
      int64_t bh = 0, t = 0;
      if (parseBucket(bucket, bh, t))
        routes.emplace_back(bh, t, i);
    }
  }
  llvm::sort(routes);

  std::string text;
  raw_string_ostream os(text);
  os << "/* Generated by rkc from @" << name << ", tuned with " << source
     << ": host launchers\n"
     << " * that run the schedule measured fastest for the call's shape "
        "bucket.\n *\n"
     << " * The bucket is \"bh=P,t=Q\": P = sequences x value heads and Q = "
        "tokens a sequence\n"
     << " * (T, or T / num_seqs with cu_seqlens), each rounded up to a power "
        "of two.\n"
     << " * rkc_" << name << "_fwd runs:\n";
  std::vector<std::tuple<int64_t, int64_t, std::string>> lines;
  for (const DispatchVariant &v : variants)
    for (auto &[bucket, note] : v.buckets) {
      int64_t bh = 0, t = 0;
      parseBucket(bucket, bh, t);
      lines.emplace_back(bh, t,
                         formatv("{0,-20}", bucket).str() + " " + v.symbol +
                             " (" + v.schedule +
                             (note.empty() ? "" : "; " + note) + ")");
    }
  llvm::sort(lines);
  for (auto &[bh, t, line] : lines)
    os << " *   " << line << "\n";
  os << " *   " << formatv("{0,-20}", "any other bucket") << " "
     << defaultVariant->symbol << " (the default: "
     << defaultVariant->schedule << ")\n"
     << " * rkc_" << name
     << "_decode runs the default schedule: tuning times prefill only.\n"
     << " * Each variant's launcher validates the arguments in full. */\n"
     << "#include \"" << name << ".h\"\n\n"
     << "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n";
  for (const DispatchVariant &v : variants)
    os << "#include \"" << v.symbol << "_launch.inc\"\n";
  os << "\n#ifdef __cplusplus\n#define RKC_" << upper
     << "_STATIC_ASSERT static_assert\n#else\n#define RKC_" << upper
     << "_STATIC_ASSERT _Static_assert\n#endif\n\n"
     << "/* The variants' args structs list the public one's members in the "
        "same order. */\n";
  for (const DispatchVariant &v : variants)
    os << "RKC_" << upper << "_STATIC_ASSERT(sizeof(rkc_" << v.symbol
       << "_args) == sizeof(rkc_" << name << "_args), \"" << v.symbol
       << ": args layout\");\n";
  os << "\n";

  // Calls into a variant, the arguments copied into its own struct type.
  auto call = [&](const DispatchVariant &v, StringRef kind) {
    os << "static rkc_status rkc_" << v.symbol << "_run_" << kind
       << "(CUstream stream, const rkc_" << name << "_args *args) {\n"
       << "  if (!args)\n    return rkc_" << v.symbol << "_" << kind
       << "(stream, NULL);\n"
       << "  rkc_" << v.symbol << "_args a;\n"
       << "  memcpy(&a, args, sizeof a);\n"
       << "  return rkc_" << v.symbol << "_" << kind << "(stream, &a);\n}\n\n";
  };
  for (const DispatchVariant &v : variants)
    call(v, "fwd");
  call(*defaultVariant, "decode");
  // The workspace query, the same way.
  for (const DispatchVariant &v : variants)
    os << "static rkc_status rkc_" << v.symbol << "_run_fwd_workspace(const rkc_"
       << name << "_args *args, size_t *bytes) {\n"
       << "  if (!args)\n    return rkc_" << v.symbol
       << "_fwd_workspace(NULL, bytes);\n"
       << "  rkc_" << v.symbol << "_args a;\n"
       << "  memcpy(&a, args, sizeof a);\n"
       << "  return rkc_" << v.symbol << "_fwd_workspace(&a, bytes);\n}\n\n";

  os << "static int64_t rkc_" << name << "_pow2(int64_t x) {\n"
     << "  int64_t p = 1;\n  while (p < x)\n    p <<= 1;\n  return p;\n}\n\n"
     << "/* The variant of the arguments' bucket; -1: the default, also for "
        "arguments the\n"
     << " * launchers reject (the default's checks then report them). */\n"
     << "static int rkc_" << name << "_variant(const rkc_" << name
     << "_args *a) {\n"
     << "  if (!a)\n    return -1;\n"
     << "  const int64_t B = a->" << spec.tokenInput << ".shape[0];\n"
     << "  const int64_t T = a->" << spec.tokenInput << ".shape[1]"
     << (spec.rowsPerToken > 1 ? " / " + std::to_string(spec.rowsPerToken)
                               : std::string())
     << ";\n  int64_t HV = 0;\n";
  for (auto &[input, headDim] : spec.inputs)
    os << "  if (a->" << input << ".rank > " << headDim << " && a->" << input
       << ".shape[" << headDim << "] > HV)\n    HV = a->" << input
       << ".shape[" << headDim << "];\n";
  os << "  const int64_t N = a->cu_seqlens ? a->num_seqs : B;\n"
     << "  if (B < 1 || T < 1 || HV < 1 || N < 1 || N > 65535 || HV > 65535 "
        "||\n      T > ((int64_t)1 << 40))\n    return -1;\n"
     << "  const int64_t bh = rkc_" << name << "_pow2(N * HV);\n"
     << "  const int64_t t = rkc_" << name
     << "_pow2(a->cu_seqlens ? (T + N - 1) / N : T);\n";
  if (routes.empty())
    os << "  (void)bh;\n  (void)t;\n";
  for (auto [bh, t, index] : routes)
    os << "  if (bh == " << bh << " && t == " << t << ")\n    return "
       << index << "; /* " << variants[index].symbol << " */\n";
  os << "  return -1;\n}\n\n";

  os << "rkc_status rkc_" << name << "_fwd(CUstream stream, const rkc_"
     << name << "_args *args) {\n  switch (rkc_" << name
     << "_variant(args)) {\n";
  for (auto [i, v] : llvm::enumerate(variants))
    if (!v.isDefault)
      os << "  case " << i << ":\n    return rkc_" << v.symbol
         << "_run_fwd(stream, args);\n";
  os << "  default:\n    return rkc_" << defaultVariant->symbol
     << "_run_fwd(stream, args);\n  }\n}\n\n"
     << "rkc_status rkc_" << name << "_fwd_workspace(const rkc_" << name
     << "_args *args, size_t *bytes) {\n  switch (rkc_" << name
     << "_variant(args)) {\n";
  for (auto [i, v] : llvm::enumerate(variants))
    if (!v.isDefault)
      os << "  case " << i << ":\n    return rkc_" << v.symbol
         << "_run_fwd_workspace(args, bytes);\n";
  os << "  default:\n    return rkc_" << defaultVariant->symbol
     << "_run_fwd_workspace(args, bytes);\n  }\n}\n\n"
     << "rkc_status rkc_" << name << "_decode(CUstream stream, const rkc_"
     << name << "_args *args) {\n  return rkc_" << defaultVariant->symbol
     << "_run_decode(stream, args);\n}\n";
  return text;
}

} // namespace rkc::tuning
