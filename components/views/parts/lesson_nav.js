// The script: the body's data-lesson-step is the server's step (data.step) whenever the navigation is drawn, and the
// step a press asks for the moment it is pressed (a click, or Enter or Space on a focused button), when that step is
// drawn (data.drawn). The buttons are told apart by their containers' keys (st-key-lesson_prev,
// st-key-lesson_next_foot_4, st-key-step).
// Streamlit runs the script again for every run's new data and calls only the last run's cleanup, when the lesson
// goes: so each run first stops the listener the run before it set (parentElement.stopLast). Left, they piled up, one
// per run, and each read the step the one before it had just set: a press of Previous went back several steps.
export default function ({ data, parentElement }) {
  parentElement.stopLast?.();
  const body = document.body;
  body.dataset.$step_dataset = String(data.step);
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
  parentElement.stopLast = () => {
    document.removeEventListener('click', show, true);
    delete body.dataset.$step_dataset;  // gone with the lesson: a later lesson starts from its own step
  };
  return parentElement.stopLast;
}
