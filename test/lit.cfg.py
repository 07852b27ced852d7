# lit configuration of RKC's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "RKC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rkc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "unit", "gpu"]

config.substitutions.append(("%rkc_src", config.rkc_src_root))
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["rkc-opt", "rkc"],
                                   [config.rkc_tools_dir])
