/*
 * What a view shows when it cannot show its data: a clear message for each kind of
 * ApiError (api.js), never a blank page, and the reader-token form when the server
 * answers 401 (the token goes to sessionStorage, never into a URL).
 */
import { h, showError, markReady } from './dom.js';

const TITLES = {
  malformed: 'Not a CPID',
  unknown: 'Unknown CPID',
  down: 'ripple-server is not answering',
  missing: 'ripple-server is too old for this',
  server: 'ripple-server answered with an error',
};

/* Shows err in container (the token form for kind auth); retry re-runs the view. */
export function failView(container, err, { api, retry }) {
  if (err?.name === 'AbortError') return;
  if (err?.kind === 'auth') {
    tokenForm(container, api, retry, err.message);
    return;
  }
  const message = err?.message || String(err);
  const actions = [h('a', { href: '#/', class: 'button' }, 'Find a change')];
  if (err?.kind === 'down' || err?.kind === 'server') {
    actions.unshift(h('button', { type: 'button', class: 'button primary', onclick: retry }, 'Try again'));
  }
  showError(container, message, { title: TITLES[err?.kind] ?? 'Something went wrong', actions });
  if (!(err instanceof Error) || !err.kind) console.error(err);
}

/* The reader token form; a token that is refused again shows the form again. */
function tokenForm(container, api, retry, message) {
  const input = h('input', { type: 'password', id: 'token', name: 'token', autocomplete: 'current-password',
    required: true, spellcheck: 'false' });
  const submit = (ev) => {
    ev.preventDefault();
    api.setToken(input.value.trim());
    retry();
  };
  const hadToken = !!api.token();
  container.replaceChildren(
    h('form', { class: 'card token-form', onsubmit: submit, 'aria-labelledby': 'token-title' },
      h('h2', { id: 'token-title' }, 'Reader token'),
      h('p', { class: 'muted' }, hadToken ? 'ripple-server refused the token: enter another one.' : message,
        '. The token is kept for this tab only (sessionStorage) and sent in an X-Ripple-Token header.'),
      h('label', { for: 'token' }, 'Token'),
      input,
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'button primary' }, 'Use token'))),
  );
  if (hadToken) api.setToken('');
  markReady('token');
  document.body.dataset.state = 'auth';
  input.focus();
}
