main => {
  const step = value => Math.round(value / $step_px) * $step_px;
  const style = getComputedStyle(main);
  const inner = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {main: step(inner), window: step(window.innerWidth), height: step(window.innerHeight)};
}
