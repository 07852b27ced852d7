"""Compiling a spec with ``rkc compile`` and binding its C ABI with ctypes."""
import ctypes
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import threading

_DTYPE_CODE = {"torch.float32": 0, "torch.bfloat16": 1, "torch.float16": 2}
_STATUS = {1: "null pointer", 2: "shape", 3: "dtype", 4: "stride",
           5: "alignment", 6: "cu_seqlens", 7: "no driver", 8: "CUDA",
           9: "resources", 10: "no kernels"}

def _l2norm_spec(name, gate):
    """A delta rule with fla's in-kernel L2 normalisation of q and k
    (use_qk_l2norm_in_kernel=True), with a `gate` ("key" or "scalar") decay.
    """
    return """
rec.recurrence @%(name)s {
  %%q = rec.input "q" : !rec.key
  %%k = rec.input "k" : !rec.key
  %%v = rec.input "v" : !rec.value
  %%g = rec.input "g" : !rec.%(gate)s
  %%beta = rec.input "beta" : !rec.scalar
  %%qn = rec.l2norm %%q : !rec.key
  %%kn = rec.l2norm %%k : !rec.key
  rec.step {
    rec.decay %%g : !rec.%(gate)s
    rec.delta %%kn, %%v scale %%beta : !rec.key, !rec.value, !rec.scalar
    rec.read %%qn : !rec.key
  }
}
""" % {"name": name, "gate": gate}


# Specs the package adds to the examples: KDA (per-channel gate) and GDN
# (scalar gate) with the in-kernel normalisation.
EXTRA_SPECS = {"kda_l2norm": _l2norm_spec("kda_l2norm", "key"),
               "gdn_l2norm": _l2norm_spec("gdn_l2norm", "scalar")}


class Tensor(ctypes.Structure):
    """rkc_tensor of rkc/runtime.h."""
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * 4),
                ("stride", ctypes.c_int64 * 4), ("rank", ctypes.c_int32),
                ("dtype", ctypes.c_int32)]


def describe(t):
    d = Tensor()
    d.data = t.data_ptr()
    d.rank = t.dim()
    for i in range(t.dim()):
        d.shape[i] = t.shape[i]
        d.stride[i] = t.stride(i)
    d.dtype = _DTYPE_CODE.get(str(t.dtype), -1)
    return d


def _find_rkc():
    for candidate in (os.environ.get("RKC"), shutil.which("rkc")):
        if candidate and os.path.exists(candidate):
            return candidate
    here = os.path.dirname(os.path.abspath(__file__))
    for relative in ("../../../../bin/rkc",   # installed: share/rkc/python
                     "../../build/bin/rkc"):  # the source tree
        candidate = os.path.normpath(os.path.join(here, relative))
        if os.path.exists(candidate):
            return candidate
    raise RuntimeError("rkc_torch: cannot find the rkc binary; set $RKC")


def spec_source(name):
    """The text of a spec: the package's own, or an example spec."""
    if name in EXTRA_SPECS:
        return EXTRA_SPECS[name]
    here = os.path.dirname(os.path.abspath(__file__))
    folders = [os.environ.get("RKC_SPECS_DIR"),
               os.path.join(here, "..", "..", "specs"),             # installed
               os.path.join(here, "..", "..", "examples", "specs")]  # source tree
    for folder in folders:
        if folder and os.path.exists(os.path.join(folder, name + ".mlir")):
            with open(os.path.join(folder, name + ".mlir")) as f:
                return f.read()
    raise ValueError("rkc_torch: no spec named %r (looked in %s)" % (
        name, [f for f in folders if f]))


class Library:
    """The generated kernels of one spec at one (dk, dv), loaded."""

    def __init__(self, folder, name):
        with open(os.path.join(folder, name + ".json")) as f:
            self.manifest = json.load(f)
        self.lib = ctypes.CDLL(os.path.join(folder, "lib%s.so" % name))
        fields = [(i["name"], Tensor) for i in self.manifest["inputs"]]
        fields += [("o", Tensor), ("initial_state", ctypes.c_void_p),
                   ("final_state", ctypes.c_void_p),
                   ("cu_seqlens", ctypes.c_void_p),
                   ("cu_seqlens_host", ctypes.c_void_p),
                   ("num_seqs", ctypes.c_int64),
                   ("state_indices", ctypes.c_void_p),
                   ("scale", ctypes.c_float)]
        self.Args = type("Args", (ctypes.Structure,), {"_fields_": fields})
        self.lib.rkc_last_error.restype = ctypes.c_char_p
        for entry in ("prefill", "decode"):
            fn = getattr(self.lib, self.manifest[entry])
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(self.Args)]
        # The runtime's workspace pool of the current device (made on first
        # use) and the call that hands back what it holds unused; libraries
        # from an rkc without them have neither.
        self._pool = getattr(self.lib, "rkc_memory_pool", None)
        if self._pool:
            self._pool.restype = ctypes.c_int
            self._pool.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self._release = getattr(self.lib, "rkc_release_memory", None)
        if self._release:
            self._release.restype = ctypes.c_int
            self._release.argtypes = []
        query = self.manifest.get("prefill_workspace")
        self.workspace_query = getattr(self.lib, query) if query else None
        if self.workspace_query:
            self.workspace_query.restype = ctypes.c_int
            self.workspace_query.argtypes = [ctypes.POINTER(self.Args),
                                             ctypes.POINTER(ctypes.c_size_t)]

    def _args(self, inputs, o, initial_state=None, final_state=None,
              cu_seqlens=None, cu_seqlens_host=None, scale=0.0,
              state_indices=None):
        args = self.Args()
        for spec_input, tensor in zip(self.manifest["inputs"], inputs):
            setattr(args, spec_input["name"], describe(tensor))
        args.o = describe(o)
        args.initial_state = initial_state.data_ptr() if initial_state is not None else None
        args.final_state = final_state.data_ptr() if final_state is not None else None
        if cu_seqlens is not None:
            args.cu_seqlens = cu_seqlens.data_ptr()
            args.num_seqs = cu_seqlens.numel() - 1
            if cu_seqlens_host is not None:
                args.cu_seqlens_host = cu_seqlens_host.data_ptr()
        if state_indices is not None:
            # The launcher reads N int32 slots from the device and cannot
            # check them without a synchronisation: their layout is
            # checked here.
            seqs = cu_seqlens.numel() - 1 if cu_seqlens is not None else o.shape[0]
            if str(state_indices.dtype) != "torch.int32":
                raise ValueError("state_indices must be int32, got %s"
                                 % state_indices.dtype)
            if state_indices.dim() != 1 or state_indices.numel() != seqs:
                raise ValueError("state_indices must be [%d] (one slot a "
                                 "sequence), got %s"
                                 % (seqs, list(state_indices.shape)))
            if state_indices.stride(0) != 1:
                raise ValueError("state_indices must be contiguous")
            args.state_indices = state_indices.data_ptr()
        args.scale = scale
        return args

    def call(self, entry, stream, inputs, o, initial_state=None,
             final_state=None, cu_seqlens=None, cu_seqlens_host=None,
             scale=0.0, state_indices=None):
        args = self._args(inputs, o, initial_state, final_state, cu_seqlens,
                          cu_seqlens_host, scale, state_indices)
        self._check(self.manifest[entry], getattr(self.lib, self.manifest[entry])(
            ctypes.c_void_p(stream), ctypes.byref(args)))

    def workspace_bytes(self, inputs, o, cu_seqlens=None, cu_seqlens_host=None):
        """The device memory the prefill takes on its stream for these
        arguments (the split kernels' workspace; 0 for one kernel)."""
        if not self.workspace_query:
            raise RuntimeError("%s: built by an rkc without the workspace "
                               "query; rebuild it" % self.manifest["name"])
        args = self._args(inputs, o, cu_seqlens=cu_seqlens,
                          cu_seqlens_host=cu_seqlens_host)
        size = ctypes.c_size_t(0)
        self._check(self.manifest["prefill_workspace"], self.workspace_query(
            ctypes.byref(args), ctypes.byref(size)))
        return size.value

    def memory_pool(self):
        """The address of the CUmemoryPool this library's workspaces come
        from on the current device, or None where the library has none."""
        if not self._pool:
            return None
        pool = ctypes.c_void_p()
        self._check("rkc_memory_pool", self._pool(ctypes.byref(pool)))
        return pool.value

    def release_memory(self):
        """Hands the device memory this library's workspace pools hold and
        no call uses back to the driver."""
        if self._release:
            self._check("rkc_release_memory", self._release())

    def _check(self, name, status):
        if status:
            message = self.lib.rkc_last_error().decode()
            kind = _STATUS.get(status, "error")
            if status in (1, 2, 3, 4, 5, 6):
                raise ValueError("%s (%s): %s" % (name, kind, message))
            raise RuntimeError("%s (%s): %s" % (name, kind, message))


_lock = threading.Lock()
_loaded = {}


def _arch(device):
    """The GPU's architecture: sm_90a (Hopper's own instructions) on 9.0."""
    import torch
    major, minor = torch.cuda.get_device_capability(device)
    return "sm_90a" if (major, minor) == (9, 0) else "sm_%d%d" % (major, minor)


def library(name, dk, dv, params=(), device=None):
    """Compiles (once, cached on disk) and loads `name` at (dk, dv) for the
    architecture of `device`."""
    arch = _arch(device)
    tuning = _tuning_database()
    options = tuple(shlex.split(os.environ.get("RKC_COMPILE_OPTIONS", "")))
    key = (name, dk, dv, tuple(params), arch, tuning[1] if tuning else None,
           options)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        source = spec_source(name)
        rkc = _find_rkc()
        digest = hashlib.sha256(("%s|%d|%d|%s|%s|%s|%s|%s" % (
            source, dk, dv, params, arch, os.path.getmtime(rkc),
            tuning[1] if tuning else "", options)).encode()).hexdigest()
        root = os.environ.get("RKC_CACHE_DIR") or os.path.join(
            os.path.expanduser("~"), ".cache", "rkc", "torch")
        folder = os.path.join(root, "%s-%d-%d-%s-%s" % (name, dk, dv, arch,
                                                         digest[:16]))
        if not os.path.exists(os.path.join(folder, "lib%s.so" % name)):
            _build(folder, name, source, rkc, dk, dv, params, arch,
                   tuning[0] if tuning else None, options)
        _loaded[key] = Library(folder, name)
        return _loaded[key]


def loaded_libraries():
    """The libraries loaded so far in this process."""
    with _lock:
        return list(_loaded.values())


def release_memory():
    """Hands the device memory that the loaded libraries keep for their
    workspaces, and that no call uses, back to the driver (as
    torch.cuda.empty_cache does for torch's allocator). Synchronise the
    streams the calls ran on first: a workspace counts as in use until its
    stream reaches the end of the call."""
    for lib in loaded_libraries():
        lib.release_memory()


_tuning_digests = {}  # (path, mtime, size) -> sha256 of the database


def _tuning_database():
    """($RKC_TUNING, a digest of its contents), or None: libraries are
    compiled with `rkc compile --tuning` from that database (dispatching by
    shape bucket to the schedules `rkc tune` measured fastest), and rebuilt
    when it changes."""
    path = os.environ.get("RKC_TUNING")
    if not path:
        return None
    try:
        # Every op call asks: hash the file again only when it changed.
        stat = os.stat(path)
        stamp = (os.path.abspath(path), stat.st_mtime_ns, stat.st_size)
        if stamp not in _tuning_digests:
            with open(path, "rb") as f:
                _tuning_digests[stamp] = hashlib.sha256(f.read()).hexdigest()
        return stamp[0], _tuning_digests[stamp]
    except OSError as e:
        raise RuntimeError("rkc_torch: $RKC_TUNING: cannot read %s: %s" % (
            path, e.strerror))


def _build(folder, name, source, rkc, dk, dv, params, arch, tuning=None,
           options=()):
    """Builds in a private folder and renames it into place, so that
    processes compiling the same spec at once (torchrun ranks) never see a
    half-written library."""
    root = os.path.dirname(folder)
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(dir=root, prefix=".build-")
    try:
        spec_path = os.path.join(work, name + ".mlir")
        with open(spec_path, "w") as f:
            f.write(source)
        nvcc = _nvcc()
        cmd = [rkc, "compile", spec_path, "-o", work, "--dk", str(dk),
               "--dv", str(dv), "--arch", arch, "--nvcc", nvcc]
        for p in params:
            cmd += ["--param", p]
        if tuning:
            cmd += ["--tuning", tuning]
        cmd += list(options)
        _run(cmd)
        _run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-O2", "-o",
              os.path.join(work, "lib%s.so" % name),
              os.path.join(work, name + "_launch.c"),
              os.path.join(work, "rkc", "runtime.c"), "-I", work, "-ldl",
              "-lpthread"])
        try:
            os.rename(work, folder)
        except OSError:  # another process finished first: use its build
            if not os.path.exists(os.path.join(folder, "lib%s.so" % name)):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _nvcc():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for candidate in (os.path.join(home, "bin", "nvcc"), shutil.which("nvcc")):
        if candidate and os.path.exists(candidate):
            return candidate
    raise RuntimeError("rkc_torch: nvcc not found (set CUDA_HOME)")


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("rkc_torch: %s failed:\n%s%s" % (
            " ".join(cmd), r.stdout, r.stderr))
