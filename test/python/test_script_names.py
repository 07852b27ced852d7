"""No script folder holds a file named after a standard-library module: a
script run from that folder has it first on sys.path, so `import profile`
(which torch.compile's dynamo does) would load the script instead.

  python3 test/python/test_script_names.py
"""
import os
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
FOLDERS = ["bench", os.path.join("test", "gpu"), os.path.join("test", "python"),
           os.path.join("python", "rkc_torch")]


class ScriptNames(unittest.TestCase):
    def test_no_standard_library_names(self):
        stdlib = sys.stdlib_module_names
        clashes = []
        for folder in FOLDERS:
            for name in sorted(os.listdir(os.path.join(ROOT, folder))):
                stem, ext = os.path.splitext(name)
                if ext == ".py" and stem in stdlib:
                    clashes.append(os.path.join(folder, name))
        self.assertEqual(clashes, [], "these hide standard-library modules")


if __name__ == "__main__":
    unittest.main()
