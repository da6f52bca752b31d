"""The judges: what one program (or family of programs) does with its arguments.

`shell.programs.judge_program` dispatches each effective command to these: files and
archives, git, network clients, runners and wrappers, system administration, package
managers, transfers and containers, local queries and formatters, databases and SQL, and
the scanners for code hidden in arguments (interpreter one-liners, settings that name a
program, commands fed through xargs, cron or a pipe)."""
