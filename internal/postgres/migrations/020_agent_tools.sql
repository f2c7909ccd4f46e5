-- Approvals asked by a coding-agent CLI's hook (SPEC §18): agent_tool is
-- the tool's name in that CLI (run_shell_command), tool_name keeping the
-- one name policies and rules see (Bash); no_edit is true where that CLI
-- cannot run a call with edited input, so the inbox offers no Edit. The
-- same columns as the SQLite store's 019_agent_tools.sql.
ALTER TABLE asks ADD COLUMN agent_tool text NOT NULL DEFAULT '';
ALTER TABLE asks ADD COLUMN no_edit boolean NOT NULL DEFAULT false;
