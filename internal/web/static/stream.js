// stream.js follows askd's event stream (GET /api/events) and raises the
// browser's notifications.
import { api } from './api.js';
import { summary } from './cards.js';

// follow opens the event stream after event id from, and calls onEvent(type,
// event) with each event (its ask in event.ask). EventSource reconnects by
// itself and sends Last-Event-ID; if it gives up (the server said no), we
// start again after a pause, from the last event seen. The #live dot says
// whether the page is live.
export function follow(from, onEvent) {
  let last = from;
  const live = document.getElementById('live');
  const es = new EventSource(`/api/events?last_event_id=${last}`);
  es.onopen = () => { live.textContent = 'live'; live.className = 'live on'; };
  es.onerror = () => {
    live.textContent = 'reconnecting…';
    live.className = 'live off';
    if (es.readyState === EventSource.CLOSED) {
      setTimeout(async () => {
        const me = await api('GET', '/api/me');
        if (me.status !== 401) follow(last, onEvent);
      }, 2000);
    }
  };
  for (const type of ['ask.created', 'ask.updated', 'ask.settled', 'ask.told']) {
    es.addEventListener(type, ev => {
      const id = Number(ev.lastEventId);
      if (id > last) last = id;
      let e;
      try { e = JSON.parse(ev.data); } catch { return; }
      if (e.ask) onEvent(type, e);
    });
  }
}

// notify raises a notification of ask a (new, or why it is raised again:
// "escalated to carol") while the tab is hidden, when the person allowed
// them.
export function notify(a, why = '') {
  if (!document.hidden || !('Notification' in window) || Notification.permission !== 'granted') return;
  const n = new Notification(`askd · ${from(a)}`, { body: why ? `${summary(a)} (${why})` : summary(a), tag: `askd-${a.id}` });
  n.onclick = () => { window.focus(); n.close(); };
}

// from is where ask a came from, as askd's other notifications say it: its
// session, and for an approval an MCP gate asks (SPEC §14) "through" the
// server, named once when the session is named after it.
function from(a) {
  if (a.kind !== 'approval' || !a.source) return a.session;
  return a.session === a.source ? `through ${a.source}` : `${a.session} through ${a.source}`;
}

// setupNotifications offers to enable notifications until the browser was
// asked.
export function setupNotifications() {
  const btn = document.getElementById('notify');
  if (!('Notification' in window) || Notification.permission !== 'default') return;
  btn.hidden = false;
  btn.addEventListener('click', async () => {
    await Notification.requestPermission();
    btn.hidden = true;
  });
}
