// Streamlit runs the script again for every run's new data (each run's differs: data.run) and calls only the last
// run's cleanup, when the page goes: so each run first stops the timer the run before it set
// (parentElement.stopLast), and an ask still under way then sends nothing: it compared the version with the old
// run's. When it last said the follower is there is kept on the element, across runs. A failed fetch (the server
// away) asks nothing: Streamlit's own reconnect shows that. Any other answer than the route's JSON, such as a
// proxy's 404, or Streamlit's own page where the App's routes are not passed on, asks for a rerun at every poll: the
// run checks the class, as the timed fragment did.
export default function ({ data, parentElement, setTriggerValue }) {
  parentElement.stopLast?.();
  let askedAt = -Infinity, busy = false, stopped = false;
  const poll = async () => {
    if (busy) return;
    busy = true;
    try {
      const now = performance.now();
      const beat = data.beat !== '' && now - (parentElement.beatAt ?? -Infinity) >= data.beat_ms;
      const query = `code=${encodeURIComponent(data.code)}` + (beat ? `&beat=${data.beat}` : '');
      // At the App's route under the page's own path (server.baseUrlPath), and never waiting for ever: a hung ask
      // would keep `busy` and stop the polls.
      const route = `${location.pathname.replace(/[/]+$/, '')}/api/class?${query}`;
      const response = await fetch(route, {cache: 'no-store', signal: AbortSignal.timeout($ask_timeout_ms)});
      const answer = response.status === 200 ? await response.json().catch(() => null) : null;
      const known = answer !== null && typeof answer === 'object' && typeof answer.reachable === 'boolean';
      if (beat && known && answer.reachable) parentElement.beatAt = now;
      const behind = !known || answer.reachable !== data.reachable
        || (answer.reachable && (answer.version === null || (data.following && answer.version !== data.version)));
      if (behind && !stopped && performance.now() - askedAt > $ask_again_ms) {
        askedAt = performance.now();
        setTriggerValue('behind', true);
      }
    } catch {
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(poll, data.period_ms);
  parentElement.stopLast = () => { clearInterval(timer); stopped = true; };
  return parentElement.stopLast;
}
