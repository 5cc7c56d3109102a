#!/usr/bin/env bash
# Rebuild the Python package from scratch
set -euo pipefail
rm -rf ./build dist *.egg-info
python3 -m pip install --upgrade build
python3 -m build
ls -lh dist/
