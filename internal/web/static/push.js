// Web Push for the inbox (docs/notifications.md): registers the service
// worker (sw.js, which also makes the inbox installable), and, when the
// server has Web Push on (askd serve --notify-push) and the person allows
// notifications, subscribes this browser and gives the server the
// subscription, which belongs to this browser session. Signing out
// unsubscribes first. Push needs a secure context: https, or localhost.
// The page's own "Enable notifications" button (app.js) asks for the
// permission; this module listens on the same button.

const supported = window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

// state is what the page knows of push, for tests and the button's title.
export const state = { registered: false, key: '', subscribed: false, error: '' };
window.askdPush = state;

function b64urlBytes(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - s.length % 4) % 4));
  return Uint8Array.from(b, c => c.charCodeAt(0));
}

function b64url(buf) {
  return btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function api(method, path, body) {
  const resp = await fetch(path, {
    method, credentials: 'same-origin',
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!resp.ok && resp.status !== 404) throw new Error(`${method} ${path}: HTTP ${resp.status}`);
  return resp;
}

// subscribe makes (or reuses) this browser's push subscription and stores
// it on the server for this browser session: again on every load, so a new
// sign-in in the same browser takes it over.
async function subscribe(reg) {
  let sub = await reg.pushManager.getSubscription();
  if (!sub) {
    sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64urlBytes(state.key) });
  }
  await api('POST', '/api/push/subscriptions', {
    endpoint: sub.endpoint,
    keys: { p256dh: b64url(sub.getKey('p256dh')), auth: b64url(sub.getKey('auth')) },
  });
  state.subscribed = true;
}

// unsubscribe forgets this browser's subscription, on the server and at
// the push service.
async function unsubscribe(reg) {
  const sub = await reg.pushManager.getSubscription();
  if (!sub) return;
  await api('DELETE', '/api/push/subscriptions', { endpoint: sub.endpoint }).catch(() => {});
  await sub.unsubscribe().catch(() => {});
  state.subscribed = false;
}

async function setup() {
  if (!supported) return;
  const reg = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  state.registered = true;
  const resp = await api('GET', '/api/push/key');
  if (resp.status === 404) return; // Web Push is off on this server
  state.key = (await resp.json()).public_key;

  const form = document.querySelector('form.signout');
  form?.addEventListener('submit', async e => {
    if (!state.subscribed) return;
    e.preventDefault();
    await unsubscribe(reg).catch(() => {});
    form.submit();
  });

  const trySubscribe = () => subscribe(reg).catch(err => { state.error = String(err); });
  if (Notification.permission === 'granted') return trySubscribe();
  document.getElementById('notify')?.addEventListener('click', async () => {
    if (await Notification.requestPermission() === 'granted') await trySubscribe();
  });
}

setup().catch(err => { state.error = String(err); });
