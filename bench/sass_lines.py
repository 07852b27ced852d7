#!/usr/bin/env python3
"""A generated kernel's SASS by source line, without a GPU: disassembles one
kernel of a cubin built with `-lineinfo` (nvdisasm -g) and counts its
instructions, and their opcodes, under each CUDA source line (the generated
.cu's, rkc/tile.cuh's). Given what Nsight Compute exported of a launch of the
same code (`kernel_profile.py`'s `*.sass.csv`, one row per instruction, from
a build with or without -lineinfo: the SASS is the same), it weighs each line
by the instructions executed and the stall samples instead, joined by offset.

  nvcc -arch=sm_90a -cubin -O3 -lineinfo -I DIR DIR/gdn.cu -o gdn.cubin
  python3 bench/sass_lines.py gdn.cubin rkc_gdn_prefill_kernel_tc \\
      [--profile gdn-scan.sass.csv] [--top 40] [--loops]

--loops adds the kernel's loops: each backward branch's span with its
instructions and their mix, so that a change to a scan's chunk loop can be
judged by its instructions a chunk before it is run.

nvdisasm: --nvdisasm, else the one on PATH. CUDA 13 has none here; the one of
CUDA 11.8 (Debian's non-free nvidia-cuda-toolkit, whose .deb can be unpacked
with dpkg-deb -x) reads sm_90 code but not CUDA 13's ELF header (ABI version
8, the SM in e_flags' second byte), so a copy of the cubin gets the version-7
header it knows (ABI 7, e_flags SM | virtual SM << 16 | 64-bit addresses |
unified texture mode). Instructions it cannot decode are left out of the
listing; the join reports how many, and counts them under the line before.
"""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sass_profile  # noqa: E402

EI_ABIVERSION, E_FLAGS = 8, 0x30


def old_header(cubin, out):
    """A copy of `cubin` with the ELF header nvdisasm 11.8 reads."""
    data = bytearray(open(cubin, "rb").read())
    if data[:4] != b"\x7fELF":
        sys.exit("%s: not an ELF file" % cubin)
    if data[EI_ABIVERSION] >= 8:
        sm = (struct.unpack_from("<I", data, E_FLAGS)[0] >> 8) & 0xFF
        data[EI_ABIVERSION] = 7
        struct.pack_into("<I", data, E_FLAGS, sm | sm << 16 | 0x500)
    open(out, "wb").write(bytes(data))


def listing(text, kernel):
    """{offset: ((file, line), instruction)} of `kernel` in nvdisasm -g's
    output; an instruction before any line record has (None, None)."""
    lines = text.split("\n")
    try:
        start = next(i for i, l in enumerate(lines)
                     if l.startswith(".text.%s:" % kernel))
    except StopIteration:
        sys.exit("no kernel %s in the listing" % kernel)
    where, at = (None, None), {}
    for l in lines[start + 1:]:
        if l.startswith("//----") or l.startswith(".text."):
            break
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)', l)
        if m:
            where = (os.path.basename(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", l)
        if m:
            at[int(m.group(1), 16)] = (where, m.group(2))
    return at


def labels(text, kernel):
    """{label: offset} of `kernel`'s branch targets in nvdisasm's output
    (a label names the instruction after it)."""
    found, pending, inside = {}, [], False
    for l in text.split("\n"):
        if l.startswith(".text.%s:" % kernel):
            inside = True
            continue
        if inside and (l.startswith("//----") or l.startswith(".text.")):
            break
        if not inside:
            continue
        m = re.match(r"^(\.L_x_\d+):", l)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", l)
        if m and pending:
            for name in pending:
                found[name] = int(m.group(1), 16)
            pending = []
    return found


INTEGER = ("IMAD", "IADD3", "LEA", "LOP3", "SHF", "ISETP", "IABS", "VIADD")


def loops(at, targets):
    """[(first, last, instructions, opcode counter)] of every backward
    branch's span (a loop's body as listed: its instructions per pass where
    the body has no branches of its own), largest first. A loop unrolled
    by k covers k passes."""
    found = []
    for offset, (_, instruction) in at.items():
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", instruction)
        # A branch to itself is no loop: nvdisasm closes a kernel with one.
        if not m or targets.get(m.group(1), offset) >= offset:
            continue
        first = targets[m.group(1)]
        body = [i for o, (_, i) in at.items() if first <= o <= offset]
        found.append((first, offset, len(body),
                      collections.Counter(opcode(i) for i in body)))
    return sorted(found, key=lambda x: -x[2])


def opcode(instruction):
    text = re.sub(r"^@!?U?P[0-9T]\s+", "", instruction.strip())
    return text.split()[0].split(".")[0] if text else "?"


def by_line(at, profile=None):
    """[(where, weight, samples, opcode counter)] heaviest first, and how
    many profiled instructions the listing lacks. Weight: instructions
    executed (with a profile) or listed."""
    lines = collections.defaultdict(lambda: [0, 0, collections.Counter()])
    missing = 0
    if profile is None:
        for where, instruction in at.values():
            entry = lines[where]
            entry[0] += 1
            entry[2][opcode(instruction)] += 1
    else:
        rows = sass_profile.read_source_csv(profile)
        base = int(rows[0]["Address"], 16)
        where = (None, None)
        for row in rows:
            offset = int(row["Address"], 16) - base
            if offset in at:
                where = at[offset][0]
            else:
                missing += 1
            executed = sass_profile.number(row.get(sass_profile.EXECUTED))
            entry = lines[where]
            entry[0] += executed
            entry[1] += sass_profile.number(row.get(sass_profile.SAMPLES))
            entry[2][opcode(row["Source"])] += executed
    ranked = sorted(lines.items(), key=lambda kv: -kv[1][0])
    return [(w, e[0], e[1], e[2]) for w, e in ranked], missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cubin")
    parser.add_argument("kernel")
    parser.add_argument("--profile", help="kernel_profile.py's *.sass.csv")
    parser.add_argument("--nvdisasm", default=shutil.which("nvdisasm"))
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--loops", action="store_true",
                        help="also the loops: each backward branch's span, "
                             "its instructions and their mix (a scan's chunk "
                             "loop: its instructions a chunk)")
    args = parser.parse_args()
    if not args.nvdisasm or not os.access(args.nvdisasm, os.X_OK):
        sys.exit("nvdisasm not found: pass --nvdisasm")
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "kernel.cubin")
        old_header(args.cubin, copy)
        done = subprocess.run([args.nvdisasm, "-g", "-c", copy],
                              capture_output=True, text=True)
    if done.returncode:
        sys.exit("nvdisasm failed: %s" % done.stderr.strip()[-300:])
    at = listing(done.stdout, args.kernel)
    ranked, missing = by_line(at, args.profile)
    total = sum(r[1] for r in ranked) or 1
    samples = sum(r[2] for r in ranked) or 1
    print("%s: %d instructions listed%s" % (
        args.kernel, len(at),
        ", %d profiled ones not (counted under the line before)" % missing
        if args.profile else ""))
    for (name, line), weight, sampled, ops in ranked[:args.top]:
        mix = ", ".join("%s %d%%" % (k, 100 * v // max(weight, 1))
                        for k, v in ops.most_common(4))
        share = ("%5.1f%% executed %5.1f%% samples" % (
            100 * weight / total, 100 * sampled / samples)
                 if args.profile else "%5d instructions" % weight)
        print("%s  %s:%s  %s" % (share, name, line, mix))
    if args.loops:
        for first, last, count, ops in loops(at, labels(done.stdout, args.kernel)):
            integer = sum(ops[k] for k in INTEGER)
            print("loop 0x%04x-0x%04x: %d instructions, %d integer (%s), "
                  "HMMA %d, LDSM %d, BAR %d" % (
                      first, last, count, integer,
                      ", ".join("%s %d" % (k, ops[k]) for k in INTEGER if ops[k]),
                      ops["HMMA"], ops["LDSM"], ops["BAR"]))


if __name__ == "__main__":
    main()
