// formcheck.js reads a form ask's schema (SPEC §9: MCP's restricted form
// schema) into its fields and checks a person's values as the server will
// (askd's FormField.check in form.go), in the server's words: a form card
// says "142 is above the maximum 100" beside the field before anything is
// sent, exactly as the server would refuse it.
//
// A field's pattern is the one rule the page never checks: the value goes
// to the server with Submit, and the server's refusal, which names the
// field, is put beside it (problemsOf), with everything typed left as it
// was. The page could only run the pattern with JavaScript's engine, which
// reads Go's syntax otherwise in many places ('.' against \r, U+2028 and
// U+2029; \s; ^ and $ in multi-line mode; Unicode versions), so it refused
// values the server takes, and which has no bound on its time: ^(.+)+$ on
// a default of 34 letters and a U+2028 froze the tab for three minutes,
// twice as long for each letter more. Asking the server as the person
// types was weighed and not taken: Submit already gets the server's
// verdict, in its words, beside the field, and a check route would be a
// second way to the same rule. Every other check here is the server's rule
// written out (lengths, formats, numbers, choices), and each regular
// expression below is fixed and runs in time linear in the value.

// fieldsOf reads a form's schema, as the server stored it (already checked
// by askd.ParseFormSchema), into its fields in the order given: {name, type
// ('string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi'), title,
// description, required, default, and the rules of its type}.
export function fieldsOf(schema) {
  const s = schema && typeof schema === 'object' ? schema : {};
  const props = s.properties && typeof s.properties === 'object' ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  return Object.entries(props).map(([name, p]) => fieldOf(name, p && typeof p === 'object' ? p : {}, required.has(name)));
}

const text = v => (typeof v === 'string' ? v : '');
const num = v => (typeof v === 'number' ? v : null);

function fieldOf(name, p, required) {
  const f = { name, title: text(p.title), description: text(p.description), required, default: p.default };
  if (p.type === 'string' && (p.enum || p.oneOf)) {
    f.type = 'enum';
    f.options = optionsOf(p.enum, p.enumNames, p.oneOf);
  } else if (p.type === 'number' || p.type === 'integer') {
    f.type = p.type;
    f.minimum = num(p.minimum);
    f.maximum = num(p.maximum);
  } else if (p.type === 'boolean') {
    f.type = 'boolean';
  } else if (p.type === 'array') {
    const items = p.items && typeof p.items === 'object' ? p.items : {};
    f.type = 'multi';
    f.options = optionsOf(items.enum, null, items.anyOf);
    f.minItems = num(p.minItems);
    f.maxItems = num(p.maxItems);
  } else {
    f.type = 'string';
    f.minLength = num(p.minLength);
    f.maxLength = num(p.maxLength);
    f.format = text(p.format);
    f.pattern = text(p.pattern);
  }
  return f;
}

// optionsOf reads an enum's values as [{const, title}]: enum (with
// enumNames as their titles), else oneOf (a multi-select's anyOf).
function optionsOf(values, names, alts) {
  if (Array.isArray(values)) {
    return values.map((v, i) => ({ const: String(v), title: Array.isArray(names) ? text(names[i]) : '' }));
  }
  return (Array.isArray(alts) ? alts : []).filter(a => a && typeof a.const === 'string')
    .map(a => ({ const: a.const, title: text(a.title) }));
}

// label is what a person reads for field f; optionTitle for one of its
// choices.
export const label = f => f.title || f.name;
export const optionTitle = o => o.title || o.const;

// problem says what is wrong with v as f's value, in the server's words, or
// '' when nothing is.
export function problem(f, v) {
  switch (f.type) {
    case 'string':
      return typeof v === 'string' ? textProblem(f, v) : `must be text, not ${notText(v)}`;
    case 'number':
    case 'integer':
      if (typeof v !== 'number' || !isFinite(v)) return `must be a number, not ${notText(v)}`;
      if (f.type === 'integer' && !Number.isInteger(v)) return `${goNumber(v)} is not a whole number`;
      if (f.minimum != null && v < f.minimum) return `${goNumber(v)} is below the minimum ${goNumber(f.minimum)}`;
      if (f.maximum != null && v > f.maximum) return `${goNumber(v)} is above the maximum ${goNumber(f.maximum)}`;
      return '';
    case 'boolean':
      return typeof v === 'boolean' ? '' : `must be true or false, not ${notText(v)}`;
    case 'enum':
      return typeof v === 'string' && hasOption(f, v) ? '' : notAnOption(f, v);
    case 'multi': {
      if (!Array.isArray(v)) return `must be a list of choices, not ${notText(v)}`;
      const seen = new Set();
      for (const e of v) {
        if (typeof e !== 'string' || !hasOption(f, e)) return notAnOption(f, e);
        if (seen.has(e)) return `${goQuote(e)} is chosen twice`;
        seen.add(e);
      }
      if (f.minItems != null && v.length < f.minItems) return `${v.length} chosen, at least ${f.minItems}`;
      if (f.maxItems != null && v.length > f.maxItems) return `${v.length} chosen, at most ${f.maxItems}`;
      return '';
    }
  }
  return '';
}

const hasOption = (f, s) => f.options.some(o => o.const === s);
const optionList = f => f.options.map(o => o.const).join(', ');
const quoteValue = v => (typeof v === 'string' ? goQuote(v) : JSON.stringify(v));
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const notText = v => (typeof v === 'string' ? `the text ${goQuote(v)}` : quoteValue(v));

// notAnOption says that v is none of f's choices, naming the one it was
// likely meant to be: form.go's notAnOption and didYouMean, word for word.
function notAnOption(f, v) {
  const why = `${quoteValue(v)} is not one of ${optionList(f)}`;
  return typeof v === 'string' ? why + didYouMean(v, f.options) : why;
}

function didYouMean(s, cands) {
  let best = -1, near = [];
  const fs = foldName(s);
  for (const c of cands) {
    let d = -1;
    for (const target of [c.const, c.title || '']) {
      const ft = foldName(target);
      if (target === '' || ft === '') continue;
      const n = editDistance(fs, ft);
      if (n > 2 || 3 * n > [...ft].length) continue;
      if (d < 0 || n < d) d = n;
    }
    if (d < 0 || (best >= 0 && d > best)) continue;
    if (d < best || best < 0) { best = d; near = []; }
    let name = goQuote(c.const);
    if (c.title && c.title.toLowerCase() !== c.const.toLowerCase()) name += ` (${c.title})`;
    near.push(name);
  }
  return near.length ? ` (did you mean ${near.join(' or ')}?)` : '';
}

// foldName is s without case, spaces, hyphens or underscores.
const foldName = s => [...s].filter(ch => !/[\s\-_]/u.test(ch)).map(ch => ch.toLowerCase()).join('');

// editDistance counts the letters to insert, delete, change or swap with
// their neighbour to turn a into b (optimal string alignment).
function editDistance(a, b) {
  const x = [...a], y = [...b];
  const d = Array.from({ length: x.length + 1 }, (_, i) => [i, ...new Array(y.length).fill(0)]);
  for (let j = 0; j <= y.length; j++) d[0][j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[x.length][y.length];
}

function textProblem(f, s) {
  const n = [...s].length; // characters, as Go counts runes
  if (f.minLength != null && n < f.minLength) return `${plural(n, 'character')}, at least ${f.minLength}`;
  if (f.maxLength != null && n > f.maxLength) return `${plural(n, 'character')}, at most ${f.maxLength}`;
  const q = goQuote(s);
  switch (f.format) {
    case 'email': if (!isEmail(s)) return `${q} is not an e-mail address`; break;
    case 'uri': if (!isURI(s)) return `${q} is not a URI (such as https://example.com/x)`; break;
    case 'date': if (!isDate(s)) return `${q} is not a date such as 2026-12-31`; break;
    case 'date-time': if (!isDateTime(s)) return `${q} is not a date and time such as 2026-12-31T09:30:00Z`; break;
  }
  return ''; // f.pattern: the server's to check (see above)
}

// goNumber writes n as Go's %v writes a float64: the shortest digits that
// read back as n, with an exponent below 1e-4 and from 1e+06 on.
export function goNumber(n) {
  if (Object.is(n, -0)) n = 0;
  const [digits, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${digits}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

const ESCAPES = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
const printable = /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u; // Go's unicode.IsPrint, ASCII space aside
const hex = (c, n) => c.toString(16).padStart(n, '0');

// goQuote quotes s as Go's %q does (strconv.Quote).
export function goQuote(s) {
  let out = '"';
  for (let ch of s) {
    let c = ch.codePointAt(0);
    if (c >= 0xd800 && c <= 0xdfff) { ch = '\ufffd'; c = 0xfffd; } // a lone surrogate reaches Go as U+FFFD
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c === 0x20 || (c > 0x20 && c < 0x7f) || (c > 0x7f && printable.test(ch))) out += ch;
    else if (ESCAPES[c]) out += ESCAPES[c];
    else if (c < 0x80) out += '\\x' + hex(c, 2);
    else if (c < 0x10000) out += '\\u' + hex(c, 4);
    else out += '\\U' + hex(c, 8);
  }
  return out + '"';
}

// Go's net/mail takes an address as it is only when it is a bare addr-spec:
// a dot-atom (RFC 5322 atext, and any non-ASCII character) or an IP
// domain-literal after the @. No atom holds a '.' or an '@', so when a match
// fails, each atom gives its letters back one at a time and each try fails
// at the next letter: time linear in the value, however hostile.
const atom = '[^\\x00-\\x20\\x7f()<>\\[\\]:;@\\\\,".]+';
const dotAtom = `${atom}(?:\\.${atom})*`;
const emailRE = new RegExp(`^${dotAtom}@(?:${dotAtom}|\\[([^\\[\\]\\\\]*)\\])$`, 'u');
const ipv4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function isEmail(s) {
  const m = emailRE.exec(s);
  if (!m) return false;
  return m[1] === undefined || ipv4.test(m[1]) || isIPv6(m[1]);
}

function isIPv6(s) {
  if (!s.includes(':')) return false;
  try { return new URL(`http://[${s}]/`).hostname !== ''; } catch { return false; }
}

// isURI follows Go's url.Parse, as the server uses it: a scheme, no
// spaces or control characters, % escapes that decode, and where there is
// an authority a host and port it accepts.
function isURI(s) {
  if (/[\x00-\x20\x7f]/.test(s)) return false;
  const hash = s.indexOf('#');
  const [u, frag] = hash < 0 ? [s, ''] : [s.slice(0, hash), s.slice(hash + 1)];
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(u);
  if (!m || !escapesOK(frag)) return false;
  const rest = u.slice(m[0].length).split('?')[0];
  if (!rest.startsWith('/')) return true; // opaque, as in mailto:x@example.com: Go reads no further
  if (!rest.startsWith('//')) return escapesOK(rest);
  const slash = rest.indexOf('/', 2);
  const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
  const at = authority.lastIndexOf('@');
  const user = at < 0 ? '' : authority.slice(0, at);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(user) || !escapesOK(user)) return false;
  return hostOK(at < 0 ? authority : authority.slice(at + 1)) && escapesOK(slash < 0 ? '' : rest.slice(slash));
}

const escapesOK = s => !/%(?![0-9A-Fa-f]{2})/.test(s);

function hostOK(host) {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    return close > 0 && /^(?::\d*)?$/.test(host.slice(close + 1)) && isIPv6(host.slice(1, close));
  }
  if (host.includes('[')) return false;
  const colon = host.indexOf(':');
  if (colon >= 0 && !/^:\d*$/.test(host.slice(colon))) return false;
  const name = colon < 0 ? host : host.slice(0, colon);
  // Only non-ASCII bytes may be escaped in a host; ASCII must be one of
  // these.
  return /^(?:[A-Za-z0-9\-_.~!$&'()*+,;=<>"]|[^\x00-\x7f]|%[89A-Fa-f][0-9A-Fa-f]|%25)*$/u.test(name);
}

const daysIn = (y, m) => new Date(Date.UTC(y, m, 0)).getUTCDate();
const dayOK = (y, m, d) => m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);

// isDate: time.Parse("2006-01-02", s).
function isDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  return !!m && dayOK(+m[1], +m[2], +m[3]);
}

// isDateTime: time.Parse(time.RFC3339, s), whose slower path also takes a
// one-digit hour, a comma before the fraction and offsets up to 24:60.
function isDateTime(s) {
  // RFC 3339 exactly, as the server holds it (form.go's rfc3339).
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/.exec(s);
  if (!m || !dayOK(+m[1], +m[2], +m[3]) || +m[4] > 23 || +m[5] > 59 || +m[6] > 59) return false;
  return m[7] === undefined || (+m[7] <= 23 && +m[8] <= 59);
}

// problemsOf splits the server's refusal of a form's content ("name:
// rule; other: rule") by the fields it names (names, the form's field
// names): a Map of name → rule, and the rest, which names none.
export function problemsOf(message, names) {
  let msg = message;
  let rest = '';
  const more = /;? ?and \d+ more problems?$/.exec(msg);
  if (more) { rest = more[0].replace(/^; /, ''); msg = msg.slice(0, more.index); }
  const hits = [];
  for (const n of names) {
    const at = `${n}: `;
    for (let i = msg.indexOf(at); i >= 0; i = msg.indexOf(at, i + 1)) {
      if (i === 0 || msg.startsWith('; ', i - 2) || msg.startsWith(': ', i - 2)) hits.push({ i, n });
    }
  }
  // Left to right; of two names found at one place, the longer.
  hits.sort((x, y) => x.i - y.i || y.n.length - x.n.length);
  const out = new Map();
  let end = msg.length;
  const kept = [];
  for (const hit of hits) if (!kept.length || hit.i >= kept.at(-1).i + kept.at(-1).n.length + 2) kept.push(hit);
  for (let k = kept.length - 1; k >= 0; k--) {
    const { i, n } = kept[k];
    const rule = msg.slice(i + n.length + 2, end).replace(/;\s*$/, '');
    out.set(n, out.has(n) ? `${rule}; ${out.get(n)}` : rule);
    end = i;
  }
  const head = msg.slice(0, end).replace(/[;:]\s*$/, '').trim();
  return { byField: out, rest: [head, rest].filter(Boolean).join('; ') };
}
