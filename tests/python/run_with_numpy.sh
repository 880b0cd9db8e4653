#!/usr/bin/env bash
# Runs a Python test with the first python3 that has NumPy (python3 on PATH, then Debian's
# /usr/bin/python3, which scripts/install-deps.sh gives python3-numpy); exits 77 (skipped)
# when none has it.
set -euo pipefail
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c "import numpy" 2>/dev/null; then
    exec "$py" "$@"
  fi
done
echo "skipped: no python3 with NumPy (apt-get install python3-numpy)"
exit 77
