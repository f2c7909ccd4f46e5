// tool.js says what an approval with a tool is about: the tool and what
// it will run (a permission prompt's, askd's gates'), and for an approval an
// MCP gate asks (SPEC §14: a source, tool_name mcp__NAME__TOOL) which tool
// through which server, "write_file through filesystem", and the call's
// arguments one by one. A gate's tool name, server name, title and
// arguments are the MCP server's text: shown inert (dom.js), never markup
// and never a link.
import { h, inert, jsonEscaped } from './dom.js';

// Which input field says what a tool will do (headline).
const FILE_FIELDS = ['file_path', 'notebook_path', 'path'];
const HEADLINE_FIELDS = {
  Bash: ['command'],
  WebFetch: ['url'],
  Edit: FILE_FIELDS, MultiEdit: FILE_FIELDS, Write: FILE_FIELDS, Read: FILE_FIELDS,
  NotebookEdit: FILE_FIELDS, NotebookRead: FILE_FIELDS,
  // askd gate git (SPEC §12): "<repository> <ref>"; the title says what the
  // push does, the details list its commits.
  'git push': ['command'],
  // askd gate run: the command line it runs once approved; the payload's
  // other fields are the person's to edit.
  'gate run': ['command'],
};

const nonEmpty = v => typeof v === 'string' && v.trim() !== '';

// short is a string that reads on one line, of LONG characters at most: a
// headline, not a file's content.
const LONG = 120;
const short = v => v.length <= LONG && !/[\n\r\u2028\u2029]/.test(v);

// headline is the field of a tool's input that says what will run: {field,
// value}, or null when the input has no string at all. Tools not named in
// HEADLINE_FIELDS are headlined by their first string field that is short,
// else their first.
export function headline(tool, input) {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return null;
  for (const f of HEADLINE_FIELDS[tool] || []) if (nonEmpty(input[f])) return { field: f, value: input[f] };
  const strings = Object.entries(input).filter(([, v]) => nonEmpty(v));
  const [f, v] = strings.find(([, x]) => short(x)) || strings[0] || [];
  return f === undefined ? null : { field: f, value: v };
}

// gateTool is the tool of an approval an MCP gate asks (SPEC §14), null for
// any other: {name, server}, the name the server gives it (tool_name less
// "mcp__<source>__"; the whole of a tool_name not of that form) and the
// server's, its source.
export function gateTool(a) {
  if (a.kind !== 'approval' || !a.source || !a.tool_name) return null;
  const prefix = `mcp__${a.source}__`;
  const own = a.tool_name.startsWith(prefix) && a.tool_name.length > prefix.length;
  return { name: own ? a.tool_name.slice(prefix.length) : a.tool_name, server: a.source };
}

// through says which server an approval came through: "through
// filesystem".
export const through = server => h('span', { class: 'through' }, 'through ', h('bdi', { class: 'tool-source' }, inert(server)));

// gateName is the tool of an approval an MCP gate asks through its server,
// "write_file through filesystem" (its whole tool_name on hover); null for
// any other approval.
export function gateName(a) {
  const gate = gateTool(a);
  return gate && [h('bdi', { class: 'tool-name', title: a.tool_name }, inert(gate.name)), ' ', through(gate.server)];
}

// approvalHead is what an approval card says first: its title; a
// permission prompt's or a gate's tool (toolHead); and which server it came
// through, when it names one.
export function approvalHead(a) {
  if (a.tool_name) return toolHead(a);
  return [h('h2', { class: 'title' }, a.source ? inert(a.title) : a.title),
    a.source ? h('p', { class: 'subtitle' }, through(a.source)) : null];
}

// toolHead is a permission prompt's headline: the tool and what it will run
// (a command, a file, a URL), with Bash's description and a title of the
// agent's own beneath when they say more. A gate's tool reads "write_file
// through filesystem".
export function toolHead(a) {
  const desc = a.tool_name === 'Bash' && a.payload && nonEmpty(a.payload.description) ? a.payload.description : '';
  const own = a.title && !a.title.startsWith(`Allow ${a.tool_name}`) ? a.title : '';
  return [
    h('h2', { class: 'title tool-head' + (gateTool(a) ? ' gate-head' : '') }, toolLine(a)),
    desc ? h('p', { class: 'subtitle' }, desc) : null,
    own ? h('p', { class: 'subtitle' }, gateTool(a) ? inert(own) : own) : null,
  ];
}

// toolLine is a tool approval's tool and what it will run: its name (a
// gate's, through its server) and the headline field's value.
export function toolLine(a) {
  const hl = headline(a.tool_name, a.payload);
  const gate = gateName(a);
  if (!gate) return [h('span', { class: 'tool-name' }, a.tool_name), hl ? [' ', h('code', { class: 'tool-target' }, hl.value)] : null];
  // A gate's headline is one short line (the arguments are listed below).
  return [gate, hl && short(hl.value) ? [' ', h('code', { class: 'tool-target' }, h('bdi', null, inert(hl.value)))] : null];
}

// argsView shows the arguments of a call an MCP gate asks about, one by one:
// each name, and its value as text (a string as it is, anything else as
// JSON); a long string, or one of several lines (a file's content), as a
// block of its own with its lines kept. Below, folded, the arguments as
// JSON, exactly (pre): what Edit… edits.
export function argsView(args, pre) {
  const rows = Object.entries(args).map(([k, v]) => {
    const text = typeof v === 'string' && v !== '' ? v : jsonEscaped(JSON.stringify(v));
    const block = typeof v === 'string' && !short(v);
    const lines = block ? v.split(/\r\n|\n/).length : 0;
    return [
      h('dt', { class: 'arg-name' }, h('bdi', null, inert(k)), lines > 1 ? h('span', { class: 'muted' }, ` · ${lines} lines`) : null),
      block ? h('dd', { class: 'arg-long' }, h('pre', { class: 'code arg-text' }, inert(v, true)))
        : h('dd', { class: 'arg-value' }, h('bdi', null, inert(text))),
    ];
  });
  return h('div', { class: 'args-box' },
    rows.length ? h('dl', { class: 'args', 'aria-label': 'Arguments' }, rows) : h('p', { class: 'muted' }, 'No arguments.'),
    h('details', { class: 'input-box' }, h('summary', null, 'Arguments as JSON'), pre));
}
