"""Building the Spark session for the console command (spark-submit builds its own)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from quiltdetect.common import interrupts, jvmlog
from quiltdetect.common.config import ConfigError
from quiltdetect.common.jvmclasses import ClassArchive, class_archive
from quiltdetect.common.metrics import progress

# Settings every quiltdetect session gets unless the user or spark-submit set them already.
BASE_CONF: dict[str, str] = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    # coalesce shuffle partitions to a task per core (Spark's default parallelism), each of at
    # most the advisory size (64 MB) and at least 8 MB: small shuffles become one task (every task
    # costs a Python round trip; Spark's own minimum, 1 MB, made a task of every few thousand
    # rows), and one of 16 to 128 MB no longer runs as one task while the other cores wait (an
    # update's touched buckets and their ranks at 1,100,000 pages; docs/performance.md, "Figures
    # behind choices in the code")
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "true",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize": "8m",
    # ... also for cached (persisted) plans, which otherwise keep all spark.sql.shuffle.partitions
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # Spark's vectorized Parquet reader fills one on-heap vector per column with a whole batch of
    # rows; the tables of packed int64 arrays (quilts/arrays.py) hold up to ~1 MB per row, and a
    # parquet-mr row group is at least 100 rows whatever its byte target, so 4096-row batches
    # asked the heap of a million-page run for vectors it could not give (docs/performance.md,
    # "Memory and defaults at a million pages").
    "spark.sql.parquet.columnarReaderBatchSize": "64",
    # Spark's progress bar ([Stage 22:>  (0 + 2) / 4]) cannot name the stage: each stage prints
    # "<job>: <stage> - <what it does>" as it starts instead (RunMetrics.stage), and the UI's
    # job descriptions say the same. --set spark.ui.showConsoleProgress=true brings the bar back.
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # Parquet timestamps in nanoseconds (pandas' default) are read as longs: Spark cannot read
    # them otherwise, and one such column anywhere in an input table would fail the whole run.
    "spark.sql.legacy.parquet.nanosAsLong": "true",
    # The quilt job's gram state is a bucketed table, which Spark writes and reads only through
    # its catalog (common/folder.py: a table registered and dropped at once, its files where the
    # run writes them). At its first use the catalog makes its default database's directory,
    # ./spark-warehouse in the current directory unless told otherwise: here, in the temp dir.
    "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(),
                                            f"quiltdetect-warehouse-{os.getuid() if hasattr(os, 'getuid') else 0}"),
}

MIN_SPLITS = "spark.sql.files.minPartitionNum"
JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
PYTHON_DAEMON_KEY = "spark.python.daemon.module"
# Spark's warnings that every run of ours gives and none needs acted on, quieted (to ERROR) when the
# log level is WARN, the default; at INFO or DEBUG every logger speaks:
QUIET_LOGGERS = (
    # the ingest's windows on a one-range input (a small crawl): partitioned by a constant
    "org.apache.spark.sql.execution.window.WindowExec",
    # a bucketed table written through the catalog (common/folder.py) finds no files where the
    # catalog looked first: "All paths were ignored"
    "org.apache.spark.sql.execution.datasources.DataSource",
    # a released local checkpoint (common/caching.py): "cannot be recomputed after unpersisting"
    "org.apache.spark.rdd.MapPartitionsRDD",
)

# The Java releases PySpark 4.0 runs on: Spark 4.0 supports 17 and 21 (it dropped 8 and 11), and
# from 23 on the session does not start ("getSubject is not supported", from Hadoop's login code).
JAVA_VERSIONS = range(17, 22)
JAVA_NEEDED = "Java 17 or 21 is needed to run Spark"
JAVA_INSTALL = ("install one (e.g. `apt-get install openjdk-17-jre-headless` or `brew install openjdk@17`) "
                "or set JAVA_HOME to one you have")


def java_version_of(output: str) -> int | None:
    """The major version in ``java -version`` output (``"17.0.9"`` -> 17, ``"1.8.0_392"`` -> 8)."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', output)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def java_executable() -> str:
    """The Java that ``spark-class`` will start: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not (os.path.isfile(java) and os.access(java, os.X_OK)):
            raise ConfigError(f"{JAVA_NEEDED} (JAVA_HOME={home} is not a Java installation: no bin/java); "
                              f"{JAVA_INSTALL}, or unset JAVA_HOME to use java on PATH")
        return java
    java = shutil.which("java")
    if java is None:
        raise ConfigError(f"{JAVA_NEEDED} (found none: JAVA_HOME is not set and java is not on PATH); "
                          f"{JAVA_INSTALL}")
    return java


def check_java() -> int | None:
    """Check the Java that Spark will start, as ``spark-class`` finds it (``$JAVA_HOME/bin/java``,
    else ``java`` on PATH), before it starts: a ConfigError naming what to install, instead of
    the Py4J traceback of a gateway that never came up. Returns the major version (None when
    ``java -version`` says something this does not recognise: Spark then decides)."""
    java = java_executable()
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"{JAVA_NEEDED} ({java} -version failed: {exc}); {JAVA_INSTALL}") from exc
    said = (done.stderr or "") + (done.stdout or "")
    if done.returncode != 0:
        first = said.strip().splitlines()[0] if said.strip() else f"exit status {done.returncode}"
        raise ConfigError(f"{JAVA_NEEDED} ({java} -version failed: {first}); {JAVA_INSTALL}")
    version = java_version_of(said)
    if version is not None and version not in JAVA_VERSIONS:
        raise ConfigError(f"{JAVA_NEEDED} (found Java {version} at {java}); {JAVA_INSTALL}")
    return version


# Locales whose codeset is UTF-8, the first one this machine has given to a JVM whose own
# locale is not (LC_ALL=C, common in containers and cron): ``jvm_locale``.
UTF8_LOCALES = ("C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8")
EXECUTOR_LOCALE = "spark.executorEnv.LC_ALL"


def _utf8(codeset: str) -> bool:
    return codeset.replace("-", "").replace("_", "").lower() == "utf8"


def _codeset(name: str) -> str | None:
    """The codeset of the locale ``name`` (``"C"`` -> ANSI_X3.4-1968), None when this machine
    lacks it. Sets this process's LC_CTYPE for a moment, and back."""
    import locale

    if not hasattr(locale, "nl_langinfo"):
        return None
    current = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, name)
        return locale.nl_langinfo(locale.CODESET)
    except locale.Error:
        return None
    finally:
        locale.setlocale(locale.LC_CTYPE, current)


def jvm_locale(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What the environment of a JVM started here needs so that it names files in UTF-8, as this
    Python does: ``{"LC_ALL": "C.UTF-8"}`` when the locale the JVM would take (LC_ALL, else
    LC_CTYPE, else LANG) is not UTF-8, else nothing. Under ``LC_ALL=C`` Python names files in
    UTF-8 (its UTF-8 mode) and Java 17 in ASCII (``sun.jnu.encoding``, which ``-D`` cannot
    change): the JVM could not open ``données/`` and wrote ``r?sultats/`` for ``résultats/``.
    When Python itself names files in the locale's codeset (a Latin-1 locale), the JVM is left
    to agree with it."""
    environ = os.environ if environ is None else environ
    if not _utf8(sys.getfilesystemencoding()):
        return {}
    name = next((environ[k] for k in ("LC_ALL", "LC_CTYPE", "LANG") if environ.get(k)), "C")
    codeset = _codeset(name)
    if codeset is None or _utf8(codeset):
        return {}  # a locale this machine lacks: the JVM falls back to C, but so would any choice here
    chosen = next((n for n in UTF8_LOCALES if _utf8(_codeset(n) or "")), None)
    return {"LC_ALL": chosen} if chosen else {}


def check_submitted_arguments(argv: list[str], environ: dict[str, str] | None = None) -> None:
    """Under spark-submit, refuse in one line arguments its JVM could not pass on: a JVM whose
    locale is not UTF-8 (``LC_ALL=C``) hands them to Python with ``?`` for every character it
    cannot encode (``--input donn??es``), and it runs already: only its caller can fix that."""
    environ = os.environ if environ is None else environ
    if "PYSPARK_GATEWAY_PORT" not in environ or not jvm_locale(environ):
        return
    mangled = next((arg for arg in argv if "?" in arg), None)
    if mangled is not None:
        raise ConfigError(f"spark-submit's JVM runs under a locale that is not UTF-8 (LC_ALL, LC_CTYPE or LANG), "
                          f"which passes on each character it cannot encode as '?' ({mangled}); start it under a "
                          "UTF-8 locale, e.g. LC_ALL=C.UTF-8 spark-submit ...")


@contextlib.contextmanager
def _environment(changes: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``changes`` for the block (the JVM started in it copies it), then as it was."""
    before = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def quiet_expected_warnings(spark: SparkSession, level: str) -> None:
    """At log level WARN, set the loggers of ``QUIET_LOGGERS`` to ERROR in the driver's JVM, so a
    run's console shows its own progress and only warnings worth reading."""
    jvm = getattr(spark, "_jvm", None)  # none under Spark Connect
    if level.upper() != "WARN" or jvm is None:
        return
    log4j = jvm.org.apache.logging.log4j
    for name in QUIET_LOGGERS:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.ERROR)


def build_session(app_name: str, spark_conf: dict[str, Any], *, local: bool) -> SparkSession:
    """A session named ``app_name`` with ``spark_conf`` applied.

    ``local=True`` (the console command) also makes the executors use this Python, so the
    installed quiltdetect and its native dependencies are found without any packaging.
    Under spark-submit (``local=False``) the master and resources come from spark-submit.
    """
    archive = ClassArchive("")
    launching = local and SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ
    locale_env: dict[str, str] = {}
    if local:
        if launching:
            check_java()  # no JVM in this process yet: the builder below starts it
            archive = class_archive(java_executable(), str(spark_conf.get("spark.driver.extraClassPath") or ""),
                                    " ".join(str(spark_conf.get(f"spark.driver.{k}JavaOptions") or "")
                                             for k in ("default", "extra")))
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        locale_env = jvm_locale() if launching else {}
    builder = SparkSession.builder.appName(app_name)
    conf = {**BASE_CONF, **{k: str(v) for k, v in spark_conf.items() if v is not None}}
    if locale_env:  # executors started elsewhere (a standalone master) name files alike
        conf.setdefault(EXECUTOR_LOCALE, locale_env["LC_ALL"])
    level = conf.get("spark.log.level", "WARN")
    if local:
        # set once the session is up: in the conf, Spark also prints 'Setting Spark log level to "WARN".'
        conf.pop("spark.log.level", None)
    else:
        # spark-submit's own settings (--master, --conf, spark-defaults.conf) win.
        submitted = SparkConf()
        level = submitted.get("spark.log.level", level)
        conf = {k: v for k, v in conf.items() if not submitted.contains(k)}
        conf.pop("spark.master", None)
        conf.pop("spark.driver.memory", None)
        conf.pop("spark.driver.defaultJavaOptions", None)  # the driver JVM is running already
        # the executors' Python may not have quiltdetect before a task's files arrive (--py-files)
        conf.pop(PYTHON_DAEMON_KEY, None)
    own_options = conf.get(JAVA_OPTIONS, "")
    if archive.options:
        conf[JAVA_OPTIONS] = f"{own_options} {archive.options}".strip()
    for key, value in conf.items():
        builder = builder.config(key, value)

    def get_or_create() -> SparkSession:
        # the JVM started here: its start-up lines filtered (jvmlog), a UTF-8 locale if needed
        with jvmlog.piped() if launching else contextlib.nullcontext(), _environment(locale_env):
            return builder.getOrCreate()

    try:
        spark = get_or_create()
    except PySparkRuntimeError as exc:
        if not archive.options or exc.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        # A JVM that cannot use an archive ignores it; one that does not start with the options
        # (a damaged archive, a Java that cannot write one) is started again without them.
        progress.warning("the JVM did not start with its class archive (%s); starting it without",
                         archive.using or archive.writing)
        builder = builder.config(JAVA_OPTIONS, own_options)
        spark = get_or_create()
        archive.failed(f"the JVM did not start with: {archive.options}")
        archive = ClassArchive("")
    if spark.conf.get(MIN_SPLITS, None) is None:
        # Scans in at least 4 splits per core, so one large file does not leave cores idle.
        spark.conf.set(MIN_SPLITS, str(4 * spark.sparkContext.defaultParallelism))
    spark.sparkContext.setLogLevel(str(level))
    quiet_expected_warnings(spark, str(level))
    interrupts.claim()  # a new SparkContext installed PySpark's SIGINT handler: the run's own again
    if local and spark.sparkContext.uiWebUrl:
        progress.info("Spark UI: %s (while the run lasts)", spark.sparkContext.uiWebUrl)
    if archive.writing is not None:
        progress.info("the JVM writes its class archive to %s as it exits, for ~10 s after this run "
                      "(once: later runs start sooner; QUILTDETECT_JVM_CACHE=off to skip)", archive.writing.parent)
    return spark
