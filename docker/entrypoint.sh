#!/usr/bin/env bash
# Entry point of the quiltdetect image (docker/Dockerfile):
#   (no argument) | demo [opts]    the demo on the bundled sample, in local mode
#   find_quilts [opts] | <job> ... spark-submit jobs/<job>.py (master: $SPARK_MASTER, default local[*])
#   quilts ...                     the quiltdetect console command
#   master | worker                a standalone master / worker process (docker/compose.yaml)
#   anything else                  run as a command (bash, spark-submit, ...)
set -euo pipefail
Q=${QUILTDETECT_HOME:-/opt/quiltdetect}
PY=$Q/env/bin/python
SH=${SPARK_HOME:-/opt/spark}
# The packed environment has no PySpark of its own: use this image's Spark (same version).
py4j=$(ls "$SH"/python/lib/py4j-*-src.zip 2>/dev/null | head -n 1 || true)
export PYTHONPATH="$SH/python${py4j:+:$py4j}${PYTHONPATH:+:$PYTHONPATH}"
cmd=${1:-demo}
[ "$#" -gt 0 ] && shift
case "$cmd" in
  demo)
    exec "$PY" -m quiltdetect.cli demo --sample "$Q/data/sample" --output /out/demo "$@" ;;
  quilts)
    exec "$PY" -m quiltdetect.cli "$cmd" "$@" ;;
  master)
    exec "$SH"/bin/spark-class org.apache.spark.deploy.master.Master --host "$(hostname)" "$@" ;;
  worker)
    exec "$SH"/bin/spark-class org.apache.spark.deploy.worker.Worker "${SPARK_MASTER:?set SPARK_MASTER}" "$@" ;;
  *)
    if [ -f "$Q/jobs/${cmd%.py}.py" ]; then
      # Every container has the environment at the same path: no --archives needed.
      exec "$SH"/bin/spark-submit --master "${SPARK_MASTER:-local[*]}" \
        --conf "spark.pyspark.python=$PY" --conf "spark.pyspark.driver.python=$PY" \
        "$Q/jobs/${cmd%.py}.py" "$@"
    fi
    exec "$cmd" "$@" ;;
esac
