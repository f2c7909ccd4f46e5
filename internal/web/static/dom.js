// dom.js holds what every part of the page uses: building elements, the
// page's clock, and times in words.

// add appends kids to el, skipping null, undefined and false (the DOM's own
// append would show them as the words "null" and "false"). Strings become
// Text nodes, never markup.
export function add(el, ...kids) {
  for (const c of kids.flat(Infinity)) if (c != null && c !== false) el.append(c);
  return el;
}

// h creates an element. Props: "class", "text", on<event> listeners, DOM
// properties for booleans (hidden, disabled, checked), and attributes for the
// rest. Children are nodes or strings; strings become Text nodes.
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (typeof v === 'boolean') el[k] = v;
      else el.setAttribute(k, String(v));
    }
  }
  return add(el, ...kids);
}

// UNSEEN matches runs of what askd.Unprintable names (askd's text.go):
// control characters, line and paragraph separators, bidi controls,
// zero-width and other invisible characters (but the emoji and text
// presentation selectors, which change what is shown), and lone surrogates.
// UNSEEN_IN_LINES leaves line breaks and tabs to the text.
const UNSEEN = /(?:(?![\uFE0E\uFE0F])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}])+/gu;
const UNSEEN_IN_LINES = /(?:(?![\n\t\uFE0E\uFE0F])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}])+/gu;
// MAX_MARKED is how many runs of hidden characters inert marks as escapes
// (a span each); past it their escapes are plain text, so that a payload
// of alternating letters and bidi controls cannot make a card of a hundred
// thousand elements.
const MAX_MARKED = 200;

// escaped is character c as askd.Printable writes it: \n, \t, \r, \x1b,
// \u202e, \U000e0041.
function escaped(c) {
  const named = { '\n': '\\n', '\t': '\\t', '\r': '\\r' }[c];
  if (named) return named;
  const n = c.codePointAt(0);
  if (n < 0x20 || n === 0x7f) return `\\x${n.toString(16).padStart(2, '0')}`;
  return n > 0xffff ? `\\U${n.toString(16).padStart(8, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

// inert is third-party text (an MCP server's tool name, its arguments: SPEC
// §14) as text that acts on nothing: each character askd.Printable would
// escape is shown as that escape, in a span marked as one, so nothing hidden
// reorders, hides or breaks what is shown around it. With lines, line
// breaks (a CRLF as one) and tabs stay the text's own. It returns strings
// and spans for h and add; the strings become Text nodes, never markup.
export function inert(s, lines = false) {
  s = String(s);
  if (lines) s = s.replace(/\r\n/g, '\n');
  const out = [];
  let last = 0, marked = 0;
  for (const m of s.matchAll(lines ? UNSEEN_IN_LINES : UNSEEN)) {
    if (m.index > last) out.push(s.slice(last, m.index));
    const esc = [...m[0]].map(escaped).join('');
    out.push(++marked > MAX_MARKED ? esc : h('span', { class: 'esc', title: 'A hidden character, shown as its escape' }, esc));
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

// jsonEscaped is JSON text with each character askd.Printable would escape
// inside its strings written as \u escapes (JSON.stringify escapes only
// C0): the same JSON, nothing hidden in it. JSON.stringify's own line breaks
// are layout, outside strings, and stay.
export const jsonEscaped = text => text.replace(UNSEEN_IN_LINES, run =>
  Array.from({ length: run.length }, (_, i) => `\\u${run.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));

// optionText is an option's words: its label (with extra, such as a
// Recommended badge, beside it) and its description.
export function optionText(o, extra) {
  return h('span', { class: 'opt-text' },
    h('span', { class: 'opt-label' }, o.label, extra),
    o.description ? h('span', { class: 'opt-desc' }, o.description) : null);
}

// MOD is the modifier of the submit key, as this platform writes it.
export const MOD = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl';

// keyHint is the digit shown on a button that the digit key presses.
export function keyHint(n) {
  return n <= 9 ? h('kbd', { class: 'key', 'aria-hidden': 'true' }, String(n)) : null;
}

// clock is the page's notion of now. Tests move it (window.askdClock, set in
// app.js) to see countdowns near their end without waiting for them.
export const clock = {
  offset: 0,
  now() { return Date.now() + this.offset; },
};

// micros reads an RFC 3339 time to microseconds, so two states of an ask a
// millisecond apart still order correctly.
export function micros(ts) {
  if (!ts) return 0;
  const m = /^(.*?T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(ts);
  if (!m) return Date.parse(ts) * 1000;
  return Date.parse(m[1] + m[3]) * 1000 + Number(((m[2] || '') + '000000').slice(0, 6));
}

const fullTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const secondsTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

// stamp is ts (RFC 3339) as a date and a time to the second, for a record.
export const stamp = ts => secondsTime.format(new Date(ts));
const shortDate = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const clockTime = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

// relTime says how long ago (or, with future times, how soon) ts is.
export function relTime(ts, now = clock.now()) {
  const t = Date.parse(ts);
  const d = Math.round((now - t) / 1000);
  const a = Math.abs(d);
  let s;
  if (a < 45) s = d >= 0 ? 'just now' : 'in a moment';
  else if (a < 3600) s = `${Math.round(a / 60)} min`;
  else if (a < 86400) s = `${Math.round(a / 3600)} h`;
  else s = shortDate.format(new Date(t));
  if (a >= 45 && a < 86400) s = d >= 0 ? `${s} ago` : `in ${s}`;
  return s;
}

// rel is a <time> that says how long ago ts was, and ages in place.
export function rel(ts) {
  return h('time', { class: 'rel', datetime: ts, title: fullTime.format(new Date(ts)) }, relTime(ts));
}

// SOON is how close to its deadline an ask's countdown turns urgent.
export const SOON = 60 * 1000;

// left says how long remains until deadline (ms since the epoch): "4:32 left"
// in the last ten minutes (it changes every second only then), "38 min left",
// "2 h 5 min left", or past a day the date and time.
export function left(deadline, now = clock.now()) {
  const s = Math.ceil((deadline - now) / 1000);
  if (s <= 0) return 'time is up';
  if (s < 600) return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} left`;
  if (s < 3600) return `${Math.floor(s / 60)} min left`;
  if (s < 86400) {
    const m = Math.floor(s % 3600 / 60);
    return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''} left`;
  }
  return `until ${shortDate.format(new Date(deadline))} ${clockTime.format(new Date(deadline))}`;
}

// countdown is the element showing left(deadline); tick keeps it current.
export function countdown(ts) {
  const el = h('time', { class: 'countdown', datetime: ts, title: `Times out ${fullTime.format(new Date(ts))}` });
  el._deadline = Date.parse(ts);
  tick(el);
  return el;
}

// tick updates a countdown element and reports whether its deadline is near.
// It touches the DOM only when the words or the urgency change, and works
// them out only when they can have: each second in the last ten minutes,
// each minute before (a thousand countdowns cost next to nothing a second).
// force works them out anyway (the clock was moved).
export function tick(el, now = clock.now(), force = false) {
  if (!force && now < el._next) return el._soon;
  const ms = el._deadline - now;
  const s = Math.ceil(ms / 1000);
  // The words change when s crosses a second (under ten minutes) or a
  // minute (over).
  el._next = el._deadline - (s < 600 ? s - 1 : 60 * Math.floor(s / 60) - 1) * 1000;
  el._soon = ms <= SOON;
  const text = left(el._deadline, now);
  if (el.textContent !== text) el.textContent = text;
  if (el.classList.contains('soon') !== el._soon) el.classList.toggle('soon', el._soon);
  return el._soon;
}

// WAITED_LONG is how long an ask may wait before its card says that whoever
// asked may have stopped waiting (an MCP server's own request times out,
// often after a minute).
export const WAITED_LONG = 60 * 1000;

// waitedText says how long has passed since ms (ms since the epoch), to the
// second under an hour: "0:42", "12:05", then "1 h 5 min".
export function waitedText(since, now = clock.now()) {
  const s = Math.max(0, Math.floor((now - since) / 1000));
  if (s < 3600) return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  const m = Math.floor(s % 3600 / 60);
  return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`;
}

// waited is the element showing how long the ask of ts (RFC 3339) has
// waited; tickWaited keeps it current.
export function waited(ts) {
  const el = h('time', { class: 'waited', datetime: ts, title: `Asked ${fullTime.format(new Date(ts))}` });
  el._since = Date.parse(ts);
  tickWaited(el);
  return el;
}

// tickWaited updates a waited element, marking it long past WAITED_LONG.
export function tickWaited(el, now = clock.now()) {
  const text = waitedText(el._since, now);
  if (el.textContent !== text) el.textContent = text;
  const long = now - el._since >= WAITED_LONG;
  if (el.classList.contains('long') !== long) el.classList.toggle('long', long);
}
