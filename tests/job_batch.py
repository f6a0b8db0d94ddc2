"""Run several ``jobs/*.py`` entry points, one after another, in one Spark application.

The standalone-cluster test submits this file once (``spark-submit tests/job_batch.py SPECS
RESULTS``) so that every job runs on one cluster start, each through its own real ``jobs/``
file exactly as ``spark-submit jobs/X.py ...`` would run it (``runpy``, ``__main__``); the
same function runs the local-mode side in the test's own Spark session.

SPECS is a JSON list of ``{"name": ..., "script": "find_quilts.py", "argv": [...]}``; RESULTS
receives ``{name: {"code": exit code, "seconds": wall seconds}}``.
"""

from __future__ import annotations

import json
import runpy
import sys
import time
from pathlib import Path

JOBS_DIR = Path(__file__).resolve().parents[1] / "jobs"


def run_jobs(specs: list[dict]) -> dict[str, dict]:
    """Run each spec's ``jobs/`` file as ``__main__`` with its argv; never stops at a failure."""
    results: dict[str, dict] = {}
    saved = sys.argv
    for spec in specs:
        script = str(JOBS_DIR / spec["script"])
        sys.argv = [script, *spec["argv"]]
        started, code = time.monotonic(), 0
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception as exc:  # a job that raises is reported, and the next job still runs
            print(f"job_batch: {spec['name']} raised {exc!r}", file=sys.stderr, flush=True)
            code = 1
        finally:
            sys.argv = saved
        results[spec["name"]] = {"code": code, "seconds": round(time.monotonic() - started, 1)}
        print(f"job_batch: {spec['name']} exit {code} in {results[spec['name']]['seconds']} s", flush=True)
    return results


if __name__ == "__main__":
    done = run_jobs(json.loads(Path(sys.argv[1]).read_text()))
    Path(sys.argv[2]).write_text(json.dumps(done, indent=1))
    sys.exit(0 if all(r["code"] == 0 for r in done.values()) else 1)
