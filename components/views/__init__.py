"""The page's views. Each module draws one view from a ViewContext and reads the same cached traces.

Each view is a record of components/page/view_list.py (its label and what the page draws around it) and the module
of its name here. A view module is imported only when it is shown, so opening the page pays for one view.
"""

from __future__ import annotations

import dataclasses
import importlib
import urllib.parse
from dataclasses import dataclass, field

from attention.dissect.outline import Outline
from attention.dissect.trace import Trace
from attention.models.families import Family
from attention.stages.settings import ModelShape, TraceSettings
from attention.text.encoding import Encoding
from components.caches import layers, models, texts
from components.charts.label_room import fitted_size
from components.charts.lettering import PRESENTING, READING, Lettering
from components.page.page_state import PageState, to_query
from components.page.viewport import COLUMN_GAP_PX, column_px

PRESENTED_CHART_ROOM_PX = 240  # px of a window's height a heatmap's title, key-token axis and legend take


@dataclass(frozen=True)
class ViewContext:
    """What every view needs: the model, the texts and the controls' current values."""

    model_name: str
    text: str
    text_b: str
    state: PageState
    shape: ModelShape
    width: int = 600  # px the view's column is wide in the reader's browser (components/page/viewport.py)
    stacked: bool = False  # whether the browser puts columns under each other (a phone)
    height: int = 1000  # px of the browser's window, top to bottom
    # The traces this run has made, by their arguments: a lesson step asks for the same trace up to five times, and
    # each is built anew from the cached layer (layers.trace), its arguments hashed by every cache on the way.
    _traces: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def lettering(self) -> Lettering:
        """How large the charts' text is: larger in presentation mode, for a projector."""
        return PRESENTING if self.state.present else READING

    def column_px(self, share: float, gap_px: int = COLUMN_GAP_PX) -> int:
        """The px of a column taking `share` of a row of st.columns in the view (all of it on a phone)."""
        return column_px(self.width, share, self.stacked, gap_px)

    def plot_px(self, width: int | None = None, cap: int | None = None) -> int:
        """The longer side of a heatmap's plot in a column width px wide (the view's, by default): what its
        labels leave, at most cap or the lettering's largest plot; in presentation mode, no taller than the
        window leaves beside a chart's title, axis and legend (a projected chart is seen whole)."""
        if self.state.present:
            cap = min(cap or self.lettering.largest_plot_px, self.height - PRESENTED_CHART_ROOM_PX)
        return fitted_size(self.width if width is None else width, cap, self.lettering)

    def link(self, **changes) -> str:
        """A link to this page with some controls changed (view="lab"): the same text and settings, every value
        percent-encoded, so that a reader's text cannot end a Markdown link or start an HTML tag."""
        return "?" + urllib.parse.urlencode(to_query(dataclasses.replace(self.state, **changes)))

    @property
    def family(self) -> Family:
        """The model's family (attention.models.families): what its tokens are called, how they look at each other."""
        return models.model(self.model_name).family

    def settings(self, **changes) -> TraceSettings:
        """The core's settings for the controls, with some of them changed (e.g. layer=3)."""
        return layers.settings_for(dataclasses.replace(self.state, **changes))

    def trace(self, text: str | None = None, text_b: str | None = None, **changes) -> Trace:
        """The trace of the current text (or another one) under the controls' settings, from the cached layer."""
        arguments = (self.model_name, self.text if text is None else text, self.text_b if text_b is None else text_b,
                     self.settings(**changes))
        if arguments not in self._traces:
            self._traces[arguments] = layers.trace(*arguments)
        return self._traces[arguments]

    def outline(self, text: str | None = None, text_b: str | None = None, **changes) -> Outline:
        """What the trace of trace(...) would be without its numbers: its steps' names, formulas and shapes,
        its tokens, head count and head size. For what a view draws around the numbers, at no cost."""
        return texts.outline(self.model_name, self.text if text is None else text,
                               self.text_b if text_b is None else text_b, self.settings(**changes))

    def encoding(self, text: str | None = None, text_b: str | None = None) -> Encoding:
        return texts.encoding(self.model_name, self.text if text is None else text,
                                self.text_b if text_b is None else text_b)


def render(view: str, context: ViewContext) -> None:
    """Draw the view of this name (a record's name in components/page/view_list.py) with its module."""
    importlib.import_module(f"components.views.{view}").render(context)
