// Streamlit runs the script again whenever its data changes (a new size) and calls only the last run's cleanup, when
// the page goes: so each run first stops what the run before it watched (parentElement.stopLast). Left, observers
// piled up, one per size, each with its own last size, and a resize sent the same size twice: two runs of the page.
export default function ({ data, setStateValue, parentElement }) {
  parentElement.stopLast?.();
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main) return;
  const sizeOf = $size_js;
  let last = data ? JSON.stringify(data) : '';
  const report = () => {
    const size = sizeOf(main);
    document.cookie = `$cookie=${size.main}x${size.window}x${size.height}; path=/; `
      + `max-age=${$cookie_days * 86400}; SameSite=Lax`;
    if (JSON.stringify(size) !== last) { last = JSON.stringify(size); setStateValue('size', size); }
  };
  let timer;
  const later = () => { clearTimeout(timer); timer = setTimeout(report, 150); };
  const observer = new ResizeObserver(later);
  observer.observe(main);
  window.addEventListener('resize', later);
  report();
  parentElement.stopLast = () => {
    observer.disconnect(); window.removeEventListener('resize', later); clearTimeout(timer);
  };
  return parentElement.stopLast;
}
