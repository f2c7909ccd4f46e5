// rules.js is the page's side of rules (a person's standing answer to one
// session's approvals): the choice an approval card offers of making one as
// it is answered (ruleChoice), and the Rules view, which lists the live
// rules and extends or revokes them. Making a rule answers nothing: the card
// answers its ask, then makes the rule, as two requests.
import { h, clock, relTime, stamp } from './dom.js';
import { api, errorText } from './api.js';
import { gateName } from './tool.js';

// How long a rule made from a card lives (the server allows up to 30 days).
const LIVES = [['1h', '1 h'], ['8h', '8 h'], ['1d', '1 day'], ['7d', '7 days']];
const DEFAULT_LIFE = '8h';

const lifeSelect = label => h('select', { class: 'rule-life', 'aria-label': label },
  LIVES.map(([v, text]) => h('option', { value: v, selected: v === DEFAULT_LIFE }, text)));

// shellOperator is askd.ShellOperator's test: a command holding any of
// these is never answered by a prefix rule, so none is offered for it.
const shellOperator = s => /[;&|<>`\n]|\$\(|[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(s);

// commandPrefix is the start of a command a prefix rule is first offered
// for: its first word, and the second when it reads as a subcommand
// ("npm test", "go vet", "git status"; "rm" of "rm -rf build").
export function commandPrefix(cmd) {
  const w = cmd.trim().split(/[ \t]+/);
  return w.length > 1 && /^[a-z][a-z0-9_-]*$/.test(w[1]) ? `${w[0]} ${w[1]}` : w[0];
}

// ruleChoice is what an approval card offers beside Approve (effect
// "allow") or in Reject… ("deny"): ticks for a rule of this session, at
// most one at a time — the tool (an MCP gate's through its server), for
// Bash commands (or a gate's command) starting with a prefix (prefilled,
// editable), or for an approval without a tool its title — and how long it
// lasts. value() is the rule to make ({match, prefix, effect,
// for}), or null when nothing is ticked. null when the ask can have none.
export function ruleChoice(a, effect) {
  if (a.kind !== 'approval') return null;
  const verb = effect === 'deny' ? 'Always deny' : 'Always allow';
  const opts = [];
  const life = lifeSelect('How long the rule lasts');
  const lifeRow = h('label', { class: 'rule-for', hidden: true }, 'for ', life);
  const tick = box => {
    if (box.checked) for (const o of opts) if (o.box !== box) o.box.checked = false;
    lifeRow.hidden = !opts.some(o => o.box.checked);
  };
  const option = (match, words, extra) => {
    const box = h('input', { type: 'checkbox', class: 'rule-box', 'data-match': match, onchange: () => tick(box) });
    opts.push({ box, match, prefix: extra && extra.input });
    return h('div', { class: 'rule-opt' }, h('label', null, box, h('span', null, words)), extra && extra.el);
  };
  const rows = [];
  // Bash and the gates' approvals (SPEC §12) carry the command a prefix
  // rule compares. A gate's prefix is prefilled whole: "<repository> <ref>"
  // is this ref of this repository, a gate run's command line that command.
  const gate = a.tool_name === 'git push' || a.tool_name === 'gate run';
  const cmd = (a.tool_name === 'Bash' || gate) && a.payload && typeof a.payload.command === 'string' ? a.payload.command : null;
  if (cmd !== null && cmd.trim() && !shellOperator(cmd)) {
    const input = h('input', { type: 'text', class: 'rule-prefix', value: gate ? cmd : commandPrefix(cmd), spellcheck: 'false', 'aria-label': 'Command prefix the rule matches' });
    const words = a.tool_name === 'git push' ? `${verb} pushes to` : `${verb} commands starting with`;
    const row = option('prefix', words, { input, el: [input, h('span', { class: 'rule-tail' }, 'in this session')] });
    input.addEventListener('input', () => { const box = row.querySelector('.rule-box'); if (!box.checked) { box.checked = true; tick(box); } });
    rows.push(row);
  }
  const mcp = gateName(a);
  if (mcp) {
    // An MCP gate's tool (SPEC §14): the rule is for mcp__NAME__TOOL, said
    // as the card says it, "write_file through filesystem".
    rows.push(option('tool', [`${verb} `, mcp, ' in this session (any arguments)']));
  } else if (a.tool_name) {
    const any = { Bash: ' (any command)', 'git push': ' (any repository and ref)', 'gate run': ' (any command)' }[a.tool_name] || '';
    rows.push(option('tool', `${verb} ${a.tool_name} in this session${any}`));
  } else {
    rows.push(option('title', `${verb} this title in this session`));
  }
  if (cmd !== null && shellOperator(cmd)) {
    rows.push(h('p', { class: 'rule-note' }, 'No command rule for this one: a command holding ; & | < > ` or $( always comes to the inbox.'));
  }
  return {
    el: h('div', { class: 'rule-choice' }, rows, lifeRow),
    value() {
      const o = opts.find(x => x.box.checked);
      if (!o) return null;
      const rule = { match: o.match, effect, for: life.value };
      if (o.match === 'prefix') rule.prefix = o.prefix.value.trim();
      return rule;
    },
  };
}

// ruleWhat says what a rule matches, its prefix or title as text.
export function ruleWhat(r) {
  switch (r.match) {
    case 'tool':
      return [h('span', { class: 'tool-name' }, r.tool), r.tool === 'Bash' ? ': any command' : ': any call'];
    case 'prefix':
      if (r.tool === 'Bash') return ['Bash commands starting with ', h('code', { class: 'tool-target' }, r.prefix)];
      // The gates' approvals (SPEC §12): "<repository> <ref>", or a command line.
      if (r.tool === 'git push' || r.tool === 'gate run') return [h('span', { class: 'tool-name' }, r.tool), ' starting with ', h('code', { class: 'tool-target' }, r.prefix)];
      return [h('span', { class: 'tool-name' }, r.tool), ' of files under ', h('code', { class: 'tool-target' }, r.prefix)];
    case 'title':
      return ['Approvals titled “', r.title, '”'];
  }
  return [String(r.match)];
}

// The Rules view: the live rules of the chosen session (or of all), oldest
// first, each with its session, agent, what it matches, its effect, who made
// it and when it expires; Extend sets a new life from now, Revoke ends it,
// offered on an approver's own rules and on any to an admin.
const $ = id => document.getElementById(id);
const R = { scope: null, rules: [], loaded: false, loading: 0, person: { me: '', access: '' } };

// openRules shows the live rules of agent's session (of all when session
// is ""), read afresh each time the view opens: rules are made and revoked
// elsewhere too (other inboxes, askd rule revoke). person ({me, access})
// says which the person may change.
export function openRules(agent, session, person) {
  R.person = person;
  const scope = `${agent}\n${session}`;
  if (scope !== R.scope) Object.assign(R, { scope, rules: [], loaded: false });
  renderRules();
  const q = new URLSearchParams();
  if (session) { q.set('agent', agent); q.set('session', session); }
  const n = ++R.loading;
  api('GET', `/api/rules${q.size ? `?${q}` : ''}`).then(r => {
    if (n !== R.loading) return; // a newer read is under way
    $('rules-error').hidden = r.ok;
    $('rules-error').textContent = r.ok ? '' : errorText(r);
    R.rules = r.ok ? r.data.rules : [];
    R.loaded = true;
    renderRules();
  });
}

function renderRules() {
  const now = clock.now();
  const live = R.rules.filter(r => Date.parse(r.expires_at) > now);
  $('rules-count').textContent = R.loaded ? String(live.length) : '';
  $('rules').replaceChildren(...live.map(ruleRow));
  $('rules-empty').hidden = !R.loaded || live.length > 0;
}

// mayChange reports whether the person may extend or revoke rule r.
const mayChange = r => R.person.access === 'admin' || (R.person.access === 'approver' && r.created_by === R.person.me);

function ruleRow(r) {
  const err = h('p', { class: 'field-error', role: 'alert', hidden: true });
  const life = lifeSelect('Extend the rule to last, from now');
  const busy = on => { for (const b of row.querySelectorAll('button, select')) b.disabled = on; };
  const call = async (method, body, after) => {
    busy(true);
    const res = await api(method, `/api/rules/${r.id}`, body);
    busy(false);
    if (!res.ok) { err.textContent = errorText(res); err.hidden = false; return; }
    after(res.data);
    renderRules();
  };
  const row = h('li', { class: 'rule-item', 'data-id': r.id },
    h('span', { class: `chip effect effect-${r.effect}` }, r.effect === 'deny' ? 'deny' : 'allow'),
    h('div', { class: 'rule-main' },
      h('div', { class: 'rule-what' }, ruleWhat(r)),
      h('div', { class: 'rule-meta' },
        h('span', { class: 'session', title: 'Session' }, r.session),
        r.agent && r.agent !== r.session ? h('span', { class: 'agent', title: 'Agent' }, r.agent) : null,
        h('span', null, `rule ${r.id}, made by ${r.created_by}`),
        h('time', { class: 'expires', datetime: r.expires_at, title: `Expires ${stamp(r.expires_at)}` }, `expires ${relTime(r.expires_at)}`)),
      err),
    mayChange(r) ? h('div', { class: 'rule-actions' },
      h('label', { class: 'rule-for' }, 'Keep for ', life),
      h('button', { class: 'secondary small', type: 'button', onclick: () => call('PATCH', { for: life.value }, d => { Object.assign(r, d); }) }, 'Extend'),
      h('button', { class: 'secondary small revoke', type: 'button', onclick: () => call('DELETE', undefined, () => { R.rules = R.rules.filter(x => x.id !== r.id); }) }, 'Revoke')) : null);
  return row;
}
