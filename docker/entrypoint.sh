#!/usr/bin/env bash
# Entry point of the quiltdetect image (docker/Dockerfile):
#   (no argument) | demo [opts]    the demo on the bundled sample, in local mode
#   find_quilts [opts] | <job> ... spark-submit jobs/<job>.py (master: $SPARK_MASTER, default local[*])
#   quilts ... | quiltdetect ...   the quiltdetect console command (quilts, or any of its commands)
#   master | worker                a standalone master / worker process (docker/compose.yaml)
#   anything else                  run as a command (bash, spark-submit, ...)
set -euo pipefail
Q=${QUILTDETECT_HOME:-/opt/quiltdetect}
PY=$Q/env/bin/python
SH=${SPARK_HOME:-/opt/spark}
# The packed environment has no PySpark of its own: use this image's Spark (same version).
py4j=$(ls "$SH"/python/lib/py4j-*-src.zip 2>/dev/null | head -n 1 || true)
export PYTHONPATH="$SH/python${py4j:+:$py4j}${PYTHONPATH:+:$PYTHONPATH}"
# A container without a network (docker run --network none) has no address for its own hostname,
# and the JVM's InetAddress.getLocalHost() then fails before Spark starts: bind to the loopback
# address instead. Local mode needs nothing else; a standalone master or worker needs a network.
if ! getent hosts "$(hostname)" >/dev/null 2>&1; then
  export SPARK_LOCAL_IP=${SPARK_LOCAL_IP:-127.0.0.1} SPARK_LOCAL_HOSTNAME=${SPARK_LOCAL_HOSTNAME:-localhost}
fi
# A user id without a name in /etc/passwd (docker run --user "$(id -u):$(id -g)", so that what is
# written to a mounted directory belongs to you) has no home either, and Hadoop's login and
# Spark's ivy directory fail without both. Give it a name and the home /tmp through nss_wrapper,
# as the official Spark image's own entry point does.
if ! getent passwd "$(id -u)" >/dev/null 2>&1; then
  wrapper=$(ls /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so 2>/dev/null | head -n 1 || true)
  if [ -z "$wrapper" ]; then
    echo "entrypoint.sh: user id $(id -u) has no name in this image and libnss_wrapper.so is missing: run without --user, or install libnss-wrapper in the image" >&2
    exit 2
  fi
  NSS_WRAPPER_PASSWD=$(mktemp) NSS_WRAPPER_GROUP=$(mktemp)
  { cat /etc/passwd; echo "quiltdetect:x:$(id -u):$(id -g):quiltdetect:/tmp:/bin/false"; } >"$NSS_WRAPPER_PASSWD"
  { cat /etc/group; getent group "$(id -g)" >/dev/null || echo "quiltdetect:x:$(id -g):"; } >"$NSS_WRAPPER_GROUP"
  export LD_PRELOAD=$wrapper NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP HOME=/tmp
fi
# The console command. Its JVM writes the class archive (docs/deploy.md, "The JVM's class
# archive") as it exits, after the command has returned, and a container ends with its main
# process: when QUILTDETECT_JVM_CACHE names a directory, this shell stays the main process,
# passes a stop signal on to the command, and waits (at most a minute) for the JVM to finish.
console() {
  if [ "${QUILTDETECT_JVM_CACHE:-off}" = off ]; then
    exec "$PY" -m quiltdetect.cli "$@"
  fi
  "$PY" -m quiltdetect.cli "$@" &
  local child=$! status=0
  trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT
  wait "$child" || status=$?
  while kill -0 "$child" 2>/dev/null; do status=0; wait "$child" || status=$?; done
  trap - TERM INT
  for _ in $(seq 1 120); do
    jvm_left || break
    sleep 0.5
  done
  exit "$status"
}
# Whether a JVM that the command left is still running: as the container's first process this
# shell inherits it when the command exits (elsewhere it goes to the system's init: no wait).
jvm_left() {
  local stat fields
  for stat in /proc/[0-9]*/stat; do
    read -r -a fields <"$stat" 2>/dev/null || continue
    if [ "${fields[1]}" = "(java)" ] && [ "${fields[3]}" = "$$" ]; then return 0; fi
  done
  return 1
}
cmd=${1:-demo}
[ "$#" -gt 0 ] && shift
case "$cmd" in
  demo)
    console demo --sample "$Q/data/sample" --output /out/demo "$@" ;;
  quilts)
    console quilts "$@" ;;
  quiltdetect)
    console "$@" ;;
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
