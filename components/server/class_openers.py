"""Who opened a class, as little as counting needs: one address that opens class after class (a page with ?teach=1
in a loop) must not fill the memory store's MAX_CLASSES, after which no teacher could start one.

No address is kept. The memory store keeps beside each class an opener: the address reduced to what one client
holds (an IPv6 address to its /64, the block one home or host is given, so that a client cannot count as 2**64
addresses), then hashed with a key drawn when the process starts and kept only in its memory (HMAC-SHA-256, cut to
16 bytes). Without that key an opener cannot be turned back into its address, not even by hashing all 2**32 IPv4
addresses; with the process gone, the key is gone too.

A page on the server's own machine has no address (Streamlit says None for loopback), nor has a page that comes
through a proxy on that machine which does not say whose request it forwards: those pages are not counted, as
whoever runs the server's machine, or its proxy, can do more than open classes. deploy/nginx.conf sends
X-Forwarded-For, which the server (uvicorn) believes from a proxy on loopback. Behind a proxy on another machine,
every teacher counts as the proxy's one address, unless the proxy sends X-Forwarded-For and the server's
FORWARDED_ALLOW_IPS names the proxy.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets

# A teacher opens one class a lesson, a few when tabs are closed without End (each lasts until LIFETIME_S after
# its last change). A replica carries about one class of 40-75 students (deploy/README.md), so 50 classes open at
# once from one address, even the one address of a school's network, is more than one server can teach; and
# filling MAX_CLASSES takes 200 addresses.
MAX_CLASSES_PER_ADDRESS = 50
IPV6_CLIENT_PREFIX = 64  # the block a home or host is given: one client, however many of its addresses it uses
_OPENER_BYTES = 16  # 128 bits: no two addresses of a server meet by chance
_PROCESS_KEY = secrets.token_bytes(32)  # drawn at start, never written anywhere


def opener(address: object) -> bytes | None:
    """The opener a page's address counts as, or None for a page without a usable address (loopback, a proxy
    that forwards none, or anything that is not an IP address: AppTest's stand-in, a value from a header)."""
    if not isinstance(address, str):
        return None
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped  # ::ffff:203.0.113.7 is 203.0.113.7
    if parsed.is_loopback:
        return None
    if isinstance(parsed, ipaddress.IPv6Address):
        held = ipaddress.IPv6Network((parsed, IPV6_CLIENT_PREFIX), strict=False).network_address.packed
    else:
        held = parsed.packed
    return hmac.new(_PROCESS_KEY, held, hashlib.sha256).digest()[:_OPENER_BYTES]
