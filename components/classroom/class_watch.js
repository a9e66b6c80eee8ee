// Streamlit runs the script again for every run's new data (each run's differs: data.run) and calls only the last
// run's cleanup, when the page goes: so each run first stops the asks of the run before it (parentElement.stopLast),
// which also drops the ask the server holds for it. An ask gives the version the page last heard of: the server
// holds it until the class moves on from there (or its wait ends), so the next move is heard as the teacher makes
// it. After an ask the server held, the next goes at once; after any other answer (one the server did not hold, the
// store not answering, a failed fetch) a poll period passes first. A failed fetch (the server away) asks for no
// run: Streamlit's own reconnect shows that. Any other answer than the route's JSON, such as a proxy's 404, or
// Streamlit's own page where the App's routes are not passed on, asks for a rerun every ASK_AGAIN_MS
// (class_watch.py): the run checks the class, as the timed fragment did.
export default function ({ data, parentElement, setTriggerValue }) {
  parentElement.stopLast?.();
  const stop = new AbortController();
  let askedAt = -Infinity, heard = data.version;
  const pause = () => new Promise((resolve) => {
    const timer = setTimeout(resolve, data.period_ms);
    stop.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, {once: true});
  });
  const ask = async () => {
    // At the App's route under the page's own path (server.baseUrlPath), and never waiting for ever: a hung ask
    // would stop the asks. The follower says it is there with every ask (each within the server's wait).
    const query = `code=${encodeURIComponent(data.code)}` + (heard === null ? '' : `&version=${heard}`)
      + (data.beat !== '' ? `&beat=${data.beat}` : '');
    const route = `${location.pathname.replace(/[/]+$/, '')}/api/class?${query}`;
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout($ask_timeout_ms)]);
    const response = await fetch(route, {cache: 'no-store', signal});
    return response.status === 200 ? await response.json().catch(() => null) : null;
  };
  const keepAsking = async () => {
    while (!stop.signal.aborted) {
      let answer, failed = false;
      try {
        answer = await ask();
      } catch {
        failed = true;
      }
      if (stop.signal.aborted) return;
      const known = answer !== null && typeof answer === 'object' && typeof answer.reachable === 'boolean';
      if (!failed && !known) {  // a poll period before the rerun it asks for, whose run then asks again at once
        await pause();
        if (stop.signal.aborted) return;
      }
      if (known && answer.reachable) heard = answer.version;
      const behind = !failed && (!known || answer.reachable !== data.reachable
        || (answer.reachable && (answer.version === null || (data.following && answer.version !== data.version))));
      // Where the route answers no JSON, the rerun asked for mounts the script anew, which asks again: when it last
      // asked is kept on the element, which outlives the run, or each ask would come a poll period after the last
      // and interrupt its run, on a server slower than that, for ever (the page never finished drawing).
      const since = known ? askedAt : Math.max(askedAt, parentElement.askedBlindAt ?? -Infinity);
      if (behind && performance.now() - since > $ask_again_ms) {
        askedAt = performance.now();
        if (!known) parentElement.askedBlindAt = askedAt;
        setTriggerValue('behind', data.version);  // the version this page has drawn: see class_watch.py
      }
      if (failed || (known && (answer.waited !== true || heard === null))) await pause();
    }
  };
  keepAsking();
  parentElement.stopLast = () => stop.abort();
  return parentElement.stopLast;
}
