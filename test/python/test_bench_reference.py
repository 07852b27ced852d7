"""bench/benchmark.py's float64 judge, on the CPU: the token-by-token
evaluation of every spec's recurrence (recurrence_reference, decode_reference)
against `rkc run`'s float64 interpreter and a closed form, and the verdict a
row gets when RKC and fla disagree (check). Also bench/report.py's handling
of the statuses that judge writes. No GPU; PyTorch on the CPU (Debian's
python3-torch, which scripts/build.sh installs) and the rkc binary.

  python3 test/python/test_bench_reference.py [RKC [WORK_DIR]]
"""
import array
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import report  # noqa: E402

import torch  # noqa: E402
import benchmark  # noqa: E402

RKC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "rkc")
WORK = sys.argv[2] if len(sys.argv) > 2 else None


def rel(x, ref):
    return ((x - ref).norm() / ref.norm()).item()


# ------------------------------------------------------------ safetensors --
# The format is an 8-byte little-endian header length, a JSON header naming
# each tensor's dtype, shape and byte range, then the bytes. Written and read
# here in float64 only, so that the test needs no safetensors package.

def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        blob = array.array("d", t.double().flatten().tolist()).tobytes()
        header[name] = {"dtype": "F64", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    out = {}
    for name, info in json.loads(data[8:8 + n]).items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F64", (name, info["dtype"])
        lo, hi = info["data_offsets"]
        values = array.array("d")
        values.frombytes(data[8 + n + lo:8 + n + hi])
        out[name] = torch.tensor(values.tolist(), dtype=torch.float64).reshape(info["shape"])
    return out


# ------------------------------------------------------------------ tests --

def timing(ms):
    return report.Timing([ms * 0.98, ms, ms * 1.02])


def row(status, rkc=None, fla=None):
    return {"section": "prefill", "spec": "comba", "shape": (1, 8192, 32, 128),
            "status": status, "label": "chunk_comba", "note": "", "err_o": 3e-2,
            "err_s": 3e-2, "rkc": timing(rkc) if rkc else None,
            "fla": timing(fla) if fla else None, "bytes": None,
            "mem_rkc": None, "mem_fla": None}


class ReportOfJudgedRows(unittest.TestCase):
    """A row RKC passes against float64 is measured, and counts."""

    def test_ok_vs_float64_rows_count_in_the_verdicts(self):
        status = ("ok vs float64 (rkc err o 1.2e-03 state 1.0e-03; chunk_comba "
                  "err o 3.1e-02 state 3.0e-02 vs float64)")
        v = report.acceptance(["kda"], [dict(row(status, 0.5, 1.0), spec="kda")],
                              [], [], 4000)
        self.assertEqual(v[0][3], "pass")
        self.assertEqual(report.status_text(row(status)), status)
        noted = dict(row(status), note="n = 2")
        self.assertEqual(report.status_text(noted), status + "; n = 2")

    def test_a_row_failed_against_float64_is_not_measured(self):
        status = ("FAILED (rkc err o 9.0e-03 state 1.0e-03; chunk_kda err o "
                  "1.0e-03 state 1.0e-03 vs float64)")
        v = report.acceptance(["kda"], [dict(row(status), spec="kda")], [], [], 4000)
        self.assertEqual(v[0][3], "n/a")


def inputs(spec, B, T, H, D, seed):
    """The benchmark's own draw (bf16 and fp32 like the kernels get), on the CPU."""
    x, _ = benchmark.draw_inputs(spec, benchmark.Draw(seed, device="cpu"), B, T, H, D)
    return x


class Reference(unittest.TestCase):
    def test_one_token_is_the_decode_step(self):
        # recurrence_reference and decode_reference share recurrence_step;
        # this catches the slicing of the token's rows (deltaproduct's n
        # sub-step rows, qed's per-head lam) going wrong in either.
        for i, spec in enumerate(benchmark.SPECS):
            with self.subTest(spec=spec):
                x = inputs(spec, 2, 1, 3, 8, seed=10 + i)
                o, S = benchmark.recurrence_reference(spec, x)
                o1, S1 = benchmark.decode_reference(
                    spec, x, torch.zeros(2, 3, 8, 8, dtype=torch.float64))
                self.assertEqual(tuple(o.shape), (2, 1, 3, 8))
                self.assertEqual(tuple(S.shape), (2, 3, 8, 8))
                self.assertLessEqual(rel(o, o1), 1e-14)
                self.assertLessEqual(rel(S, S1), 1e-14)

    def test_linear_attention_by_hand(self):
        # o_t = scale Σ_{s ≤ t} (q_t·k_s) v_s and S_T = Σ_s k_s v_sᵀ, without
        # any recurrence.
        x = {n: t.double() for n, t in inputs("linear_attention", 2, 5, 2, 8, 3).items()}
        q, k, v = x["q"], x["k"], x["v"]
        scores = torch.einsum("bthd,bshd->bhts", q, k) * 8 ** -0.5
        scores = scores * torch.ones(5, 5, dtype=torch.float64).tril()
        o = torch.einsum("bhts,bshv->bthv", scores, v)
        S = torch.einsum("bshk,bshv->bhkv", k, v)
        got = benchmark.recurrence_reference("linear_attention", x)
        self.assertLessEqual(rel(got[0], o), 1e-14)
        self.assertLessEqual(rel(got[1], S), 1e-14)

    def test_deltanet_by_hand(self):
        # One sequence, one head, the textbook loop on matrices:
        # S ← (I - β k kᵀ) S + β k vᵀ, o = Sᵀ q / sqrt(dk).
        x = {n: t.double() for n, t in inputs("deltanet", 1, 6, 1, 8, 4).items()}
        S = torch.zeros(8, 8, dtype=torch.float64)
        I = torch.eye(8, dtype=torch.float64)
        outs = []
        for t in range(6):
            k, v, beta = x["k"][0, t, 0], x["v"][0, t, 0], x["beta"][0, t, 0]
            S = (I - beta * torch.outer(k, k)) @ S + beta * torch.outer(k, v)
            outs.append(S.T @ x["q"][0, t, 0] / 8 ** 0.5)
        o, final = benchmark.recurrence_reference("deltanet", x)
        self.assertLessEqual(rel(o[0, :, 0], torch.stack(outs)), 1e-14)
        self.assertLessEqual(rel(final[0, 0], S), 1e-14)


class AgainstTheInterpreter(unittest.TestCase):
    """`rkc run`'s float64 interpreter on the same inputs: an independent
    evaluation of the example specs (it reads examples/specs/*.mlir)."""

    def interpret(self, spec, x, work):
        path_in = os.path.join(work, spec + "-in.safetensors")
        path_out = os.path.join(work, spec + "-out.safetensors")
        write_safetensors(path_in, x)
        params = ["--param", "n=%d" % report.PRODUCT_N] if spec == "deltaproduct" else []
        subprocess.run([RKC, "run", os.path.join(ROOT, "examples", "specs", spec + ".mlir"),
                        "--inputs", path_in, "--out", path_out, "--backend", "interp"]
                       + params, check=True, stdout=subprocess.DEVNULL)
        out = read_safetensors(path_out)
        return out["o"], out["final_state"]

    def work(self):
        if WORK:
            os.makedirs(WORK, exist_ok=True)
            return WORK
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        return folder.name

    def test_prefill(self):
        work = self.work()
        for i, spec in enumerate(benchmark.SPECS):
            with self.subTest(spec=spec):
                x = inputs(spec, 2, 5, 2, 8, seed=20 + i)
                o, S = benchmark.recurrence_reference(spec, x)
                o_ref, S_ref = self.interpret(spec, x, work)
                self.assertLessEqual(rel(o, o_ref), 1e-10)
                self.assertLessEqual(rel(S, S_ref), 1e-10)

    def test_decode_from_an_initial_state(self):
        work = self.work()
        for i, spec in enumerate(benchmark.SPECS):
            with self.subTest(spec=spec):
                x = inputs(spec, 3, 1, 2, 8, seed=40 + i)
                initial = 0.1 * torch.randn(3, 2, 8, 8, dtype=torch.float64,
                                            generator=torch.Generator().manual_seed(i))
                o, S = benchmark.decode_reference(spec, x, initial)
                o_ref, S_ref = self.interpret(spec, dict(x, initial_state=initial), work)
                self.assertLessEqual(rel(o, o_ref), 1e-10)
                self.assertLessEqual(rel(S, S_ref), 1e-10)


class FakeCase:
    def __init__(self, exact, label="chunk_comba"):
        self.exact, self.label = exact, label


class Check(unittest.TestCase):
    """The verdict of a row (benchmark.check), from made-up outputs."""

    def setUp(self):
        g = torch.Generator().manual_seed(7)
        self.o = torch.randn(1, 16, 2, 8, dtype=torch.float64, generator=g)
        self.S = torch.randn(1, 2, 8, 8, dtype=torch.float64, generator=g)
        self.noise = (torch.randn(self.o.shape, dtype=torch.float64, generator=g),
                      torch.randn(self.S.shape, dtype=torch.float64, generator=g))

    def off_by(self, e):
        """(o, S) at relative error e from the exact ones."""
        return tuple(x + e * x.norm() / n.norm() * n
                     for x, n in zip((self.o, self.S), self.noise))

    def judged(self, out, ref, exact):
        r = {"status": "ok"}
        benchmark.check(r, FakeCase(exact), out, ref)
        return r

    def test_agreeing_sides_do_not_call_the_judge(self):
        def exact():
            raise AssertionError("float64 evaluated although the sides agree")
        r = self.judged(self.off_by(1e-3), self.off_by(1e-3), exact)
        self.assertEqual(r["status"], "ok")

    def test_rkc_right_and_the_reference_off_is_ok(self):
        r = self.judged(self.off_by(1e-3), self.off_by(2e-2), lambda: (self.o, self.S))
        self.assertGreater(r["err_o"], report.BOUND)   # RKC against the reference
        self.assertEqual(r["status"], "ok vs float64 (rkc err o 1.0e-03 state 1.0e-03; "
                         "chunk_comba err o 2.0e-02 state 2.0e-02 vs float64)")

    def test_rkc_off_fails_with_both_sides_errors(self):
        r = self.judged(self.off_by(2e-2), self.off_by(1e-3), lambda: (self.o, self.S))
        self.assertEqual(r["status"], "FAILED (rkc err o 2.0e-02 state 2.0e-02; "
                         "chunk_comba err o 1.0e-03 state 1.0e-03 vs float64)")

    def test_without_a_judge_a_disagreement_fails(self):
        r = self.judged(self.off_by(2e-2), (self.o, self.S), None)
        self.assertEqual(r["status"], "FAILED")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
