// The script: the body's data-lesson-step is the server's step (data.step) whenever the navigation is drawn, and the
// step a press asks for the moment it is pressed (a click, or Enter or Space on a focused button), when that step is
// drawn (data.drawn). The buttons are told apart by their containers' keys (st-key-lesson_prev,
// st-key-lesson_next_foot_4, st-key-step).
// Streamlit runs the script again for every run's new data and calls only the last run's cleanup, when the lesson
// goes: so each run first stops the listener the run before it set (parentElement.stopLast). Left, they piled up, one
// per run, and each read the step the one before it had just set: a press of Previous went back several steps.
// Where the run drew the step alone (data.fill), it asks for the run that draws the steps beside it once nothing on
// the page has moved for $fill_after_ms: the number of the run it was drawn in, which the server checks no other run
// has followed. A Vega tooltip following the pointer is no move.
export default function ({ data, parentElement, setTriggerValue }) {
  parentElement.stopLast?.();
  const body = document.body;
  body.dataset.$step_dataset = String(data.step);
  body.dataset.$drawn_dataset = data.drawn.join(' ');  // the steps drawn, for a test or the bench to wait on
  const asked = event => {
    const button = event.target.closest('button');
    if (!button) return null;
    const keyed = button.closest('[class*="st-key-lesson_prev"], [class*="st-key-lesson_next"], .st-key-step');
    if (!keyed || button.disabled) return null;
    const now = Number(body.dataset.$step_dataset);
    if (keyed.matches('.st-key-step')) {
      const pills = [...keyed.querySelectorAll('button')];
      return pills.indexOf(button) + 1;
    }
    return keyed.matches('[class*="st-key-lesson_next"]') ? now + 1 : now - 1;
  };
  const show = event => {
    const step = asked(event);
    if (data.drawn.includes(step)) body.dataset.$step_dataset = String(step);
  };
  document.addEventListener('click', show, true);
  let timer = null, asks = 0;
  const app = document.querySelector('[data-testid="stApp"]');
  const still = new MutationObserver((records) => {
    if (records.every((record) => record.target.closest?.('#vg-tooltip-element'))) return;
    wait();
  });
  // Not while a run is under way, which the ask would cut short. An ask answered draws the navigation again, and
  // with it this script anew; one that went unanswered (lost on the way) is asked again after a longer stillness.
  const wait = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (app?.getAttribute('data-test-script-state') !== 'notRunning') return wait();
      asks += 1;
      setTriggerValue('fill', data.run);
      wait();
    }, $fill_after_ms * 4 ** asks);
  };
  if (data.fill) {
    still.observe(body, {subtree: true, childList: true, attributes: true, characterData: true});
    wait();
  }
  parentElement.stopLast = () => {
    document.removeEventListener('click', show, true);
    still.disconnect();
    clearTimeout(timer);
    delete body.dataset.$step_dataset;  // gone with the lesson: a later lesson starts from its own step
    delete body.dataset.$drawn_dataset;
  };
  return parentElement.stopLast;
}
