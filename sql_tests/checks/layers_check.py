#!/usr/bin/python3
"""
layers_check.py -- src/ is a stack of layers: tools/layers.py draws it from
its includes and calls and exits non-zero on a circle or an arrow that runs
up a layer.  Needs no cluster; runs with the other checks.
"""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

sys.exit(subprocess.call([sys.executable, os.path.join(ROOT, "tools", "layers.py"),
                          "--quiet", os.path.join(ROOT, "src")]))
