// The buttons are built once per shape, in the component's own element, and found again on every run: the function
// runs again whenever the server sends new data. The click listener is the grid's, set once, and reads what the
// latest run left on the grid (the heads off, and the function that sends a trigger).
const ANSWER_WAIT_MS = $answer_wait_ms;

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
