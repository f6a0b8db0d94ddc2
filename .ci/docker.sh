#!/usr/bin/env bash
# The Docker engine and the stand-in Spark base image for tests/test_deploy_docker_run.py.
#   bash .ci/docker.sh engine   install Debian's engine (docker.io, docker-compose) and start it,
#                               unless `docker info` already answers
#   bash .ci/docker.sh base     build the stand-in base image, unless it is already there
#   bash .ci/docker.sh stop     stop the engine that `engine` started (nothing else)
# Run as root (or with sudo), on Debian or Ubuntu (apt, dpkg, debootstrap). .ci/run calls `engine`
# and `base` before the deploy tier and `stop` at its end; a developer runs the same two lines,
# then `pytest -m deploy tests/test_deploy_docker_run.py`.
#
# Why a stand-in: docker/Dockerfile builds on the official image apache/spark:<version>-... (its
# ARG SPARK_IMAGE), which cannot be pulled on a machine without a registry of images. The stand-in
# is laid out as that image is (Spark in /opt/spark with bin/, sbin/, jars/, python/pyspark and
# python/lib/py4j-*-src.zip; Java 17; Python 3 with pip and without python3-venv; libnss-wrapper;
# the user spark, uid 185; SPARK_HOME, JAVA_HOME; WORKDIR /opt/spark/work-dir) from Debian's
# packages and the pyspark release of the same version. What this machine needs to build (its
# certificate bundle for pip, Debian's mirror) goes into the stand-in only, never into the
# project's image.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
STATE=${QUILTDETECT_DOCKER_STATE:-/tmp/quiltdetect-dockerd}
# The Spark version of the official base image the Dockerfile names.
VERSION=$(sed -n 's|^ARG SPARK_IMAGE=apache/spark:\([0-9.]*\)-.*|\1|p' docker/Dockerfile)
BASE=${QUILTDETECT_SPARK_BASE:-quiltdetect/spark-standin:$VERSION}

engine() {
    if docker info >/dev/null 2>&1; then
        echo "docker.sh: an engine answers already: using it"
        return 0
    fi
    if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null || ! command -v debootstrap >/dev/null; then
        $SUDO apt-get update -q
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            docker.io docker-compose debootstrap
    fi
    mkdir -p "$STATE"
    # overlay2 where the kernel allows it (a container's file system is then made in under a
    # second); else vfs, which copies an image whole for every layer and every container (20 s
    # for this image). No iptables here: containers reach each other on a bridge, not the outside.
    local options
    for options in "--storage-driver=overlay2" "--storage-driver=vfs" "--storage-driver=vfs --bridge=none"; do
        # shellcheck disable=SC2086
        $SUDO dockerd $options --iptables=false >"$STATE/dockerd.log" 2>&1 &
        echo $! >"$STATE/dockerd.pid"
        for _ in $(seq 1 30); do
            if docker info >/dev/null 2>&1; then
                echo "docker.sh: engine started ($(docker version --format '{{.Server.Version}}'), $options)"
                return 0
            fi
            kill -0 "$(cat "$STATE/dockerd.pid")" 2>/dev/null || break
            sleep 1
        done
        stop >/dev/null
        echo "docker.sh: dockerd $options did not start: $(tail -n 1 "$STATE/dockerd.log")" >&2
    done
    echo "docker.sh: no engine started; the last log:" >&2
    cat "$STATE/dockerd.log" >&2
    return 1
}

stop() {
    if [ -f "$STATE/dockerd.pid" ]; then
        local pid
        pid=$(cat "$STATE/dockerd.pid")
        $SUDO kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        rm -f "$STATE/dockerd.pid"
        echo "docker.sh: engine stopped"
    fi
}

base() {
    # The recipe (this file) and the version label the image: a changed recipe builds it again.
    local recipe
    recipe=$(sha256sum "$0" | cut -c1-16)
    if [ "$(docker image inspect --format '{{index .Config.Labels "quiltdetect.recipe"}}' "$BASE" 2>/dev/null)" = "$recipe" ]; then
        echo "docker.sh: $BASE is up to date"
        return 0
    fi
    if ! command -v debootstrap >/dev/null; then
        $SUDO apt-get update -q
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
    fi
    local work mirror arch java_home cert=""
    work=$(mktemp -d)
    # shellcheck disable=SC2064
    trap "$SUDO umount '$work/root/proc' 2>/dev/null || true; $SUDO rm -rf '$work'" RETURN
    mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
    arch=$(dpkg --print-architecture)
    java_home=/usr/lib/jvm/java-17-openjdk-$arch
    $SUDO debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -n 30 "$work/debootstrap.log" >&2; return 1; }
    $SUDO mount -t proc proc "$work/root/proc"
    $SUDO chroot "$work/root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        openjdk-17-jre-headless python3 python3-pip libnss-wrapper >/dev/null 2>&1
    $SUDO chroot "$work/root" sh -c 'groupadd --system --gid=185 spark && useradd --system --uid=185 --gid=spark spark'
    $SUDO umount "$work/root/proc"
    # The official image's Python (Ubuntu 22.04) lets pip install system-wide; Debian 12 marks its
    # Python as externally managed. The Dockerfile's first stage relies on the former.
    $SUDO rm -f "$work/root"/usr/lib/python3*/EXTERNALLY-MANAGED
    # Spark itself: the pyspark release of the image's version, laid out as the image lays it out.
    if command -v uv >/dev/null; then
        uv pip install -q --no-deps --python "$(command -v python3)" --target "$work/pyspark" "pyspark==$VERSION"
    else
        python3 -m pip install -q --no-deps --target "$work/pyspark" "pyspark==$VERSION"
    fi
    local src=$work/pyspark/pyspark spark=$work/root/opt/spark
    $SUDO mkdir -p "$spark/python" "$spark/work-dir"
    $SUDO mv "$src/jars" "$src/bin" "$src/sbin" "$src/python/lib" "$spark/"
    $SUDO mv "$spark/lib" "$spark/python/lib"
    $SUDO rm -rf "$src/python" "$src/examples" "$src/data"
    $SUDO mv "$src" "$spark/python/pyspark"
    $SUDO chmod g+w "$spark/work-dir"
    # This machine's certificate bundle, for pip inside a build (a proxy that signs its own).
    for candidate in "${PIP_CERT:-}" "${SSL_CERT_FILE:-}"; do
        if [ -n "$candidate" ] && [ -f "$candidate" ]; then cert=$candidate; break; fi
    done
    local changes=()
    if [ -n "$cert" ]; then
        $SUDO cp "$cert" "$work/root/etc/ssl/certs/build-machine-ca.crt"
        changes+=(--change "ENV PIP_CERT=/etc/ssl/certs/build-machine-ca.crt")
    fi
    # Lean: image layers under the vfs driver are copied whole, once per layer and per container.
    $SUDO rm -rf "$work/root"/usr/share/{doc,man,info,locale} "$work/root"/var/lib/apt/lists/* \
        "$work/root"/var/cache/apt/*.bin "$work/root"/var/cache/apt/archives/*.deb
    $SUDO tar -C "$work/root" -c . | docker import \
        --change "ENV JAVA_HOME=$java_home" \
        --change "ENV SPARK_HOME=/opt/spark" \
        --change "ENV PATH=/opt/spark/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        "${changes[@]}" \
        --change "LABEL quiltdetect.recipe=$recipe" \
        --change "WORKDIR /opt/spark/work-dir" \
        --change "USER spark" \
        - "$BASE" >/dev/null
    echo "docker.sh: built $BASE ($(docker image inspect --format '{{.Size}}' "$BASE" | awk '{printf "%.0f MB", $1/1e6}'))"
}

case "${1:-}" in
    engine) engine ;;
    base) base ;;
    stop) stop ;;
    *) echo "usage: bash .ci/docker.sh engine|base|stop" >&2; exit 2 ;;
esac
