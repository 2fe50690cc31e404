"""The contract the graceful stop has with the kernel and Python: `refuse_new_connections`
attaches a classic BPF socket filter (SO_ATTACH_FILTER, through `setsockopt`) to the listening
socket so that, while the accept queue is drained, new connections are held back (their SYNs
dropped: clients retry and find the next endpoint) and nothing already connected is touched.
Without it, closing the listener resets every connection the kernel finished in its queue,
whose clients may already have written a request. Driven on loopback, IPv4 and IPv6: if the
kernel or Python stops honouring the filter, this fails."""

from __future__ import annotations

import errno
import select
import socket
import sys
import time

import pytest

from jobguard.app.server.listener import Listener, accept_queue_length, refuse_new_connections

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="SO_ATTACH_FILTER and TCP_INFO are Linux's"
)


def _connects_within(client: socket.socket, seconds: float) -> bool:
    _, writable, _ = select.select([], [client], [], seconds)
    return bool(writable) and client.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)
def test_the_filter_drops_new_connections_and_spares_the_established(
    family: int, host: str
) -> None:
    try:
        with socket.socket(family) as probe:
            probe.bind((host, 0))
    except OSError as exc:
        pytest.fail(f"no {host} loopback to test the filter on: {exc}")
    listener = Listener(family, limit=100)
    sockets: list[socket.socket] = [listener]
    try:
        listener.bind((host, 0))
        listener.listen(16)
        address = listener.getsockname()
        served = socket.create_connection(address[:2], timeout=2)
        queued = socket.create_connection(address[:2], timeout=2)
        sockets += [served, queued]
        accepted, _ = listener.accept()
        sockets.append(accepted)
        time.sleep(0.05)
        assert accept_queue_length(listener) == 1

        assert refuse_new_connections(listener)  # the kernel took the program

        late = socket.socket(family, socket.SOCK_STREAM)
        sockets.append(late)
        late.setblocking(False)
        assert late.connect_ex(address) == errno.EINPROGRESS
        assert not _connects_within(late, 0.5)  # its SYN (and the retry) dropped
        assert accept_queue_length(listener) == 1

        # Established connections carry data both ways, and the queued one is accepted whole.
        served.sendall(b"request")
        assert accepted.recv(100) == b"request"
        accepted.sendall(b"response")
        assert served.recv(100) == b"response"
        queued.sendall(b"already written")
        second, _ = listener.accept()
        sockets.append(second)
        second.settimeout(2)
        assert second.recv(100) == b"already written"
        assert accept_queue_length(listener) == 0
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        for sock in sockets:
            sock.close()
