// The sidebar scrolls inside its own element (Streamlit's stSidebarContent): the script sets it back to its top,
// where the class's panel is.
export default function ({ parentElement }) {
  const sidebar = parentElement.closest('[data-testid="stSidebarContent"]')
    ?? document.querySelector('[data-testid="stSidebarContent"]');
  sidebar?.scrollTo({top: 0, behavior: 'smooth'});
}
