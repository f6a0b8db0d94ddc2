"""Figures as PNG bytes, for any output: the job writes them with ``OutputFolder.write_bytes``, which
reaches local paths and Hadoop URIs (s3a://, hdfs://) alike, so no plot is lost on a remote output."""

from __future__ import annotations

import io
from typing import Any


def png_bytes(fig: Any, *, dpi: int | None = None, tight: bool = False) -> bytes:
    """A matplotlib figure as PNG bytes (laid out, then closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=dpi, **({"bbox_inches": "tight"} if tight else {}))
    plt.close(fig)
    return buf.getvalue()
