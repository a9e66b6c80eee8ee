// The browser's voter id for the class's questions: a cookie of 128 random bits, made once and kept for
// $cookie_days days, so that a reload or a second tab of the same browser answers as the same voter. Reported to
// the page when it does not know it yet (the first visit: later visits send the cookie with the page's request).
export default function ({ data, setStateValue }) {
  const name = '$cookie';
  let id = document.cookie.split('; ').find((part) => part.startsWith(name + '='))?.slice(name.length + 1);
  if (!id || !/^[A-Za-z0-9_-]{22}$/.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    id = btoa(String.fromCharCode(...bytes)).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');
    document.cookie = `${name}=${id}; path=/; max-age=${$cookie_days * 86400}; SameSite=Lax`;
  }
  if (data.known !== id) setStateValue('voter', id);
}
