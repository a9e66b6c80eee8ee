"""How large a chart's text is (Lettering: reading on a screen, or presenting on a projector), and the titles
broken into lines that fit their chart."""

from __future__ import annotations

from dataclasses import dataclass

from components.charts.plot_sizes import LABEL_PX, PLOT_SIZE

TITLE_CHAR_PX = 8  # px a character of a chart's title takes, at most (the theme's 17-px bold sans-serif)

THEME_LABEL_PX = 12.75  # Streamlit's theme draws axis labels at 0.75 of its 17-px font


@dataclass(frozen=True)
class Lettering:
    """How large a chart's text is, and what follows from it: how close its axis labels may stand, the room
    beside a plot for its row labels, and how large a plot may grow."""

    font_px: float  # axis labels and the numbers drawn in a chart
    smallest_text_px: float  # where room is short (the tokens of a long text's lines): no smaller than this
    label_spacing_px: int  # between two axis labels at least: closer, their text runs together
    label_room_px: int  # beside a plot for its row labels (cut at 90 px) and their title
    largest_plot_px: int  # the longer side of a plot, at most
    legend_beside: bool = False  # the colour legend right of the plot, upright, rather than under it
    projected: bool = False  # for a projector: small pictures (the all-heads view's maps) as large as their row allows
    label_colour: str = "#4c4c4c"  # axis and legend text: Streamlit's theme draws it grey, 3.7:1 on white

    def vega_config(self) -> dict:
        """A Vega-Lite config that draws a chart's labels, titles and legends in label_colour (Streamlit's theme
        greys them to 3.7:1 on white, under WCAG AA's 4.5:1), and its text at font_px where Streamlit's theme
        draws it smaller (its axis and header labels; its titles and legends are 15 px or more).
        A mark that sets a size of its own keeps it: those take font_px from the view."""
        ink = {"labelColor": self.label_colour, "titleColor": self.label_colour}
        config = {"axis": dict(ink), "header": dict(ink), "legend": dict(ink)}
        if self.font_px > THEME_LABEL_PX:
            config["axis"]["labelFontSize"] = config["header"]["labelFontSize"] = self.font_px
            config["text"] = {"fontSize": self.font_px}
        return config


READING = Lettering(font_px=THEME_LABEL_PX, smallest_text_px=8, label_spacing_px=13, label_room_px=LABEL_PX,
                    largest_plot_px=PLOT_SIZE)


# Presentation mode, for a projector: labels and numbers at 15 px, plots as large as their column allows, and the
# legend beside the plot, where a 1280×720 projector has room to spare, not under it, below the screen's edge.
# Its labels as dark as the page's text (the theme's), read from the back of a room.
PRESENTING = Lettering(font_px=15, smallest_text_px=15, label_spacing_px=17, label_room_px=130, largest_plot_px=800,
                       legend_beside=True, projected=True, label_colour="#10151c")


def title_lines(title: str, width: float) -> list[str]:
    """title broken into lines no wider than width px (at TITLE_CHAR_PX a character): Vega does not wrap a
    title, and one longer than its chart widened the chart past its column."""
    per_line = max(12, int(width / TITLE_CHAR_PX))
    lines: list[str] = []
    for word in title.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= per_line:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines
