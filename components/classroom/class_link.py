"""How students reach a class: its link, the link as a QR code, and whether their phones can open it at all.

The link is the teacher's page's own address, as the browser holds it (behind a proxy too), with ?class=CODE.
A page opened at localhost or 127.0.0.1 makes a link to each student's own phone: the page then says so and
what to open instead. The address comes from the browser, so no part of it is ever drawn as Markdown or HTML:
the link is shown as code (plain text) or escaped letter by letter, and the warning names none of it.
"""

from __future__ import annotations

import io
import ipaddress
import socket
from urllib.parse import urlsplit

import segno
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.assets import read_beside

CLASS_PARAM = "class"
QR_PX = 10  # per module of the PNG the sidebar and the large dialog show, scaled to their width by the browser
LARGE_QR_PX = 460  # on a 1280×720 projector: about 1.1 m across on a 3-m screen, read from 10 m or more
_LARGE_OPEN = "_class_large_qr"  # session state: the large QR code is open (open_large, close_large)
# An address outside this machine that a UDP socket can be pointed at: connecting one sends nothing, and the
# machine's address towards it (the one the students' network sees) is what the socket is bound to.
_OUTSIDE = ("10.254.254.254", 9)


def students_link(code: str) -> str:
    """This page's address as the browser holds it, with the class's code and nothing else."""
    return f"{st.context.url or ''}?{CLASS_PARAM}={code}"


def qr_png(link: str, scale: int = QR_PX) -> bytes:
    """The link as a QR code (PNG, black on white, with its quiet zone), made here without the network, scale px
    a module. Shown at its own size, or by st.image with output_format="PNG": Streamlit's "auto" sends a JPEG,
    and its own resizing blurs the modules' edges."""
    picture = io.BytesIO()
    segno.make(link, error="m").save(picture, kind="png", scale=scale, border=4)
    return picture.getvalue()


def only_here(link: str) -> bool:
    """Whether the link names this computer itself (localhost, 127.x, ::1, 0.0.0.0): a phone opening it would
    look for the page on the phone."""
    host = urlsplit(link).hostname or ""
    return loopback(host) or host == "0.0.0.0"


def loopback(host: str) -> bool:
    """Whether a host name or address is this computer's loopback (localhost, 127.x, ::1)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def network_address() -> str | None:
    """This computer's address on its network (what Streamlit prints as the Network URL), or None without one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(_OUTSIDE)
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address


def unreachable_note(link: str) -> str | None:
    """What to tell the teacher when students cannot open the link (None when they can): what to open instead,
    short enough for the projected page. Markdown made of this computer's own address and fixed words only."""
    if not only_here(link):
        return None
    elsewhere = network_address()
    instead = (f"put **{elsewhere}** in its place in the address bar" if elsewhere
               else "open this page at the computer's network address (Streamlit's Network URL)")
    note = f"Phones cannot open this link: it names this computer. Instead, {instead}, or deploy the page."
    listens = str(st.get_option("server.address") or "")
    if loopback(listens):
        note += " Start the server with `--server.address 0.0.0.0` too: now it listens on this computer only."
    return note


def warn_if_unreachable(link: str, place: DeltaGenerator | None = None) -> None:
    """A warning in place (default: where the page is drawing), when students cannot open the link, saying what
    to use instead."""
    if note := unreachable_note(link):
        (place or st).warning(note, icon=":material/wifi_off:")


def open_large() -> None:
    """A button's callback: the large QR code opens at the run it starts and stays open, drawn again at every run
    of the page (a rerun, a reconnect), until the teacher closes it."""
    st.session_state[_LARGE_OPEN] = True


def close_large() -> None:
    """When the teacher closes the dialog, or the class ends."""
    st.session_state.pop(_LARGE_OPEN, None)


def show_large_if_open(link: str) -> None:
    if st.session_state.get(_LARGE_OPEN):
        _show_large(link)


@st.dialog("Join the class", width="large", on_dismiss=close_large)
def _show_large(link: str) -> None:
    """The QR code as large as a 1280×720 projector's dialog holds it, the link beside it in large letters."""
    picture, words = st.columns([3, 2], vertical_alignment="center")
    picture.image(qr_png(link), width=LARGE_QR_PX, output_format="PNG", alt="QR code of the students' link")
    words.markdown(f"#### Scan the code, or open\n\n## {plain(link)}")


def plain(text: str) -> str:
    """A link shown in Markdown as the letters it is: no character of it can start Markdown or HTML."""
    return "".join(f"\\{ch}" if ch in "\\`*_{}[]()<>#+-.!|:~&=?/%" else ch for ch in text)


# The script that scrolls the sidebar to its top (sidebar_to_top.js, beside this module), mounted on the one run
# after the press, so that it runs once.
_sidebar_to_top = st.components.v2.component("attention_anatomy.sidebar_to_top",
                                              js=read_beside(__file__, "sidebar_to_top.js"), isolate_styles=False)


def say_started(code: str) -> None:
    """Confirm a class just started, and bring its panel into view: Start a class stands at the sidebar's foot,
    and the press left the sidebar scrolled there, the new code, link and QR code above it out of view."""
    st.toast(f"Class {code} started: your students open the link or scan the QR code at the top of the sidebar.",
             icon=":material/school:")
    _sidebar_to_top(key=f"sidebar_to_top_{code}", height=0)

