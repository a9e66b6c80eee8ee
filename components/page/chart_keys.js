// Streamlit sends a chart's selection to the server BURST_MS after its last change, unless a click came with it
// (its useVegaLiteSelections: a click, or a key pressed outside an input, is the reader's and is sent at once; a key
// pressed in an input and a drag wait for the change to stop). A chart's own inputs (its layer and head, each a range
// input in Vega's .vega-bindings) repaint the chart at once in the browser, but the rest of the page (the shapes
// panel, the URL, the proof) waited out that pause for the rerun that brings it up to them. A key pressed on one, the
// first of a burst, is told to Streamlit as a click on the chart, and its rerun starts at once; the keys that follow
// it within BURST_MS (a key held down) are left to Streamlit's wait, one rerun for the burst, not one a repeat.
export default function () {
  if (window.__chartKeysListening) return;  // once a page: the component mounts again at every run
  window.__chartKeysListening = true;
  let last = -Infinity;
  document.addEventListener('keydown', event => {
    const input = event.target;
    const bindings = input instanceof HTMLInputElement ? input.closest('.vega-bindings') : null;
    if (!bindings) return;
    const first = event.timeStamp - last > $burst_ms;
    last = event.timeStamp;
    // On the bindings' box, not the input's label: a click on a label is also a click on its input.
    if (first) bindings.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  }, true);
}
