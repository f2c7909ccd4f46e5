// settings.js is the Settings view: who the person is and their role, and
// where askd tells them of asks besides this browser (SPEC §10: their own
// ntfy topic and webhook, and SPEC §16's email address; GET and PUT
// /api/me/notify, the whole setting replaced at each save). The server
// checks the addresses; a refusal is shown beside the field it names
// ("ntfy: …", "webhook: …", "email: …"). A webhook secret (set through
// the API) is never shown: the reply's "******" is sent back with the
// webhook, which keeps it. The email field empty sends no email while the
// person never chose one (their identity provider's address is mailed,
// shown beside it), and a choice of none ("") once they had.
import { api, errorText } from './api.js';

const $ = id => document.getElementById(id);
const FIELDS = ['ntfy', 'webhook', 'email'];

// What each role may do, in a sentence.
const ROLES = {
  admin: 'an admin: you answer any ask, and manage teams and anyone’s rules.',
  approver: 'an approver: you answer any ask, and make rules from asks routed to you, to a team of yours or to nobody.',
  viewer: 'a viewer: you read the inbox and its history; answering, closing, snoozing, taking asks and making rules are for approvers.',
};

// roleLine says who the person is and what their role lets them do.
export function roleLine(me) {
  return `You are ${me.name}, ${ROLES[me.access] || `${me.access}.`}`;
}

// signedInLine says how this browser signed in (GET /api/me's
// signed_in_with), '' when the server does not say.
export function signedInLine(me) {
  const w = me.signed_in_with;
  if (!w) return '';
  switch (w.method) {
    case 'oidc': return `This browser signed in with ${w.provider || 'an identity provider'} (${w.issuer}).`;
    case 'proxy': return `This browser signed in through the proxy in front of askd${w.header ? ` (its ${w.header} header)` : ''}.`;
    case 'link': return 'This browser signed in with a sign-in link.';
    case 'token': return 'This browser signed in with a human token.';
  }
  return '';
}

const input = name => $('notify-form').querySelector(`input[name="${name}"]`);
let loaded = false;
let secret = ''; // the webhook secret as replies show it: "******" when one is stored
let chose = false; // the person chose an address, or none (the reply has email)

// openSettings shows the view for person me ({name, access}), reading the
// settings the first time. Save (or Enter in a field) sends them.
export function openSettings(me) {
  $('settings-who').textContent = roleLine(me);
  $('settings-via').textContent = signedInLine(me);
  if (loaded) return;
  loaded = true;
  $('notify-save').addEventListener('click', save);
  for (const name of FIELDS) {
    input(name).addEventListener('input', () => show(name, ''));
    input(name).addEventListener('keydown', e => {
      if (e.key === 'Enter' && !e.isComposing) { e.preventDefault(); save(); }
    });
  }
  load();
}

async function load() {
  busy(true);
  const r = await api('GET', '/api/me/notify');
  if (r.status === 404 || r.status === 405) {
    status('This askd keeps no notification settings for people yet.', true);
    return; // the fields stay disabled
  }
  busy(false);
  if (!r.ok) { status(errorText(r), true); return; }
  fill(r.data);
}

function fill(data) {
  for (const name of FIELDS) input(name).value = (data && data[name]) || '';
  secret = (data && data.webhook_secret) || '';
  chose = !!data && typeof data.email === 'string';
  const provider = (data && data.provider_email) || '';
  const note = $('notify-email-note');
  const says = [];
  if (chose && !data.email) {
    says.push('You chose no email. Write an address to get it again.');
  } else if (!chose && provider) {
    says.push(`Left empty, askd mails the address your identity provider gave: ${provider}.`);
  }
  if (data && data.mail_off) {
    says.push('This askd sends no mail yet: its operator has not set up email (askd serve --notify-smtp). An address saved here is kept, and mailed once it does.');
  }
  note.textContent = says.join(' ');
  note.hidden = !note.textContent;
}

async function save() {
  const body = {};
  for (const name of FIELDS) {
    const v = input(name).value.trim();
    if (v) body[name] = v;
    show(name, '');
  }
  if (!body.email && chose) body.email = ''; // emptied: a choice of none
  if (body.webhook && secret) body.webhook_secret = secret;
  status('', false);
  busy(true);
  const r = await api('PUT', '/api/me/notify', body);
  busy(false);
  if (r.ok) {
    fill(r.data);
    status('Saved.', false);
    return;
  }
  const msg = errorText(r);
  const field = FIELDS.find(f => msg.startsWith(`${f}:`) || msg.startsWith(`${f} `));
  if (field) {
    show(field, msg);
    input(field).focus();
  } else {
    status(msg, true);
  }
}

// show puts msg beside field name ('' clears it).
function show(name, msg) {
  const el = $(`notify-${name}-error`);
  el.textContent = msg;
  el.hidden = !msg;
  input(name).setAttribute('aria-invalid', msg ? 'true' : 'false');
}

function status(msg, bad) {
  const el = $('notify-status');
  el.textContent = msg;
  el.classList.toggle('bad', bad);
}

function busy(on) {
  for (const el of $('notify-form').querySelectorAll('input, button')) el.disabled = on;
}
