"""The torch-free half of bench/benchmark.py: the performance targets, the
acceptance verdicts, the markdown tables and the SVG plots of BENCHMARKS.md,
from rows of measurements. Kept apart so that it is tested without a GPU
(test/python/test_report.py).

A row is a dict: section, spec, shape, status ("ok", "ok vs float64 (...)",
"FAILED", "FAILED (...)", "error: ...", "not run: ..."), label (the
reference), note, err_o and err_s (RKC against the reference), rkc and fla
(Timing or None), bytes (RKC's compulsory bytes), mem_rkc and mem_fla
((bytes in torch's allocator, bytes outside it) or None). "ok vs float64"
rows are measured like "ok" ones: RKC and the reference disagreed, and RKC
was within BOUND of the float64 recurrence (the parentheses give both sides'
errors against it). The verdicts read only the timings. A row may also carry
copy_gbs, the copy bandwidth measured in the run that measured it (a row
taken from an earlier run by --resume keeps its own), and resumed.

The rows of a run are also written as JSON (rows_json), a line of the run's
identity first, so that a run cut short (--time-limit, or a time limit on
the machine) can be finished by another that measures only what is missing
(rows_from_json, resumable).
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SWEEP_SPECS = ["kda", "eda"]
SWEEP_T = [2048, 4096, 8192, 16384, 32768, 65536]
SWEEP_B, SWEEP_H, SWEEP_D = 1, 16, 128
BOUND = 5e-3            # MATH.md's bound for bf16 I/O (fla's own)
PRODUCT_N = 2           # DeltaProduct's sub-steps a token (fla's num_householder)

# The performance targets: prefill speed-up over the fla row, time relative to RKC's
# own kda, share of the copy bandwidth in decode, linearity in T.
SPEEDUP_TARGETS = [("kda", 1.5), ("gdn", 1.3), ("gdn2", 1.5), ("eda", 4.0),
                   ("qed", 3.0)]
OVER_KDA_TARGETS = [("eda", 1.6), ("qed", 1.3)]
DECODE_SHARE = 0.85
LINEAR_SLACK = 1.15
# `rkc tune` on one spec at one shape: within this wall time, and its winner
# at least as fast as the default schedule.
TUNE_SPEC, TUNE_SHAPE = "eda", (1, 8192, 32, 128)
TUNE_LIMIT_S = 15 * 60
# The specs whose decode rows have an fla kernel beside them.
FLA_DECODE_SPECS = ("kda", "gdn")


class Timing:
    def __init__(self, times):
        times = sorted(times)
        self.n = len(times)
        self.median = quantile(times, 0.5)
        self.p20 = quantile(times, 0.2)
        self.p80 = quantile(times, 0.8)

    def to_json(self):
        return {"n": self.n, "median": self.median, "p20": self.p20,
                "p80": self.p80}

    @classmethod
    def from_json(cls, d):
        t = cls.__new__(cls)
        t.n, t.median, t.p20, t.p80 = d["n"], d["median"], d["p20"], d["p80"]
        return t


# The fields of a run that rows from another run must share to be reported
# with this one's: the same code on both sides (the rkc binary by its hash,
# fla and the libraries by their versions), measured on the same GPU by the
# same method.
RUN_IDENTITY = ("gpu", "rkc_commit", "rkc_binary", "fla_commit", "versions",
                "compile_options", "method")


def rows_json(identity, rows):
    """A run's rows as text: the identity (a dict with RUN_IDENTITY's keys)
    on the first line, then a row a line."""
    lines = [json.dumps(identity, sort_keys=True)]
    for r in rows:
        d = dict(r)
        d["shape"] = list(r["shape"])
        for side in ("rkc", "fla"):
            d[side] = r[side].to_json() if r[side] else None
        lines.append(json.dumps(d, sort_keys=True))
    return "\n".join(lines) + "\n"


def rows_from_json(text, warn=None):
    """(identity, rows) of rows_json's text. A last line cut short (a run
    killed while writing it) is left out, with `warn` (a function of a
    message) told; anything else malformed raises ValueError naming its
    line."""
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines:
        raise ValueError("no run identity: an empty rows file")
    try:
        identity = json.loads(lines[0])
    except ValueError as e:
        raise ValueError("line 1 (the run's identity): %s" % e)
    rows = []
    for number, line in enumerate(lines[1:], 2):
        try:
            r = json.loads(line)
            r["shape"] = tuple(r["shape"])
            for side in ("rkc", "fla"):
                r[side] = Timing.from_json(r[side]) if r[side] else None
            for mem in ("mem_rkc", "mem_fla"):
                if r.get(mem) is not None:
                    r[mem] = tuple(r[mem])
            missing = [k for k in ("section", "spec", "status") if k not in r]
            if missing:
                raise KeyError(", ".join(missing))
        except (ValueError, KeyError, TypeError) as e:
            if number == len(lines) and warn:
                warn("line %d, the last, left out: %s" % (number, e))
                break
            raise ValueError("line %d: %s" % (number, e))
        rows.append(r)
    return identity, rows


def resumable(identity, resumed_identity, rows):
    """{(section, spec, shape): row} of an earlier run's rows that this run
    takes as measured: those that were measured (ok, or FAILED: a verdict),
    not those that errored or were not run. Raises ValueError where the two
    runs differ in RUN_IDENTITY."""
    differ = [k for k in RUN_IDENTITY
              if identity.get(k) != resumed_identity.get(k)]
    if differ:
        raise ValueError("the rows to resume are of another run: %s" % "; ".join(
            "%s %r, this run %r" % (k, resumed_identity.get(k), identity.get(k))
            for k in differ))
    return {(r["section"], r["spec"], r["shape"]): r for r in rows
            if r["status"].startswith(("ok", "FAILED"))}


def planned_rows(specs, sections, prefill_shapes, decode_shapes, sweep_ts):
    """(spec, section, shape) of every row the run reports, in its order:
    the prefill table, the decode table, the T sweep."""
    rows = []
    if "prefill" in sections:
        rows += [(spec, "prefill", shape) for spec in specs for shape in prefill_shapes]
    if "decode" in sections:
        rows += [(spec, "decode", shape) for spec in specs for shape in decode_shapes]
    if "sweep" in sections:
        rows += [(spec, "T sweep", (SWEEP_B, T, SWEEP_H, SWEEP_D))
                 for spec in SWEEP_SPECS if spec in specs for T in sweep_ts]
    if "tune" in sections and TUNE_SPEC in specs:
        rows.append((TUNE_SPEC, "tune", TUNE_SHAPE))
    return rows


def tune_summary(db_text):
    """What one `rkc tune` run at one shape left in its database (JSON lines,
    the database holding that run alone): {"default": entry, "winner": entry,
    "counts": {"ok", "failed", "pruned"}}, an entry being {"schedule",
    "median", "p20", "p80", "reps"} (the winner: the fastest that passed its
    check). Raises ValueError without a default that passed its check (a
    tune that cannot say whether it helped)."""
    counts = {"ok": 0, "failed": 0, "pruned": 0}
    default = winner = None
    for number, line in enumerate(db_text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            status = d["status"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError("line %d: %s" % (number, e))
        counts[status] = counts.get(status, 0) + 1
        if status != "ok":
            continue
        entry = {"schedule": d["schedule"], "median": d["median_ms"],
                 "p20": d["p20_ms"], "p80": d["p80_ms"], "reps": d.get("reps", 0)}
        if d.get("default"):
            default = entry
        if winner is None or entry["median"] < winner["median"]:
            winner = entry
    if default is None:
        raise ValueError("no default schedule that passed its check "
                         "(%d ok, %d failed, %d pruned)" % (
                             counts["ok"], counts["failed"], counts["pruned"]))
    return {"default": default, "winner": winner, "counts": counts}


def schedule_text(schedule):
    """A schedule as `rkc tune`'s winners table names it."""
    return ", ".join("%s %s" % (k.replace("_", "-"), v)
                     for k, v in sorted(schedule.items()))


def memory_total(m):
    """Bytes a side took beyond its inputs and outputs: in torch's allocator
    and outside it."""
    return None if m is None else m[0] + max(m[1], 0)


def row_copy(row, copy_gbs):
    """The copy bandwidth a row's share is of: its own run's."""
    return row.get("copy_gbs") or copy_gbs


def quantile(sorted_values, p):
    x = p * (len(sorted_values) - 1)
    lo = int(math.floor(x))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (x - lo)


def shown_path(path):
    """A path as the report shows it: relative to the repository when inside
    it, else the path as given (the report should not depend on where the
    checkout happens to sit)."""
    path = os.path.abspath(path)
    if os.path.commonpath([path, ROOT]) == ROOT:
        return os.path.relpath(path, ROOT)
    return path


def shape_text(shape):
    return ",".join(str(s) for s in shape)


def ms(t):
    return "%.3f" % t if t >= 0.1 else "%.4f" % t


def timing_text(t):
    return "%s (%s–%s)" % (ms(t.median), ms(t.p20), ms(t.p80)) if t else "–"


def speedup(row):
    if row and row["rkc"] and row["fla"]:
        return row["fla"].median / row["rkc"].median
    return None


def gbs(row):
    if row and row["rkc"] and row["bytes"]:
        return row["bytes"] / row["rkc"].median / 1e6
    return None


def mib(x):
    return "%.1f" % (x / 2 ** 20) if x is not None else "–"


def memory_text(row):
    def side(m):
        if m is None:
            return "–"
        text = mib(m[0])
        if abs(m[1]) >= 2 ** 20:   # left taken outside torch's allocator
            text += " (+%s outside torch)" % mib(m[1])
        return text
    return "%s / %s" % (side(row["mem_rkc"]), side(row["mem_fla"]))


def err_text(e):
    return "–" if e is None else ("%.1e" % e)


def status_text(row):
    s = row["status"]
    if row["note"] and s == "ok":
        s = "ok; " + row["note"]
    elif row["note"]:
        s += "; " + row["note"]
    if row.get("resumed"):
        s += " (resumed)"
    return s.replace("|", "/")


def table(headers, lines):
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
    return out


def prefill_lines(rows, copy_gbs):
    lines = []
    for r in rows:
        s, g = speedup(r), gbs(r)
        lines.append([r["spec"], shape_text(r["shape"]), r["label"] or "–",
                      timing_text(r["rkc"]), timing_text(r["fla"]),
                      "%.2f×" % s if s else "–", err_text(r["err_o"]),
                      err_text(r["err_s"]), "%.0f" % g if g else "–",
                      "%.0f%%" % (100 * g / row_copy(r, copy_gbs)) if g else "–",
                      memory_text(r), status_text(r)])
    return lines


def step_ratios(rows):
    """(T, t_i / t_{i-1} over T_i / T_{i-1}) for RKC along a sweep."""
    out = []
    timed = [r for r in rows if r["rkc"]]
    for prev, cur in zip(timed, timed[1:]):
        grow = cur["shape"][1] / prev["shape"][1]
        out.append((prev["shape"][1], cur["shape"][1],
                    cur["rkc"].median / prev["rkc"].median / grow))
    return out


def acceptance(specs, prefill, sweep, decode, copy_gbs, tune=()):
    """(item, target, measured, verdict) from the measurements."""
    items = []

    def verdict(values, ok, complete):
        if values and not all(ok(v) for v in values):
            return "FAIL"
        if values and complete:
            return "pass"
        return "n/a"

    def by(rows, spec):
        return [r for r in rows if r["spec"] == spec]

    for spec, target in SPEEDUP_TARGETS:
        if spec not in specs:
            continue
        rows = by(prefill, spec)
        vals = [speedup(r) for r in rows]
        got = [v for v in vals if v is not None]
        labels = [r["label"] for r in rows if r["label"]]
        ref = labels[0] if labels else {"eda": "DPLR over 2T",
                                        "qed": "DPLR"}.get(spec, "")
        items.append(("%s prefill faster than fla %s" % (spec, ref),
                      "≥ %.1f×" % target,
                      ", ".join("%.2f×" % v if v else "–" for v in vals) or "–",
                      verdict(got, lambda v: v >= target, len(got) == len(vals))))
    for spec, target in OVER_KDA_TARGETS:
        if spec not in specs or "kda" not in specs:
            continue
        kda = {r["shape"]: r for r in by(prefill, "kda")}
        vals = []
        for r in by(prefill, spec):
            k = kda.get(r["shape"])
            vals.append(r["rkc"].median / k["rkc"].median
                        if r["rkc"] and k and k["rkc"] else None)
        got = [v for v in vals if v is not None]
        items.append(("%s prefill time over RKC's kda" % spec, "≤ %.1f×" % target,
                      ", ".join("%.2f×" % v if v else "–" for v in vals) or "–",
                      verdict(got, lambda v: v <= target, len(got) == len(vals))))
    share = {r["spec"] + " " + shape_text(r["shape"]):
             (gbs(r) / row_copy(r, copy_gbs) if gbs(r) else None)
             for r in decode}
    for spec in FLA_DECODE_SPECS:
        if spec in specs:
            vals = [v for k, v in share.items() if k.split()[0] == spec]
            got = [v for v in vals if v is not None]
            items.append(("%s decode, share of copy bandwidth" % spec,
                          "≥ %.0f%%" % (100 * DECODE_SHARE),
                          ", ".join("%.0f%%" % (100 * v) if v else "–" for v in vals) or "–",
                          verdict(got, lambda v: v >= DECODE_SHARE, len(got) == len(vals))))
    if share:
        got = {k: v for k, v in share.items() if v is not None}
        worst = min(got, key=got.get) if got else None
        items.append(("decode, every spec, share of copy bandwidth",
                      "≥ %.0f%%" % (100 * DECODE_SHARE),
                      "min %.0f%% (%s)" % (100 * got[worst], worst) if worst else "–",
                      verdict(list(got.values()), lambda v: v >= DECODE_SHARE,
                              len(got) == len(share))))
    for spec in SWEEP_SPECS:
        rows = by(sweep, spec)
        if spec not in specs or not rows:
            continue
        ratios = step_ratios(rows)
        worst = max(ratios, key=lambda x: x[2]) if ratios else None
        items.append(("%s linear in T (RKC): each step over linear extrapolation" % spec,
                      "≤ %.2f×" % LINEAR_SLACK,
                      "worst %.2f× (%d→%d)" % (worst[2], worst[0], worst[1]) if worst else "–",
                      verdict([r[2] for r in ratios], lambda v: v <= LINEAR_SLACK,
                              len(ratios) == len(rows) - 1 and len(rows) > 1)))
    # Extra device memory, every row with an fla side: each prefill row and
    # the decode rows of FLA_DECODE_SPECS, whatever their status (a row that
    # failed, errored or did not run leaves the verdict open).
    sides = [(r, memory_total(r["mem_rkc"]), memory_total(r["mem_fla"]))
             for r in prefill + [d for d in decode
                                 if d["spec"] in FLA_DECODE_SPECS]]
    measured = [(r, a, b) for r, a, b in sides if a is not None and b is not None]
    if sides:
        over = [(r, a, b) for r, a, b in measured if a > b]
        worst = max(measured, key=lambda x: x[1] - x[2]) if measured else None
        items.append((
            "extra device memory no larger than fla's (every row with an fla side)",
            "RKC ≤ fla",
            ("%d of %d rows over: %s" % (len(over), len(measured), ", ".join(
                "%s %s %s > %s MiB" % (r["spec"], shape_text(r["shape"]), mib(a),
                                       mib(b)) for r, a, b in over[:3]))
             if over else "%d rows; closest %s %s: %s / %s MiB" % (
                 len(measured), worst[0]["spec"], shape_text(worst[0]["shape"]),
                 mib(worst[1]), mib(worst[2])) if worst else "–"),
            verdict([a <= b for _, a, b in measured], bool,
                    len(measured) == len(sides))))
    for r in tune:
        t = r.get("tune")
        item = "rkc tune %s at %s: wall time; winner over the default" % (
            r["spec"], shape_text(r["shape"]))
        target = "≤ %d min; ≥ 1.00×" % (TUNE_LIMIT_S // 60)
        if not t or not r["status"].startswith("ok"):
            items.append((item, target, r["status"],
                          "FAIL" if r["status"].startswith("FAILED") else "n/a"))
            continue
        ratio = t["default"]["median"] / t["winner"]["median"]
        items.append((item, target, "%.0f s; %.2f× (%s)" % (
            t["wall_s"], ratio, schedule_text(t["winner"]["schedule"])),
            "pass" if t["wall_s"] <= TUNE_LIMIT_S and ratio >= 1.0 else "FAIL"))
    return items


def write_report(path, plots_dir, args, info, copy_gbs, specs, prefill, sweep,
                 decode, tune=()):
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(plots_dir, exist_ok=True)
    speed_svg = os.path.join(plots_dir, "speedup.svg")
    time_svg = os.path.join(plots_dir, "time_vs_t.svg")

    shapes = []
    for r in prefill:
        if r["shape"] not in shapes:
            shapes.append(r["shape"])
    groups = [s for s in specs if any(r["spec"] == s for r in prefill)]
    values = [[speedup(next((r for r in prefill if r["spec"] == g and r["shape"] == sh), None))
               for sh in shapes] for g in groups]
    targets = dict(SPEEDUP_TARGETS)
    with open(speed_svg, "w") as f:
        f.write(svg_bars("Prefill speed-up over fla (fla ms / RKC ms; eda, qed: over fla's DPLR)",
                         [g + (" (DPLR)" if g in ("eda", "qed") else "") for g in groups],
                         [shape_text(s) for s in shapes], values,
                         [targets.get(g) for g in groups]))
    series = []
    for spec in SWEEP_SPECS:
        rows = [r for r in sweep if r["spec"] == spec]
        if rows:
            fla_name = "fla DPLR over 2T" if spec == "eda" else "fla " + rows[0]["label"]
            series.append(("RKC " + spec, [(r["shape"][1], r["rkc"].median)
                                           for r in rows if r["rkc"]], False))
            series.append((fla_name, [(r["shape"][1], r["fla"].median)
                                      for r in rows if r["fla"]], True))
    with open(time_svg, "w") as f:
        f.write(svg_lines("Time against T (B = %d, H = %d, D = %d)" % (
            SWEEP_B, SWEEP_H, SWEEP_D), series, "T (tokens)", "ms"))

    md = ["# Benchmarks: RKC against flash-linear-attention", "",
          "Written by `bench/benchmark.py` (do not edit by hand): `%s`." % " ".join(
              ["python3", "bench/benchmark.py"] + [
                  shown_path(a) if os.path.isabs(a) else a
                  for a in sys.argv[1:]]), ""]
    # A sweep row at a prefill shape is the prefill row itself: count rows once.
    rows = list({id(r): r for r in prefill + sweep + decode}.values())
    resumed = sorted({r["copy_gbs"] for r in rows
                      if r.get("resumed") and r.get("copy_gbs")})
    md += table(["run", ""], [[k, v] for k, v in info] + [
        ["device copy bandwidth", "%.0f GB/s (read + write bytes of a 1 GiB "
         "`copy_`, this run)" % copy_gbs]] + ([[
             "rows of an earlier run", "%d, marked \"resumed\" (`--resume`: "
             "the same commits, binary, versions, GPU, options and method; "
             "copy bandwidth %s GB/s there, their share of copy is of it)" % (
                 sum(1 for r in rows if r.get("resumed")),
                 ", ".join("%.0f" % g for g in resumed))]] if resumed else []))
    md += ["", "Method: one process, the same inputs on both sides (bf16 q, k, v and "
           "strengths, fp32 log-space gates `logsigmoid(N)` clamped to [-5, 0], q/k/e "
           "L2-normalised, a fresh seed a row). Each row is checked first: relative "
           "Frobenius error of o and of the final state between RKC and the reference "
           "(err o, err state), bound %.0e. Beyond it, both sides are measured against "
           "a float64 evaluation of MATH.md's recurrence, token by token, on the rounded "
           "inputs RKC got (and its initial state): if RKC is within the bound of it, the "
           "row is timed, its status \"ok vs float64\" giving both sides' errors against "
           "float64 (then the reference kernel is the one off); otherwise it is FAILED "
           "and not timed. Times: CUDA events, "
           "warm-up, L2 flushed before every repetition, each call enqueued while the "
           "GPU still waits (the kernels' time, not the host's); median (p20–p80) in ms. "
           "GB/s: RKC's compulsory bytes (its inputs once, o and the final state once, "
           "and the initial state in decode) over its median; \"of copy\" is that over "
           "the copy bandwidth above. Extra MiB: peak of torch's allocator during one "
           "call minus what was live before and what the call returns (RKC / reference); "
           "\"outside torch\": the larger of what the call leaves taken outside that "
           "allocator and the peak of the stream-ordered pools (the device's and RKC's "
           "workspace pool) during the call."
           % BOUND, ""]

    md += ["## Acceptance (the performance targets)", ""]
    md += table(["item", "target", "measured", "verdict"],
                acceptance(specs, prefill, sweep, decode, copy_gbs, tune))
    md += ["", "Speed-ups per prefill shape in the table's order; n/a: not measured "
           "(a row failed, errored or was not run).", ""]

    headers = ["spec", "%s", "reference", "rkc ms (p20–p80)", "fla ms (p20–p80)",
               "fla/rkc", "err o", "err state", "RKC GB/s", "of copy",
               "extra MiB rkc / fla", "status"]
    md += ["## Prefill", "",
           "![prefill speed-up over fla](%s)" % os.path.relpath(speed_svg, folder), ""]
    md += table([h % "B,T,H,D" if "%" in h else h for h in headers],
                prefill_lines(prefill, copy_gbs))

    md += ["", "## Time against T", "",
           "![time against T](%s)" % os.path.relpath(time_svg, folder), ""]
    lines = []
    for spec in SWEEP_SPECS:
        rows = [r for r in sweep if r["spec"] == spec]
        ratios = {cur: x for _, cur, x in step_ratios(rows)}
        for r in rows:
            s = speedup(r)
            x = ratios.get(r["shape"][1])
            lines.append([spec, r["shape"][1], r["label"] or "–", timing_text(r["rkc"]),
                          timing_text(r["fla"]), "%.2f×" % s if s else "–",
                          "%.2f" % x if x else "–", err_text(r["err_o"]),
                          err_text(r["err_s"]), status_text(r)])
    md += table(["spec", "T", "reference", "rkc ms (p20–p80)", "fla ms (p20–p80)",
                 "fla/rkc", "rkc step / linear", "err o", "err state", "status"], lines)
    md += ["", "B = %d, H = %d, D = %d. \"rkc step / linear\": RKC's time over the "
           "previous T's time scaled by the ratio of the T's (1.00 is linear)." % (
               SWEEP_B, SWEEP_H, SWEEP_D), ""]

    md += ["## Decode (one token a sequence, state read and written in fp32)", ""]
    md += table([h % "N,H,D" if "%" in h else h for h in headers],
                prefill_lines(decode, copy_gbs))
    md += ["", "Decode calls the generated library directly (rkc_torch's ctypes "
           "binding), reading the initial state and writing the final state to "
           "another tensor. kda and gdn are checked and timed against fla's "
           "fused_recurrent kernels; the other specs are checked against one "
           "float64 step of MATH.md's recurrence and have no fla timing.", ""]

    if tune:
        md += ["## Tuning (`rkc tune`)", ""]
        lines = []
        for r in tune:
            t = r.get("tune")
            if not t or not r["status"].startswith("ok"):
                lines.append([r["spec"], shape_text(r["shape"]), "–", "–", "–",
                              "–", "–", status_text(r)])
                continue
            c, d, w = t["counts"], t["default"], t["winner"]
            lines.append([
                r["spec"], shape_text(r["shape"]), "%.0f" % t["wall_s"],
                "%d / %d / %d" % (c.get("ok", 0), c.get("failed", 0), c.get("pruned", 0)),
                "%s: %s" % (schedule_text(d["schedule"]), ms(d["median"])),
                "%s: %s (%s–%s)" % (schedule_text(w["schedule"]), ms(w["median"]),
                                    ms(w["p20"]), ms(w["p80"])),
                "%.2f×" % (d["median"] / w["median"]), status_text(r)])
        md += table(["spec", "B,T,H,D", "wall s", "ok / failed / pruned",
                     "default schedule: ms", "winner: ms (p20–p80)",
                     "default / winner", "status"], lines)
        md += ["", "`rkc tune` run by this command on a database of its own "
               "(%s beside this file, with its winners table), from nothing: every "
               "schedule of the space that shared memory and registers allow "
               "compiled, checked against the reference and timed on the GPU "
               "above (`rkc tune`'s own timing: CUDA events, L2 flushed, "
               "median of its repetitions). Wall time from the command's start "
               "to its end, compiling included. The default schedule is one of "
               "the candidates, so the winner is at least as fast by "
               "construction: the item checks that the tune finishes in time "
               "and that its default passed the reference check." % ", ".join(
                   sorted({"`%s`" % t["db"] for t in (r.get("tune") for r in tune)
                           if t and t.get("db")})), ""]

    md += ["## How each spec meets fla", "",
           "- kda, gdn, deltanet, deltaproduct (n = %d): fla's chunk kernel of the "
           "same recurrence, argument for argument." % PRODUCT_N,
           "- comba: fla's `chunk_comba` reads p at the state before the token's "
           "decay (its Gram and W use the exclusive cumulative gate), MATH.md's "
           "comba after it (as fla's own naive_recurrent_comba does); fla gets "
           "p' = exp(g)·p, the same read, rounded to bf16.",
           "- linear_attention: `chunk_linear_attn(..., normalize=False)` (no "
           "denominator: S += k vᵀ, o = Sᵀ(scale q)).",
           "- gdn2: fla's `chunk_gdn2` takes an erase gate b and forms a = b⊙k; "
           "RKC gets that a. b is drawn as a power of two so that a is exact in "
           "bf16 and both sides use the same vector.",
           "- dplr: ours writes along a and reads at b; fla's `a` reads and its `b` "
           "writes, so fla gets a = our b, b = our a, gk = g.",
           "- eda: `chunk_dplr_delta_rule` over 2T rows (MATH.md's sub-step table): "
           "row 2t erase (gk = g, read exp(g)⊙e, write -γe, k = v = 0), row 2t+1 "
           "delta (gk = 0, read k, write -βk, k = βk, v); o compared at the delta "
           "rows. Exact up to the bf16 rounding of exp(g)⊙e, γe and βk on fla's side "
           "(that rounding alone is about 1.6e-3 of relative error at D = 128).",
           "- qed: `chunk_dplr_delta_rule` over T with a = b⊙k + λ P⊥_k(b⊙q) computed "
           "in float32: read exp(g)⊙a, write -k, v = w⊙v. Exact up to the bf16 "
           "rounding of exp(g)⊙a and w⊙v on fla's side (again about 1.6e-3 by itself).",
           "- The DPLR routes are timed on inputs prepared beforehand: the preparation "
           "(interleaving, the erase vector) is not in fla's time.", ""]
    text = "\n".join(md)
    with open(path, "w") as f:
        f.write(text)
    return text


# ------------------------------------------------------------------- SVG --

COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"]
FONT = 'font-family="sans-serif"'


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_open(w, h, title):
    return ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d">' % (w, h, w, h),
            '<rect width="%d" height="%d" fill="white"/>' % (w, h),
            '<text x="%d" y="24" %s font-size="15" text-anchor="middle">%s</text>'
            % (w // 2, FONT, esc(title))]


def svg_empty(w, h, title):
    return "\n".join(svg_open(w, h, title) + [
        '<text x="%d" y="%d" %s font-size="13" text-anchor="middle" fill="#777">'
        'no data</text>' % (w // 2, h // 2, FONT), "</svg>", ""])


def svg_bars(title, groups, series, values, targets):
    """Grouped bars on a log axis, each from parity (1×) up or down to its
    value: values[group][series], None where not measured; a short thick
    dashed mark at each group's target."""
    w, h = 960, 420
    left, right, top, bottom = 64, 20, 64, 70
    flat = [v for vs in values for v in vs if v is not None and v > 0]
    if not groups or not flat:
        return svg_empty(w, h, title)
    marks = flat + [t for t in targets if t] + [1.0]
    lo, hi = math.log(min(marks)) - 0.25, math.log(max(marks)) + 0.25
    pw, ph = w - left - right, h - top - bottom

    def y(v):
        return top + ph - (math.log(v) - lo) / (hi - lo) * ph

    out = svg_open(w, h, title)
    for t in log_ticks(math.exp(lo), math.exp(hi)):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, w - right, y(t), y(t)))
        out.append('<text x="%d" y="%.1f" %s font-size="11" text-anchor="end">%g×</text>'
                   % (left - 6, y(t) + 4, FONT, t))
    out.append('<text x="16" y="%d" %s font-size="12" transform="rotate(-90 16 %d)" '
               'text-anchor="middle">fla time / RKC time</text>'
               % (top + ph // 2, FONT, top + ph // 2))
    gw = pw / len(groups)
    bw = gw * 0.78 / max(len(series), 1)
    for gi, group in enumerate(groups):
        x0 = left + gi * gw + gw * 0.11
        for si, v in enumerate(values[gi]):
            x = x0 + si * bw
            if v is None or v <= 0:
                out.append('<text x="%.1f" y="%.1f" %s font-size="11" fill="#999" '
                           'text-anchor="middle">×</text>' % (x + bw / 2, y(1.0) - 3, FONT))
                continue
            y0, y1 = sorted((y(v), y(1.0)))
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x, y0, bw - 1, max(y1 - y0, 1.0), COLORS[si % len(COLORS)]))
            ty = y(v) - 3 if v >= 1 else y(v) + 10
            out.append('<text x="%.1f" y="%.1f" %s font-size="9" text-anchor="middle">'
                       '%s</text>' % (x + bw / 2, ty, FONT, "%.2f" % v if v >= 0.1 else "%.3f" % v))
        if targets[gi]:
            out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="black" '
                       'stroke-width="2" stroke-dasharray="4 3"/>'
                       % (x0 - 2, x0 + len(series) * bw + 1, y(targets[gi]), y(targets[gi])))
        out.append('<text x="%.1f" y="%d" %s font-size="12" text-anchor="middle">%s</text>'
                   % (left + (gi + 0.5) * gw, h - bottom + 18, FONT, esc(group)))
    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#444"/>'
               % (left, w - right, y(1.0), y(1.0)))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'
               % (left, top, pw, ph))
    lx = left
    for si, name in enumerate(series):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
                   % (lx, top - 26, COLORS[si % len(COLORS)]))
        out.append('<text x="%d" y="%d" %s font-size="11">B,T,H,D = %s</text>'
                   % (lx + 16, top - 16, FONT, esc(name)))
        lx += 190
    out.append('<text x="%d" y="%d" %s font-size="11">thick dashes: the target</text>'
               % (lx, top - 16, FONT))
    out.append('<text x="%d" y="%d" %s font-size="10" fill="#777">bars start at parity '
               '(1×): up, RKC is faster; × : not measured</text>' % (left, h - 12, FONT))
    return "\n".join(out + ["</svg>", ""])


def log_ticks(lo, hi):
    ticks = []
    for e in range(int(math.floor(math.log10(lo))) - 1, int(math.ceil(math.log10(hi))) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** e
            if lo <= v <= hi:
                ticks.append(v)
    return ticks


def svg_lines(title, series, xlabel, ylabel):
    """Log-log lines: series = [(name, [(x, y)], dashed)]."""
    w, h = 760, 460
    left, right, top, bottom = 70, 190, 48, 56
    pts = [p for _, ps, _ in series for p in ps]
    if not pts:
        return svg_empty(w, h, title)
    xs = sorted({p[0] for p in pts})
    x0, x1 = math.log(min(xs)), math.log(max(xs))
    pad = max(x1 - x0, 1.0) * 0.04
    x0, x1 = x0 - pad, x1 + pad
    ylo, yhi = min(p[1] for p in pts), max(p[1] for p in pts)
    y0, y1 = math.log(ylo) - 0.15, math.log(yhi) + 0.15
    pw, ph = w - left - right, h - top - bottom

    def px(v):
        return left + (math.log(v) - x0) / (x1 - x0) * pw

    def py(v):
        return top + ph - (math.log(v) - y0) / (y1 - y0) * ph

    out = svg_open(w, h, title)
    yticks = log_ticks(math.exp(y0), math.exp(y1))
    if len(yticks) < 2:           # under a 1-2-5 step: label the data's ends
        yticks = sorted({ylo, yhi})
    for v in yticks:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, left + pw, py(v), py(v)))
        out.append('<text x="%d" y="%.1f" %s font-size="11" text-anchor="end">%.3g</text>'
                   % (left - 6, py(v) + 4, FONT, v))
    for v in xs:
        label = "%dk" % (v // 1024) if v % 1024 == 0 else str(v)
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>'
                   % (px(v), px(v), top, top + ph))
        out.append('<text x="%.1f" y="%d" %s font-size="11" text-anchor="middle">%s</text>'
                   % (px(v), top + ph + 16, FONT, label))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'
               % (left, top, pw, ph))
    out.append('<text x="%d" y="%d" %s font-size="12" text-anchor="middle">%s</text>'
               % (left + pw // 2, h - 14, FONT, esc(xlabel)))
    out.append('<text x="18" y="%d" %s font-size="12" transform="rotate(-90 18 %d)" '
               'text-anchor="middle">%s</text>' % (top + ph // 2, FONT, top + ph // 2,
                                                   esc(ylabel)))
    for i, (name, ps, dashed) in enumerate(series):
        color = COLORS[(i // 2) % len(COLORS)]   # one color a spec, fla dashed
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        ps = sorted(ps)
        if len(ps) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                       % (color, dash, " ".join("%.1f,%.1f" % (px(a), py(b)) for a, b in ps)))
        for a, b in ps:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (px(a), py(b), color))
        ly = top + 10 + i * 20
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (left + pw + 14, left + pw + 40, ly, ly, color, dash))
        out.append('<text x="%d" y="%d" %s font-size="11">%s</text>'
                   % (left + pw + 46, ly + 4, FONT, esc(name)))
    return "\n".join(out + ["</svg>", ""])


# ------------------------------------------------------------- the machine --
