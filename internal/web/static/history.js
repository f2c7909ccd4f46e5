// history.js shows settled asks: the rows of Recent and of the History view
// (settledRow), each opening onto the ask's whole record (what was asked,
// how it ended, the edits, every event), and the History view itself: every
// settled ask, searched and filtered by the server, a page at a time.
// Agent text enters the page only as text.
import { h, relTime, stamp, inert } from './dom.js';
import { api, pager, nearView, errorText } from './api.js';
import { summary, outcome, outcomeLine, kindName } from './cards.js';
import { diffView, pretty } from './approval.js';
import { toolLine, through } from './tool.js';
import { formRecord } from './form.js';

// edits shows, folded, how a person changed an approval's payload.
export function edits(a) {
  const diff = editsDiff(a);
  return diff && h('details', { class: 'recent-edits' }, h('summary', null, 'Edits'), diff);
}

function editsDiff(a) {
  const ans = a.answer;
  if (a.kind !== 'approval' || !ans || ans.decision !== 'modified' || a.payload == null || ans.payload == null) return null;
  return diffView(pretty(a.payload), pretty(ans.payload));
}

// settledRow is the row of settled ask a: how it ended, its title, who and
// what, its session and when. withEdits adds the folded Edits of an edited
// approval (Recent); the History fold loads the ask's record when first
// opened, and shows the edits itself when the row does not.
export function settledRow(a, withEdits) {
  const o = outcome(a);
  const ed = withEdits ? edits(a) : null;
  const body = h('div', { class: 'record-body' }, h('p', { class: 'muted' }, 'Loading…'));
  const fold = h('details', { class: 'record' }, h('summary', null, 'History'), body);
  let loaded = false;
  fold.addEventListener('toggle', () => {
    if (!fold.open || loaded) return;
    loaded = true;
    loadRecord(a.id, body, !ed);
  });
  return h('li', { class: 'recent-item', 'data-id': a.id },
    h('span', { class: `chip status status-${o.how.replace(' ', '-')}` }, o.how),
    h('div', { class: 'recent-main' },
      h('div', { class: 'recent-summary' }, summary(a)),
      h('div', { class: 'recent-outcome' },
        o.who ? h('span', { class: 'who' }, `by ${o.who}`) : null,
        o.what ? h('span', { class: 'what' }, o.what) : null),
      ed, fold),
    h('div', { class: 'recent-side' },
      h('span', { class: 'session' }, a.session),
      h('time', { class: 'rel', datetime: a.settled_at }, relTime(a.settled_at))));
}

async function loadRecord(id, box, withDiff) {
  const r = await api('GET', `/api/asks/${id}`);
  if (!r.ok || !r.data) {
    box.replaceChildren(h('p', { class: 'field-error' }, errorText(r)));
    return;
  }
  box.replaceChildren(...record(r.data, r.data.history || [], withDiff));
}

// What each event of an ask's history is called.
const ACTION = {
  created: 'Asked', replaced: 'Replaced', answered: 'Answered', dismissed: 'Closed', timed_out: 'Timed out',
  withdrawn: 'Withdrawn', snoozed: 'Snoozed', told: 'Told the agent', tell_failed: 'Telling the agent failed',
  cut_off: 'The agent stopped waiting', claimed: 'Taken', released: 'Let go', escalated: 'Escalated',
  approved_in_part: 'Approved in part',
};

// record is an ask's whole record: what was asked, how it ended (with the
// edits, when asked for), and its history, oldest event first.
function record(a, events, withDiff) {
  const diff = withDiff ? editsDiff(a) : null;
  return [
    h('div', { class: 'record-asked' }, h('span', { class: `chip kind kind-${a.kind}` }, kindName(a)), ' ', asked(a)),
    h('p', { class: 'record-outcome' }, outcomeLine(a)),
    diff ? h('div', { class: 'record-diff' }, h('div', { class: 'payload-label' }, 'Edits'), diff) : null,
    h('ol', { class: 'timeline', 'aria-label': 'History' }, events.map(e => h('li', null,
      h('time', { datetime: e.at }, stamp(e.at)),
      h('span', { class: 'ev' },
        h('span', { class: 'ev-action' }, ACTION[e.action] || e.action),
        e.actor ? ` by ${e.actor}` : null,
        e.note ? h('span', { class: 'ev-note' }, ` — ${e.note}`) : null)))),
  ].filter(Boolean);
}

const chosenOf = (a, q) => {
  const v = a.answer && a.answer.answers ? a.answer.answers[q.question] : undefined;
  return new Set(v == null ? [] : [].concat(v));
};

// asked is what the agent asked, as text.
function asked(a) {
  if (a.kind === 'form') return formRecord(a);
  if (a.kind === 'question') {
    return (a.questions || []).map(q => {
      const chosen = chosenOf(a, q);
      return h('div', { class: 'rec-q' },
        h('p', { class: 'rec-title' }, h('span', { class: 'chip header' }, q.header), ' ', q.question),
        h('ul', { class: 'rec-opts' }, (q.options || []).map(o => h('li', { class: chosen.has(o.label) ? 'chosen' : null },
          o.label, o.description ? h('span', { class: 'muted' }, ` — ${o.description}`) : null))));
    });
  }
  // An MCP gate's (an approval with a source) is the MCP server's text.
  const third = a.kind === 'approval' && a.source ? s => inert(s, true) : s => s;
  return [
    a.tool_name
      ? h('p', { class: 'rec-title' }, toolLine(a))
      : h('p', { class: 'rec-title' }, third(a.title || summary(a)), a.source ? [' ', through(a.source)] : null),
    a.details ? h('div', { class: 'details-text rec-details' }, third(a.details)) : null,
    a.kind === 'decision' && a.options && a.options.length
      ? h('ul', { class: 'rec-opts' }, a.options.map(o => h('li', { class: a.answer && a.answer.answer === o.label ? 'chosen' : null },
        o.label, o.label === a.recommended ? h('span', { class: 'badge' }, 'Recommended') : null,
        o.description ? h('span', { class: 'muted' }, ` — ${o.description}`) : null)))
      : null,
    a.kind === 'approval' && a.payload != null ? h('pre', { class: 'code payload' }, pretty(a.payload)) : null,
  ];
}

// The History view. Its filters live in the URL (app.js keeps them there):
// q (words, searched by the server), agent and session (the session from
// the sidebar), kind, outcome, by.
export const FILTERS = ['q', 'agent', 'session', 'kind', 'outcome', 'by'];

const $ = id => document.getElementById(id);
const H = { key: null, params: {}, pager: null, ids: new Set(), onFilters: null, timer: 0 };

// outcomeOf is a settled ask's outcome as /api/history's outcome= names it.
// fields are the filters' inputs and selects, each named by its parameter.
const fields = () => $('history-filters').querySelectorAll('input[name], select[name]');

const outcomeOf = a => (a.status === 'answered' ? 'answered' : a.cancel_reason);

// setupHistory wires the view's form and its paging; onFilters(params) is
// told when the person changes a filter (the page puts it in the URL and
// calls openHistory again).
export function setupHistory(onFilters) {
  H.onFilters = onFilters;
  const changed = () => {
    clearTimeout(H.timer);
    H.timer = setTimeout(() => {
      const p = { ...H.params };
      for (const el of fields()) p[el.name] = el.value.trim();
      H.onFilters(p);
    }, 250);
  };
  $('history-filters').addEventListener('input', changed);
  $('history-more').querySelector('button').addEventListener('click', () => more());
  new IntersectionObserver(es => { if (es.some(e => e.isIntersecting)) more(); }, { rootMargin: '800px 0px' }).observe($('history-more'));
}

// openHistory shows the settled asks matching params, from the first page
// unless they are the ones shown already.
export function openHistory(params) {
  const key = JSON.stringify(FILTERS.map(k => params[k] || ''));
  for (const el of fields()) {
    const v = params[el.name] || '';
    // Not under the person's fingers: the field they type in keeps its text.
    if (el !== document.activeElement && el.value !== v) el.value = v;
  }
  // A session chosen in the sidebar says whose it is: no agent field then.
  $('history-filters').querySelector('[name=agent]').closest('label').hidden = !!params.session;
  if (key === H.key) { afterPage(); return; }
  H.key = key;
  H.params = params;
  H.ids = new Set();
  $('history').replaceChildren();
  $('history-count').textContent = '';
  const q = new URLSearchParams();
  for (const k of FILTERS) if (params[k]) q.set(k, params[k]);
  const p = pager(`/api/history?${q}`, 50, (data, pg) => {
    if (pg !== H.pager) return; // the filters changed meanwhile
    const rows = [];
    for (const a of data.asks) {
      if (H.ids.has(a.id)) continue;
      H.ids.add(a.id);
      rows.push(settledRow(a, false));
    }
    $('history').append(...rows);
  });
  H.pager = p;
  more();
}

function more() {
  const p = H.pager;
  if (!p || p.done || p.loading || $('history-view').hidden) return;
  p.more().then(afterPage);
  afterPage();
}

// afterPage says how many there are and whether more are coming, and loads
// the next page while the end of the list is near the screen.
function afterPage() {
  const p = H.pager;
  if (!p) return;
  const n = p.total == null ? null : p.total;
  $('history-count').textContent = n == null ? '' : String(n);
  $('history-error').hidden = !p.error;
  $('history-error').textContent = p.error;
  $('history-empty').hidden = !(p.loaded && H.ids.size === 0);
  const box = $('history-more');
  box.hidden = p.done;
  box.querySelector('button').textContent = p.loading ? 'Loading…' : p.error ? 'Try again' : 'Load more';
  box.querySelector('button').disabled = !!p.loading;
  if (!p.done && !p.loading && !p.error) requestAnimationFrame(() => { if (nearView(box)) more(); });
}

// historySettled shows an ask settled while the view is open at the top,
// when it matches the filters. With words to search for it does not: the
// server decides what they match, and the next search shows it.
export function historySettled(a) {
  const p = H.pager;
  if (!p || !p.loaded || a.status === 'pending' || H.ids.has(a.id) || H.params.q) return;
  const f = H.params;
  if ((f.agent && a.agent !== f.agent) || (f.session && a.session !== f.session) || (f.kind && a.kind !== f.kind) ||
    (f.outcome && outcomeOf(a) !== f.outcome) || (f.by && a.settled_by !== f.by)) return;
  H.ids.add(a.id);
  if (p.total != null) p.total++;
  $('history').prepend(settledRow(a, false));
  afterPage();
}
