"""Small replies sent whole at once: TCP_NODELAY on the server's listening socket, which every connection it
accepts inherits (Linux copies the option to an accepted socket: tests/server/test_no_delay.py). Where the system lists
no open descriptors (Windows), nothing is changed.

Streamlit binds its socket itself (`socket.socket(family)` in its Starlette server), so the socket's protocol
number is 0, and asyncio sets TCP_NODELAY on an accepted connection only where that number is IPPROTO_TCP: no
connection gets it. A reply goes out in two writes, its headers and then its body, and under Nagle's algorithm the
body waits until the browser has acknowledged the headers, which a browser that has just sent a request delays by
up to 40 ms. The switch view's toggles fetch their numbers from the App's route: one pressed soon after another
waited 40 ms more for them (a route answer of 6 ms took 48, fetched from the page in a loop).
"""

from __future__ import annotations

import contextlib
import os
import socket


def no_delay(port: int) -> bool:
    """Set TCP_NODELAY on this process's TCP socket that listens on port; whether there was one."""
    accepting = getattr(socket, "SO_ACCEPTCONN", None)
    if accepting is None:
        return False
    for descriptor in _open_descriptors():
        try:
            sock = socket.socket(fileno=descriptor)
        except OSError:  # not a socket, or closed since it was listed
            continue
        try:
            if (sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM
                    and sock.getsockopt(socket.SOL_SOCKET, accepting)
                    and sock.getsockname()[1] == port):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return True
        except OSError:
            continue
        finally:
            sock.detach()  # the descriptor stays open: it is the server's, not this object's
    return False


def _open_descriptors() -> list[int]:
    """This process's open file descriptors (none where the system does not list them)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return sorted(int(name) for name in os.listdir(folder))
    return []
