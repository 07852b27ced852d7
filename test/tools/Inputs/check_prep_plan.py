#!/usr/bin/env python3
"""Checks the shared-memory plan of a generated prep kernel (rkc compile's
NAME.cu, beside NAME_launch.c) from the op comments the emitter writes
before each op: replayed in the order the kernel runs them (the key-side
ops, then the value-side loop, where a value defined before the loop lives
to its end), no two tiles may share floats while both are live, except

  - an elementwise op writing over the operand it maps and reads last
    (tile::add, neg, scaleRows, decayRows, decayToEnd), at the same offset;
  - an exclusive cumsum viewed as its inclusive one a row later
    (rec.shifted_view), which lives from the inclusive sum on.

A product stored straight into the workspace (rec.to_workspace) has no
tile, and no prep op may read it. The launcher must ask for at least the
bytes the highest tile reaches. Prints `PATH OK` or the faults; exits 1 on
any fault.

  python3 check_prep_plan.py build/kda/kda.cu [...]
"""
import re
import sys

# The operand indices an elementwise op may write over (mappedOperands).
IN_PLACE = {"add": (0, 1), "neg": (0,), "scale_rows": (0,),
            "decay_rows": (0,), "decay_to_end": (0,)}


def tile_floats(tile, dims):
    """Floats of a tile type's text, e.g. "chunk[1], value"."""
    def axis(a):
        a = a.strip()
        if a == "chunk":
            return dims["C"] * dims["M"]
        if a.startswith("chunk["):
            return dims["C"] * len(a[6:-1].split(","))
        return {"key": dims["DK"], "value": dims["BV"], "one": 1}[a]
    depth = 0
    for i, ch in enumerate(tile):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            return axis(tile[:i]) * axis(tile[i + 1:])
    raise ValueError("not a tile type: " + tile)


def prep_ops(src):
    """The prep kernel's ops in the order they run, or None without one."""
    start = src.find("__device__ __forceinline__ void prep(")
    if start < 0:
        return None
    body = src[start:src.find("\n}\n", start)]
    ops, in_loop = [], False
    for line in body.split("\n"):
        if "for (v0 = 0; v0 < DV; v0 += BV)" in line:
            in_loop = True
        m = re.match(r"\s*// %(\d+) = rec\.chunk\.(\w+)(.*?)\{(.*?)\}", line)
        if not m or "rec.phase" not in line:
            continue
        types = re.findall(r"!rec\.tile<([^>]*)>", line)
        ops.append(dict(result=int(m.group(1)), name=m.group(2),
                        operands=[int(x) for x in re.findall(r"%(\d+)", m.group(3))],
                        attrs=m.group(4), in_loop=in_loop, type=types[-1]))
    return ops


def check(path):
    src = open(path).read()
    m = re.search(r"constexpr int DK = (\d+), DV = (\d+), BV = (\d+)", src)
    dims = dict(zip(("DK", "DV", "BV"), map(int, m.groups())))
    m = re.search(r"constexpr int C = (\d+), M = (\d+)", src)
    dims.update(C=int(m.group(1)), M=int(m.group(2)))
    ops = prep_ops(src)
    if ops is None:
        return None
    at = {op["result"]: i for i, op in enumerate(ops)}
    last = {}
    for i, op in enumerate(ops):
        for v in op["operands"]:
            if v in at:
                j = len(ops) - 1 if op["in_loop"] and not ops[at[v]]["in_loop"] else i
                last[v] = max(last.get(v, -1), j)
    inclusive_of = {}
    for op in ops:
        if "rec.shifted_view" in op["attrs"]:
            gate = op["operands"][0]
            inclusive_of[op["result"]] = next(
                o["result"] for o in ops if o["name"] == "cumsum" and
                "rec.zero_row_before" in o["attrs"] and o["operands"][0] == gate)
    faults, regions = [], []  # (value, first float, end float, born, dies)
    for op in ops:
        v = op["result"]
        if "rec.to_workspace" in op["attrs"]:
            continue
        offset = int(re.search(r"rec.prep_smem_offset = (\d+)", op["attrs"]).group(1))
        born = at[inclusive_of[v]] if v in inclusive_of else at[v]
        regions.append((v, offset, offset + tile_floats(op["type"], dims), born,
                        last.get(v, at[v])))
    for a, (va, la, ha, ba, da) in enumerate(regions):
        for vb, lb, hb, bb, db in regions[a + 1:]:
            if ha <= lb or hb <= la or da < bb or db < ba:
                continue
            if inclusive_of.get(va) == vb or inclusive_of.get(vb) == va:
                continue
            in_place = False
            for (x, lx, dx), (y, ly, by) in (((va, la, da), (vb, lb, bb)),
                                             ((vb, lb, db), (va, la, ba))):
                writer = ops[at[y]]
                if (by == dx and lx == ly and any(
                        i < len(writer["operands"]) and writer["operands"][i] == x
                        for i in IN_PLACE.get(writer["name"], ()))):
                    in_place = True
            if not in_place:
                faults.append("%%%d [%d, %d) live %d-%d overlaps %%%d [%d, %d) live %d-%d"
                              % (va, la, ha, ba, da, vb, lb, hb, bb, db))
    for op in ops:
        for v in op["operands"]:
            if v in at and "rec.to_workspace" in ops[at[v]]["attrs"]:
                faults.append("%%%d reads %%%d, which has no tile (rec.to_workspace)"
                              % (op["result"], v))
    launch = open(path[:-3] + "_launch.c").read()
    m = re.search(r'_prep_kernel_tc", prepGrid, block, (\d+)', launch)
    if not m:
        faults.append("no prep launch in " + path[:-3] + "_launch.c")
    elif regions and max(r[2] for r in regions) * 4 > int(m.group(1)):
        faults.append("the launch asks for %s bytes, the tiles reach %d"
                      % (m.group(1), max(r[2] for r in regions) * 4))
    return faults


def main():
    bad = False
    for path in sys.argv[1:]:
        faults = check(path)
        if faults is None:
            print(path, "no prep kernel")
            continue
        print(path, "OK" if not faults else "FAULTS")
        for f in faults:
            print("   ", f)
        bad |= bool(faults)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
