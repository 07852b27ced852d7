"""The torch-free half of test/gpu/kernel_profile.py: reads what Nsight Compute
exports of one kernel launch (`ncu -i REPORT --page source --csv
--print-source sass`: one row per SASS instruction with its execution count,
warp-state samples and shared-memory wavefronts) and says where the kernel's
time goes: by stall reason, by opcode, and by *phase*, the instructions
between two block-wide barriers. A generated kernel ends every chunk op with
a barrier, so its phases are its ops in program order (a phase with no
barrier-free work, like an op's zero-row store, merges into the next).
Tested without a GPU (test/python/test_sass_profile.py).
"""
import collections
import csv

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
WAVEFRONTS = "L1 Wavefronts Shared"
IDEAL = "L1 Wavefronts Shared Ideal"


def number(text):
    """A cell as a float: "-" and "" (not applicable) are 0; ncu writes
    thousands with commas in some columns."""
    text = (text or "").replace(",", "").strip()
    if text in ("", "-"):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def read_source_csv(path):
    """The instruction rows of an ncu source-page CSV export, as dicts."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = None
    for i, r in enumerate(rows):
        if r and r[0] == "Address" and "Source" in r:
            header, start = r, i + 1
            break
    if header is None:
        raise ValueError("%s: no 'Address,Source,...' header (not an ncu "
                         "--page source --csv export?)" % path)
    return [dict(zip(header, r)) for r in rows[start:] if len(r) >= len(header) // 2]


def opcode(source):
    """The opcode of a SASS line without its guard or modifiers:
    '@!P0 LDG.E.64 R2, ...' -> 'LDG'."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def stalls(row):
    """{reason: samples} of one row (the all-samples columns)."""
    return {k[len("stall_"):]: number(v) for k, v in row.items()
            if k.startswith("stall_") and "Not Issued" not in k and number(v)}


class Phase:
    def __init__(self, first):
        self.first = self.last = first
        self.executed = self.samples = self.wavefronts = self.ideal = 0.0
        self.opcodes = collections.Counter()
        self.stalls = collections.Counter()

    def add(self, index, row):
        self.last = index
        executed = number(row.get(EXECUTED))
        self.executed += executed
        self.samples += number(row.get(SAMPLES))
        self.wavefronts += number(row.get(WAVEFRONTS))
        self.ideal += number(row.get(IDEAL))
        self.opcodes[opcode(row.get("Source", ""))] += executed
        self.stalls.update(stalls(row))


def phases(rows):
    """The rows cut after every block-wide barrier (BAR.SYNC)."""
    out, current = [], Phase(0)
    for i, row in enumerate(rows):
        current.add(i, row)
        if "BAR.SYNC" in row.get("Source", "") or i == len(rows) - 1:
            out.append(current)
            current = Phase(i + 1)
    return out


def share(part, whole):
    return 100.0 * part / whole if whole else 0.0


def top(counter, whole, n):
    return ", ".join("%s %.0f%%" % (k, share(v, whole))
                     for k, v in counter.most_common(n))


def report(rows, min_share=0.5):
    """Text: the stall reasons, the opcodes, then each phase that holds at
    least `min_share` percent of the instructions or of the samples."""
    cut = phases(rows)  # every row is in one phase: the totals are theirs
    executed = sum(p.executed for p in cut)
    samples = sum(p.samples for p in cut)
    reasons, ops = collections.Counter(), collections.Counter()
    for p in cut:
        reasons.update(p.stalls)
        ops.update(p.opcodes)
    lines = ["%d SASS instructions, %.0f warp instructions executed, %.0f "
             "stall samples" % (len(rows), executed, samples),
             "stall reasons: " + top(reasons, sum(reasons.values()), 10),
             "opcodes: " + top(ops, executed, 12), "",
             "| phase | SASS lines | instructions | stall samples | shared "
             "wavefronts (ideal) | opcodes | stalls |",
             "|---|---|---|---|---|---|---|"]
    for k, p in enumerate(cut):
        if share(p.executed, executed) < min_share and \
                share(p.samples, samples) < min_share:
            continue
        lines.append("| %d | %d-%d | %.1f%% | %.1f%% | %.0f (%.0f) | %s | %s |" % (
            k, p.first, p.last, share(p.executed, executed),
            share(p.samples, samples), p.wavefronts, p.ideal,
            top(p.opcodes, p.executed, 4),
            top(p.stalls, sum(p.stalls.values()), 3)))
    return "\n".join(lines)
