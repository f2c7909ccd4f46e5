// The inbox's service worker (served at /sw.js, scope /): it shows Web Push
// notifications of new asks (internal/tell/push.go sends them) and answers
// from their buttons. A notification's data holds the inbox URL of its ask
// and its actions, each a signed answer link; tapping one POSTs confirm=1 to
// it, as the link's confirm page does, and a notification says how that
// went. Tapping the notification itself opens the ask in the inbox.
'use strict';

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));

self.addEventListener('push', e => {
  let m;
  try { m = e.data.json(); } catch { return; }
  e.waitUntil(showAsk(m));
});

self.addEventListener('notificationclick', e => {
  e.notification.close();
  e.waitUntil(clicked(e.notification.data || {}, e.action));
});

// showAsk shows a push message (tell.PushMessage) as a notification.
function showAsk(m) {
  const actions = (m.actions || []).map(a => ({ action: a.action, title: a.title }));
  return self.registration.showNotification(m.title || 'askd', {
    body: m.body || '',
    tag: m.tag,
    icon: '/assets/icon.svg',
    badge: '/assets/icon.svg',
    requireInteraction: actions.length > 0,
    actions,
    data: { url: m.url || '/', tag: m.tag, actions: m.actions || [] },
  });
}

// clicked handles a tap on a notification: its action's answer, or
// opening the inbox. It returns what it did, for tests driving it.
async function clicked(data, action) {
  const a = (data.actions || []).find(x => x.action === action);
  if (!action || !a) {
    await openInbox(data.url || '/');
    return { opened: data.url || '/' };
  }
  const says = await answer(a);
  await self.registration.showNotification(says.title, {
    body: says.body, tag: data.tag, icon: '/assets/icon.svg', data: { url: data.url, tag: data.tag, actions: [] },
  });
  return says;
}

// answer POSTs confirm=1 to an action's answer link and says how it went.
// The link is sent to this origin (the inbox serves /a/ too), so the
// response's status can be read whatever host --public-url names.
async function answer(a) {
  const u = new URL(a.link, self.location.origin);
  const link = new URL(u.pathname, self.location.origin);
  let status = 0;
  let count = '';
  try {
    const resp = await fetch(link, {
      method: 'POST', body: 'confirm=1', credentials: 'omit', cache: 'no-store', redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    status = resp.status;
    // An approval that needs several people (SPEC §11) says its count so
    // far: this tap counted toward it, or its person had approved already.
    count = decodeURIComponent(resp.headers.get('Askd-Approvals') || '');
  } catch { /* offline: status 0 */ }
  if (count && status === 200) return { status, title: 'Approved, not yet decided', body: count };
  if (count && status === 409) return { status, title: 'Not counted again', body: `Your approval is in already: ${count}` };
  const said = {
    200: ['Answered', `${a.title}: the agent has it.`],
    409: ['Not answered', 'The ask was settled or changed meanwhile: open the inbox to see how.'],
    410: ['Not answered', 'This notification’s buttons have expired: answer in the inbox.'],
    404: ['Not answered', 'The ask is gone, or its link is unknown.'],
    403: ['Not answered', 'The before-tell gate refused this answer: open the inbox.'],
    429: ['Not answered', 'Too many tries: wait a little, or answer in the inbox.'],
  }[status] || ['Not answered', status ? `askd said HTTP ${status}: answer in the inbox.` : 'askd could not be reached: answer in the inbox.'];
  return { status, title: said[0], body: said[1] };
}

// openInbox focuses an inbox window showing url, or opens one.
async function openInbox(url) {
  const target = new URL(url, self.location.origin);
  const wins = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const w of wins) {
    if (new URL(w.url).origin === target.origin) {
      await w.focus();
      if ('navigate' in w) await w.navigate(target.href).catch(() => {});
      return;
    }
  }
  await self.clients.openWindow(target.href);
}
