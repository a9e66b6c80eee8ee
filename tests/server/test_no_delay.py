"""TCP_NODELAY on the server's listening socket reaches the connections it accepts (components/server/no_delay.py),
on a socket bound as Streamlit binds its own (protocol number 0, which asyncio does not take for TCP)."""

from __future__ import annotations

import socket

from components.server.no_delay import no_delay


def accepted_no_delay(listener: socket.socket) -> int:
    """TCP_NODELAY on the server's side of a new connection to listener."""
    with socket.create_connection(listener.getsockname()):
        accepted, _ = listener.accept()
        with accepted:
            return accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def listening() -> socket.socket:
    listener = socket.socket(family=socket.AF_INET)  # as Streamlit's starlette_server._bind_socket makes it
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return listener


def test_connections_accepted_after_it_send_without_delay():
    with listening() as listener:
        assert listener.proto == 0
        assert accepted_no_delay(listener) == 0, "without it, Nagle's algorithm holds small writes"
        assert no_delay(listener.getsockname()[1])
        assert accepted_no_delay(listener) == 1


def test_only_the_socket_listening_on_the_port_is_changed():
    with listening() as listener, listening() as other:
        port = listener.getsockname()[1]
        assert no_delay(port)
        assert accepted_no_delay(other) == 0
        assert listener.fileno() >= 0 and accepted_no_delay(listener) == 1, "still open: the server's, not ours"


def test_a_port_nobody_listens_on_is_said():
    with listening() as listener:
        port = listener.getsockname()[1]
    assert not no_delay(port)
