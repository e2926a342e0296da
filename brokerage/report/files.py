"""Atomic file output: write beside the target, then rename, so a failure never leaves a half-written file."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_atomic(path: str | Path, fill: Callable[[IO[bytes]], None]) -> int:
    """Call FILL with a binary file beside PATH, then rename it onto PATH; return the size in bytes.

    On any error the temporary file is removed and PATH is left as it was.
    Usage: ``write_atomic("r.html", lambda f: f.write(data))``
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as for any new file (mkstemp would force 0600)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        size = tmp.stat().st_size
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return size
