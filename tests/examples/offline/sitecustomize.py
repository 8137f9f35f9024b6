"""Loaded at start-up by the example processes (this directory is on their PYTHONPATH).

It refuses every connection that is not to this machine, as tests/conftest.py does in-process,
so an example that reached the network would fail its test instead of passing by luck.
"""

import ipaddress
import socket
from typing import Any

_real_connect = socket.socket.connect


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        raise RuntimeError(f"examples may not reach the network: connect({address!r}) refused")
    return _real_connect(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
