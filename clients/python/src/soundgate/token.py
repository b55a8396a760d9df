"""Where a program finds its token: as the Go client's Token and the soundgate commands do."""

from __future__ import annotations

import os
from typing import Optional

from .errors import ArgumentError

TOKEN_ENV = "SOUNDGATE_TOKEN"


def token(value: Optional[str] = None, file: Optional[str] = None, env: str = TOKEN_ENV) -> Optional[str]:
    """Picks a credential: value (visible to local users in ps if it came from a flag), else
    the content of ``file``, else the environment variable ``env``, else the content of the
    file that ``env + "_FILE"`` names. A file's trailing newline does not count; a file that
    holds nothing, or more than one line, is an error. Returns None when none is given.
    """
    if value:
        return value
    if not file:
        v = os.environ.get(env)
        if v:
            return v
        file = os.environ.get(env + "_FILE")
    if not file:
        return None
    try:
        with open(file, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ArgumentError("token file", f"cannot be read: {e}") from None
    try:
        t = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise ArgumentError("token file", f"{file} is not UTF-8") from None
    if not t or "\r" in t or "\n" in t:
        raise ArgumentError("token file", f"{file}: want one line holding the token")
    return t
