"""Helpers for the server end-to-end tests (a module of its own: test files import it, since
`from conftest import ...` is ambiguous when several test directories run in one pytest)."""

import os
import socket

import pytest


def unavailable(reason):
    """Skips, or fails when OSPREY_REQUIRE_ZOO=1 (CI)."""
    if os.environ.get("OSPREY_REQUIRE_ZOO") == "1":
        pytest.fail(f"{reason} (OSPREY_REQUIRE_ZOO=1)", pytrace=False)
    pytest.skip(reason)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
