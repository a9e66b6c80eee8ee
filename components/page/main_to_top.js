// The main area scrolls inside its own element (Streamlit's stMain), which Streamlit leaves where it was when the
// page's contents change: a head clicked in the all-heads grid, 1,000 px down, opened the one-head view as far down,
// its title out of sight.
export default function () {
  const main = document.querySelector('[data-testid="stMain"]');
  main?.scrollTo({top: 0});
  window.scrollTo({top: 0});
}
