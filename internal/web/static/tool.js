// tool.js says what an approval with a tool is about: the tool and what
// it will run (a permission prompt's, askd's gates').
import { h } from './dom.js';

// Which input field says what a tool will do. Tools not named here are
// headlined by their first non-empty string field.
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

// headline is the field of a tool's input that says what will run: {field,
// value}, or null when the input has no string at all.
export function headline(tool, input) {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return null;
  for (const f of HEADLINE_FIELDS[tool] || []) if (nonEmpty(input[f])) return { field: f, value: input[f] };
  for (const [f, v] of Object.entries(input)) if (nonEmpty(v)) return { field: f, value: v };
  return null;
}

// toolHead is a permission prompt's headline: the tool and what it will run
// (a command, a file, a URL), with Bash's description and a title of the
// agent's own beneath when they say more.
export function toolHead(a) {
  const hl = headline(a.tool_name, a.payload);
  const desc = a.tool_name === 'Bash' && a.payload && nonEmpty(a.payload.description) ? a.payload.description : '';
  const own = a.title && !a.title.startsWith(`Allow ${a.tool_name}`) ? a.title : '';
  return [
    h('h2', { class: 'title tool-head' }, h('span', { class: 'tool-name' }, a.tool_name),
      hl ? h('code', { class: 'tool-target' }, hl.value) : null),
    desc ? h('p', { class: 'subtitle' }, desc) : null,
    own ? h('p', { class: 'subtitle' }, own) : null,
  ];
}
