"""Self-signed certificates for TLS servers the tests start on loopback."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def self_signed(folder: Path, ip: str = "127.0.0.1", name: str | None = None) -> tuple[Path, Path]:
    """A certificate (and its key) for the address `ip` (and the host name `name`, if given),
    valid for two days; the test is skipped where the openssl command is missing."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    names = f"IP:{ip}" + (f",DNS:{name}" if name else "")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", f"/CN={ip}", "-addext", f"subjectAltName={names}",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
