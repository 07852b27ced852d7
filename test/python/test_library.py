"""The ctypes binding of python/rkc_torch (no GPU, no PyTorch needed): a
generated launcher built without kernels is called through `Library`, so
that a valid call gets through the launcher's validation (the argument
struct's layout matches the C header) and stops at RKC_ERROR_NO_KERNELS, and
bad calls come back as ValueError naming the tensor.

  python3 test/python/test_library.py RKC_BINARY WORK_DIR
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location(
    "rkc_library", os.path.join(ROOT, "python", "rkc_torch", "_library.py"))
library = importlib.util.module_from_spec(spec)
spec.loader.exec_module(library)


class FakeTensor:
    """What `describe` reads of a torch.Tensor: a device address, a shape,
    strides and a dtype (never dereferenced on the host)."""

    def __init__(self, shape, dtype="torch.bfloat16", address=1 << 32):
        self.shape, self.dtype, self.address = tuple(shape), dtype, address

    def data_ptr(self):
        return self.address

    def dim(self):
        return len(self.shape)

    def stride(self, i):
        s = 1
        for d in self.shape[i + 1:]:
            s *= d
        return s

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


class LibraryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rkc, work = sys.argv[1], sys.argv[2]
        cls.folder = os.path.join(work, "eda")
        subprocess.run([rkc, "compile", os.path.join(ROOT, "examples", "specs",
                                                     "eda.mlir"),
                        "-o", cls.folder, "--no-fatbin", "--dk", "64", "--dv",
                        "64", "--chunk-size", "16", "--split-scan", "0"],
                       check=True,
                       capture_output=True)
        subprocess.run(["cc", "-shared", "-fPIC", "-std=c11", "-I", cls.folder,
                        "-o", os.path.join(cls.folder, "libeda.so"),
                        os.path.join(cls.folder, "eda_launch.c"),
                        os.path.join(cls.folder, "rkc", "runtime.c"), "-ldl",
                        "-lpthread"], check=True)
        cls.lib = library.Library(cls.folder, "eda")

    def inputs(self, T=10):
        shapes = {"q": (2, T, 3, 64), "k": (2, T, 3, 64), "v": (2, T, 3, 64),
                  "g": (2, T, 3, 64), "beta": (2, T, 3), "e": (2, T, 3, 64),
                  "gamma": (2, T, 3)}
        return [FakeTensor(shapes[i["name"]],
                           "torch.float32" if i["name"] == "g" else
                           "torch.bfloat16")
                for i in self.lib.manifest["inputs"]]

    def test_valid_call_passes_validation(self):
        with self.assertRaisesRegex(RuntimeError, "no kernels"):
            self.lib.call("prefill", 0, self.inputs(), FakeTensor((2, 10, 3, 64)))
        with self.assertRaisesRegex(RuntimeError, "no kernels"):
            self.lib.call("decode", 0, self.inputs(), FakeTensor((2, 10, 3, 64)),
                          scale=0.5)

    def test_workspace_pool(self):
        # Without a current context (none here, GPU or not): an error that
        # names the call, never a crash; releasing nothing held succeeds.
        try:
            pool = self.lib.memory_pool()
            self.assertTrue(pool)
        except RuntimeError as e:
            self.assertIn("rkc_memory_pool", str(e))
        self.lib.release_memory()
        library.release_memory()

    def test_workspace_query(self):
        # One kernel: none. The split kernels: a (chunk slot, value head)
        # each, ceil(10 / 16) = 1 slot a batch row here.
        self.assertEqual(self.lib.workspace_bytes(self.inputs(),
                                                  FakeTensor((2, 10, 3, 64))), 0)
        folder = os.path.join(sys.argv[2], "eda-split")
        subprocess.run([sys.argv[1], "compile",
                        os.path.join(ROOT, "examples", "specs", "eda.mlir"),
                        "-o", folder, "--no-fatbin", "--dk", "64", "--dv", "64",
                        "--chunk-size", "16", "--split-scan", "1"], check=True,
                       capture_output=True)
        subprocess.run(["cc", "-shared", "-fPIC", "-std=c11", "-I", folder,
                        "-o", os.path.join(folder, "libeda.so"),
                        os.path.join(folder, "eda_launch.c"),
                        os.path.join(folder, "rkc", "runtime.c"), "-ldl",
                        "-lpthread"], check=True)
        with open(os.path.join(folder, "eda.h")) as f:
            header = f.read()
        chunk = {name: int(re.search(r"#define RKC_EDA_%s (\d+)" % name,
                                     header).group(1))
                 for name in ("WORKSPACE_BYTES", "WORKSPACE_BYTES_16",
                              "WORKSPACE_BYTES_16_LEAN")}
        split = library.Library(folder, "eda")
        self.assertGreater(chunk["WORKSPACE_BYTES_16"], 0)
        self.assertLess(chunk["WORKSPACE_BYTES_16_LEAN"],
                        chunk["WORKSPACE_BYTES_16"])
        # bf16 outputs: the 16-bit workspace, without the value rows where
        # the scan stages them from v (bf16, dense, aligned); float32 ones:
        # the float32 one.
        self.assertEqual(split.workspace_bytes(self.inputs(),
                                               FakeTensor((2, 10, 3, 64))),
                         2 * 1 * 3 * chunk["WORKSPACE_BYTES_16_LEAN"])
        names = [i["name"] for i in split.manifest["inputs"]]
        odd = self.inputs()
        odd[names.index("v")] = FakeTensor((2, 10, 3, 64), address=(1 << 32) + 2)
        self.assertEqual(split.workspace_bytes(odd, FakeTensor((2, 10, 3, 64))),
                         2 * 1 * 3 * chunk["WORKSPACE_BYTES_16"])
        self.assertEqual(split.workspace_bytes(
            self.inputs(), FakeTensor((2, 10, 3, 64), "torch.float32")),
            2 * 1 * 3 * chunk["WORKSPACE_BYTES"])
        with self.assertRaisesRegex(ValueError, "o has size 32 in dimension 3"):
            split.workspace_bytes(self.inputs(), FakeTensor((2, 10, 3, 32)))

    def test_bad_shapes_name_the_tensor(self):
        inputs = self.inputs()
        names = [i["name"] for i in self.lib.manifest["inputs"]]
        inputs[names.index("gamma")] = FakeTensor((2, 11, 3))
        with self.assertRaisesRegex(ValueError, "gamma has size 11 in dimension 1"):
            self.lib.call("prefill", 0, inputs, FakeTensor((2, 10, 3, 64)))
        with self.assertRaisesRegex(ValueError, "o has size 32 in dimension 3"):
            self.lib.call("prefill", 0, self.inputs(), FakeTensor((2, 10, 3, 32)))

    def test_bad_dtype_and_alignment(self):
        inputs = self.inputs()
        inputs[0] = FakeTensor((2, 10, 3, 64), "torch.int64")
        with self.assertRaisesRegex(ValueError, "q has dtype unknown"):
            self.lib.call("prefill", 0, inputs, FakeTensor((2, 10, 3, 64)))
        inputs = self.inputs()
        inputs[0] = FakeTensor((2, 10, 3, 64), address=(1 << 32) + 1)
        with self.assertRaisesRegex(ValueError, "q is not aligned"):
            self.lib.call("prefill", 0, inputs, FakeTensor((2, 10, 3, 64)))

    def test_cu_seqlens_host_copy_is_checked(self):
        inputs = [FakeTensor((1,) + t.shape[1:], t.dtype) for t in self.inputs()]
        cu = FakeTensor((3,), "torch.int64")
        import ctypes
        host = (ctypes.c_int64 * 3)(0, 6, 4)

        class Host:
            def data_ptr(self):
                return ctypes.addressof(host)

        with self.assertRaisesRegex(ValueError, "must be non-decreasing"):
            self.lib.call("prefill", 0, inputs, FakeTensor((1, 10, 3, 64)),
                          cu_seqlens=cu, cu_seqlens_host=Host())

    def test_state_indices_reach_the_arguments(self):
        indices = FakeTensor((2,), "torch.int32", address=0x5000)
        args = self.lib._args(self.inputs(), FakeTensor((2, 10, 3, 64)),
                              state_indices=indices)
        self.assertEqual(args.state_indices, 0x5000)
        self.assertIsNone(self.lib._args(self.inputs(),
                                         FakeTensor((2, 10, 3, 64))).state_indices)
        with self.assertRaisesRegex(ValueError, "must be int32"):
            self.lib._args(self.inputs(), FakeTensor((2, 10, 3, 64)),
                           state_indices=FakeTensor((2,), "torch.int64"))
        with self.assertRaisesRegex(ValueError, r"must be \[2\]"):
            self.lib._args(self.inputs(), FakeTensor((2, 10, 3, 64)),
                           state_indices=FakeTensor((3,), "torch.int32"))


class TuningDatabase(unittest.TestCase):
    """$RKC_TUNING: libraries are compiled with `rkc compile --tuning` from
    it, and its contents are part of the cache key."""

    def setUp(self):
        self.saved = os.environ.pop("RKC_TUNING", None)
        self.work = os.path.join(sys.argv[2] if len(sys.argv) > 2 else
                                 "/tmp/rkc-python-test", "tuning")
        os.makedirs(self.work, exist_ok=True)

    def tearDown(self):
        os.environ.pop("RKC_TUNING", None)
        if self.saved is not None:
            os.environ["RKC_TUNING"] = self.saved

    def test_unset_means_plain_compiles(self):
        self.assertIsNone(library._tuning_database())

    def test_contents_key_the_cache_and_reach_rkc_compile(self):
        db = os.path.join(self.work, "tuning.jsonl")
        with open(db, "w") as f:
            f.write("{}\n")
        os.environ["RKC_TUNING"] = db
        path, first = library._tuning_database()
        self.assertEqual(path, os.path.abspath(db))
        with open(db, "a") as f:
            f.write("{}\n")
        self.assertNotEqual(library._tuning_database()[1], first)

        commands = []
        saved_run, saved_nvcc = library._run, library._nvcc
        library._run = lambda cmd: commands.append(cmd)
        library._nvcc = lambda: "nvcc"
        out = os.path.join(self.work, "out")
        shutil.rmtree(out, ignore_errors=True)
        try:
            library._build(out, "eda", "", "rkc", 64, 64, (), "sm_90a", path)
        finally:
            shutil.rmtree(out, ignore_errors=True)
            library._run, library._nvcc = saved_run, saved_nvcc
        compile_cmd = commands[0]
        self.assertEqual(compile_cmd[:2], ["rkc", "compile"])
        self.assertEqual(compile_cmd[-2:], ["--tuning", path])

    def test_unreadable_database_is_an_error(self):
        os.environ["RKC_TUNING"] = os.path.join(self.work, "missing.jsonl")
        with self.assertRaisesRegex(RuntimeError, "RKC_TUNING: cannot read"):
            library._tuning_database()


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
