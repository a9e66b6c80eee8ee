"""The window size the page remembers between visits: a cookie its own script writes, read back only when it says a
size in the script's form, and so never trusted as anything else."""

from __future__ import annotations

import pytest

from components.page.viewport import remembered


def test_a_cookie_in_the_scripts_form_is_the_size_it_says():
    assert remembered("900x1280x720") == {"main": 900, "window": 1280, "height": 720}


@pytest.mark.parametrize("cookie", ["", "900x1280", "900x1280x720x1", "900x1280xabc", "-900x1280x720", "9e2x1280x720",
                                    "900 x1280x720", "0x1280x720", "900x99999999x720", "<b>x1x1</b>"])
def test_anything_else_is_no_size(cookie):
    assert remembered(cookie) is None
