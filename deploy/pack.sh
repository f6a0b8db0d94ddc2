#!/usr/bin/env bash
# Build what a cluster needs to run quiltdetect (see docs/deploy.md):
#   dist/quiltdetect-<version>-py3-none-any.whl   the package (install it where the driver runs)
#   dist/quiltdetect-env.tar.gz                   a packed virtualenv with the wheel and its native
#                                                 dependencies (numpy, mmh3, pyarrow, ...), shipped
#                                                 to the executors with spark-submit --archives
# Usage: deploy/pack.sh            (PYTHON=python3.11 deploy/pack.sh to pick the interpreter)
#
# This is the "Using Virtualenv" recipe of Spark's Python packaging guide. venv-pack keeps the
# interpreter as a symlink, so every node needs the same Python at the same path as the machine
# that ran this script (true for nodes built from one image, e.g. docker/Dockerfile). PySpark
# itself is left out of the environment: executors import the cluster's own PySpark from
# $SPARK_HOME/python/lib, which must be the version pyproject.toml pins anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
OUT=${OUT:-dist}

if ! "$PYTHON" -c 'import venv_pack' 2>/dev/null; then
    echo "pack.sh: venv-pack is missing: $PYTHON -m pip install 'venv-pack>=0.2' (or the [cluster] extra)" >&2
    exit 2
fi

mkdir -p "$OUT"
rm -rf build "$OUT"/quiltdetect-*.whl "$OUT/quiltdetect-env.tar.gz"
"$PYTHON" -m pip wheel -q --no-deps -w "$OUT" .
wheel=$(ls "$OUT"/quiltdetect-*.whl)

# The wheel's own Requires-Dist, minus pyspark/py4j (the cluster provides them).
deps=$("$PYTHON" - "$wheel" <<'PY'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    lines = whl.read(meta).decode().splitlines()
for line in lines:
    if line.startswith("Requires-Dist:"):
        req = line.split(":", 1)[1].strip()
        if "extra ==" in req:
            continue
        if re.split(r"[<>=!~;\s\[(]", req, maxsplit=1)[0].lower() in ("pyspark", "py4j"):
            continue
        print(req)
PY
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m venv "$work/env"
mapfile -t reqs <<< "$deps"
if command -v uv >/dev/null; then  # the same packages from the same index, several times faster
    uv pip install -q --compile-bytecode --python "$work/env/bin/python" --no-deps "$wheel"
    uv pip install -q --compile-bytecode --python "$work/env/bin/python" "${reqs[@]}"
else
    "$work/env/bin/python" -m pip install -q --no-deps "$wheel"
    # (pip then warns that pyspark is not installed: expected, the cluster provides it)
    "$work/env/bin/python" -m pip install -q "${reqs[@]}"
fi
env -u PYTHONPATH "$work/env/bin/python" -c 'import quiltdetect.kernel.grams, numpy, mmh3, pyarrow, pandas; print("packed env imports ok")'
"$PYTHON" -m venv_pack -q -p "$work/env" -o "$OUT/quiltdetect-env.tar.gz"
ls -la "$wheel" "$OUT/quiltdetect-env.tar.gz"
