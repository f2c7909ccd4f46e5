// form.js builds the body of a form card: a question an MCP server asks the
// person (SPEC §9). In form mode each field of the schema is a control of
// its own, pre-filled with its default and checked before anything is sent,
// in the server's words (formcheck.js), but for a pattern, which only the
// server checks; a refusal from the server is put beside the field it
// names. In url mode the card shows the address as text, never a link, its
// host set apart, with Copy, Done and Decline: askd never opens or fetches
// it. formWhat and formRecord say a settled form's answer by field title,
// for Recent and History. Agent text (the message, titles, descriptions,
// choices, the address, the server's name) enters the page only as text.
import { h, keyHint, waited, MOD } from './dom.js';
import { fieldsOf, label, optionTitle, problem, problemsOf } from './formcheck.js';

const FORMAT_INPUT = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };
const RADIOS_UP_TO = 5; // more choices than this make a select

// Enter in a one-line field submits; with Ctrl or Cmd it is the page's
// submit key, handled once for the whole card (keys.js).
const plainEnter = e => e.key === 'Enter' && !e.ctrlKey && !e.metaKey && !e.altKey && !e.isComposing;

// formBody fills the card body of form ask st.ask; it sets st.submit
// (Ctrl/Cmd+Enter) and st.refused (the server's refusal of an answer).
export function formBody(st) {
  const a = st.ask;
  st.body.append(message(a), from(a));
  if (a.url) urlBody(st);
  else fieldsBody(st);
}

// message is the form's message: several lines of plain text.
export function message(a) {
  const text = a.title || '';
  const long = text.includes('\n') || text.length > 160;
  return h('p', { class: 'title form-message' + (long ? ' long' : '') }, text);
}

// from says who asks, and how long they have waited: an MCP server may
// stop waiting on its own (a legacy request often after a minute).
export function from(a) {
  return h('p', { class: 'form-from' },
    h('span', null, 'asked by ', h('b', { class: 'form-source' }, a.source || 'an MCP server'), ' through ', h('b', null, a.session)),
    h('span', { class: 'form-wait' }, 'waiting ', waited(a.created_at),
      h('span', { class: 'wait-note' }, ' · it may have stopped waiting: MCP servers give up on their own, often after a minute')));
}

function fieldsBody(st) {
  const a = st.ask;
  const path = `/api/asks/${a.id}/answer`;
  const fields = fieldsOf(a.schema).map((f, i) => fieldControl(st, f, i));
  let tried = false; // once Submit was pressed, a field is checked as it changes
  const hint = h('span', { class: 'submit-hint', role: 'status' });
  const check = (x, quiet) => {
    const r = x.read();
    let msg = r.bad || '';
    if (!msg && r.missing) msg = x.f.required && !quiet ? 'required' : '';
    else if (!msg) msg = problem(x.f, r.value);
    x.show(msg);
    return { r, msg };
  };
  for (const x of fields) {
    // A field is checked when the person leaves it, and again as they fix
    // it; "required" only once they tried to submit.
    x.box.addEventListener('change', () => check(x, !tried));
    x.box.addEventListener('input', () => { if (x.shown) check(x, !tried); });
  }
  const submit = () => {
    if (st.settled || st.inflight) return;
    tried = true;
    const content = Object.create(null); // a field may be called __proto__
    const bad = [];
    for (const x of fields) {
      const { r, msg } = check(x, false);
      if (msg) bad.push(x);
      else if (!r.missing) content[x.f.name] = r.value;
    }
    hint.textContent = bad.length ? `Fix ${bad.length === 1 ? 'the field' : `${bad.length} fields`} marked to submit` : '';
    if (bad.length) { bad[0].focus(); return; }
    st.send('POST', path, { content });
  };
  // The server's refusal names each field: each problem goes beside its
  // field (a pattern's is only ever found here); what names none stays in
  // the card's error line.
  st.refused = res => {
    if (res.status !== 422 || !res.data || !res.data.error) return false;
    const { byField, rest } = problemsOf(res.data.error, fields.map(x => x.f.name));
    if (!byField.size) return false;
    const marked = fields.filter(x => byField.has(x.f.name));
    for (const x of marked) x.show(byField.get(x.f.name));
    hint.textContent = '';
    st.err.textContent = rest ? `Not sent: ${rest}` : 'Not sent: askd refused the fields marked above.';
    st.err.hidden = false;
    marked[0].focus();
    return true;
  };
  const list = h('div', { class: 'form-fields' }, fields.map(x => x.box));
  list.addEventListener('keydown', e => {
    const t = e.target;
    if (plainEnter(e) && t instanceof HTMLInputElement && !['checkbox', 'radio'].includes(t.type)) {
      e.preventDefault();
      submit();
    }
  });
  st.body.append(list, h('div', { class: 'row form-actions' },
    h('button', { class: 'primary', type: 'button', title: `Submit (${MOD}+Enter)`, onclick: submit }, 'Submit'),
    h('button', { class: 'secondary', type: 'button', title: 'Tell the MCP server no', onclick: () => st.send('POST', path, { action: 'decline' }) }, 'Decline'),
    h('span', { class: 'spacer' }), hint,
    h('span', { class: 'key-tip' }, h('kbd', null, MOD), '+', h('kbd', null, 'Enter'))));
  st.submit = submit;
}

// fieldControl is field f's box: its label (the title, else its name),
// required mark, description, control, what the control takes, and where
// its problem shows. Its read() is {value} | {missing} | {bad: problem};
// show(problem) shows one ('' none); focus() goes to it.
function fieldControl(st, f, i) {
  const id = `form-${st.ask.id}-${i}`;
  const desc = f.description ? h('p', { class: 'field-desc', id: `${id}-desc` }, f.description) : null;
  const hintText = hintOf(f);
  const hint = hintText.length ? h('p', { class: 'field-hint', id: `${id}-hint` }, hintText) : null;
  const err = h('p', { class: 'field-error', id: `${id}-err`, hidden: true });
  const described = [desc && `${id}-desc`, hint && `${id}-hint`, `${id}-err`].filter(Boolean).join(' ');
  const name = [label(f), f.required ? h('span', { class: 'req', title: 'Required' }, '*') : null];
  const c = CONTROLS[controlOf(f)](f, id, described);
  let box;
  if (c.group) {
    box = h('fieldset', { class: 'field', 'aria-describedby': described }, h('legend', { class: 'field-label' }, name), desc, c.el, hint, err);
  } else if (f.type === 'boolean') {
    box = h('div', { class: 'field field-switch' }, h('label', { class: 'switch' }, c.el, h('span', { class: 'field-label' }, name)), desc, err);
  } else {
    box = h('div', { class: 'field' }, h('label', { class: 'field-label', for: id }, name), desc, c.el, hint, err);
  }
  box.dataset.field = f.name;
  const x = {
    f, box, read: c.read, focus: c.focus, shown: false,
    show: msg => {
      x.shown = !!msg;
      err.textContent = msg;
      err.hidden = !msg;
      box.classList.toggle('invalid', !!msg);
      for (const el of box.querySelectorAll('input, select')) {
        if (msg) el.setAttribute('aria-invalid', 'true'); else el.removeAttribute('aria-invalid');
      }
    },
  };
  return x;
}

function controlOf(f) {
  if (f.type === 'enum') return f.options.length <= RADIOS_UP_TO ? 'radios' : 'select';
  return f.type;
}

// hintOf says what field f takes, beyond its type's control: text, or a
// list of text and nodes ([] or '' when there is nothing to say).
function hintOf(f) {
  const range = (lo, hi, unit) => {
    if (lo != null && hi != null) return lo === hi ? `exactly ${lo}${unit}` : `${lo} to ${hi}${unit}`;
    if (lo != null) return `at least ${lo}${unit}`;
    if (hi != null) return `at most ${hi}${unit}`;
    return '';
  };
  switch (f.type) {
    case 'string': {
      const zone = () => {
        const m = -new Date().getTimezoneOffset();
        return `UTC${m < 0 ? '−' : '+'}${String(Math.floor(Math.abs(m) / 60)).padStart(2, '0')}:${String(Math.abs(m) % 60).padStart(2, '0')}`;
      };
      const format = { email: 'An e-mail address', uri: 'A URI, such as https://example.com/x', date: '', 'date-time': `Your local time (${zone()})` }[f.format] || '';
      const length = range(f.minLength, f.maxLength, ' characters');
      const parts = [format, length && (format ? length : length[0].toUpperCase() + length.slice(1)),
        f.pattern ? [format || length ? 'matching ' : 'Matching ', h('code', null, f.pattern)] : ''].filter(p => p.length);
      return parts.flatMap((p, k) => (k ? [' · ', p] : [p]));
    }
    case 'number':
    case 'integer': {
      const r = range(f.minimum, f.maximum, '');
      return (f.type === 'integer' ? 'A whole number' : 'A number') + (r ? (r.startsWith('at') ? `, ${r}` : ` from ${r}`) : '');
    }
    case 'multi': {
      const r = range(f.minItems, f.maxItems, '');
      return r ? `Choose ${r}` : 'Choose any';
    }
  }
  return '';
}

// The controls, each {el, read, focus, group}. Defaults the server kept
// (it checked them) fill them in.
const CONTROLS = {
  string(f, id, described) {
    const type = FORMAT_INPUT[f.format] || 'text';
    const input = h('input', {
      id, type, 'aria-describedby': described, 'aria-required': f.required ? 'true' : null,
      autocomplete: type === 'email' ? 'email' : 'off', spellcheck: type === 'text' ? null : 'false',
      step: type === 'datetime-local' ? '1' : null,
    });
    const given = typeof f.default === 'string' ? f.default : '';
    // A date and time is entered in local time and sent with its offset;
    // a default left as it was is sent as the server gave it.
    input.value = type === 'datetime-local' ? toLocalInput(given) : given;
    const shownDefault = input.value; // as the input normalized it (no :00 seconds)
    const read = () => {
      if (input.validity.badInput) return { bad: type === 'date' ? 'finish the date, or clear it' : 'finish the date and time, or clear them' };
      const v = input.value;
      if (v === '') return { missing: true };
      if (type !== 'datetime-local') return { value: v };
      return { value: v === shownDefault && given ? given : fromLocalInput(v) };
    };
    return { el: input, read, focus: () => input.focus() };
  },
  number(f, id, described) {
    const input = h('input', {
      id, type: 'number', 'aria-describedby': described, 'aria-required': f.required ? 'true' : null,
      min: f.minimum, max: f.maximum, step: f.type === 'integer' ? '1' : 'any',
    });
    if (typeof f.default === 'number') input.value = String(f.default);
    const read = () => {
      if (input.validity.badInput) return { bad: 'must be a number' };
      if (input.value === '') return { missing: true };
      return { value: Number(input.value) + 0 }; // -0 is sent as 0
    };
    return { el: input, read, focus: () => input.focus() };
  },
  boolean(f, id, described) {
    const input = h('input', { id, type: 'checkbox', role: 'switch', 'aria-describedby': described, checked: f.default === true });
    return { el: input, read: () => ({ value: input.checked }), focus: () => input.focus() };
  },
  radios(f, id) {
    const radios = f.options.map((o, k) => h('input', { type: 'radio', name: id, id: k ? `${id}-${k}` : id, value: String(k), checked: f.default === o.const }));
    const clear = f.required ? null : h('button', { class: 'link small choice-clear', type: 'button', onclick: () => {
      for (const r of radios) r.checked = false;
      clear.hidden = true;
      clear.closest('.field').dispatchEvent(new Event('change', { bubbles: true }));
      radios[0].focus();
    } }, 'Clear');
    const el = h('div', { class: 'choices', role: 'radiogroup', 'aria-required': f.required ? 'true' : null },
      f.options.map((o, k) => h('label', { class: 'choice' }, radios[k], h('span', null, optionTitle(o)))),
      clear && h('span', { class: 'row' }, clear));
    const chosen = () => radios.find(r => r.checked);
    if (clear) {
      clear.hidden = !chosen();
      el.addEventListener('change', () => { clear.hidden = !chosen(); });
    }
    const read = () => {
      const r = chosen();
      return r ? { value: f.options[Number(r.value)].const } : { missing: true };
    };
    return { el, read, focus: () => (chosen() || radios[0]).focus(), group: true };
  },
  select(f, id, described) {
    const sel = h('select', { id, 'aria-describedby': described, 'aria-required': f.required ? 'true' : null },
      h('option', { value: '' }, f.required ? 'Choose…' : '— none —'),
      f.options.map((o, k) => h('option', { value: String(k) }, optionTitle(o))));
    const k = f.options.findIndex(o => o.const === f.default);
    sel.value = k < 0 ? '' : String(k);
    const read = () => (sel.value === '' ? { missing: true } : { value: f.options[Number(sel.value)].const });
    return { el: sel, read, focus: () => sel.focus() };
  },
  multi(f, id) {
    const given = new Set(Array.isArray(f.default) ? f.default : []);
    const boxes = f.options.map((o, k) => h('input', { type: 'checkbox', id: k ? `${id}-${k}` : id, value: String(k), checked: given.has(o.const) }));
    const el = h('div', { class: 'choices multi' }, f.options.map((o, k) => h('label', { class: 'choice' }, boxes[k], h('span', null, optionTitle(o)))));
    // None chosen: an optional field is left out, a required one is the
    // empty list (the server takes it unless minItems says otherwise).
    const read = () => {
      const v = f.options.filter((o, k) => boxes[k].checked).map(o => o.const);
      return v.length || f.required ? { value: v } : { missing: true };
    };
    return { el, read, focus: () => boxes[0].focus(), group: true };
  },
};
CONTROLS.integer = CONTROLS.number;

const pad = n => String(n).padStart(2, '0');

// toLocalInput is RFC 3339 time ts as a datetime-local input's value, in
// local time to the second ('' when ts is not a time).
function toLocalInput(ts) {
  const d = new Date(ts);
  if (!ts || isNaN(d)) return '';
  return `${String(d.getFullYear()).padStart(4, '0')}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// fromLocalInput is a datetime-local input's value as RFC 3339, with this
// browser's offset at that time ("Z" for UTC).
function fromLocalInput(v) {
  const full = v.length === 16 ? `${v}:00` : v; // no seconds: the minute
  const m = -new Date(full).getTimezoneOffset();
  if (isNaN(m)) return v;
  const zone = m === 0 ? 'Z' : `${m < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(m) / 60))}:${pad(Math.abs(m) % 60)}`;
  return full + zone;
}

// urlBody shows a url-mode form: the address as text with its host set
// apart (what "github.com@evil.example" really opens), Copy, Done and
// Decline.
function urlBody(st) {
  const a = st.ask;
  const path = `/api/asks/${a.id}/answer`;
  const box = addressBox(a);
  const text = box.querySelector('.url-text');
  const note = h('span', { class: 'copy-note', role: 'status' });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(a.url);
      note.textContent = 'Copied';
    } catch {
      // No clipboard for this page: select the address for the person.
      const r = document.createRange();
      r.selectNodeContents(text);
      getSelection().removeAllRanges();
      getSelection().addRange(r);
      note.textContent = `Selected: press ${MOD}+C to copy`;
    }
  };
  box.append(h('div', { class: 'row' }, h('button', { class: 'secondary small', type: 'button', onclick: copy }, 'Copy'), note));
  st.body.append(box,
    h('p', { class: 'pane-note url-note' }, 'askd does not open this address. Open it yourself in a browser you trust, finish there, then press Done.'),
    h('div', { class: 'row form-actions' },
      h('button', { class: 'primary', type: 'button', 'data-key': 1, onclick: () => st.send('POST', path, { action: 'accept' }) }, keyHint(1), 'Done'),
      h('button', { class: 'secondary', type: 'button', 'data-key': 2, title: 'Tell the MCP server no', onclick: () => st.send('POST', path, { action: 'decline' }) }, keyHint(2), 'Decline')));
}

// addressBox shows a url-mode form's address as text, never a link, with
// its host set apart (what "github.com@evil.example" really opens).
export function addressBox(a) {
  let host = '';
  let plain = false;
  let user = false;
  try {
    const u = new URL(a.url);
    host = u.host;
    plain = u.protocol === 'http:';
    user = u.username !== '' || u.password !== '';
  } catch { /* shown whole below in any case */ }
  return h('div', { class: 'url-box' },
    h('p', { class: 'url-host' }, 'host: ', h('b', null, host || 'unreadable'),
      plain ? h('span', { class: 'url-warn' }, 'http: not encrypted') : null,
      user ? h('span', { class: 'url-warn' }, 'what comes before the @ is not the host') : null),
    h('code', { class: 'url-text' }, a.url));
}

// valueText is a form's answer to field f in words: choices by their
// titles, yes or no.
function valueText(f, v) {
  const title = c => {
    const o = f && f.options && f.options.find(x => x.const === c);
    return o ? optionTitle(o) : String(c);
  };
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.length ? v.map(title).join(', ') : 'none';
  if (f && f.type === 'enum') return title(v);
  return String(v);
}

// answered is a form's content as a Map of field name → [label, words], in
// the form's order.
function answered(a) {
  const content = (a.answer && a.answer.content) || {};
  const fields = fieldsOf(a.schema);
  const out = new Map();
  for (const f of fields) if (Object.hasOwn(content, f.name)) out.set(f.name, [label(f), valueText(f, content[f.name])]);
  for (const k of Object.keys(content)) if (!out.has(k)) out.set(k, [k, valueText(null, content[k])]);
  return out;
}

// formWhat is a form's answer in words: declined, done (url mode), or
// submitted with what was entered by field title ("submitted: Full name:
// Release Bot · Pets: Cat, Dog").
export function formWhat(a) {
  const ans = a.answer || {};
  if (ans.action === 'decline') return 'declined';
  if (a.url) return 'done';
  const parts = [...answered(a).values()].map(([k, v]) => `${k}: ${v}`);
  return parts.length ? `submitted: ${parts.join(' · ')}` : 'submitted, nothing filled in';
}

// formRecord is what a form asked, for its record in History: the message,
// who asked, and the fields with what was entered (the fields' names alone
// when nothing was), or the address.
export function formRecord(a) {
  const accepted = a.status === 'answered' && a.answer && a.answer.action === 'accept';
  const fields = fieldsOf(a.schema);
  const given = answered(a);
  let what;
  if (a.url) what = h('p', { class: 'rec-url' }, 'Address: ', h('code', { class: 'url-text' }, a.url));
  else if (!accepted) what = h('p', { class: 'muted' }, `Fields: ${fields.map(label).join(', ')}`);
  else {
    what = h('dl', { class: 'rec-form' }, fields.map(f => [
      h('dt', null, label(f)),
      given.has(f.name) ? h('dd', { class: 'chosen' }, given.get(f.name)[1]) : h('dd', { class: 'muted' }, '—'),
    ]));
  }
  return [
    h('p', { class: 'rec-title form-message' }, a.title),
    h('p', { class: 'muted' }, `asked by ${a.source || 'an MCP server'} through ${a.session}`),
    what,
  ];
}
