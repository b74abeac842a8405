"""Shared fixtures of the Python package's tests (tests/meson.build runs them
with PYTHONPATH at the build tree's copy of the package)."""
import os
import subprocess

import pytest

SOURCE_ROOT = os.environ.get("CS_SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
CLI = os.environ.get("CLUSTERSIM_CLI")


@pytest.fixture
def source_root():
    return SOURCE_ROOT


@pytest.fixture
def cli():
    """Runs the clustersim program; returns (returncode, stdout, stderr)."""
    if not CLI:
        pytest.fail("CLUSTERSIM_CLI is not set (run through meson test)")

    def run(*args):
        p = subprocess.run([CLI, *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr
    return run


def path(*parts):
    return os.path.join(SOURCE_ROOT, *parts)
