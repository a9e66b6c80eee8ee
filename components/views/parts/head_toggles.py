"""The switch view's toggles: one row of buttons per layer, a pressed button a head switched off.

Shared by both of its experiments (the masked word and the sentence embedding). The heads switched off live in
session state (HEADS_OFF), and only there: a press in the browser, the reset button and the ranking's "switch off
the strongest" button all write it, and AppTest sets it directly.

The 72 buttons of a 6 × 12 model are one small script (a Streamlit component, no iframe), not six rows of
st.pills: every press reruns the toggles' fragment, and the browser redrew all six rows of pills each time, about
as long as the rest of the rerun. The script draws the buttons once and, on each run, only marks which are
pressed. A press marks its button at once and sends the whole set of heads off (a trigger, so that the server
reads it once); the run that follows sends the set back, and the buttons show what the server holds.

The numbers the heads change can live in the script too (HTML the view makes, above the buttons), with the query
of the App's route that answers them (components/api/routes.py): a press then fetches the numbers for the new
set (asked as a mouse button or the space bar goes down, so that they are often there by its release), shows them
as soon as they come, and only once they are on the screen sends the set for the run, which finds them computed
and sends the same HTML, which changes nothing. The run's numbers are the truth: a fetch that fails, takes longer
than ANSWER_WAIT_MS, or answers for a set that is no longer the one pressed, is dropped, and the press goes by its run.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

HEADS_OFF = "switch_heads_off"  # session state: the (layer, head) pairs switched off, a sorted tuple
KEY = "switch_heads"  # the script's key; its container's CSS class is st-key-switch_heads
NAME = "attention_anatomy.head_switches"  # the script's name, as the page sends it
MODEL_KEY = "_switch_model"  # the model the toggles were made for
# How long a press waits for the route's numbers before it sends its set for the run regardless: longer than the
# route waits for a slot on a busy server (components/api/routes.py), short enough that a press never looks lost.
ANSWER_WAIT_MS = 3_000

# A head switched off reads as off: grey and struck through, not the pale blue of some attention that the rest of
# the page uses. The layer's name stands beside its buttons; on a phone the buttons wrap under each other.
_CSS = """
.head-switches { display: flex; flex-direction: column; gap: 0.5rem; font-family: var(--st-font, sans-serif);
  font-size: 0.875rem; color: var(--st-text-color); }
.head-switches .layer { display: flex; align-items: center; gap: 0.75rem; }
.head-switches .name { flex: 0 0 4.5rem; }
.head-switches .heads { display: flex; flex-wrap: wrap; gap: 0.25rem; }
.head-switches button { min-width: 2.15rem; height: 2.125rem; padding: 0 0.75rem; border-radius: 9999px;
  border: 1px solid rgba(16, 21, 28, 0.2); background: var(--st-background-color, #fff); color: inherit;
  font: inherit; line-height: 1; cursor: pointer; }
.head-switches button:hover { border-color: var(--st-primary-color); color: var(--st-primary-color); }
.head-switches button:focus-visible { outline: 2px solid var(--st-primary-color); outline-offset: 1px; }
.head-switches button[aria-pressed="true"] { background: #ececef; border-color: #9a9aa2; color: #55555c;
  text-decoration: line-through; }
.switch-numbers, .switch-hint { font-family: var(--st-font, sans-serif); color: var(--st-text-color); }
.switch-numbers:not(:empty) { margin-bottom: 1rem; }
.switch-hint { margin: 0 0 0.75rem; }
.aa-metrics { display: flex; flex-wrap: wrap; gap: 1rem; }
.aa-metric { flex: 1 1 14rem; }
.aa-metric-label { font-size: 0.875rem; }
.aa-metric-value { font-size: 2.25rem; line-height: 1.3; }
.aa-metric-delta { display: inline-block; font-size: 0.875rem; padding: 0 0.4rem; border-radius: 0.5rem; }
.aa-metric-delta.rises { color: #158237; background: rgba(33, 195, 84, 0.1); }
.aa-metric-delta.falls { color: #c1262a; background: rgba(255, 43, 43, 0.1); }
.aa-guesses { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.aa-guesses > .aa-metric { flex: 1 1 10rem; }
.aa-guesses > .aa-table { flex: 3 1 20rem; min-width: 0; overflow-x: auto; }
.aa-caption { font-size: 0.875rem; opacity: 0.6; margin: 0.25rem 0 0; }
"""

# The buttons are built once per shape, in the component's own element, and found again on every run: the function
# runs again whenever the server sends new data. The click listener is the grid's, set once, and reads what the
# latest run left on the grid (the heads off, and the function that sends a trigger).
_JS = """
const ANSWER_WAIT_MS = %d;

export default function ({ data, parentElement, setTriggerValue }) {
  const idOf = button => `${button.dataset.layer}:${button.dataset.head}`;
  const keyOf = headsOff => [...headsOff].sort().join(',');  // a set of heads off as the route's `off` names it
  const shape = `${data.layers}x${data.heads}`;
  let numbers = parentElement.querySelector('.switch-numbers');
  if (!numbers) {
    numbers = document.createElement('div');
    numbers.className = 'switch-numbers';
    numbers.setAttribute('aria-live', 'polite');
    parentElement.prepend(numbers);
  }
  const show = (html, off) => {
    if (numbers.shown === html) return;
    numbers.innerHTML = html;  // the view's HTML, every text in it escaped by the server
    numbers.shown = html;
    // Which heads the numbers are for, on the element that holds the script's shadow root, where the page's
    // own scripts (and the bench's) can see it.
    (parentElement.getRootNode().host ?? parentElement).dataset.headsOff = off;
  };
  let grid = parentElement.querySelector('.head-switches');
  if (!parentElement.querySelector('.switch-hint')) {
    const hint = document.createElement('p');
    hint.className = 'switch-hint';
    hint.innerHTML = '<strong>Heads switched off</strong> (grey, struck through): click a head to silence it, '
      + 'again to bring it back.';
    numbers.after(hint);
  }
  if (!grid || grid.dataset.shape !== shape) {
    grid?.remove();
    grid = document.createElement('div');
    grid.className = 'head-switches';
    grid.dataset.shape = shape;
    grid.setAttribute('role', 'group');
    grid.setAttribute('aria-label', 'Heads switched off');
    for (let layer = 0; layer < data.layers; layer++) {
      const row = document.createElement('div');
      row.className = 'layer';
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = `layer ${layer}`;
      const heads = document.createElement('div');
      heads.className = 'heads';
      for (let head = 0; head < data.heads; head++) {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = String(head);
        button.dataset.layer = String(layer);
        button.dataset.head = String(head);
        button.setAttribute('aria-label', `layer ${layer}, head ${head}`);
        heads.appendChild(button);
      }
      row.append(name, heads);
      grid.appendChild(row);
    }
    // The route's answer for a set of heads off (null if it has none), asked once: a button going down asks for
    // the set its click will make, and the click takes that answer (a mouse button is down ~0.1 s, about what the
    // model takes); a press that never clicks leaves its answer unread. Not for a touch, which often starts a
    // scroll: every finger put on the grid would cost the server a pass of the model.
    // The App's route under the page's own path (server.baseUrlPath). An answer that takes longer than
    // ANSWER_WAIT_MS is given up (null): the press then goes to the session by its run, never held by a hung fetch.
    const query = asked => `${location.pathname.replace(/[/]+$/, '')}/api/switch?${grid.ask}`
      + `&off=${encodeURIComponent(asked)}`;
    const answerFor = asked => {
      const url = query(asked);
      if (grid.early?.url !== url) {
        const asking = fetch(url, {signal: AbortSignal.timeout(ANSWER_WAIT_MS)});
        grid.early = {url, answer: asking.then(response => response.ok ? response.json() : null).catch(() => null)};
      }
      return grid.early.answer;
    };
    const toggled = button => {
      const off = new Set(grid.headsOff);
      const id = idOf(button);
      off.has(id) ? off.delete(id) : off.add(id);
      return [...off];
    };
    const goingDown = event => {
      const button = event.target.closest('button');
      if (button && grid.ask) answerFor(keyOf(toggled(button)));
    };
    grid.addEventListener('pointerdown', event => {
      if (event.pointerType === 'mouse' && event.button === 0) goingDown(event);
    });
    grid.addEventListener('keydown', event => { if (event.key === ' ' && !event.repeat) goingDown(event); });
    grid.addEventListener('click', event => {
      const button = event.target.closest('button');
      if (!button) return;
      grid.headsOff = toggled(button);
      button.setAttribute('aria-pressed', String(grid.headsOff.includes(idOf(button))));
      const sendAll = () => grid.send('off', grid.headsOff.map(pair => pair.split(':').map(Number)));
      if (!grid.ask) {
        sendAll();
        return;
      }
      // The route first, the run once it has answered: the two would share the server's cores, and the run then
      // finds the numbers computed (the caches are the server's). It sends the set pressed by then, the latest.
      const asked = keyOf(grid.headsOff);
      answerFor(asked)
        .then(answer => {
          if (answer && asked === keyOf(grid.headsOff)) grid.show(answer.html, asked);
        })
        // The run once the numbers are on the screen: sending the trigger makes the page redraw at once, and the
        // numbers' frame waited for it. A hidden tab draws no frames, and sends at once.
        .finally(() => document.hidden ? sendAll() : requestAnimationFrame(() => setTimeout(sendAll, 0)));
    });
    parentElement.appendChild(grid);
  }
  grid.headsOff = data.off.map(([layer, head]) => `${layer}:${head}`);
  grid.send = setTriggerValue;
  grid.ask = data.ask;
  grid.show = show;
  show(data.numbers, keyOf(grid.headsOff));
  const off = new Set(grid.headsOff);
  for (const button of grid.querySelectorAll('button')) {
    button.setAttribute('aria-pressed', String(off.has(idOf(button))));
  }
}
"""
_switches = st.components.v2.component(NAME, css=_CSS, js=_JS % ANSWER_WAIT_MS)


def head_toggles(heads_off: tuple[tuple[int, int], ...], num_layers: int, num_heads: int, numbers: str = "",
                 ask: str = "") -> None:
    """Draw the numbers (HTML, every text escaped) and the toggles, heads_off (heads_off_now's) pressed, and the
    reset button. ask is the query of the route that answers the numbers for another set of heads off ("" when
    there is none): the script adds the set as off=layer:head,…"""
    _switches(key=KEY, data={"layers": num_layers, "heads": num_heads, "off": [list(pair) for pair in heads_off],
                             "numbers": numbers, "ask": ask},
              on_off_change=partial(_pressed, num_layers, num_heads))
    st.button("Switch all heads back on", key="switch_reset", icon=":material/restart_alt:",
              on_click=set_heads_off, args=((),))


def heads_off_now(num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """The pairs switched off in this session, those that exist in a num_layers × num_heads model."""
    return valid_pairs(st.session_state.get(HEADS_OFF, ()), num_layers, num_heads)


def valid_pairs(pairs, num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """pairs as sorted (layer, head) tuples, each once; anything that is not a head of the model is dropped (the
    browser sends the list, and nothing it sends is trusted)."""
    if not isinstance(pairs, (list, tuple)):
        return ()
    kept = set()
    for pair in pairs:
        if (isinstance(pair, (list, tuple)) and len(pair) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)
                and 0 <= pair[0] < num_layers and 0 <= pair[1] < num_heads):
            kept.add((pair[0], pair[1]))
    return tuple(sorted(kept))


def heads_off_label(count: int) -> str:
    """How the numbers' labels name the set: "all heads on", "1 head off", "3 heads off"."""
    return "all heads on" if not count else f"{count} head{'s' * (count > 1)} off"


def heads_off_asked(asked: str, num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """The heads off of a request to the App's route, "layer:head,…" (the script's `off`), sorted; ValueError,
    saying why, for anything but heads of a num_layers × num_heads model, each once."""
    pairs = [pair.split(":") for pair in asked.split(",") if pair]
    if not all(len(pair) == 2 and all(part.isascii() and part.isdigit() for part in pair) for pair in pairs):
        raise ValueError("heads off as layer:head, comma-separated")
    heads_off = valid_pairs([[int(layer), int(head)] for layer, head in pairs], num_layers, num_heads)
    if len(heads_off) != len(pairs):
        raise ValueError(f"heads of a {num_layers} × {num_heads} model, each once")
    return heads_off


def _pressed(num_layers: int, num_heads: int) -> None:
    """The script's callback: the set of heads off that the browser sent, after a press."""
    st.session_state[HEADS_OFF] = valid_pairs(st.session_state[KEY].get("off"), num_layers, num_heads)


def set_heads_off(pairs) -> None:
    """A button's callback: exactly these (layer, head) pairs off, every other head on."""
    st.session_state[HEADS_OFF] = tuple(sorted(pairs))


def forget_toggles_of_other_models(name: str) -> None:
    """Toggles belong to one model's heads: a new model starts with all of its heads on."""
    if st.session_state.get(MODEL_KEY) != name:
        st.session_state.pop(HEADS_OFF, None)
        st.session_state[MODEL_KEY] = name
